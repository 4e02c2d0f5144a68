"""Spilled work data: band keys by column; candidate pairs in sorted runs, read back once each."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neardup.io.spill import CODE_BYTES, KeyColumns, PairRuns


@pytest.mark.parametrize("spill", [False, True])
@pytest.mark.parametrize(
    ("num_items", "skewed"),
    [(3, False), (100_000, False), (100_000, True), (1 << 31, False)],
)
def test_pairs_without_values_come_back_sorted_and_once(
    spill: bool, num_items: int, skewed: bool, tmp_path: Path
) -> None:
    # Codes from 0 to near 2^62, uniform or all sharing a few first documents (one bucket of
    # the radix sort holds nearly all), in runs of about 9,000 (past the kernel's small case).
    rng = np.random.default_rng(num_items)
    runs = PairRuns(
        num_items, tmp_path if spill else None, memory_bytes=9_000 * CODE_BYTES, with_values=False
    )
    codes = []
    for _ in range(6):
        first = rng.integers(0, 3 if skewed else num_items - 1, 5_000)
        second = np.minimum(first + rng.integers(1, 1_000, first.shape[0]), num_items - 1)
        keep = first < second
        runs.add(first[keep], second[keep])
        codes.append(first[keep] * num_items + second[keep])
    got = list(runs.pairs())
    first = np.concatenate([a for a, _ in got])
    second = np.concatenate([b for _, b in got])
    assert np.array_equal(first * num_items + second, np.unique(np.concatenate(codes)))
    assert runs.num_runs > 1
    runs.close()


def test_released_keys_leave_the_disk(tmp_path: Path) -> None:
    keys = KeyColumns(tmp_path)
    keys.append(np.arange(6, dtype=np.uint64).reshape(3, 2))
    assert keys.column(1).tolist() == [1, 3, 5]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keys-0.u64", "keys-1.u64"]
    keys.release()
    assert list(tmp_path.iterdir()) == []
    assert keys.num_rows == 0


@pytest.mark.parametrize("spill", [False, True])
def test_members_are_the_items_of_some_pair(tmp_path: Path, spill: bool) -> None:
    runs = PairRuns(10, tmp_path if spill else None, memory_bytes=64, with_values=False)
    runs.add(np.array([1, 2]), np.array([7, 3]))
    runs.add(np.array([1]), np.array([7]))  # a repeat, in another run when spilled
    assert np.flatnonzero(runs.members()).tolist() == [1, 2, 3, 7]
    pairs = [(a, b) for first, second in runs.pairs() for a, b in zip(first, second, strict=True)]
    assert pairs == [(1, 7), (2, 3)]  # the runs are still whole
