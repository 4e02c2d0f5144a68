"""The SimHash self-join finds exactly the pairs within h bits (groups of equal fingerprints
linked through their first member), for 64- and 128-bit fingerprints."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.cluster import connected_components
from neardup.hamming import FingerprintTables, near_pairs
from tests import reference


def _planted(seed: int, n: int, words: int, h: int) -> np.ndarray:
    """Random rows, a third of them copies of earlier rows with 0..h+1 bits flipped."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, 2**64, size=(n, words), dtype=np.uint64)
    for i in range(1, n, 3):
        rows[i] = rows[rng.integers(0, i)]
        for bit in rng.choice(64 * words, size=rng.integers(0, h + 2), replace=False):
            rows[i, bit // 64] ^= np.uint64(1) << np.uint64(bit % 64)
    return rows


def _within(rows: np.ndarray, h: int) -> np.ndarray:
    return reference.hamming(rows[:, None, :], rows[None, :, :]) <= h


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    words=st.sampled_from([1, 2]),
    h=st.integers(0, 5),
    n=st.integers(1, 120),
)
def test_tables_answer_exactly_the_brute_force_pairs(seed: int, words: int, h: int, n: int) -> None:
    rows = _planted(seed, n, words, h)
    query, row = FingerprintTables(rows, h).query(rows)
    expected = np.nonzero(_within(rows, h))
    assert query.tolist() == expected[0].tolist()
    assert row.tolist() == expected[1].tolist()


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    words=st.sampled_from([1, 2]),
    h=st.integers(0, 4),
    n=st.integers(2, 80),
)
def test_near_pairs_link_what_brute_force_links(seed: int, words: int, h: int, n: int) -> None:
    rows = _planted(seed, n, words, h)
    rows[n // 2] = rows[0]  # an exact repeat of a fingerprint
    active = np.random.default_rng(seed).random(n) < 0.8
    pairs = near_pairs(rows, h, active=active)
    within = _within(rows, h)
    first, second = pairs.first, pairs.second
    assert np.all(first < second)
    assert np.all(within[first, second])
    assert np.all(active[first])
    assert np.all(active[second])
    # Every brute-force pair among active documents ends in one component.
    labels = connected_components(n, first, second).labels
    truth_first, truth_second = np.nonzero(np.triu(within, 1) & active[:, None] & active[None, :])
    assert np.array_equal(labels[truth_first], labels[truth_second])


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    words=st.sampled_from([1, 2]),
    h=st.integers(0, 5),
    n=st.integers(2, 120),
)
def test_psm_without_a_budget_pairs_what_the_tables_pair(
    seed: int, words: int, h: int, n: int
) -> None:
    """``dedup --search psm``: every header flip set within h bits, so the same candidates."""
    rows = _planted(seed, n, words, h)
    tables = near_pairs(rows, h)
    psm = near_pairs(rows, h, search="psm")
    assert psm.first.tolist() == tables.first.tolist()
    assert psm.second.tolist() == tables.second.tolist()
    some = near_pairs(rows, h, search="psm", budget=2)  # own bucket and one flip: a subset
    codes = set(zip(tables.first.tolist(), tables.second.tolist(), strict=True))
    assert set(zip(some.first.tolist(), some.second.tolist(), strict=True)) <= codes


def test_a_large_group_of_equal_fingerprints_is_paired_linearly() -> None:
    rows = np.zeros((50, 1), dtype=np.uint64)
    rows[40:] = 3  # two bits from 0
    pairs = near_pairs(rows, 2, max_bucket_size=10)
    assert pairs.num_giant_buckets == 1
    assert pairs.largest_bucket == 40
    # 40 members, each with the 9 before it (at most), + 10 all-pairs + one link 0 -> 40.
    assert len(pairs) == sum(min(i, 9) for i in range(40)) + 45 + 1
    assert connected_components(50, pairs.first, pairs.second).labels.max() == 0
