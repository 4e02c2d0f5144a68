"""Block-permuted Hamming search returns exactly the brute-force answer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup.errors import ParameterError
from neardup.hamming import BlockPermutedIndex, bphs_tables
from tests import reference


def _brute_force(values: np.ndarray, queries: np.ndarray, h: int) -> set[tuple[int, int]]:
    distance = reference.hamming(queries[:, None, None], values[None, :, None])
    return {(int(q), int(r)) for q, r in zip(*np.nonzero(distance <= h), strict=True)}


@given(
    seed=st.integers(0, 2**32 - 1),
    h=st.integers(0, 4),
    extra_blocks=st.integers(1, 3),
    num_values=st.integers(1, 300),
)
def test_queries_equal_brute_force_with_planted_neighbours(
    seed: int, h: int, extra_blocks: int, num_values: int
) -> None:
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2**64, size=num_values, dtype=np.uint64)
    # Queries: stored values with 0..h+1 random bits flipped, and unrelated values.
    picks = values[rng.integers(0, num_values, size=40)]
    for i in range(picks.shape[0]):
        for bit in rng.choice(64, size=rng.integers(0, h + 2), replace=False):
            picks[i] ^= np.uint64(1) << np.uint64(bit)
    queries = np.concatenate([picks, rng.integers(0, 2**64, size=10, dtype=np.uint64)])
    index = BlockPermutedIndex(values, max_distance=h, num_blocks=h + extra_blocks)
    query, row = index.query(queries)
    got = set(zip(query.tolist(), row.tolist(), strict=True))
    assert got == _brute_force(values, queries, h)
    assert index.num_tables == bphs_tables(h + extra_blocks, h)


def test_parameters_are_checked() -> None:
    with pytest.raises(ParameterError, match="max_distance < num_blocks"):
        BlockPermutedIndex(np.zeros(3, np.uint64), max_distance=4, num_blocks=4)
