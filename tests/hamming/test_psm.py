"""VOSH order against brute-force enumeration; PSM at full budget equals BPHS."""

from __future__ import annotations

from itertools import combinations, pairwise
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.hamming import (
    BlockPermutedIndex,
    PSMIndex,
    flip_probabilities,
    psm_batch_query,
    save_sorted,
    vosh_masks,
)
from tests import reference

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
    assert (reference.hamming(masks[:, None], np.uint64(0)) <= max_bits).all()  # bits flipped
    scores = _log_p(masks, log_odds)
    assert all(a >= b - 1e-9 for a, b in pairwise(scores.tolist()))
    # The first `budget` sets are the `budget` most probable ones (up to ties).
    best = np.sort(everything)[::-1][: len(masks)]
    assert np.allclose(np.sort(scores)[::-1], best)


def _planted(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """2,000 stored fingerprints (with repeats), 200 queries 0..3 bits from stored ones."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2**64, size=2000, dtype=np.uint64)
    values[1500:1510] = values[0]  # a fingerprint stored 11 times
    queries = values[:200].copy()
    for i in range(200):
        for bit in rng.choice(64, size=i % 4, replace=False):
            queries[i] ^= np.uint64(1) << np.uint64(bit)
    return values, queries, rng.uniform(0.01, 0.5, size=(200, 64))


def test_psm_with_the_full_budget_equals_bphs(tmp_path: Path) -> None:
    values, queries, p = _planted(7)
    h = 2
    full = 1 + 64 + 64 * 63 // 2
    everything = PSMIndex(values, header_bits=8).query(queries, p, max_distance=h, budget=full)
    query, row = BlockPermutedIndex(values, max_distance=h, num_blocks=4).query(queries)
    assert everything.query.tolist() == query.tolist()
    assert everything.row.tolist() == row.tolist()
    assert (everything.attempts == full).all()
    assert everything.found_per_query()[0] == 11
    first = PSMIndex(values).query(queries, p, max_distance=h, budget=full, first_only=True)
    has = everything.found_per_query() > 0
    assert ((first.found_per_query() > 0) == has).all()
    assert (first.attempts[has] <= everything.attempts[has]).all()
    # Batch mode over the collection on disk, in small chunks, answers the same.
    save_sorted(values, tmp_path / "sorted")
    for first_only, online in ((False, everything), (True, first)):
        batch = psm_batch_query(tmp_path / "sorted", queries, p, max_distance=h, budget=full,
                                first_only=first_only, chunk_rows=97,
                                max_targets=7 * full)  # groups of 7 queries  # fmt: skip
        assert batch.query.tolist() == online.query.tolist()
        assert batch.row.tolist() == online.row.tolist()


def test_the_recall_knob_stops_at_the_share_of_probability_asked(tmp_path: Path) -> None:
    values, queries, p = _planted(3)
    index = PSMIndex(values)
    attempts = [
        index.query(queries, p, max_distance=3, budget=50_000, recall=r).attempts
        for r in (0.5, 0.8, 0.95)
    ]
    assert (attempts[0] <= attempts[1]).all()
    assert (attempts[1] <= attempts[2]).all()
    assert attempts[2].max() < 43_745  # fewer than every set of <= 3 bits
    # The sets tried hold the share asked, and one set fewer would not.
    log_odds = np.log(p[0]) - np.log1p(-p[0])
    masks = vosh_masks(p[0], 3, 50_000, recall=0.8)
    mass = np.exp(_log_p(masks, log_odds))
    total = np.exp(_all_scores(3, log_odds)).sum()
    assert mass.sum() >= 0.8 * total > mass[:-1].sum()
    save_sorted(values, tmp_path / "sorted")
    batch = psm_batch_query(tmp_path / "sorted", queries, p, budget=50_000, recall=0.8)
    assert batch.attempts.tolist() == attempts[1].tolist()


def test_flip_probabilities_fall_with_the_weight() -> None:
    changes = np.random.default_rng(1).normal(0, 2.0, size=10_000)
    p = flip_probabilities(np.array([0.0, 1.0, 2.0, 4.0, 100.0]), changes)
    assert p[0] == 0.5
    assert (np.diff(p) <= 0).all()
    assert p[-1] > 0
