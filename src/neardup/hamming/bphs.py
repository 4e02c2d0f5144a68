"""Block-permuted Hamming search (BPHS; Manku, Jain and Das Sarma, WWW 2007; seed 004 §2).

Cut 64 bits into ``G`` blocks. Two fingerprints within Hamming distance ``h < G`` agree on at
least ``G - h`` whole blocks (pigeonhole), so for each of the ``T = C(G, g)`` choices of
``g = G - h`` blocks, a table holds every fingerprint with those blocks moved to the top and is
sorted: a query's neighbours within ``h`` all share its top ``g`` blocks in at least one table,
found by binary search, then checked by popcount. More blocks mean shorter runs to scan and more
tables (RAM: ``T`` copies). A pair is reported only by the first table (in combination order)
whose leading blocks all agree, so results need no deduplication.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb, exp2, log2

import numpy as np

from neardup._kernels import hamming as kernels
from neardup._parallel import parallel_section
from neardup._types import I64Array, U64Array
from neardup.errors import ParameterError

__all__ = ["BlockPermutedIndex", "bphs_tables", "choose_blocks"]

MAX_EXTRA_BLOCKS = 10
SCAN_COST = 1 / 6
"""A sequentially scanned entry's cost in binary-search steps, fitted to bench/hamming.py at
8M fingerprints, h = 3 (4 tables: 7.7 us per query, 10 tables: 10.2 us): a search step is a
cache miss, a scanned entry a popcount."""


def bphs_tables(num_blocks: int, max_distance: int) -> int:
    """``T = C(G, G - h)``: the tables BPHS needs for ``G`` blocks and distance ``h``.

    Examples
    --------
    >>> bphs_tables(4, 3), bphs_tables(6, 3), bphs_tables(5, 3)
    (4, 20, 10)
    """
    return comb(num_blocks, num_blocks - max_distance)


def choose_blocks(num_fingerprints: int, max_distance: int) -> int:
    """The ``G`` with the least expected query cost for ``n`` fingerprints and distance ``h``.

    Manku et al.'s model: each of the ``T = C(G, G - h)`` tables costs a binary search
    (``log2 n`` steps) plus a scan of the fingerprints sharing the query's leading
    ``64 (G - h) / G`` bits (``n / 2^bits`` expected for uniform fingerprints), a scanned
    entry weighing :data:`SCAN_COST` of a search step; RAM grows with ``T``. The cost is
    minimised over ``G = h + 1 .. h + 10``.

    Examples
    --------
    >>> choose_blocks(1_000_000, 3), choose_blocks(8_000_000, 3), choose_blocks(10**8, 3)
    (4, 4, 5)
    """
    n = max(num_fingerprints, 1)

    def cost(blocks: int) -> float:
        prefix_bits = 64 * (blocks - max_distance) / blocks
        scan = SCAN_COST * n * exp2(-prefix_bits)
        return bphs_tables(blocks, max_distance) * (log2(n + 1) + scan)

    candidates = range(max_distance + 1, min(64, max_distance + MAX_EXTRA_BLOCKS) + 1)
    return min(candidates, key=cost)


@dataclass(frozen=True, slots=True)
class _Table:
    """One sorted, block-permuted copy and what a query needs to search it."""

    values: U64Array
    rows: U64Array
    permutation: tuple[U64Array, U64Array, U64Array]
    prefix_bits: int
    lower_shifts: U64Array
    lower_masks: U64Array


def _blocks(num_blocks: int) -> list[tuple[int, int]]:
    """(start bit, width) of each block, from the top bit down, widths differing by at most 1."""
    widths = [64 // num_blocks + (1 if b < 64 % num_blocks else 0) for b in range(num_blocks)]
    out, top = [], 64
    for width in widths:
        top -= width
        out.append((top, width))
    return out


class BlockPermutedIndex:
    """An in-memory BPHS index of 64-bit fingerprints (e.g. SimHashes).

    Parameters
    ----------
    max_distance
        ``h``: queries return every fingerprint within this Hamming distance.
    num_blocks
        ``G > h``; ``C(G, G - h)`` tables are built (``h + 1`` blocks → ``h + 1`` tables).

    Examples
    --------
    >>> index = BlockPermutedIndex(np.array([0b1011, 0b1000, 2**63], np.uint64), max_distance=2)
    >>> query, row = index.query(np.array([0b1001], np.uint64))
    >>> sorted(row.tolist())
    [0, 1]
    """

    def __init__(self, values: U64Array, *, max_distance: int = 3, num_blocks: int = 4) -> None:
        if not 0 <= max_distance < num_blocks <= 64:
            raise ParameterError(
                f"BPHS needs 0 <= max_distance < num_blocks <= 64; got max_distance="
                f"{max_distance}, num_blocks={num_blocks}."
            )
        self.max_distance = max_distance
        self.num_blocks = num_blocks
        self.values = np.ascontiguousarray(values, dtype=np.uint64)
        blocks = _blocks(num_blocks)
        kept = num_blocks - max_distance
        self._tables: list[_Table] = []
        for leading in combinations(range(num_blocks), kept):
            order = list(leading) + [b for b in range(num_blocks) if b not in leading]
            sources, shifts, masks = [], [], []
            top = 64
            for b in order:
                start, width = blocks[b]
                top -= width
                sources.append(start)
                shifts.append(top)
                masks.append((1 << width) - 1)
            perm = (
                np.array(sources, np.uint64),
                np.array(shifts, np.uint64),
                np.array(masks, np.uint64),
            )
            permuted = self._permute(self.values, perm)
            rows = np.argsort(permuted, kind="stable")
            # The non-leading blocks before the last leading one, where they sit once permuted.
            lower = [i for i, b in enumerate(order) if b < max(leading) and b not in leading]
            self._tables.append(
                _Table(
                    values=permuted[rows],
                    rows=rows.astype(np.uint64),
                    permutation=perm,
                    prefix_bits=sum(blocks[b][1] for b in leading),
                    lower_shifts=perm[1][lower],
                    lower_masks=perm[2][lower],
                )
            )

    @staticmethod
    def _permute(values: U64Array, perm: tuple[U64Array, U64Array, U64Array]) -> U64Array:
        out = np.empty_like(values)
        with parallel_section:
            kernels.permute_blocks(values, *perm, out)
        return out

    @property
    def num_tables(self) -> int:
        """``C(G, G - h)``."""
        return len(self._tables)

    def memory_bytes(self) -> int:
        """Bytes held: each table's permuted fingerprints and row numbers."""
        return sum(t.values.nbytes + t.rows.nbytes for t in self._tables)

    def query(self, queries: U64Array) -> tuple[I64Array, I64Array]:
        """Every ``(query, row)`` with ``popcount(values[row] ^ queries[query]) <= h``.

        Pairs are distinct and sorted by query, then row.
        """
        queries = np.ascontiguousarray(queries, dtype=np.uint64)
        found_q: list[I64Array] = []
        found_r: list[I64Array] = []
        for t in self._tables:
            permuted = self._permute(queries, t.permutation)
            counts = np.empty(queries.shape[0], dtype=np.int64)
            args = (t.values, t.rows, permuted, t.prefix_bits, self.max_distance,
                    t.lower_shifts, t.lower_masks)  # fmt: skip
            empty_q, empty_r = np.empty(0, np.int64), np.empty(0, np.uint64)
            kernels.table_matches(*args, True, counts, counts, empty_q, empty_r)
            offsets = np.zeros(queries.shape[0] + 1, dtype=np.int64)
            np.cumsum(counts, out=offsets[1:])
            out_q = np.empty(int(offsets[-1]), dtype=np.int64)
            out_r = np.empty(int(offsets[-1]), dtype=np.uint64)
            kernels.table_matches(*args, False, counts, offsets, out_q, out_r)
            found_q.append(out_q)
            found_r.append(out_r.astype(np.int64))
        query, row = np.concatenate(found_q), np.concatenate(found_r)
        order = np.lexsort((row, query))
        return query[order], row[order]
