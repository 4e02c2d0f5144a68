"""Weighted sets: exact bag similarities equal plain Python; ICWS and replication estimate the
weighted Jaccard of real text."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from neardup import (
    CandidatePairs,
    ParameterError,
    ShingleSpec,
    SketchSpec,
    exact_jaccard,
    minhash_sets,
)
from neardup.sketch.weighted import (
    IDFWeights,
    WeightedMinHasher,
    WeightedSets,
    bag_jaccard_sum,
    estimate_weighted_jaccard,
    replicate,
    term_counts,
    weighted_jaccard,
)
from tests import reference
from tests.stats.test_estimators import licence_pairs  # noqa: F401 - a fixture


def _pairs(n: int) -> CandidatePairs:
    first = np.arange(0, n, 2, dtype=np.int64)
    return CandidatePairs(first=first, second=first + 1)


def test_bag_similarities_equal_python_counters() -> None:
    texts = ["a rose is a rose is a rose", "a rose is a flower is a rose", "x y", "x y x y"]
    spec = SketchSpec(shingle=ShingleSpec(k=1))
    weighted = term_counts(texts, spec)
    pairs = _pairs(4)
    for p, (a, b) in enumerate([(0, 1), (2, 3)]):
        bag_a = Counter(reference.shingles(texts[a], spec.shingle))
        bag_b = Counter(reference.shingles(texts[b], spec.shingle))
        low = sum((bag_a & bag_b).values())
        high = sum((bag_a | bag_b).values())
        assert weighted_jaccard(weighted, pairs)[p] == pytest.approx(low / high)
        assert bag_jaccard_sum(weighted, pairs)[p] == pytest.approx(
            low / (sum(bag_a.values()) + sum(bag_b.values()))
        )
    assert (
        bag_jaccard_sum(term_counts(["a b c d e"] * 2, spec), _pairs(2))[0] == 0.5
    )  # the sum definition's maximum


def test_icws_estimates_the_weighted_jaccard_of_real_text(
    licence_pairs: list[tuple[str, str, float]],  # noqa: F811 - the fixture
) -> None:
    texts = [t for a, b, _ in licence_pairs for t in (a, b)]
    pairs = _pairs(len(texts))
    idf = IDFWeights().fit(texts)
    for weighted in (term_counts(texts), idf.transform(texts)):
        exact = weighted_jaccard(weighted, pairs)
        seeds, k = 20, 128
        runs = np.stack(
            [
                estimate_weighted_jaccard(
                    WeightedMinHasher(
                        SketchSpec(kind="weighted", num_perm=k, seed=s)
                    ).sketch_weighted(weighted),
                    pairs,
                )
                for s in range(seeds)
            ]
        )
        sigma = np.sqrt(exact * (1 - exact) / k)
        assert np.all(np.abs(runs.mean(axis=0) - exact) <= 4 * sigma / math.sqrt(seeds) + 2e-3)
        assert np.all(np.abs(runs[0] - exact) <= 4.5 * sigma + 1 / k)


def test_replication_turns_counts_into_a_set_with_the_same_jaccard(
    licence_pairs: list[tuple[str, str, float]],  # noqa: F811 - the fixture
) -> None:
    texts = [t for a, b, _ in licence_pairs[:10] for t in (a, b)]
    weighted = term_counts(texts)
    replicated = replicate(weighted)
    pairs = _pairs(len(texts))
    assert np.allclose(exact_jaccard(replicated, pairs), weighted_jaccard(weighted, pairs))
    assert (
        replicated.sizes()
        == np.add.reduceat(weighted.weights, weighted.sets.offsets[:-1]).astype(int)
    ).all()
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2**64, 256, dtype=np.uint64, endpoint=False) | np.uint64(1)
    b = rng.integers(0, 2**64, 256, dtype=np.uint64, endpoint=False)
    sigs = minhash_sets(replicated, a, b)
    estimate = np.mean(sigs[pairs.first] == sigs[pairs.second], axis=1)
    exact = weighted_jaccard(weighted, pairs)
    assert np.all(np.abs(estimate - exact) <= 4.5 * np.sqrt(exact * (1 - exact) / 256) + 1 / 256)


def test_weights_are_validated() -> None:
    weighted = term_counts(["a b c d e f"])
    with pytest.raises(ParameterError, match="non-negative"):
        WeightedMinHasher().sketch_weighted(
            WeightedSets(sets=weighted.sets, weights=-weighted.weights)
        )
    with pytest.raises(ParameterError, match="integer weights"):
        replicate(WeightedSets(sets=weighted.sets, weights=weighted.weights * 0.5))
    with pytest.raises(ParameterError, match="fitted"):
        IDFWeights().transform(["a b c"])
