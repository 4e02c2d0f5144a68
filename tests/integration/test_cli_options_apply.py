"""An option that does nothing where it is given is refused, in one line, before any work.

The options whose use depends on the rest of the command line (the engine, the inputs'
format, another option) are listed in CONTEXTUAL; every command that has one must refuse it
where it does not apply, with a case in CASES: a new command with such an option and no rule
fails the first test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neardup.cli.main import command_options, leaf_commands, main

CONTEXTUAL = frozenset(
    {
        "--spark-master",
        "--spark-conf",
        "--html-extract",
        "--encoding",
        "--html-field",
        "--model",
        "--embeddings",
        "--save-embeddings",
        "--device",
        "--cosine-threshold",
        "--host-templates",
    }
)
"""Options that apply only with some engine, input format or other option."""

JOIN = ["join", "in.jsonl", "--metric", "edit", "--threshold", "2", "-o", "out"]

CASES: list[tuple[str, list[str], str]] = [
    ("dedup", ["dedup", "in.jsonl", "-o", "out", "--spark-master", "local[2]"], "--spark-master"),
    ("dedup", ["dedup", "in.jsonl", "-o", "out", "--spark-conf", "a=b"], "--spark-conf"),
    ("dedup", ["dedup", "in.jsonl", "-o", "out", "--html-extract", "main"], "--html-extract"),
    ("dedup", ["dedup", "in.jsonl", "-o", "out", "--encoding", "cp1252"], "--encoding"),
    ("dedup", ["dedup", "in.jsonl", "-o", "out", "--model", "m"], "--model"),
    ("dedup", ["dedup", "in.jsonl", "-o", "out", "--embeddings", "e.npy"], "--embeddings"),
    ("dedup", ["dedup", "in.jsonl", "-o", "out", "--save-embeddings"], "--save-embeddings"),
    ("dedup", ["dedup", "in.jsonl", "-o", "out", "--device", "cuda"], "--device"),
    (
        "dedup",
        ["dedup", "in.jsonl", "-o", "out", "--cosine-threshold", "0.9"],
        "--cosine-threshold",
    ),
    ("dedup", ["dedup", "in.jsonl", "-o", "out", "--host-templates"], "--host-templates"),
    (
        "dedup",
        ["dedup", "in.jsonl", "-o", "out", "--text-field", "t", "--html-field", "h"],
        "--html-field",
    ),
    ("plan", ["plan", "in.jsonl", "-o", "p.toml", "--html-extract", "main"], "--html-extract"),
    ("plan", ["plan", "in.jsonl", "-o", "p.toml", "--encoding", "cp1252"], "--encoding"),
    (
        "plan",
        ["plan", "in.jsonl", "-o", "p.toml", "--text-field", "t", "--html-field", "h"],
        "--html-field",
    ),
    ("index add", ["index", "add", "x.ndx", "in.jsonl", "--encoding", "latin-1"], "--encoding"),
    (
        "index add",
        ["index", "add", "x.ndx", "in.jsonl", "--html-extract", "main"],
        "--html-extract",
    ),
    (
        "index add",
        ["index", "add", "x.ndx", "in.jsonl", "--text-field", "t", "--html-field", "h"],
        "--html-field",
    ),
    ("index query", ["index", "query", "x.ndx", "--text", "a", "--format", "csv"], "--format"),
    ("index query", ["index", "query", "x.ndx", "in.jsonl", "--encoding", "utf-8"], "--encoding"),
    (
        "index query",
        ["index", "query", "x.ndx", "in.jsonl", "--html-extract", "main"],
        "--html-extract",
    ),
    (
        "index query",
        ["index", "query", "x.ndx", "in.jsonl", "--text-field", "t", "--html-field", "h"],
        "--html-field",
    ),
    ("join", [*JOIN, "--spark-master", "local[2]"], "--spark-master"),
    ("join", [*JOIN, "--spark-conf", "a=b"], "--spark-conf"),
    ("join", [*JOIN, "--html-extract", "main"], "--html-extract"),
    ("join", [*JOIN, "--qgram", "3", "--metric", "jaccard"], "--qgram"),
    ("compare", ["compare", "in.jsonl", "in.jsonl", "--html-extract", "main"], "--html-extract"),
    ("mirrors", ["mirrors", "in.warc.gz", "-o", "out", "--url-field", "url"], "--url-field"),
    ("mirrors", ["mirrors", "in.warc.gz", "-o", "out", "--html-field", "html"], "--html-field"),
    (
        "mirrors",
        [
            "mirrors",
            "in.jsonl",
            "-o",
            "out",
            "--url-field",
            "url",
            "--text-field",
            "text",
            "--html-extract",
            "main",
        ],
        "--html-extract",
    ),
]


def test_every_contextual_option_of_every_command_has_a_refusal() -> None:
    covered = {(name, option) for name, _, option in CASES}
    missing = {
        (name, option)
        for name, command in leaf_commands().items()
        for option in command_options(command) & CONTEXTUAL
        if (name, option) not in covered
    }
    assert not missing, f"options without a case where they do not apply: {sorted(missing)}"


@pytest.mark.parametrize(("name", "argv", "option"), CASES, ids=[" ".join(c[1]) for c in CASES])
def test_an_option_that_does_not_apply_is_refused(
    name: str,
    argv: list[str],
    option: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.jsonl").write_text(json.dumps({"id": "a", "text": "a b c d e"}) + "\n")
    (tmp_path / "in.warc.gz").write_bytes(b"")
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ")
    assert option in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "in.warc.gz"]


def test_stopwords_from_a_file_are_recorded_with_the_run(tmp_path: Path) -> None:
    from tests.conftest import SAMPLE
    from tests.integration.conftest import run

    (tmp_path / "stop.txt").write_text("the\nof or\nthe\n", encoding="utf-8")
    done = run(
        "dedup", SAMPLE, "--shingle", "stopword:3", "--stopwords", "@stop.txt", "-o", "out",
        "-q", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    shingle = summary["params"]["sketch"]["shingle"]
    assert (shingle["unit"], shingle["stopwords"]) == ("stopword", "words:the of or")
    for value, message in [("klingon", "neither a language"), ("@missing.txt", "cannot read")]:
        refused = run("dedup", SAMPLE, "--stopwords", value, "-o", "x", cwd=tmp_path)
        assert refused.returncode == 2
        assert message in refused.stderr
        assert "--stopwords" in refused.stderr
