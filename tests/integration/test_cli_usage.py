"""Bad usage of every command: one line naming the option as the user typed it, exit code 2.

The specs and functions behind the commands name their parameters as Python callers write them
(``LSHSpec.threshold``, ``plan.recall``); on the command line each rule names the option
(``--threshold must be ...``), and a value of the wrong type says which option it was given to.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.integration.conftest import run

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "licenses.jsonl.gz"

PYTHON_NAMES = re.compile(r"\b[A-Z]\w*(?:Spec|Config)\b|\b(?:plan|report)\.\w|\b\w+_\w+\b")
"""What a command-line error must not say: a spec class, a function's parameter, a Python name
(``num_clusters``); the options are spelled with hyphens."""

JOIN = ["join", "{sets}", "--metric", "jaccard", "-o", "out"]

# (command line, the option the one line names first)
BAD_USAGES: list[tuple[list[str], str]] = [
    (["dedup", "{sample}", "-o", "out", "--threshold", "2"], "--threshold"),
    (["dedup", "{sample}", "-o", "out", "--bands", "3"], "--bands"),
    (["dedup", "{sample}", "-o", "out", "--num-perm", "abc"], "--num-perm"),
    (["dedup", "{sample}", "-o", "out", "--memory-gb", "0"], "--memory-gb"),
    (["dedup", "{sample}", "-o", "out", "--memory-gb", "1e12"], "--memory-gb"),
    (["dedup", "{sample}", "-o", "out", "--batch-mb", "1e9"], "--batch-mb"),
    (["substrings", "{sample}", "-o", "out", "--memory-gb", "-1"], "--memory-gb"),
    (["dedup", "{sample}", "-o", "out", "--shingle", "words"], "--shingle"),
    (["dedup", "{sample}", "-o", "out", "--sketch", "nope"], "--sketch"),
    (["dedup", "{sample}", "-o", "out", "--tokenizer", "spacy"], "--tokenizer"),
    (
        ["dedup", "{sample}", "-o", "out", "--tokenizer", "jieba", "--shingle", "char:5"],
        "--shingle",
    ),
    ([*JOIN, "--threshold", "2"], "--threshold"),
    ([*JOIN, "--threshold", "0.5", "--bands", "0"], "--bands"),
    ([*JOIN, "--threshold", "0.5", "--rows", "2"], "--bands"),
    ([*JOIN, "--threshold", "0.5", "--memory-gb", "-1"], "--memory-gb"),
    (["mirrors", "{sample}", "-o", "out", "--threshold", "2"], "--threshold"),
    (["plan", "{sample}", "-o", "plan.toml", "--threshold", "2"], "--threshold"),
    (["plan", "{sample}", "-o", "plan.toml", "--recall", "1"], "--recall"),
    (["plan", "{sample}", "-o", "plan.toml", "--sample-mb", "0"], "--sample-mb"),
    (["report", "out", "--clusters", "-1"], "--clusters"),
    (["report", "out", "--pairs-per-band", "-1"], "--pairs-per-band"),
    (["report", "out", "--clusters", "many"], "--clusters"),
    (["index", "create", "new.ndx", "--threshold", "0"], "--threshold"),
    (["index", "create", "new.ndx", "--num-perm", "0"], "--num-perm"),
    (["compare", "{sample}", "{sample}", "--shingle", "word:0"], "--shingle"),
]


@pytest.mark.parametrize(("args", "option"), BAD_USAGES, ids=[" ".join(a) for a, _ in BAD_USAGES])
def test_a_bad_usage_is_one_line_naming_the_option(
    tmp_path: Path, args: list[str], option: str
) -> None:
    sets = tmp_path / "sets.jsonl"
    sets.write_text(json.dumps({"id": "a", "items": ["x", "y"]}) + "\n", encoding="utf-8")
    before = sorted(tmp_path.rglob("*"))
    done = run(*[a.format(sample=SAMPLE, sets=sets) for a in args], cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {option}"), lines[0]
    assert not PYTHON_NAMES.search(lines[0]), lines[0]
    assert sorted(tmp_path.rglob("*")) == before  # nothing written
