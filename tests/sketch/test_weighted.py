"""Weighted sets: exact bag similarities equal plain Python; ICWS samples equal Ioffe's
definition in plain Python; ICWS and replication estimate the weighted Jaccard of real text."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
from neardup.text import ShingleSets
from tests import reference
from tests.strategies import words_texts


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


def _weighted_sets(docs: list[dict[int, float]]) -> WeightedSets:
    features = [sorted(doc) for doc in docs]
    offsets = np.cumsum([0] + [len(f) for f in features], dtype=np.int64)
    hashes = np.array([x for f in features for x in f], dtype=np.uint64)
    weights = np.array([doc[x] for doc, f in zip(docs, features, strict=True) for x in f])
    return WeightedSets(sets=ShingleSets(hashes=hashes, offsets=offsets), weights=weights)


def _reference_samples(weighted: WeightedSets, hasher: WeightedMinHasher) -> list[list[int]]:
    rows = []
    for doc in range(len(weighted.sets)):
        features, weights = weighted.of(doc)
        rows.append(
            reference.icws_signature(
                features.tolist(), weights.tolist(), hasher.spec.num_perm, int(hasher.seed)
            )
        )
    return rows


@settings(max_examples=40, deadline=None)
@given(
    docs=st.lists(
        st.dictionaries(
            st.integers(0, 30) | st.integers(0, 2**64 - 1),
            st.just(0.0) | st.floats(1e-3, 1e3) | st.integers(1, 5).map(float),
            max_size=12,
        ),
        min_size=1,
        max_size=4,
    ),
    num_perm=st.sampled_from([1, 7, 32]),
    seed=st.integers(0, 2**32),
)
def test_icws_samples_equal_the_reference(
    docs: list[dict[int, float]], num_perm: int, seed: int
) -> None:
    hasher = WeightedMinHasher(SketchSpec(kind="weighted", num_perm=num_perm, seed=seed))
    weighted = _weighted_sets(docs)
    got = hasher.sketch_weighted(weighted)
    assert got.tolist() == _reference_samples(weighted, hasher)


@settings(max_examples=25, deadline=None)
@given(batch=st.lists(words_texts, min_size=1, max_size=4))
def test_text_sketches_are_icws_samples_of_the_shingle_counts(batch: list[str]) -> None:
    spec = SketchSpec(kind="weighted", num_perm=16, shingle=ShingleSpec(k=2))
    hasher = WeightedMinHasher(spec)
    sigs = hasher.sketch(batch)
    for doc, text in enumerate(batch):
        bag = Counter(reference.shingle_fingerprints(text, spec.shingle))
        features = sorted(bag)
        expected = reference.icws_signature(
            features, [float(bag[x]) for x in features], 16, int(hasher.seed)
        )
        assert sigs.values[doc].tolist() == expected


def test_icws_samples_of_real_tf_idf_weights_equal_the_reference(
    licenses: list[dict[str, object]],
) -> None:
    texts = [str(r["text"]) for r in licenses[:300]]
    weighted = (
        IDFWeights().fit(texts).transform([t for t in texts if 30 <= len(t.split()) <= 200][:8])
    )
    hasher = WeightedMinHasher(SketchSpec(kind="weighted", num_perm=16, seed=9))
    assert hasher.sketch_weighted(weighted).tolist() == _reference_samples(weighted, hasher)


def _python_weighted_jaccard(weighted: WeightedSets, pairs: CandidatePairs) -> np.ndarray:
    """Sum of minima over sum of maxima of each pair's weights, from Python dicts."""
    out = []
    for a, b in zip(pairs.first.tolist(), pairs.second.tolist(), strict=True):
        wa, wb = (dict(zip(*map(np.ndarray.tolist, weighted.of(d)), strict=True)) for d in (a, b))
        low = sum(min(wa[x], wb[x]) for x in wa.keys() & wb.keys())
        high = sum(max(wa.get(x, 0.0), wb.get(x, 0.0)) for x in wa.keys() | wb.keys())
        out.append(low / high if high else 0.0)
    return np.array(out)


@pytest.mark.slow
def test_icws_estimates_the_weighted_jaccard_of_real_text(
    licence_pairs: list[tuple[str, str, float]],
) -> None:
    texts = [t for a, b, _ in licence_pairs for t in (a, b)]
    pairs = _pairs(len(texts))
    idf = IDFWeights().fit(texts)
    seeds, k = 20, 128
    for weighted in (term_counts(texts), idf.transform(texts)):
        exact = _python_weighted_jaccard(weighted, pairs)
        assert np.allclose(weighted_jaccard(weighted, pairs), exact)
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
        # Each ICWS sample agrees with probability J (Ioffe 2010), independently, so one
        # estimate is Binomial(k, J) / k: sigma = sqrt(J (1 - J) / k), at least 0.015 here
        # (J from 0.03 to 0.97); the mean of 20 seeds has standard error sigma / sqrt(20).
        # 4 standard errors: P(|Z| > 4) = 6e-5 per pair, 0.4% over the 60 pairs tested
        # (measured: 2.3 at most). A single estimate: 4 sigma, plus half a step of 1 / k for
        # its discreteness (measured: 2.0 sigma at most).
        sigma = np.sqrt(exact * (1 - exact) / k)
        assert np.all(np.abs(runs.mean(axis=0) - exact) <= 4 * sigma / math.sqrt(seeds))
        assert np.all(np.abs(runs[0] - exact) <= 4 * sigma + 0.5 / k)


def test_replication_turns_counts_into_a_set_with_the_same_jaccard(
    licence_pairs: list[tuple[str, str, float]],
) -> None:
    texts = [t for a, b, _ in licence_pairs[:10] for t in (a, b)]
    weighted = term_counts(texts)
    replicated = replicate(weighted)
    pairs = _pairs(len(texts))
    exact = _python_weighted_jaccard(weighted, pairs)
    as_sets = [
        reference.jaccard(set(replicated.set_of(a).tolist()), set(replicated.set_of(b).tolist()))
        for a, b in zip(pairs.first.tolist(), pairs.second.tolist(), strict=True)
    ]
    assert np.allclose(as_sets, exact)
    assert np.allclose(exact_jaccard(replicated, pairs), exact)
    assert (
        replicated.sizes()
        == np.add.reduceat(weighted.weights, weighted.sets.offsets[:-1]).astype(int)
    ).all()
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2**64, 256, dtype=np.uint64, endpoint=False) | np.uint64(1)
    b = rng.integers(0, 2**64, 256, dtype=np.uint64, endpoint=False)
    sigs = minhash_sets(replicated, a, b)
    estimate = np.mean(sigs[pairs.first] == sigs[pairs.second], axis=1)
    # MinHash of the replicated sets: sigma = sqrt(J (1 - J) / 256); 4 sigma (10 pairs: 6e-4
    # of a false alarm), plus half a step of 1 / 256 for the estimate's discreteness.
    assert np.all(np.abs(estimate - exact) <= 4 * np.sqrt(exact * (1 - exact) / 256) + 0.5 / 256)


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
