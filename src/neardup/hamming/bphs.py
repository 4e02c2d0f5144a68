"""Block-permuted Hamming search (BPHS; Manku, Jain and Das Sarma, WWW 2007; seed 004 §2).

Cut 64 bits into ``G`` blocks. Two fingerprints within Hamming distance ``h < G`` agree on at
least ``G - h`` whole blocks (pigeonhole), so for each of the ``T = C(G, g)`` choices of
``g = G - h`` blocks, a table holds every fingerprint with those blocks moved to the top and is
sorted: a query's neighbours within ``h`` all share its top ``g`` blocks in at least one table,
found by binary search, then checked by popcount. More blocks mean shorter runs to scan and more
tables (RAM: ``T`` copies).
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np

from neardup._kernels import hamming as kernels
from neardup._parallel import parallel_section
from neardup._types import I64Array, U64Array
from neardup.errors import ParameterError

__all__ = ["BlockPermutedIndex", "bphs_tables"]


def bphs_tables(num_blocks: int, max_distance: int) -> int:
    """``T = C(G, G - h)``: the tables BPHS needs for ``G`` blocks and distance ``h``.

    Examples
    --------
    >>> bphs_tables(4, 3), bphs_tables(6, 3), bphs_tables(5, 3)
    (4, 20, 10)
    """
    return comb(num_blocks, num_blocks - max_distance)


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
        self._tables: list[tuple[U64Array, U64Array, U64Array, U64Array, U64Array, int]] = []
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
            prefix = sum(blocks[b][1] for b in leading)
            self._tables.append((permuted[rows], rows.astype(np.uint64), *perm, prefix))

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
        return sum(t[0].nbytes + t[1].nbytes for t in self._tables)

    def query(self, queries: U64Array) -> tuple[I64Array, I64Array]:
        """Every ``(query, row)`` with ``popcount(values[row] ^ queries[query]) <= h``.

        Pairs are distinct and sorted by query, then row.
        """
        queries = np.ascontiguousarray(queries, dtype=np.uint64)
        found_q: list[I64Array] = []
        found_r: list[I64Array] = []
        for table, rows, sources, shifts, masks, prefix in self._tables:
            permuted = self._permute(queries, (sources, shifts, masks))
            counts = np.empty(queries.shape[0], dtype=np.int64)
            kernels.count_table_matches(table, permuted, prefix, self.max_distance, counts)
            offsets = np.zeros(queries.shape[0] + 1, dtype=np.int64)
            np.cumsum(counts, out=offsets[1:])
            out_q = np.empty(int(offsets[-1]), dtype=np.int64)
            out_r = np.empty(int(offsets[-1]), dtype=np.uint64)
            kernels.table_matches(
                table, rows, permuted, prefix, self.max_distance, offsets, out_q, out_r
            )
            found_q.append(out_q)
            found_r.append(out_r.astype(np.int64))
        n = max(self.values.shape[0], 1)
        codes = np.unique(np.concatenate(found_q) * n + np.concatenate(found_r))
        return codes // n, codes % n
