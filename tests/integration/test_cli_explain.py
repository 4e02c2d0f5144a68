"""``compare --explain`` and ``dedup --explain``: shared passages at the command line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from neardup.explain import ELISION, shared_passages
from neardup.params import ShingleSpec, SketchSpec
from tests.conftest import SAMPLE
from tests.integration.conftest import run

pytestmark = pytest.mark.usefixtures("installed")


def test_compare_explain_prints_and_marks_the_shared_passages(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    shared = "the same sentence of many shared words here " * 3
    a.write_text("An old preface. " + shared)
    b.write_text(shared + "A new ending.")
    done = run("compare", a, b, "--explain")  # auto: no terminal here, so markers
    assert done.returncode == 0, done.stderr
    assert "exact Jaccard" in done.stdout  # the usual table comes first
    assert "shared passages: 1" in done.stdout
    assert "A[16:147] = B[0:131] (20 shingles)" in done.stdout
    assert f"An old preface. [[{shared.strip()}]]" in done.stdout
    assert "\x1b[" not in done.stdout
    assert done.stdout == run("compare", a, b, "--explain", "--color", "never").stdout
    colored = run("compare", a, b, "--explain", "--color", "always").stdout
    assert "\x1b[33m\x1b[1mthe same sentence" in colored
    assert "[[" not in colored
    record = json.loads(run("compare", a, b, "--explain", "--json").stdout)
    assert record["passages"] == [[16, 147, 0, 131, 20]]
    assert "passages" not in json.loads(run("compare", a, b, "--json").stdout)


def test_compare_explain_elides_long_unshared_stretches(
    tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    texts = {str(r["id"]): str(r["text"]) for r in licenses}
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(texts["lgpl-2.1"])
    b.write_text(texts["lgpl-3.0"])
    done = run("compare", a, b, "--explain", "--shingle", "word:8")
    assert done.returncode == 0, done.stderr
    expected = shared_passages(
        texts["lgpl-2.1"], texts["lgpl-3.0"], SketchSpec(shingle=ShingleSpec.parse("word:8"))
    )
    assert f"shared passages: {len(expected)}" in done.stdout
    assert ELISION in done.stdout
    highlighted = done.stdout.split("--- A ---")[1]
    assert len(highlighted) < len(texts["lgpl-2.1"]) + len(texts["lgpl-3.0"])


def test_dedup_explain_writes_each_pairs_passages(tmp_path: Path) -> None:
    done = run("dedup", SAMPLE, "-o", tmp_path / "out", "--explain", "-q")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in (tmp_path / "out" / "pairs.jsonl").read_text().splitlines()]
    near = [x for x in lines if not x["identical"]]
    assert near
    assert all("passages" in x for x in near)
    assert not any("passages" in x for x in lines if x["identical"])
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
