"""The installed ``neardup`` command, run as a user runs it."""

from __future__ import annotations

import gzip
import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from neardup import Shingler, dedup
from neardup.hashing import DEFAULT_POLYNOMIAL
from neardup.params import ConfigFile
from tests.conftest import SAMPLE
from tests.integration.conftest import NEARDUP, run, run_process
from tests.reference_allpairs import all_pairs_above

pytestmark = pytest.mark.usefixtures("installed")


@pytest.mark.parametrize("command", [[], ["dedup"]])
def test_help_is_clear_and_shows_an_example(command: list[str]) -> None:
    result = run(*command, "--help")
    assert result.returncode == 0
    assert "neardup dedup corpus.jsonl" in result.stdout
    assert "Example" in result.stdout


def test_dedup_of_the_bundled_sample(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run("dedup", SAMPLE, "-o", out, "--keep", "longest")
    assert result.returncode == 0, result.stderr
    assert "2,310 documents" in result.stdout
    assert "biggest clusters" in result.stdout
    assert f"outputs in {out}/" in result.stdout
    clusters = [json.loads(line) for line in (out / "clusters.jsonl").read_text().splitlines()]
    assert len(clusters) == 2310
    summary = json.loads((out / "summary.json").read_text())
    kept = (out / "kept.jsonl").read_bytes().splitlines()  # bytes: texts hold U+2028
    assert len(kept) == sum(c["keep"] for c in clusters) == summary["counts"]["kept"]
    assert summary["lsh"] == {
        "scheme": "bands",
        "label": "b=16, r=8",
        "num_bands": 16,
        "num_rows": 8,
        "candidate_probability_at_threshold": pytest.approx(0.947, abs=0.001),
    }
    assert summary["params"]["keep"] == "longest"
    for stage in ("read_sketch", "exact", "candidates", "verify", "cluster", "write"):
        assert stage in summary["timings_s"]
    # Every near pair reported verifies: exact Jaccard at or above the threshold.
    pairs = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    assert pairs
    assert all(p["similarity"] >= 0.8 for p in pairs)


def test_flags_override_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "dedup.toml"
    config.write_text('keep = "longest"\n[lsh]\nthreshold = 0.5\n')
    out = tmp_path / "out"
    result = run(
        "dedup",
        SAMPLE,
        "-o",
        out,
        "--config",
        config,
        "--threshold",
        "0.9",
        "--shingle",
        "char:9",
        "--fingerprint",
        "rabin",
        "-q",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    summary = json.loads((out / "summary.json").read_text())
    assert summary["params"]["lsh"]["threshold"] == 0.9
    assert summary["params"]["keep"] == "longest"
    assert summary["params"]["sketch"]["shingle"] == {
        "unit": "char",
        "k": 9,
        "fingerprint": "rabin",
        "polynomial": DEFAULT_POLYNOMIAL,
    }
    assert summary["signatures"]["fingerprint_scheme"] == "rabin-v1"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            ["dedup", "missing.jsonl", "-o", "out"],
            1,
            "error: missing.jsonl: no such file or directory; check the path",
        ),
        (
            ["dedup", str(SAMPLE), "-o", "out", "--threshold", "1.5"],
            2,
            "error: --threshold must be a float in (0.0, 1.0]; got 1.5.",
        ),
        (
            ["dedup", str(SAMPLE), "-o", "out", "--shingle", "words"],
            2,
            "error: --shingle must be written UNIT:K",
        ),
        (
            ["dedup", str(SAMPLE), "-o", "out", "--sketch", "nope"],
            2,
            "error: --sketch: 'nope' is not one of 'oph', 'minhash'",
        ),
        (["dedup", str(SAMPLE)], 2, "Missing option '-o' / '--output'"),
    ],
)
def test_errors_are_one_line_with_an_exit_code(
    tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    result = run(*args, cwd=tmp_path)
    assert result.returncode == code
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.subprocess
def test_the_installed_command_starts_and_exits_with_the_code_of_its_outcome(
    tmp_path: Path,
) -> None:
    """The program itself (the other tests call its entry point in this process): help and
    version exit 0 on stdout, a bad input 1 and bad usage 2, each error one line on stderr;
    exactly what the in-process runner gives."""
    for args, code in [
        (["--help"], 0),
        (["--version"], 0),
        (["dedup", "missing.jsonl", "-o", "out"], 1),
        (["dedup", str(SAMPLE), "-o", "out", "--threshold", "1.5"], 2),
        (["dedup", str(SAMPLE), "-o", "out", "--no-such-option"], 2),
    ]:
        done = run_process(*args, cwd=tmp_path)
        assert done.returncode == code, (args, done.stderr)
        if code == 0:
            assert done.stdout.startswith("Usage: neardup" if "--help" in args else "neardup, ")
            assert done.stderr == ""
        else:
            assert done.stdout == ""
            assert len(done.stderr.splitlines()) == 1, done.stderr
            assert done.stderr.startswith("error: "), done.stderr
        inside = run(*args, cwd=tmp_path)  # and the runner of the other tests sees the same
        assert (inside.returncode, inside.stdout, inside.stderr) == (
            done.returncode,
            done.stdout,
            done.stderr,
        )
    assert not (tmp_path / "out").exists()


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    result = run("--debug", "dedup", "missing.jsonl", "-o", "out", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" in result.stderr


def test_a_failing_run_leaves_nothing_behind(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    good = '{"id": "1", "text": "one two three four five six"}\n'
    source.write_text(good * 50 + "{broken\n")
    result = run("dedup", source, "-o", tmp_path / "out")
    assert result.returncode == 1
    assert f"error: {source}:51: malformed JSON" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_compare_two_files(tmp_path: Path, licenses: list[dict[str, object]]) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    text = str(licenses[50]["text"])
    a.write_text(text)
    b.write_text(str(licenses[51]["text"]) + "\n" + text)
    table = run("compare", a, b)
    assert table.returncode == 0, table.stderr
    assert "containment of A in B" in table.stdout
    assert "estimate: oph" in table.stdout  # dedup's default sketch only, unless asked
    assert "estimate: minhash" not in table.stdout
    assert "SimHash Hamming distance" not in table.stdout
    table = run("compare", a, b, "--sketches", "all")
    assert "estimate: bottomk-containment" in table.stdout
    assert "supershingles shared (altavista)" in table.stdout
    assert "SimHash Hamming distance" in table.stdout
    result = json.loads(
        run("compare", a, b, "--json", "--shingle", "char:9", "--sketches", "all").stdout
    )
    assert result["shingle"] == "char:9"
    assert result["containment_a_in_b"] == 1.0  # B is another text, a newline, then all of A
    assert set(result["estimates"]) == {
        "minhash",
        "minhash-lead",
        "oph",
        "supershingle",
        "weighted",
        "bbit1",
        "bbit2",
        "bbit4",
        "bbit8",
        "bottomk",
        "bottomk-containment",
        "simhash",
    }
    missing = run("compare", a, tmp_path / "nope.txt")
    assert missing.returncode == 1
    assert "nope.txt: no such file" in missing.stderr


def test_sketch_kinds_and_their_options(tmp_path: Path) -> None:
    variant = run(
        "dedup", SAMPLE, "-o", tmp_path / "features", "-q", "--sketch", "supershingle",
        "--preset", "altavista-variant", "--num-perm", "200",
    )  # fmt: skip
    assert variant.returncode == 0, variant.stderr
    summary = json.loads((tmp_path / "features" / "summary.json").read_text())
    assert summary["lsh"]["preset"] == "altavista-variant"
    assert summary["lsh"]["num_groups"] == 8
    too_few = run("dedup", SAMPLE, "-o", tmp_path / "x", "--sketch", "supershingle",
                  "--preset", "altavista-variant")  # fmt: skip
    assert too_few.returncode == 2
    assert "--num-perm 200" in too_few.stderr
    bits = run(
        "dedup", SAMPLE, "-o", tmp_path / "bits", "-q", "--sketch", "bbit", "--bbits", "1",
        "--pairs", "all",  # every candidate measured: the verified pairs are all found
    )  # fmt: skip
    assert bits.returncode == 0, bits.stderr
    summary = json.loads((tmp_path / "bits" / "summary.json").read_text())
    assert summary["params"]["sketch"]["bbits"] == 1
    assert summary["lsh"]["bbits"] == 1
    # Truth: the sample's pairs of J >= 0.8 (exact, by the inverted index), less those of a
    # document the run linked to an exact copy (such documents take no part in LSH). With
    # 1-bit codes a slot agrees with probability P = 1/2 + J/2, so a pair becomes a candidate
    # with probability p = 1 - (1 - P^r)^b; the verified pairs number at least the sum of p
    # less 4 standard deviations sqrt(sum p (1 - p)) (565 - 4 * 3.6 = 550 of 579 here), and
    # at most all of them.
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    position = {str(r["id"]): i for i, r in enumerate(records)}
    lines = (tmp_path / "bits" / "pairs.jsonl").read_text().splitlines()
    reported = [json.loads(line) for line in lines]
    copies = {position[p["b"]] for p in reported if p["identical"]}
    sets = Shingler().shingle_sets([r["text"] for r in records])
    truth = {pair: j for pair, j in all_pairs_above(sets, 0.8).items() if not copies & set(pair)}
    bands, rows = summary["lsh"]["num_bands"], summary["lsh"]["num_rows"]
    p = 1 - (1 - (0.5 + 0.5 * np.array(list(truth.values()))) ** rows) ** bands
    verified = summary["counts"]["verified_pairs"]
    assert p.sum() - 4 * np.sqrt(np.sum(p * (1 - p))) <= verified <= len(truth), (verified, p.sum())
    for pair in reported:
        if not pair["identical"]:
            a, b = sorted((position[pair["a"]], position[pair["b"]]))
            assert truth[(a, b)] == pytest.approx(pair["similarity"])


def test_simhash_method_runs_the_same_job_as_the_library(tmp_path: Path) -> None:
    out = tmp_path / "simhash"
    args = ["--method", "simhash", "--hamming", "4", "--weighting", "tfidf", "--shingle", "word:1"]
    done = run("dedup", SAMPLE, "-o", out, "-q", "--threshold", "0.9", *args)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["lsh"]["scheme"] == "hamming"
    assert summary["lsh"]["max_distance"] == 4
    assert summary["idf"]["num_docs"] == summary["counts"]["items"]
    with gzip.open(SAMPLE, "rt") as f:
        records = [json.loads(line) for line in f]
    config = ConfigFile.from_dict(summary["params"]).config
    result = dedup([r["text"] for r in records], [r["id"] for r in records], config)
    # The command and the library report the same pairs; more than 100 (the sample's licence
    # variants), so that the comparison is not of two empty runs.
    assert summary["counts"]["pairs_reported"] == len(result.pairs) > 100
    assert summary["counts"]["verified_pairs"] >= len(result.pairs)
    lines = (out / "clusters.jsonl").read_text().splitlines()
    kept = {json.loads(line)["id"] for line in lines if json.loads(line)["keep"]}
    assert kept == {result.ids[i] for i in np.flatnonzero(result.clusters.keep)}
    clash = run("dedup", SAMPLE, "-o", tmp_path / "x", "--method", "simhash", "--sketch", "oph")
    assert clash.returncode == 2
    assert "--method simhash conflicts with --sketch oph" in clash.stderr


def _random_corpus(path: Path, num_docs: int) -> None:
    words = np.random.default_rng(3).integers(0, 5000, size=(num_docs, 40)).astype(str)
    lines = [f'{{"id": "{i}", "text": "w{" w".join(row)}"}}\n' for i, row in enumerate(words)]
    path.write_text("".join(lines))


def _signalled_dedup(source: Path, out: Path, signum: int) -> subprocess.CompletedProcess[str]:
    """``neardup dedup`` run as a program and sent ``signum`` once it is writing ``out``."""
    child = subprocess.Popen(
        [str(NEARDUP), "dedup", str(source), "-o", str(out), "-q"],
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not list(out.parent.glob(".out.tmp-*")) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)  # inside the run: reading, sketching
    assert child.poll() is None, "the run ended before the signal"
    child.send_signal(signum)
    _, stderr = child.communicate(timeout=120)
    return subprocess.CompletedProcess(child.args, child.returncode, "", stderr)


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("signum", "code", "said"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
)
def test_an_interrupted_or_terminated_run_removes_what_it_was_writing(
    tmp_path: Path, signum: int, code: int, said: str
) -> None:
    source = tmp_path / "in.jsonl"
    _random_corpus(source, 100_000)
    done = _signalled_dedup(source, tmp_path / "out", signum)
    assert done.returncode == code, done.stderr
    assert done.stderr.strip() == said
    left = sorted(p.name for p in tmp_path.iterdir())
    # no output; no working files: at most the checkpoints of a finished stage, for --resume
    assert left in (["in.jsonl"], [".out.work", "in.jsonl"])
    if left[0] == ".out.work":
        kept = sorted(p.name for p in (tmp_path / ".out.work").iterdir())
        assert kept in (["run.json", "sketch"], ["find", "run.json"])


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_killed_run_leaves_no_output_and_the_next_run_clears_its_remains(
    tmp_path: Path,
) -> None:
    source = tmp_path / "in.jsonl"
    _random_corpus(source, 100_000)
    out = tmp_path / "out"
    _signalled_dedup(source, out, signal.SIGKILL)
    assert not out.exists()
    remains = list(tmp_path.glob(".out.*"))
    assert remains  # SIGKILL cannot clean up: the hidden work directory is still there
    done = run("dedup", source, "-o", out, "-q")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out"]
    assert sorted(p.name for p in out.iterdir()) == [
        "clusters.jsonl", "kept.jsonl", "pairs.jsonl", "summary.json"
    ]  # fmt: skip


def _progress_lines(*args: str | Path) -> list[str]:
    """Stderr of ``neardup *args`` in a process whose progress logs every step."""
    done = subprocess.run(
        [sys.executable, "-c", PROGRESS_SCRIPT, *map(str, args)],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stderr.splitlines()
    assert lines
    assert all("\r" not in line for line in lines)
    return lines


@pytest.mark.subprocess
def test_progress_is_a_log_line_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    lines = _progress_lines("dedup", SAMPLE, "-o", tmp_path / "out")
    assert any(line.startswith("sketch: 100% of 3.7 MB") for line in lines)


@pytest.mark.subprocess
def test_join_mirrors_and_plan_show_their_progress(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(400, 16)).astype(np.float32)
    np.save(tmp_path / "v.npy", np.concatenate([vectors, vectors + 0.01]))
    lines = _progress_lines("join", tmp_path / "v.npy", "--metric", "cosine", "--threshold",
                            "0.95", "-o", tmp_path / "joined")  # fmt: skip
    bands = [line for line in lines if line.startswith("join: ")]
    assert re.match(r"join: 100% of \d+ bands", bands[-1] if bands else ""), lines
    crawl = tmp_path / "crawl.jsonl"
    crawl.write_text(
        "".join(
            json.dumps({"url": f"http://h{i % 3}.example/p{i}", "html": f"<p>page {i} words</p>"})
            + "\n"
            for i in range(30)
        ),
        encoding="utf-8",
    )
    lines = _progress_lines("mirrors", crawl, "--url-field", "url", "--html-field", "html",
                            "-o", tmp_path / "mirrored")  # fmt: skip
    assert any(line.startswith("read: 30 pages") for line in lines), lines
    lines = _progress_lines("plan", SAMPLE, "--sample", "300", "-o", tmp_path / "plan.toml")
    assert any(line.startswith("sample: 100% of 3.7 MB") for line in lines), lines


PROGRESS_SCRIPT = """
import sys
import neardup._progress as progress
progress.LOG_EVERY_S = 0.0
from neardup.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_signal_inside_an_llvm_callback_is_delivered_again_once_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C while numba loads a kernel (llvmlite calling back into Python) crashed the
    process with SIGSEGV: the exception was raised inside the callback. The handler sends the
    signal again a moment later instead; elsewhere it raises at once."""
    from neardup.cli import main as cli_main

    sent: list[int] = []
    delivered = threading.Event()

    def kill(pid: int, signum: int) -> None:
        sent.append(signum)
        delivered.set()

    monkeypatch.setattr(cli_main.os, "kill", kill)
    callback: dict[str, object] = {"__name__": "llvmlite.binding.executionengine", "sys": sys}
    exec("def frame():\n    return sys._getframe()\n", callback)  # a frame of that module
    handler = cli_main._unwinding(KeyboardInterrupt)
    handler(signal.SIGINT, callback["frame"]())  # type: ignore[operator]
    assert delivered.wait(5)
    assert sent == [signal.SIGINT]
    with pytest.raises(KeyboardInterrupt):
        handler(signal.SIGINT, sys._getframe())


def test_config_file_settings_go_in_read_and_output_tables_and_old_ones_are_read(
    tmp_path: Path,
) -> None:
    """``[read]`` and ``[output]`` hold how files are read and written; a file written
    before them, with those keys at the top level, runs the same, with a warning to move them."""
    corpus = tmp_path / "in.jsonl"
    base = "the quick brown fox jumps over the lazy dog and runs far away into the woods"
    rows = [{"id": "a", "body": base}, {"id": "b", "body": base + " today"}]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    new = tmp_path / "new.toml"
    new.write_text('keep = "longest"\n[read]\ntext_field = "body"\n[output]\ncompress = "gzip"\n')
    old = tmp_path / "old.toml"
    old.write_text('keep = "longest"\ntext_field = "body"\ncompress = "gzip"\n')
    done = run("dedup", corpus, "--config", new, "-o", tmp_path / "new", "-q")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    done = run("dedup", corpus, "--config", old, "-o", tmp_path / "old", "-q")
    assert done.returncode == 0, done.stderr
    assert "key(s) text_field belong in the [read] table now" in done.stderr
    assert "key(s) compress belong in the [output] table now" in done.stderr
    for name in ("clusters.jsonl", "pairs.jsonl", "kept.jsonl.gz"):
        assert (tmp_path / "new" / name).read_bytes() == (tmp_path / "old" / name).read_bytes()
    kept = gzip.decompress((tmp_path / "new" / "kept.jsonl.gz").read_bytes()).decode()
    assert [json.loads(line)["id"] for line in kept.splitlines()] == ["b"]  # the longest
