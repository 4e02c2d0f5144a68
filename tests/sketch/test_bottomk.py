"""Bottom-k and mod-m sketches: equal to the reference; resemblance and containment of real text."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup import CandidatePairs, Shingler, ShingleSpec, SketchSpec, exact_jaccard
from neardup.sketch.bottomk import (
    BottomKSketcher,
    ModMSketcher,
    containment,
    resemblance,
    sketch_sizes,
)
from neardup.text import ShingleSets
from tests import reference
from tests.strategies import words_texts

SHINGLE = ShingleSpec(k=1)


def _h(x: int, key: list[int]) -> int:
    return reference.fmix64(((x ^ key[0]) * key[1]) & reference.MASK)


@given(batch=st.lists(words_texts, min_size=2, max_size=5), k=st.sampled_from([1, 3, 8]))
def test_sketches_and_estimators_equal_the_reference(batch: list[str], k: int) -> None:
    sketcher = BottomKSketcher(SketchSpec(kind="bottomk", num_perm=k, seed=3, shingle=SHINGLE))
    sketches = sketcher.sketch(batch)
    key = sketcher.key.tolist()
    full = [sorted({_h(x, key) for x in reference.shingle_fingerprints(t, SHINGLE)}) for t in batch]
    for d, values in enumerate(full):
        assert sketches.values[d, : sketch_sizes(sketches)[d]].tolist() == values[:k]
    first = np.array([0] * (len(batch) - 1), dtype=np.int64)
    second = np.arange(1, len(batch), dtype=np.int64)
    pairs = CandidatePairs(first=first, second=second)
    got_r = resemblance(sketches, pairs)
    got_a_in_b, got_b_in_a = containment(sketches, pairs)
    for p, b in enumerate(second.tolist()):
        sa, sb = set(full[0][:k]), set(full[b][:k])
        union = sorted(sa | sb)[:k]
        expected = len([v for v in union if v in sa and v in sb]) / len(union) if union else 0.0
        assert got_r[p] == pytest.approx(expected)
        for got, (x, y) in (
            (got_a_in_b[p], (full[0], full[b])),
            (got_b_in_a[p], (full[b], full[0])),
        ):
            sample_y = y[:k]
            limit = math.inf if len(y) < k else sample_y[-1]
            decided = [v for v in x[:k] if v <= limit]
            expected_c = sum(v in set(sample_y) for v in decided) / len(decided) if decided else 0.0
            assert got == pytest.approx(expected_c)


def _python_jaccard(sets: ShingleSets, pairs: CandidatePairs) -> np.ndarray:
    return np.array(
        [
            reference.jaccard(set(sets.set_of(a).tolist()), set(sets.set_of(b).tolist()))
            for a, b in zip(pairs.first.tolist(), pairs.second.tolist(), strict=True)
        ]
    )


def test_resemblance_and_containment_on_real_text(licenses: list[dict[str, object]]) -> None:
    texts = [str(r["text"]) for r in licenses if len(str(r["text"]).split()) > 400][:40]
    # An article copied into a page full of other material: A inside B = X + A + Y.
    articles = texts[:20]
    pages = [
        texts[20 + i] + "\n" + articles[i] + "\n" + texts[(21 + i) % 20 + 20] for i in range(20)
    ]
    sets = Shingler().shingle_sets(articles + pages)
    pairs = CandidatePairs(first=np.arange(20), second=np.arange(20, 40))
    exact_j = _python_jaccard(sets, pairs)
    # Every shingle of A is a shingle of X + A + Y (the separators are whitespace): the
    # article is wholly contained.
    for a, b in zip(pairs.first.tolist(), pairs.second.tolist(), strict=True):
        assert set(sets.set_of(a).tolist()) <= set(sets.set_of(b).tolist())
    k, seeds = 256, 40
    est_j, est_c = [], []
    for seed in range(seeds):
        sketches = BottomKSketcher(SketchSpec(kind="bottomk", num_perm=k, seed=seed)).sketch(
            articles + pages
        )
        est_j.append(resemblance(sketches, pairs))
        est_c.append(containment(sketches, pairs)[0])
    # Resemblance: the k smallest of the union are a sample without replacement, so one
    # estimate's standard error is at most sqrt(J (1 - J) / k) (here J = 0.05 to 0.77), the
    # mean of 40 seeds' at most that over sqrt(40). 4 standard errors: 20 pairs, 1e-3 of a
    # false alarm (measured: 1.7 at most).
    sigma_j = np.sqrt(exact_j * (1 - exact_j) / k)
    assert np.all(np.abs(np.mean(est_j, axis=0) - exact_j) <= 4 * sigma_j / math.sqrt(seeds))
    # Containment of A in B = 1: each element of S(A) no larger than the largest of S(B) is
    # in B, hence among B's k smallest, so every single estimate is exactly 1.
    assert np.all(np.array(est_c) == 1.0)


def test_mod_m_sketches_estimate_resemblance(licenses: list[dict[str, object]]) -> None:
    texts = sorted(str(r["text"]) for r in licenses if len(str(r["text"]).split()) > 800)[:30]
    sets = Shingler().shingle_sets(texts)
    pairs = CandidatePairs(first=np.arange(0, 30, 2), second=np.arange(1, 30, 2))
    exact = _python_jaccard(sets, pairs)
    seeds, modulus = 30, 8
    estimates = np.mean(
        [
            exact_jaccard(ModMSketcher(modulus=modulus, seed=s).sketch(sets), pairs)
            for s in range(seeds)
        ],
        axis=0,
    )
    # A mod-m sketch keeps about |A u B| / m elements of the union, a sample in which the
    # shared ones are a fraction J: one estimate has standard error about
    # sqrt(J (1 - J) m / |A u B|), the mean of 30 seeds that over sqrt(30). 4 standard errors
    # (15 pairs; measured: 2.2 at most); a pair sharing nothing is estimated 0 exactly.
    sizes = sets.sizes()
    union = (sizes[0::2] + sizes[1::2]) / (1 + exact)
    error = np.sqrt(exact * (1 - exact) * modulus / union / seeds)
    assert np.all(np.abs(estimates - exact) <= 4 * error)


def test_mod_m_needs_a_positive_modulus() -> None:
    with pytest.raises(ValueError, match="modulus must be a positive int"):
        ModMSketcher(modulus=0)
