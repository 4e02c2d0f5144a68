"""Containment as a criterion from the command line: ``dedup --measure containment`` and
``join --metric containment``.

The planted corpus (:mod:`tests.planted`) sets real licence texts inside hosts 1.5 to 8 times
as long: containment finds every planted pair at the threshold with its exact value and keeps
the host; Jaccard at the same threshold finds almost none.
"""

from __future__ import annotations

import csv
import json
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SUMMARY_SCHEMA, shared
from tests.integration.conftest import run
from tests.planted import Planted, plant_containment, shingle_set

THRESHOLD = 0.8


@pytest.fixture(scope="module")
def planted(licenses: list[dict[str, object]]) -> Planted:
    return plant_containment([str(r["text"]) for r in licenses], 150, num_others=300, seed=3)


@pytest.fixture(scope="module")
def corpus(planted: Planted, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("planted") / "planted.jsonl"
    lines = (json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(planted.texts))
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _pairs(out: Path) -> dict[tuple[int, int], float]:
    return {
        (int(p["a"][1:]), int(p["b"][1:])): p["similarity"] for p in _lines(out / "pairs.jsonl")
    }


def test_containment_finds_every_planted_pair_and_keeps_the_host(
    corpus: Path, planted: Planted, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = run(
        *["dedup", str(corpus), "--measure", "containment", "--pairs", "all", "-o", str(out), "-q"]
    )
    assert result.returncode == 0, result.stderr
    truth = planted.pairs_at(THRESHOLD)
    assert len(truth) >= 140
    pairs = _pairs(out)
    for inner, host in truth:
        assert pairs[inner, host] == pytest.approx(planted.containment[inner, host], abs=1e-6)
    kept = {int(r["id"][1:]): r["keep"] for r in _lines(out / "clusters.jsonl")}
    assert not any(kept[inner] for inner, _ in truth)
    summary = json.loads((out / "summary.json").read_text())
    SUMMARY_SCHEMA.validate(summary)
    assert summary["measure"] == "containment"
    assert summary["params"]["keep"] == "longest"
    assert summary["params"]["lsh"]["family"] == "containment"
    # Every pair, planted or not (the hosts hold other licences' words), is the shorter text
    # inside the longer at its exact containment.
    texts = planted.texts
    sets = [shingle_set(t) for t in texts]
    for (a, b), value in pairs.items():
        assert (len(texts[a]), -a) < (len(texts[b]), -b)
        assert value == pytest.approx(len(sets[a] & sets[b]) / len(sets[a]), abs=1e-6)
        assert value >= THRESHOLD


def test_jaccard_at_the_same_threshold_misses_the_planted_pairs(
    corpus: Path, planted: Planted, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = run("dedup", str(corpus), "--pairs", "all", "-o", str(out), "-q")
    assert result.returncode == 0, result.stderr
    truth = planted.pairs_at(THRESHOLD)
    found = {tuple(sorted(p)) for p in _pairs(out)} & {tuple(sorted(p)) for p in truth}
    assert len(found) <= 0.1 * len(truth)


REFUSED = [
    (["--keep", "first"], "keep must be 'longest' with the containment family"),
    (["--verify", "signature"], "verify must be 'exact'"),
    (["--engine", "spark"], "'containment' family needs every shingle set on one machine"),
    (["--unit", "line"], "containment (--measure containment, the containment family) is"),
    (["--against", "{index}"], "--against matches them with an index by Jaccard"),
    (["--method", "simhash"], "--measure containment compares shingle sets"),
]
"""What containment does not run with, by either way of asking for it."""


@pytest.mark.parametrize(
    ("how", "options", "message"),
    [
        *[(["--measure", "containment"], o, m) for o, m in REFUSED],
        *[(["--family", "containment"], o, m) for o, m in REFUSED],
        (["--measure", "containment"], ["--family", "bands"], "drop --family bands"),
    ],
)
def test_what_containment_cannot_do_is_refused(
    corpus: Path, tmp_path: Path, options: list[str], message: str, how: list[str]
) -> None:
    index = tmp_path / "seen.ndx"
    assert run("index", "create", str(index)).returncode == 0
    out = tmp_path / "out"
    options = [o.format(index=index) for o in options]
    result = run("dedup", str(corpus), *how, *options, "-o", str(out))
    assert result.returncode != 0
    assert message in result.stderr
    assert not out.exists()


def test_explained_containment_pairs_are_valid_json(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run(
        *["dedup", str(corpus), "--family", "containment", "--explain", "-o", str(out), "-q"]
    )
    assert result.returncode == 0, result.stderr
    near = [p for p in _lines(out / "pairs.jsonl") if not p["identical"]]
    assert near
    assert all(p["estimate"] is None and p["passages"] for p in near)


def test_a_measure_the_sketch_does_not_have_is_refused(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run(
        *["dedup", str(corpus), "--method", "simhash", "--measure", "jaccard", "-o", str(out)]
    )
    assert result.returncode != 0
    assert "--measure jaccard: --sketch simhash measures cosine" in result.stderr


def test_join_containment_of_item_sets_equals_the_definition(tmp_path: Path) -> None:
    baskets = {
        "big": [f"i{n}" for n in range(40)],
        "inside": [f"i{n}" for n in range(0, 20)] + ["x"],
        "half": [f"i{n}" for n in range(30, 50)],
        "alone": ["y", "z"],
    }
    path = tmp_path / "baskets.jsonl"
    path.write_text("".join(json.dumps({"id": k, "items": v}) + "\n" for k, v in baskets.items()))
    out = tmp_path / "out"
    result = run(
        *["join", str(path), "--metric", "containment", "--threshold", "0.5", "-o", str(out), "-q"]
    )
    assert result.returncode == 0, result.stderr
    truth = {}
    for a, b in combinations(baskets, 2):
        small, large = sorted((a, b), key=lambda k: len(set(baskets[k])))
        value = len(set(baskets[small]) & set(baskets[large])) / len(set(baskets[small]))
        if value >= 0.5:
            truth[small, large] = round(value, 6)
    assert {(p["a"], p["b"]): p["similarity"] for p in _lines(out / "pairs.jsonl")} == truth
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["metric"], summary["family"]) == ("containment", "containment")
    refused = run(
        *[
            "join",
            str(path),
            "--metric",
            "containment",
            "--threshold",
            "0.5",
            "--exact",
            "-o",
            str(tmp_path / "o2"),
        ]
    )
    assert refused.returncode != 0


def test_copied_short_answers_are_found_inside_their_wikipedia_source(tmp_path: Path) -> None:
    # Clough & Stevenson: answers written by cutting from (cut), lightly or heavily revising
    # (light, heavy) a Wikipedia article, or without it (non). An answer is much shorter than
    # its source, so its Jaccard with it is low even when it is mostly copied.
    folder = shared("clough_stevenson_short_answers/file_information.csv").parent
    with (folder / "file_information.csv").open(encoding="utf-8") as f:
        answers = [r for r in csv.DictReader(f) if r["Category"] != "orig"]
    names = [r["File"] for r in answers] + [f"orig_task{t}.txt" for t in "abcde"]
    texts = {name: (folder / name).read_text(encoding="latin-1") for name in names}
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps({"id": n, "text": texts[n]}) + "\n" for n in names))
    found = {}
    for measure in ("containment", "jaccard"):
        out = tmp_path / measure
        result = run(
            *["dedup", str(path), "--measure", measure, "--threshold", "0.5"],
            *["--pairs", "all", "-o", str(out), "-q"],
        )
        assert result.returncode == 0, result.stderr
        found[measure] = {(p["a"], p["b"]): p["similarity"] for p in _lines(out / "pairs.jsonl")}
    sets = {name: shingle_set(text) for name, text in texts.items()}
    for (a, b), value in found["containment"].items():
        assert len(texts[a]) <= len(texts[b])  # the shorter text is the contained one
        assert value == pytest.approx(len(sets[a] & sets[b]) / len(sets[a]), abs=1e-6)
    copied = {"cut": 0, "light": 0, "heavy": 0, "non": 0}
    by_jaccard = 0
    for r in answers:
        pair = (r["File"], f"orig_task{r['Task']}.txt")
        if len(texts[pair[0]]) > len(texts[pair[1]]):
            pair = pair[::-1]  # an answer longer than its source
        copied[r["Category"]] += pair in found["containment"]
        by_jaccard += pair in found["jaccard"] or pair[::-1] in found["jaccard"]
        inside = len(sets[pair[0]] & sets[pair[1]]) / len(sets[pair[0]])
        assert (pair in found["containment"]) == (inside >= 0.5)
    assert copied["cut"] >= copied["light"] >= copied["heavy"] >= copied["non"] == 0
    assert copied["cut"] >= 10
    assert sum(copied.values()) >= 3 * by_jaccard
