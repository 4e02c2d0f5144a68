"""``compare --explain`` and ``dedup --explain``: shared passages at the command line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from neardup.explain import shared_passages
from tests.conftest import SAMPLE
from tests.integration.conftest import run

pytestmark = pytest.mark.usefixtures("installed")


def test_compare_explain_prints_and_marks_the_shared_passages(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("An old preface. " + "the same sentence of many shared words here " * 3)
    b.write_text("the same sentence of many shared words here " * 3 + "A new ending.")
    done = run("compare", a, b, "--explain", "--color", "never")
    assert done.returncode == 0, done.stderr
    assert "shared passages: 1" in done.stdout
    assert "[[the same sentence" in done.stdout
    colored = run("compare", a, b, "--explain", "--color", "always")
    assert "\x1b[1;33mthe same sentence" in colored.stdout
    record = json.loads(run("compare", a, b, "--explain", "--json").stdout)
    (passage,) = record["passages"]
    assert a.read_text()[passage[0] : passage[1]] == b.read_text()[passage[2] : passage[3]].strip()


def test_dedup_explain_writes_each_pairs_passages(tmp_path: Path) -> None:
    done = run("dedup", SAMPLE, "-o", tmp_path / "out", "--explain", "-q")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in (tmp_path / "out" / "pairs.jsonl").read_text().splitlines()]
    near = [x for x in lines if not x["exact"]]
    assert near
    assert all("passages" in x for x in near)
    assert not any("passages" in x for x in lines if x["exact"])
    texts = {}
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            texts[record["id"]] = record["text"]
    for pair in near[:20]:
        expected = shared_passages(texts[pair["a"]], texts[pair["b"]])
        assert pair["passages"] == [
            [p.a_start, p.a_end, p.b_start, p.b_end, p.num_shingles] for p in expected
        ]
        assert pair["passages"]
