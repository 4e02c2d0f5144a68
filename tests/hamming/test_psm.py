"""VOSH order against brute-force enumeration; PSM at full budget equals BPHS."""

from __future__ import annotations

from itertools import combinations, pairwise

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.hamming import BlockPermutedIndex, PSMIndex, flip_probabilities, vosh_masks

BITS = np.arange(64, dtype=np.uint64)


def _log_p(masks: np.ndarray, log_odds: np.ndarray) -> np.ndarray:
    """log p(u, S) up to the constant: the sum of the log odds of the flipped bits."""
    flipped = (masks[:, None] >> BITS) & np.uint64(1)
    return flipped.astype(np.float64) @ log_odds


def _all_scores(max_bits: int, log_odds: np.ndarray) -> np.ndarray:
    scores = [np.zeros(1)]
    for m in range(1, max_bits + 1):
        sets = np.array(list(combinations(range(64), m)))
        scores.append(log_odds[sets].sum(axis=1))
    return np.concatenate(scores)


@settings(max_examples=20)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3), st.integers(1, 3000))
def test_vosh_yields_sets_in_non_increasing_probability_without_repeats(
    seed: int, max_bits: int, budget: int
) -> None:
    p = np.random.default_rng(seed).uniform(0.001, 0.5, size=64)
    log_odds = np.log(p) - np.log1p(-p)
    masks = vosh_masks(p, max_bits, budget)
    everything = _all_scores(max_bits, log_odds)
    assert len(masks) == len(set(masks.tolist())) == min(budget, everything.shape[0])
    assert (np.bitwise_count(masks) <= max_bits).all()
    scores = _log_p(masks, log_odds)
    assert all(a >= b - 1e-9 for a, b in pairwise(scores.tolist()))
    # The first `budget` sets are the `budget` most probable ones (up to ties).
    best = np.sort(everything)[::-1][: len(masks)]
    assert np.allclose(np.sort(scores)[::-1], best)


def test_psm_with_the_full_budget_equals_bphs() -> None:
    rng = np.random.default_rng(7)
    values = rng.integers(0, 2**64, size=2000, dtype=np.uint64)
    queries = values[:200].copy()
    for i in range(200):  # plant neighbours at distance 0..3
        for bit in rng.choice(64, size=i % 4, replace=False):
            queries[i] ^= np.uint64(1) << np.uint64(bit)
    h = 2
    p = rng.uniform(0.01, 0.5, size=(200, 64))
    full = 1 + 64 + 64 * 63 // 2
    found, attempts = PSMIndex(values, header_bits=8).query(queries, p, max_distance=h,
                                                             budget=full)  # fmt: skip
    query, _ = BlockPermutedIndex(values, max_distance=h, num_blocks=4).query(queries)
    assert found.tolist() == np.bincount(query, minlength=200).tolist()
    assert (attempts == full).all()
    first, tries = PSMIndex(values).query(queries, p, max_distance=h, budget=full, first_only=True)
    assert ((first > 0) == (found > 0)).all()
    assert (tries[found > 0] <= attempts[found > 0]).all()


def test_flip_probabilities_fall_with_the_weight() -> None:
    changes = np.random.default_rng(1).normal(0, 2.0, size=10_000)
    p = flip_probabilities(np.array([0.0, 1.0, 2.0, 4.0, 100.0]), changes)
    assert p[0] == 0.5
    assert (np.diff(p) <= 0).all()
    assert p[-1] > 0
