"""Block-permuted Hamming search returns exactly the brute-force answer; its cost model is
seed 004's eq. (8)-(13)."""

from __future__ import annotations

from itertools import combinations
from math import comb, factorial, log2

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup.errors import ParameterError
from neardup.hamming import bphs
from neardup.hamming.bphs import (
    BlockPermutedIndex,
    BPHSDesign,
    bphs_batch_query,
    bphs_tables,
    choose_blocks,
    choose_design,
)
from tests import reference


def _distances(values: np.ndarray, queries: np.ndarray) -> np.ndarray:
    return reference.hamming(queries[:, None, None], values[None, :, None])


def _brute_force(values: np.ndarray, queries: np.ndarray, h: int) -> list[tuple[int, int]]:
    """Every ``(query, row)`` within ``h``, sorted (``np.nonzero`` walks in row-major order)."""
    return [(int(q), int(r)) for q, r in zip(*np.nonzero(_distances(values, queries) <= h),
                                             strict=True)]  # fmt: skip


def _flipped(rng: np.random.Generator, values: np.ndarray, most: int) -> np.ndarray:
    """A copy of ``values`` with 0..``most`` random bits of each flipped."""
    out = values.copy()
    for i in range(out.shape[0]):
        for bit in rng.choice(64, size=rng.integers(0, most + 1), replace=False):
            out[i] ^= np.uint64(1) << np.uint64(bit)
    return out


