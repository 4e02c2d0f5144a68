"""``neardup dedup --resume``: a run killed outright (SIGKILL) between or inside its stages,
resumed, writes what an uninterrupted run writes, byte for byte; a resume of another run is
refused naming what differs.

The kills are exact: ``NEARDUP_CRASH_AT`` makes the real program kill itself at a named point
(:mod:`neardup._faults`), after the reading pass's checkpoint, inside verification, after the
checkpoint of everything before writing, and with the outputs half written.
"""

from __future__ import annotations

import gzip
import json
import signal
from pathlib import Path

import pytest

from neardup.jobs import dedup as local_job
from tests.conftest import SAMPLE
from tests.integration.conftest import run, run_process

OPTIONS = ("--keep-by", "year:max", "--skip-bad-records", "--threshold", "0.6")
"""Options whose state a checkpoint must carry: the keep-by values, the bad records' lines."""

OUTPUTS = ("clusters.jsonl", "pairs.jsonl", "kept.jsonl", "kept.jsonl.gz")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """600 licences with a ``year`` field and one bad line, as plain JSONL."""
    folder = tmp_path_factory.mktemp("resume")
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f][:600]
    lines = [json.dumps({**r, "year": 1990 + i % 30}) for i, r in enumerate(records)]
    lines.insert(100, '{"id": "broken", "text": ')
    path = folder / "licences.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with gzip.open(folder / "licences.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write(path.read_text(encoding="utf-8"))
    return path


def _outputs(directory: Path) -> dict[str, bytes]:
    """The output's files, and its summary without the timings (which no two runs share)."""
    files = [directory / name for name in OUTPUTS if (directory / name).exists()]
    found = {file.name: file.read_bytes() for file in files}
    summary = json.loads((directory / "summary.json").read_bytes())
    for key in ("timings_s", "compile_s", "throughput_mb_s", "resumed_after"):
        summary.pop(key, None)
    found["summary.json"] = json.dumps(summary, sort_keys=True).encode()
    return found


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("point", "compressed", "resumed_after"),
    [
        ("sketched", False, "sketch"),
        ("verifying", True, "sketch"),
        ("found", False, "find"),
        ("written", True, "find"),
    ],
)
def test_a_killed_run_resumes_to_the_same_outputs(
    corpus: Path, tmp_path: Path, point: str, compressed: bool, resumed_after: str
) -> None:
    source = corpus.with_suffix(".jsonl.gz") if compressed else corpus
    reference = run("dedup", source, "-o", tmp_path / "reference", *OPTIONS, "-q")
    assert reference.returncode == 0, reference.stderr
    out = tmp_path / "out"

    killed = run_process(
        "dedup", source, "-o", out, *OPTIONS, "-q", env={"NEARDUP_CRASH_AT": point}
    )

    assert killed.returncode == -signal.SIGKILL
    assert not out.exists()
    assert (tmp_path / ".out.work" / resumed_after / "state.pickle").is_file()
    resumed = run("dedup", source, "-o", out, *OPTIONS, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming" in resumed.stderr
    assert _outputs(out) == _outputs(tmp_path / "reference")
    summary = json.loads((out / "summary.json").read_bytes())
    assert summary["resumed_after"] == resumed_after
    assert summary["counts"]["bad_records_skipped"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "reference"]


def _failed_while_writing(corpus: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that fails after its last checkpoint (the disk filled, say): the stages stay."""

    def no_space(*args: object) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(local_job, "_write_outputs", no_space)
        failed = run("dedup", corpus, "-o", out, *OPTIONS)
    assert failed.returncode != 0
    assert (out.parent / f".{out.name}.work" / "find" / "state.pickle").is_file()


def test_a_resume_of_another_run_is_refused_naming_the_difference(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    _failed_while_writing(corpus, out, monkeypatch)

    other = run("dedup", corpus, "-o", out, *OPTIONS[:-1], "0.7", "--resume")
    assert other.returncode == 2
    assert "config.lsh.threshold was 0.6, now 0.7" in other.stderr
    assert "without --resume" in other.stderr

    changed = tmp_path / "changed.jsonl"
    changed.write_bytes(corpus.read_bytes())
    elsewhere = run("dedup", changed, "-o", out, *OPTIONS, "--resume")
    assert elsewhere.returncode == 2
    assert f"input {changed.resolve()} is new" in elsewhere.stderr
    assert f"input {corpus.resolve()} is no longer given" in elsewhere.stderr

    # the working memory changes no result: the run resumes
    resumed = run("dedup", corpus, "-o", out, *OPTIONS, "--memory-gb", "0.5", "--resume", "-q")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((out / "summary.json").read_bytes())["resumed_after"] == "find"
    assert not (tmp_path / ".out.work").exists()


def test_checkpoints_of_the_layout_before_read_and_output_resume(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An earlier version kept the reading and writing settings (and the banding's copy of
    num_perm) in the checkpoints' config: a resume of its run reads them where they were."""
    out = tmp_path / "out"
    _failed_while_writing(corpus, out, monkeypatch)
    run_file = tmp_path / ".out.work" / "run.json"
    identity = json.loads(run_file.read_bytes())
    identity["config"] = {**identity["config"], **identity.pop("read"), **identity.pop("output")}
    identity["config"]["lsh"]["num_perm"] = identity["config"]["sketch"]["num_perm"]
    run_file.write_text(json.dumps(identity, indent=1))
    resumed = run("dedup", corpus, "-o", out, *OPTIONS, "--resume", "-q")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((out / "summary.json").read_bytes())["resumed_after"] == "find"


def test_an_input_changed_since_the_checkpoints_is_named(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(corpus.read_bytes())
    out = tmp_path / "out"
    _failed_while_writing(copy, out, monkeypatch)
    with copy.open("a", encoding="utf-8") as f:
        f.write('{"id": "late", "text": "a record added since", "year": 2000}\n')

    changed = run("dedup", copy, "-o", out, *OPTIONS, "--resume")

    assert changed.returncode == 2
    assert f"input {copy.resolve()} changed since" in changed.stderr


def test_a_run_without_resume_starts_again(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    _failed_while_writing(corpus, out, monkeypatch)

    again = run("dedup", corpus, "-o", out, *OPTIONS, "--threshold", "0.7", "-q")

    assert again.returncode == 0, again.stderr
    assert "resumed_after" not in json.loads((out / "summary.json").read_bytes())
    assert not (tmp_path / ".out.work").exists()


def test_resume_with_nothing_to_resume_runs_from_the_start(corpus: Path, tmp_path: Path) -> None:
    first = run("dedup", corpus, "-o", tmp_path / "out", *OPTIONS, "--resume", "-q")

    assert first.returncode == 0, first.stderr
    assert "resumed_after" not in json.loads((tmp_path / "out" / "summary.json").read_bytes())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (("--engine", "spark"), "--resume works with the local engine"),
        (("--unit", "line"), "without --against or --resume"),
    ],
)
def test_resume_is_refused_where_it_does_not_apply(
    corpus: Path, tmp_path: Path, extra: tuple[str, ...], words: str
) -> None:
    refused = run("dedup", corpus, "-o", tmp_path / "out", "--resume", *extra)

    assert refused.returncode == 2
    assert words in refused.stderr
    assert not list(tmp_path.iterdir())


def test_resume_is_refused_for_urls(corpus: Path, tmp_path: Path) -> None:
    refused = run("dedup", corpus, "-o", "s3://bucket/out", "--resume")

    assert refused.returncode == 2
    assert "--resume needs local inputs and a local output" in refused.stderr
