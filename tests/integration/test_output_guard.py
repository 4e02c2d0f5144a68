"""No command destroys what the user did not ask to replace: one guard for every output.

The commands are enumerated from the CLI itself: a new command must be listed here, as a
writer (with how to run it) or as one that writes nothing, or the first test fails.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from neardup.cli.main import command_options, leaf_commands, main

RECORDS = [
    {
        "id": f"d{i}",
        "url": f"http://site{i % 2}.example/page{i // 2}",
        "text": f"the quick brown fox number {i // 2} jumps over the lazy dog again and again",
        "items": [i // 2, 10, 11, 12, 13],
    }
    for i in range(8)
]


@dataclass(frozen=True)
class Writer:
    """How a command is run with its output at ``OUT`` and its input at ``IN``."""

    argv: tuple[str, ...]
    kind: str  # "dir" or "file": what the command writes at OUT
    made_by: tuple[str, ...] = ()  # a command (with OUT) that makes an earlier output to replace


WRITERS: dict[str, Writer] = {
    "dedup": Writer(("dedup", "IN", "-o", "OUT", "-q"), "dir"),
    "join": Writer(
        (
            "join",
            "IN",
            "--metric",
            "jaccard",
            "--threshold",
            "0.5",
            "--items-field",
            "items",
            "-o",
            "OUT",
            "-q",
        ),
        "dir",
    ),
    "mirrors": Writer(
        ("mirrors", "IN", "--url-field", "url", "--text-field", "text", "-o", "OUT", "-q"), "dir"
    ),
    "contamination": Writer(("contamination", "IN", "--against", "IN", "-o", "OUT", "-q"), "dir"),
    "substrings": Writer(("substrings", "IN", "-o", "OUT", "-q"), "dir"),
    "plan": Writer(("plan", "IN", "-o", "OUT"), "file"),
    "report": Writer(("report", "RUN", "-o", "OUT"), "file"),
    "index create": Writer(("index", "create", "OUT"), "file"),
    "index add": Writer(("index", "add", "OUT", "IN"), "file", ("index", "create", "OUT")),
    "index delete": Writer(("index", "delete", "OUT", "d0"), "file", ("index", "create", "OUT")),
}
"""Every command that writes, and where."""

READERS: dict[str, tuple[str, ...]] = {
    "compare": ("compare", "IN", "IN"),
    "index query": ("index", "query", "IDX", "--text", "the quick brown fox"),
    "index info": ("index", "info", "IDX"),
    "index check": ("index", "check", "IDX"),
    "serve": (),  # opens an index as index add does (the same store); started in test_service
    "warmup": (),  # compiles kernels into numba's cache, on records of its own in a temporary dir
}
"""Every command that writes nothing of its own (an index path it is given must be an index)."""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    return path


@pytest.fixture
def run_dir(corpus: Path) -> Path:
    assert main(["dedup", str(corpus), "-o", "run", "-q"]) == 0
    return corpus.parent / "run"


def _argv(writer: Writer, out: Path | str, corpus: Path, run: Path) -> list[str]:
    values = {"OUT": str(out), "IN": str(corpus), "RUN": str(run)}
    return [values.get(arg, arg) for arg in writer.argv]


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code in (1, 2), (argv, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    return lines[0]


def test_every_command_is_listed_as_a_writer_or_a_reader() -> None:
    commands = set(leaf_commands())
    assert commands == set(WRITERS) | set(READERS), (
        "a command is missing from WRITERS or READERS: say where it writes"
    )
    for name, writer in WRITERS.items():
        if writer.argv[-1] != "OUT" and "-o" in writer.argv:
            assert "--overwrite" in command_options(leaf_commands()[name]), name


@pytest.mark.parametrize("name", sorted(WRITERS))
@pytest.mark.parametrize("how", ["the input", "a link to the input"])
def test_no_command_writes_over_its_input(
    name: str, how: str, corpus: Path, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    writer = WRITERS[name]
    target = corpus
    if how == "a link to the input":
        target = corpus.parent / "link.jsonl"
        target.symlink_to(corpus.name)
    before = _digest(corpus)
    for extra in (
        ([], ["--overwrite"]) if "--overwrite" in command_options(leaf_commands()[name]) else ([],)
    ):
        _refused([*_argv(writer, target, corpus, run_dir), *extra], capsys)
        assert _digest(corpus) == before
    assert target.is_symlink() or target == corpus


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_no_command_replaces_a_file_it_did_not_write(
    name: str, corpus: Path, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    writer = WRITERS[name]
    mine = corpus.parent / "notes.txt"
    mine.write_text("the user's own notes\n")
    options = command_options(leaf_commands()[name])
    for extra in ([], ["--overwrite"]) if "--overwrite" in options else ([],):
        _refused([*_argv(writer, mine, corpus, run_dir), *extra], capsys)
        assert mine.read_text() == "the user's own notes\n"


@pytest.mark.parametrize("name", sorted(n for n, w in WRITERS.items() if w.kind == "dir"))
def test_no_output_directory_holds_an_input(
    name: str, corpus: Path, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inside = corpus.parent / "data"
    inside.mkdir()
    moved = inside / "corpus.jsonl"
    corpus.rename(moved)
    before = _digest(moved)
    line = _refused([*_argv(WRITERS[name], inside, moved, run_dir), "--overwrite"], capsys)
    assert "holds the input" in line
    assert _digest(moved) == before


@pytest.mark.parametrize(
    "name", sorted(n for n, w in WRITERS.items() if "-o" in w.argv and "OUT" in w.argv)
)
def test_overwrite_replaces_only_an_earlier_output_of_the_same_command(
    name: str, corpus: Path, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    writer = WRITERS[name]
    out = corpus.parent / ("again" if writer.kind == "dir" else "again.out")
    argv = _argv(writer, out, corpus, run_dir)
    assert main(argv) == 0, capsys.readouterr().err
    first = _contents(out)
    line = _refused(argv, capsys)
    assert "--overwrite" in line
    assert main([*argv, "--overwrite"]) == 0, capsys.readouterr().err
    assert _contents(out).keys() == first.keys()
    other = _other_output(corpus, run_dir, writer)
    before = _contents(other)
    line = _refused([*_argv(writer, other, corpus, run_dir), "--overwrite"], capsys)
    assert "--overwrite replaces only" in line or "is the input" in line, line
    assert _contents(other) == before


def _other_output(corpus: Path, run_dir: Path, writer: Writer) -> Path:
    """neardup's output of another command than ``writer``'s, of the same shape."""
    if writer.kind == "dir" and writer.argv[0] != "dedup":
        return run_dir
    other = corpus.parent / "other.out"
    maker = WRITERS["join" if writer.argv[0] == "dedup" else "report"]
    if writer.argv[0] == "report":
        maker = WRITERS["plan"]
    assert main(_argv(maker, other, corpus, run_dir)) == 0
    return other


def _contents(path: Path) -> dict[str, str]:
    files = sorted(path.iterdir()) if path.is_dir() else [path]
    return {f.name: _digest(f) for f in files if f.is_file()}


@pytest.mark.parametrize("name", ["summary.json", "clusters.jsonl", "pairs.jsonl"])
def test_a_report_never_replaces_a_file_of_its_run(
    name: str, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = run_dir / name
    before = _digest(target)
    for extra in ([], ["--overwrite"]):
        line = _refused(["report", str(run_dir), "-o", str(target), *extra], capsys)
        assert "the output is the input" in line
    assert _digest(target) == before
    assert main(["dedup", "corpus.jsonl", "-o", "run", "--overwrite", "-q"]) == 0


@pytest.mark.parametrize("name", sorted(n for n in READERS if READERS[n]))
def test_readers_leave_a_file_that_is_no_index_unchanged(
    name: str, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = {"IN": str(corpus), "IDX": str(corpus)}
    before = _digest(corpus)
    argv = [values.get(arg, arg) for arg in READERS[name]]
    if name == "compare":
        assert main(argv) == 0
        capsys.readouterr()
    else:
        _refused(argv, capsys)
    assert _digest(corpus) == before
    assert sorted(p.name for p in corpus.parent.iterdir()) == ["corpus.jsonl"]


@pytest.mark.parametrize("name", sorted(n for n, w in WRITERS.items() if w.kind == "file"))
def test_an_empty_output_path_is_refused_before_any_work(
    name: str, corpus: Path, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = sorted(p.name for p in corpus.parent.iterdir())
    _refused(_argv(WRITERS[name], "", corpus, run_dir), capsys)
    assert sorted(p.name for p in corpus.parent.iterdir()) == before
