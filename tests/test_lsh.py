"""LSH banding: band keys and candidate pairs against the Python-dict reference."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from neardup import ParameterError, band_keys, candidate_pairs, choose_bands, s_curve
from neardup.hashing.packed import order_of, sort_packed
from neardup.lsh.banding import SPLIT_GROUPING, equal_key_groups
from tests import reference


@given(
    sig=hnp.arrays(
        np.uint64, st.tuples(st.integers(1, 30), st.just(12)), elements=st.integers(0, 3)
    ),
    rows=st.sampled_from([1, 2, 3, 4]),
    active=st.lists(st.booleans(), min_size=30, max_size=30),
)
def test_candidate_pairs_equal_the_reference(
    sig: np.ndarray, rows: int, active: list[bool]
) -> None:
    bands = 12 // rows
    keys = band_keys(sig, bands, rows)
    mask = np.array(active[: sig.shape[0]])
    got = candidate_pairs(keys, active=mask, max_bucket_size=1000)
    tuples = np.array(
        [
            [hash(tuple(row[b * rows : (b + 1) * rows].tolist())) for b in range(bands)]
            for row in sig
        ]
    )
    assert set(
        zip(got.first.tolist(), got.second.tolist(), strict=True)
    ) == reference.candidate_pairs(tuples, mask.tolist())
    assert np.all(got.first < got.second)


def test_band_keys_differ_between_bands_with_equal_values() -> None:
    keys = band_keys(np.zeros((1, 8), dtype=np.uint64), 4, 2)
    assert len(set(keys[0].tolist())) == 4


def test_band_keys_need_enough_slots() -> None:
    with pytest.raises(ParameterError, match="num_bands \\* num_rows <= 8"):
        band_keys(np.zeros((1, 8), dtype=np.uint64), 3, 3)


def test_giant_buckets_are_paired_linearly_and_reported() -> None:
    keys = np.zeros((5000, 1), dtype=np.uint64)  # one band, one bucket of 5,000 documents
    pairs = candidate_pairs(keys, max_bucket_size=10)
    assert pairs.num_giant_buckets == 1
    assert pairs.largest_bucket == 5000
    assert len(pairs) == 45 + (5000 - 10) * 9  # all pairs of the first 10, then 9 per document
    # Every member is still linked to the bucket: the pairs connect all 5,000 documents.
    assert np.all(pairs.second - pairs.first <= 9)
    assert set(pairs.second.tolist()) == set(range(1, 5000))


def test_small_buckets_yield_all_pairs() -> None:
    keys = np.zeros((10, 1), dtype=np.uint64)
    assert len(candidate_pairs(keys, max_bucket_size=10)) == 45


def test_chosen_bands_balance_both_errors() -> None:
    # The default weights choose b = 16, r = 8: 1 - (1 - s^8)^16 is 0.947 at s = 0.8, 0.99988
    # at 0.9 and 0.0104 at 0.4. The bounds below are those values rounded away from them by
    # less than 0.01: a change of the choice (or of the S-curve) fails them.
    b, r = choose_bands(0.8, 128)
    grid = np.linspace(0, 1, 1001)
    p = s_curve(grid, b, r)
    assert b * r <= 128
    assert p[grid >= 0.8].min() > 0.94  # pairs above the threshold are nearly always found
    assert p[grid >= 0.9].min() > 0.999
    assert p[grid <= 0.4].max() < 0.011  # pairs well below are rarely candidates
    balanced = choose_bands(0.8, 128, false_negative_weight=0.5, false_positive_weight=0.5)
    assert balanced == (9, 13)  # the classic choice (datasketch's too)
    for threshold in (0.5, 0.6, 0.7, 0.8, 0.9, 0.95):
        # The default favours recall: a pair at the threshold is a candidate 9 times in 10.
        assert s_curve(threshold, *choose_bands(threshold, 128)) >= 0.9


@given(
    keys=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 2)), max_size=300),
    wide=st.booleans(),
    spread=st.sampled_from([0, 61, 63]),
)
def test_equal_key_groups_are_the_groups_of_equal_keys(
    keys: list[tuple[int, int]], wide: bool, spread: int
) -> None:
    # Small keys shifted up share their top bits (so runs of equal prefix hold different
    # keys), or spread across all 64 bits; 128-bit keys share high words with different low
    # words.
    shifted = [(k << spread) % 2**64 for k, _ in keys]
    hi = np.array(shifted, dtype=np.uint64)
    lo = np.array([low for _, low in keys], dtype=np.uint64) if wide else None
    members, bounds = equal_key_groups(hi, lo)
    got = [members[bounds[g] : bounds[g + 1]].tolist() for g in range(len(bounds) - 1)]
    expected: dict[tuple[int, int], list[int]] = {}
    for i, (value, (_, low)) in enumerate(zip(shifted, keys, strict=True)):
        expected.setdefault((value, low if wide else 0), []).append(i)
    # the groups in the order of their keys, items ascending in each
    assert got == [expected[key] for key in sorted(expected) if len(expected[key]) > 1]


@pytest.mark.parametrize("wide", [False, True])
def test_many_keys_are_grouped_in_parts_as_they_would_be_whole(wide: bool) -> None:
    # Keys sharing their prefix but not their value (the low bits differ), in runs that the
    # parts must not cut; the groups in the order of their keys, items ascending.
    rng = np.random.default_rng(int(wide))
    n = 3 * SPLIT_GROUPING
    hi = (rng.integers(0, 3000, size=n).astype(np.uint64) << np.uint64(40)) | rng.integers(
        0, 4, size=n
    ).astype(np.uint64)
    lo = rng.integers(0, 2, size=n).astype(np.uint64) if wide else np.zeros(n, dtype=np.uint64)
    members, bounds = equal_key_groups(hi, lo if wide else None)
    order = np.lexsort((np.arange(n), lo, hi))
    key_of = hi[order].astype(object) * 4 + lo[order].astype(object)
    starts = np.flatnonzero(np.r_[True, key_of[1:] != key_of[:-1]])
    expected = [g for g in np.split(order, starts[1:]) if g.shape[0] > 1]
    assert bounds[-1] == members.shape[0]
    assert [members[a:b].tolist() for a, b in itertools.pairwise(bounds.tolist())] == [
        g.tolist() for g in expected
    ]


@pytest.mark.parametrize("size", [0, 1, 100, 4095, 4096, 50_000, 600_000])
@pytest.mark.parametrize("item_bits", [0, 17])
@pytest.mark.parametrize("one_thread", [True, False])
def test_the_radix_sort_sorts_keys_packed_with_their_items(
    size: int, item_bits: int, one_thread: bool
) -> None:
    # 600,000 keys take both radix digits (11 bits, then 7)
    rng = np.random.default_rng(size)
    values = rng.integers(0, 2**64, size=size, dtype=np.uint64)
    tenth = size // 10
    values[:tenth] = 7  # a skewed bucket
    values[tenth : 2 * tenth] = values[2 * tenth : 3 * tenth]  # repeats
    mask = np.uint64((1 << item_bits) - 1)
    packed = (values & ~mask) | (np.arange(size, dtype=np.uint64) & mask)
    default = numba.get_num_threads()
    numba.set_num_threads(1 if one_thread else default)  # slices: one, or one a thread
    try:
        assert np.array_equal(sort_packed(values, item_bits), np.sort(packed))
    finally:
        numba.set_num_threads(default)


@pytest.mark.parametrize("size", [0, 1, 100, 4095, 4096, 50_000])
@pytest.mark.parametrize("high", [1, 2**20, 2**44, 2**62])  # the last leaves no room: numpy
def test_order_of_is_numpys_stable_argsort(size: int, high: int) -> None:
    rng = np.random.default_rng(size + high)
    values = rng.integers(0, high, size=size, dtype=np.int64)
    values[: size // 3] = np.sort(values[: size // 3])  # an ascending part, as the first sets
    values[size // 3 : size // 2] = values[0] if size else 0  # ties, kept in place order
    assert order_of(values).tolist() == np.argsort(values, kind="stable").tolist()


BOUNDS_SCRIPT = """
import numpy as np
from neardup.lsh.banding import equal_key_groups
rng = np.random.default_rng(0)
for trial in range(300):
    n = int(rng.integers(2, 5000))
    keys = rng.integers(0, 40, size=n).astype(np.uint64) << np.uint64(int(rng.choice([0, 50])))
    low = rng.integers(0, 3, size=n).astype(np.uint64) if trial % 2 else None
    members, bounds = equal_key_groups(keys, low)
    assert bounds[-1] == members.shape[0]
print("ok")
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_grouping_reads_only_inside_its_arrays(tmp_path: Path) -> None:
    # numba does not check indices: a read past an array is garbage or a crash on large
    # inputs only. With NUMBA_BOUNDSCHECK every index is checked (IndexError).
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-c", BOUNDS_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
