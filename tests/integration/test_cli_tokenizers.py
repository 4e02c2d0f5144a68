"""``--tokenizer``: ``neardup dedup`` over model tokens finds planted near copies as it does over
words, and a tokenizer that cannot be used is refused in one line before any work."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from neardup import LSHSpec, NormalizeSpec, Shingler, ShingleSpec, bands_rows, s_curve
from tests.conftest import SUMMARY_SCHEMA, read_rfcs
from tests.integration.conftest import run

pytest.importorskip("tiktoken")

CL100K = "tiktoken:cl100k_base"


def near_copy(text: str, rng: random.Random, rate: float) -> str:
    """``text`` with about ``rate`` of its words (at least one) replaced by other words of it,
    as an editor's small changes are (tests/planted.py's edits, without the surroundings)."""
    words = text.split()
    edited = [rng.choice(words) if rng.random() < rate else word for word in words]
    at = rng.randrange(len(words))
    edited[at] = "revised" if words[at] != "revised" else "edited"
    return " ".join(edited)


def planted_corpus(
    texts: list[str], num_copies: int, rate: float, path: Path, seed: int = 0
) -> list[tuple[str, str]]:
    """Write ``texts`` and a near copy of ``num_copies`` of them, shuffled, as JSONL; return
    the planted (source id, copy id) pairs."""
    rng = random.Random(seed)
    records = [{"id": f"doc{i}", "text": t} for i, t in enumerate(texts)]
    planted = []
    for i in rng.sample(range(len(texts)), num_copies):
        records.append({"id": f"copy{i}", "text": near_copy(texts[i], rng, rate)})
        planted.append((f"doc{i}", f"copy{i}"))
    rng.shuffle(records)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return planted


def found_pairs(out: Path) -> set[frozenset[str]]:
    """The verified pairs of a run with ``--pairs all``."""
    lines = (out / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    return {frozenset((p["a"], p["b"])) for p in map(json.loads, lines)}


def test_dedup_over_model_tokens_finds_the_planted_near_copies(
    tmp_path: Path, licenses: list[dict[str, object]], offline_tiktoken: Path
) -> None:
    long_texts = [str(r["text"]) for r in licenses if len(str(r["text"]).split()) >= 300]
    corpus = tmp_path / "licences.jsonl"
    planted = planted_corpus(long_texts[:40], 6, 0.01, corpus)
    out = tmp_path / "out"
    done = run("dedup", corpus, "-o", out, "--tokenizer", CL100K, "--pairs", "all", "-q")
    assert done.returncode == 0, done.stderr
    assert {frozenset(p) for p in planted} <= found_pairs(out)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    SUMMARY_SCHEMA.validate(summary)
    assert summary["signatures"]["sketch"]["normalize"]["tokenizer"] == CL100K


def test_an_encoding_tiktoken_does_not_know_is_refused_before_any_work(tmp_path: Path) -> None:
    corpus = tmp_path / "in.jsonl"
    corpus.write_text(json.dumps({"id": "a", "text": "some text"}) + "\n", encoding="utf-8")
    done = run("dedup", corpus, "-o", tmp_path / "out", "--tokenizer", "tiktoken:cl100k_bsae")
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: --tokenizer names tiktoken encoding 'cl100k_bsae'"), line
    assert "cl100k_base" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_model_tokens_find_the_planted_rfc_copies_that_words_find(
    tmp_path: Path, offline_tiktoken: Path
) -> None:
    """Recall over the planted pairs of an RFC sample: word 5-shingles against 5-shingles of
    cl100k_base tokens, at the default threshold (0.8).

    A planted pair at exact Jaccard J becomes a candidate with probability P(J) = 1 - (1 -
    J^r)^b (the S-curve of the run's bands) and is reported when J reaches the threshold, so
    the pairs each run finds are a sum of independent Bernoulli draws: mean E = sum P, variance
    V = sum P (1 - P), with J measured under that run's own shingles (one word in a hundred
    replaced: J near 0.9 for words, a little higher for tokens: a word of the RFCs is 1.5
    tokens on average, so a replaced word changes a smaller share of the shingles). The two
    counts may differ by their means' difference plus three standard deviations of the
    difference, sqrt(V_words + V_tokens): the tolerance of "equal within noise".
    """
    rfcs = read_rfcs(limit=400)
    texts = [" ".join(t.split()[:1500]) for t in rfcs.values() if len(t.split()) >= 500][:150]
    corpus = tmp_path / "rfcs.jsonl"
    planted = planted_corpus(texts, 100, 0.01, corpus)
    by_id = {
        r["id"]: r["text"] for r in map(json.loads, corpus.read_text(encoding="utf-8").splitlines())
    }
    threshold = 0.8
    num_bands, num_rows = bands_rows(LSHSpec(threshold=threshold), 128)
    counts = {}
    for name, tokenizer in (("words", None), ("tokens", CL100K)):
        out = tmp_path / name
        options = [] if tokenizer is None else ["--tokenizer", tokenizer]
        done = run("dedup", corpus, "-o", out, "--pairs", "all", "-q", *options)
        assert done.returncode == 0, done.stderr
        found = found_pairs(out)
        shingler = Shingler(ShingleSpec(), NormalizeSpec(tokenizer=tokenizer))
        expected = variance = 0.0
        hits = 0
        for source, copy in planted:
            sets = shingler.shingle_sets([by_id[source], by_id[copy]])
            a, b = sets.set_of(0), sets.set_of(1)
            shared = np.intersect1d(a, b).shape[0]
            jaccard = shared / (a.shape[0] + b.shape[0] - shared)
            p = float(s_curve(jaccard, num_bands, num_rows)) if jaccard >= threshold else 0.0
            expected += p
            variance += p * (1 - p)
            hits += frozenset((source, copy)) in found
        assert hits >= expected - 3 * math.sqrt(variance), (name, hits, expected)
        counts[name] = (hits, expected, variance)
    (words, e_words, v_words), (tokens, e_tokens, v_tokens) = counts["words"], counts["tokens"]
    tolerance = abs(e_tokens - e_words) + 3 * math.sqrt(v_words + v_tokens)
    assert words > 0.9 * len(planted), counts
    assert abs(tokens - words) <= tolerance, counts