def _planted(rng: np.random.Generator, num_values: int, h: int) -> tuple[np.ndarray, np.ndarray]:
    """Stored values with repeats and near copies (so queries have several neighbours, in
    different tables), and queries: stored values with 0..h+1 bits flipped, and unrelated
    values."""
    values = rng.integers(0, 2**64, size=num_values, dtype=np.uint64)
    some = values[rng.integers(0, num_values, size=num_values // 2)]
    values = np.concatenate([values, some[: num_values // 4], _flipped(rng, some, h)])
    picks = _flipped(rng, values[rng.integers(0, values.shape[0], size=40)], h + 1)
    queries = np.concatenate([picks, rng.integers(0, 2**64, size=10, dtype=np.uint64)])
    return values, queries


designs = st.integers(0, 4).flatmap(
    lambda h: st.tuples(
        st.just(h),
        st.integers(h + 1, h + 3).flatmap(
            lambda blocks: st.tuples(st.just(blocks), st.integers(1, blocks - h))
        ),
    )
)


@given(seed=st.integers(0, 2**32 - 1), design=designs, num_values=st.integers(1, 300))
def test_queries_equal_brute_force_with_planted_neighbours(
    seed: int, design: tuple[int, tuple[int, int]], num_values: int
) -> None:
    h, (blocks, leading) = design
    values, queries = _planted(np.random.default_rng(seed), num_values, h)
    index = BlockPermutedIndex(values, max_distance=h, num_blocks=blocks, leading_blocks=leading)
    query, row = index.query(queries)
    # A list, not a set: each pair once, sorted by query then row.
    assert list(zip(query.tolist(), row.tolist(), strict=True)) == _brute_force(values, queries, h)
    assert (index.num_blocks, index.leading_blocks) == (blocks, leading)
    assert index.num_tables == comb(blocks, leading)


def _agreeing_blocks(x: np.ndarray, blocks: int) -> np.ndarray:
    """``bool[n, G]``: which blocks of ``G`` consecutive bits (from the top, the wider first)
    are all zero in each xor ``x``, i.e. agree."""
    bits = np.unpackbits(x.astype(">u8").view(np.uint8).reshape(-1, 8), axis=1)
    return np.stack([~part.any(axis=1) for part in np.array_split(bits, blocks, axis=1)], axis=1)


@given(seed=st.integers(0, 2**32 - 1), design=designs, num_values=st.integers(1, 300))
def test_first_only_gives_one_neighbour_from_the_first_table_that_has_one(
    seed: int, design: tuple[int, tuple[int, int]], num_values: int
) -> None:
    h, (blocks, leading) = design
    values, queries = _planted(np.random.default_rng(seed), num_values, h)
    index = BlockPermutedIndex(values, max_distance=h, num_blocks=blocks, leading_blocks=leading)
    query, row = index.query(queries, first_only=True)
    near = _distances(values, queries) <= h
    assert query.tolist() == np.flatnonzero(near.any(axis=1)).tolist()
    assert near[query, row].all()
    # The row comes from the first table (in combination order) holding any neighbour.
    for q, r in zip(query.tolist(), row.tolist(), strict=True):
        agree = _agreeing_blocks(values[near[q]] ^ queries[q], blocks)
        first = next(list(head) for head in combinations(range(blocks), leading)
                     if agree[:, list(head)].all(axis=1).any())  # fmt: skip
        assert _agreeing_blocks(values[r : r + 1] ^ queries[q], blocks)[0, first].all()


@given(
    seed=st.integers(0, 2**32 - 1),
    design=designs,
    num_values=st.integers(0, 300),
    num_chunks=st.integers(1, 6),
    repeat_a_chunk=st.booleans(),
)
def test_batch_query_equals_brute_force_over_any_chunking(
    seed: int,
    design: tuple[int, tuple[int, int]],
    num_values: int,
    num_chunks: int,
    repeat_a_chunk: bool,
) -> None:
    h, (blocks, leading) = design
    rng = np.random.default_rng(seed)
    values, queries = _planted(rng, max(num_values, 1), h)
    values = values[:num_values]
    row_numbers = rng.permutation(10 * max(num_values, 1))[:num_values] + 1000
    cuts = np.sort(rng.integers(0, num_values + 1, size=num_chunks - 1))
    chunks = list(zip(np.split(values, cuts), np.split(row_numbers, cuts), strict=True))
    if repeat_a_chunk:  # a chunk read twice still gives each pair once
        chunks.append(chunks[int(rng.integers(0, len(chunks)))])
    query, row = bphs_batch_query(
        iter(chunks), queries, max_distance=h, num_blocks=blocks, leading_blocks=leading
    )
    truth = sorted((q, int(row_numbers[r])) for q, r in _brute_force(values, queries, h))
    assert list(zip(query.tolist(), row.tolist(), strict=True)) == truth


def test_queries_in_blocks_give_the_same_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    values, queries = _planted(np.random.default_rng(7), 500, 3)
    index = BlockPermutedIndex(values, max_distance=3, num_blocks=5, leading_blocks=1)
    whole = [index.query(queries, first_only=first) for first in (False, True)]
    monkeypatch.setattr(bphs, "STARTS_PER_BLOCK", 7 * index.num_tables)  # blocks of 7 queries
    for first, (query, row) in zip((False, True), whole, strict=True):
        blocked_query, blocked_row = index.query(queries, first_only=first)
        assert blocked_query.tolist() == query.tolist()
        assert blocked_row.tolist() == row.tolist()
    assert len(whole[0][0]) > len(whole[1][0]) > 7


def test_batch_query_checks_its_chunks() -> None:
    with pytest.raises(ParameterError, match="one row number per fingerprint"):
        bphs_batch_query([(np.zeros(3, np.uint64), np.arange(2))], np.zeros(1, np.uint64))


def test_parameters_are_checked() -> None:
    with pytest.raises(ParameterError, match="max_distance < num_blocks"):
        BlockPermutedIndex(np.zeros(3, np.uint64), max_distance=4, num_blocks=4)
    with pytest.raises(ParameterError, match="leading_blocks <= num_blocks - max_distance"):
        BlockPermutedIndex(np.zeros(3, np.uint64), max_distance=3, num_blocks=5, leading_blocks=3)
    with pytest.raises(ParameterError, match="leading_blocks"):
        BlockPermutedIndex(np.zeros(3, np.uint64), num_blocks=5, leading_blocks=0)
    with pytest.raises(ParameterError, match="leading_blocks <= num_blocks"):
        BPHSDesign(num_blocks=4, leading_blocks=5)
    with pytest.raises(ParameterError, match="at least 4 tables"):
        choose_design(1000, 3, max_tables=3)


def test_the_default_design_is_classic_bphs() -> None:
    index = BlockPermutedIndex(np.arange(10, dtype=np.uint64), max_distance=3, num_blocks=6)
    assert (index.leading_blocks, index.num_tables) == (3, 20) == (3, bphs_tables(6, 3))


def test_cost_is_eq_9_and_memory_eq_10_by_hand() -> None:
    p, r, scan = bphs.PERMUTE_NS, bphs.RANDOM_ACCESS_NS, bphs.SCAN_NS
    # G = 4, g = 1, n = 2^20: T = 4, t = min(16, 20) = 16, runs of 2^4.
    assert BPHSDesign(4, 1).cost(1 << 20) == pytest.approx(4 * (p + 16 * r + 16 * scan))
    # G = 8, g = 3 (the seed's Figure 4(b)), n = 2^20: T = 56, t = min(24, 20) = 20, runs of 1.
    assert BPHSDesign(8, 3).cost(1 << 20) == pytest.approx(56 * (p + 20 * r + 1 * scan))
    # Eq. (10), 8-byte fingerprints, plus as many bytes of row numbers.
    assert BPHSDesign(4, 1).memory_bytes(1000) == 4 * 1000 * 8 * 2
    assert BPHSDesign(8, 3).memory_bytes(1000) == 56 * 1000 * 8 * 2
    index = BlockPermutedIndex(np.arange(1000, dtype=np.uint64), num_blocks=5, leading_blocks=1)
    assert index.memory_bytes() == index.design.memory_bytes(1000)


@pytest.mark.parametrize("n", [1 << 10, 1 << 20, 1 << 24, 10**9])
def test_cost_is_eq_11_or_12_for_every_design(n: int) -> None:
    """Seed 004 eq. (11) (``g gamma <= d``) and (12) (``g gamma > d``): (9) rewritten."""
    p, r, scan, b, d = bphs.PERMUTE_NS, bphs.RANDOM_ACCESS_NS, bphs.SCAN_NS, 64, log2(n)
    for blocks in range(1, 15):
        for g in range(1, blocks + 1):
            if g * b / blocks <= d:
                eq = (factorial(blocks - 1) / (factorial(blocks - g) * factorial(g - 1)) * b * r
                      + comb(blocks, g) * (p + 2 ** (d - g * b / blocks) * scan))  # fmt: skip
            else:
                eq = comb(blocks, g) * (p + d * r + scan)
            assert BPHSDesign(blocks, g).cost(n) == pytest.approx(eq)


@pytest.mark.parametrize("n", [1 << 10, 1 << 20, 1 << 22, 1 << 30, 1 << 40])
def test_for_a_fixed_g_cost_and_memory_grow_with_the_blocks(n: int) -> None:
    """Seed 004 eq. (11)-(13): the best ``G`` for a given ``g`` is its lower bound ``g + h``."""
    for h in range(4):
        for g in range(1, 8):
            designs = [BPHSDesign(blocks, g) for blocks in range(g + h, g + h + 10)]
            costs = [design.cost(n) for design in designs]
            assert costs == sorted(costs)
            assert len(set(costs)) == len(costs)
            memory = [design.memory_bytes(n) for design in designs]
            assert memory == sorted(memory)


@pytest.mark.parametrize("n", [0, 1000, 1 << 20, 1 << 22, 1 << 26, 1 << 34])
@pytest.mark.parametrize("h", [0, 1, 3, 6])
@pytest.mark.parametrize("max_tables", [None, 8, 30])
def test_choose_design_is_the_cheapest_allowed(n: int, h: int, max_tables: int | None) -> None:
    if max_tables is not None and max_tables <= h:
        return
    allowed = [
        BPHSDesign(blocks, g)
        for blocks in range(h + 1, h + 11)
        for g in range(1, blocks - h + 1)
        if max_tables is None or comb(blocks, g) <= max_tables
    ]
    chosen = choose_design(n, h, max_tables=max_tables)
    assert chosen in allowed
    assert chosen.cost(n) == min(design.cost(n) for design in allowed)
    assert chosen.num_blocks == chosen.leading_blocks + h  # eq. (13)
    assert choose_blocks(n, h) == choose_design(n, h).num_blocks
