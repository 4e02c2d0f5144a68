"""Block-permuted Hamming search (BPHS; Manku, Jain and Das Sarma, WWW 2007; seed 004 §3).

Cut ``b = 64`` bits into ``G`` blocks. Two fingerprints within Hamming distance ``h < G`` agree
on at least ``G - h`` whole blocks (pigeonhole), so on any ``g <= G - h`` of them. For each of
the ``T = C(G, g)`` choices of ``g`` blocks, a table holds every fingerprint with those blocks
moved to the top (the header) and is sorted: a query's neighbours within ``h`` share its header
in at least one table, found by binary search, then checked by popcount along the run. More
blocks mean longer headers, shorter runs and more tables (RAM: ``T`` copies); the cost model
(seed 004 eq. 9-15, :class:`BPHSDesign`) weighs them. A pair is reported only by the first
table (in combination order) whose leading blocks all agree, so results need no deduplication.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from itertools import combinations
from math import comb, exp2, log2

import numpy as np

from neardup._kernels import hamming as kernels
from neardup._parallel import in_blocks
from neardup._types import I64Array, U64Array
from neardup.errors import ParameterError

__all__ = [
    "BPHSDesign",
    "BlockLayout",
    "BlockPermutedIndex",
    "bphs_batch_query",
    "bphs_tables",
    "choose_blocks",
    "choose_design",
]

BITS = 64
MAX_EXTRA_BLOCKS = 10
STARTS_PER_BLOCK = 1 << 22
"""Queries are searched in blocks of ``STARTS_PER_BLOCK / T``, each holding the start of its
run in every table (32 MB) between the counting pass and the filling pass."""
PERMUTE_NS = 188.0
RANDOM_ACCESS_NS = 3.95
SCAN_NS = 1.64
"""Seed 004's delays (eq. 9), per table and query: ``delta_P`` (permuting the query's blocks),
``delta_R`` (one header bit of binary search, a random RAM access) and ``delta_L`` (one scanned
entry: xor and popcount). Fitted by ``bench/bphs_costs.py`` (``.venv/bin/python
bench/bphs_costs.py``, 2026-11-24, a shared 2-core AMD EPYC, one thread, CPU time): 10 designs
(G = 4..8, g = 1..3, h = 3) over 2^20 and 2^22 random fingerprints, non-negative least squares
on relative error. ``delta_P`` comes out far above a permutation's few nanoseconds: it takes in
each table's fixed costs (the binary search's first, cache-missing steps cost about the same
whatever ``t``). The model is within -48% .. +30% of the 20 measurements, short at 2^22 where
the tables leave the cache; at 2^24 (not fitted) it is 2.4x short, and puts (4, 1) 6% ahead of
(5, 2) where they measured 5% the other way. Only the delays' ratios matter for
:func:`choose_design`."""


@dataclass(frozen=True, slots=True)
class BPHSDesign:
    """A BPHS design: ``G`` blocks of ``64 / G`` bits, ``g`` of them leading each table.

    It finds every neighbour within ``h <= G - g`` bits with ``T = C(G, g)`` tables.

    Parameters
    ----------
    num_blocks
        ``G``, at most 64.
    leading_blocks
        ``g``, ``1 <= g <= G``: the blocks of each table's header.

    Examples
    --------
    >>> design = BPHSDesign(num_blocks=8, leading_blocks=3)  # the seed's Figure 4(b)
    >>> design.num_tables, design.max_distance, design.header_bits
    (56, 5, 24.0)
    """

    num_blocks: int
    leading_blocks: int

    def __post_init__(self) -> None:
        if not 1 <= self.leading_blocks <= self.num_blocks <= BITS:
            raise ParameterError(
                f"a BPHS design needs 1 <= leading_blocks <= num_blocks <= {BITS}; got "
                f"num_blocks={self.num_blocks}, leading_blocks={self.leading_blocks}."
            )

    @property
    def num_tables(self) -> int:
        """``T = C(G, g)``."""
        return comb(self.num_blocks, self.leading_blocks)

    @property
    def max_distance(self) -> int:
        """``G - g``: the largest ``h`` whose neighbours all share a header with the query."""
        return self.num_blocks - self.leading_blocks

    @property
    def header_bits(self) -> float:
        """``g * gamma = g b / G``, the bits a table's header holds (round-off ignored)."""
        return self.leading_blocks * BITS / self.num_blocks

    def cost(self, num_fingerprints: int) -> float:
        """Modelled nanoseconds per query over ``n`` stored fingerprints (seed 004 eq. 9).

        ``tau = T (delta_P + t delta_R + 2^(d - t) delta_L)`` with ``d = log2 n`` and
        ``t = min(g b / G, d)`` (eq. 8): per table, a permutation, a binary search over the
        header's ``t`` bits and a scan of the ``n / 2^t`` uniform fingerprints sharing it.
        The delays are :data:`PERMUTE_NS`, :data:`RANDOM_ACCESS_NS` and :data:`SCAN_NS`.
        """
        d = log2(max(num_fingerprints, 1))
        t = min(self.header_bits, d)
        return self.num_tables * (PERMUTE_NS + t * RANDOM_ACCESS_NS + exp2(d - t) * SCAN_NS)

    def memory_bytes(self, num_fingerprints: int) -> int:
        """Bytes of ``n`` fingerprints' tables: ``T n b / 8`` (seed 004 eq. 10), twice over.

        Each table holds the permuted fingerprints (eq. 10) and their row numbers (8 bytes
        each), as :meth:`BlockPermutedIndex.memory_bytes` counts.
        """
        return self.num_tables * num_fingerprints * 2 * (BITS // 8)


def bphs_tables(num_blocks: int, max_distance: int) -> int:
    """``T = C(G, G - h)``: the tables BPHS needs for ``G`` blocks, distance ``h``, ``g = G - h``.

    Examples
    --------
    >>> bphs_tables(4, 3), bphs_tables(6, 3), bphs_tables(5, 3)
    (4, 20, 10)
    """
    return comb(num_blocks, num_blocks - max_distance)


def choose_design(
    num_fingerprints: int, max_distance: int, *, max_tables: int | None = None
) -> BPHSDesign:
    """The design with the least modelled query cost (:meth:`BPHSDesign.cost`) for ``n``, ``h``.

    Searched over ``G = h + 1 .. h + 10`` and ``g = 1 .. G - h``, keeping at most
    ``max_tables`` tables (RAM: :meth:`BPHSDesign.memory_bytes`). For a fixed ``g`` both cost
    and tables grow with ``G`` (seed 004 eq. 11-13), so the winner has ``G = g + h``, with or
    without ``max_tables``: designs with ``g < G - h`` serve several ``h`` from one index.

    Examples
    --------
    >>> choose_design(1 << 20, 3)
    BPHSDesign(num_blocks=4, leading_blocks=1)
    """
    designs = [
        design
        for design in _designs(max_distance)
        if max_tables is None or design.num_tables <= max_tables
    ]
    if not designs:
        raise ParameterError(
            f"BPHS at max_distance={max_distance} needs at least {max_distance + 1} tables; "
            f"got max_tables={max_tables}. Raise max_tables or lower max_distance."
        )
    return min(designs, key=lambda design: design.cost(num_fingerprints))


def choose_blocks(num_fingerprints: int, max_distance: int) -> int:
    """The ``G`` of :func:`choose_design`'s design, whose ``g`` is always ``G - h`` (eq. 13).

    So classic BPHS (every table's header as long as pigeonhole allows), which
    :class:`~neardup.hamming.FingerprintTables` builds with ``C(G, G - h)`` tables, gets the
    cost model's best design.

    Examples
    --------
    >>> choose_blocks(1_000_000, 3), choose_blocks(8_000_000, 3), choose_blocks(10**8, 3)
    (4, 4, 5)
    """
    return choose_design(num_fingerprints, max_distance).num_blocks


def _designs(max_distance: int) -> list[BPHSDesign]:
    """Every design for ``h``: ``G = h + 1 .. h + 10`` (at most 64), ``g = 1 .. G - h``."""
    if not 0 <= max_distance < BITS:
        raise ParameterError(f"max_distance must be in 0..{BITS - 1}; got {max_distance}.")
    return [
        BPHSDesign(blocks, leading)
        for blocks in range(max_distance + 1, min(BITS, max_distance + MAX_EXTRA_BLOCKS) + 1)
        for leading in range(1, blocks - max_distance + 1)
    ]


def _blocks(num_blocks: int) -> list[tuple[int, int]]:
    """(start bit, width) of each block, from the top bit down, widths differing by at most 1."""
    widths = [BITS // num_blocks + (1 if b < BITS % num_blocks else 0) for b in range(num_blocks)]
    out, top = [], BITS
    for width in widths:
        top -= width
        out.append((top, width))
    return out


@dataclass(frozen=True, slots=True, eq=False)
class BlockLayout:
    """Where each table of a BPHS design moves the blocks of a fingerprint.

    Table ``t`` moves its ``g`` leading blocks (the ``t``-th choice of
    ``itertools.combinations``) to the top and the others after them, in order; its header is
    the top ``64 - prefix_shifts[t]`` bits of the permuted value. Row ``t`` of ``sources``,
    ``shifts`` and ``masks`` says, slot by slot, where a block starts, where it goes and how
    wide it is; ``lower_masks[t]`` holds the permuted bits of the non-leading blocks before the
    last leading one (see :func:`~neardup._kernels.hamming.table_matches`).

    Examples
    --------
    >>> layout = BlockLayout.of(BPHSDesign(num_blocks=4, leading_blocks=1))
    >>> [hex(int(v)) for v in layout.permute(np.array([0x1111_2222_3333_4444], np.uint64), 2)]
    ['0x3333111122224444']
    """

    sources: U64Array
    shifts: U64Array
    masks: U64Array
    lower_masks: U64Array
    prefix_shifts: U64Array

    @classmethod
    def of(cls, design: BPHSDesign) -> BlockLayout:
        """The layout of ``design``'s ``C(G, g)`` tables."""
        num_blocks, leading = design.num_blocks, design.leading_blocks
        blocks = _blocks(num_blocks)
        heads = list(combinations(range(num_blocks), leading))
        shape = (len(heads), num_blocks)
        sources, shifts = np.empty(shape, np.uint64), np.empty(shape, np.uint64)
        masks, lower_masks = np.empty(shape, np.uint64), np.zeros(shape, np.uint64)
        prefix_shifts = np.empty(len(heads), np.uint64)
        for t, head in enumerate(heads):
            order = [*head, *(b for b in range(num_blocks) if b not in head)]
            widths = [blocks[b][1] for b in order]
            tops = BITS - np.cumsum(widths)
            sources[t] = [blocks[b][0] for b in order]
            shifts[t] = tops
            masks[t] = [(1 << width) - 1 for width in widths]
            lower = [slot for slot, b in enumerate(order) if b < head[-1] and b not in head]
            lower_masks[t, lower] = masks[t, lower] << shifts[t, lower]
            prefix_shifts[t] = tops[leading - 1]
        return cls(sources, shifts, masks, lower_masks, prefix_shifts)

    def permute(self, values: U64Array, table: int) -> U64Array:
        """``values`` with their blocks moved as table ``table`` moves them."""
        values = np.ascontiguousarray(values, dtype=np.uint64)
        out = np.empty_like(values)
        run = partial(kernels.permute_blocks, values, self.sources[table], self.shifts[table],
                      self.masks[table], out)  # fmt: skip
        in_blocks(run, values.shape[0])
        return out


class BlockPermutedIndex:
    """An in-memory BPHS index of 64-bit fingerprints (e.g. SimHashes).

    Parameters
    ----------
    max_distance
        ``h``: queries return every fingerprint within this Hamming distance.
    num_blocks
        ``G > h``.
    leading_blocks
        ``g``, ``1 <= g <= G - h`` (seed 004 §3); ``None``: ``G - h``. ``C(G, g)`` tables
        are built; :func:`choose_design` picks ``G`` and ``g`` by the seed's cost model.

    Examples
    --------
    >>> index = BlockPermutedIndex(np.array([0b1011, 0b1000, 2**63], np.uint64), max_distance=2)
    >>> query, row = index.query(np.array([0b1001], np.uint64))
    >>> row.tolist()
    [0, 1]
    >>> index.query(np.array([0b1001], np.uint64), first_only=True)[1].tolist()
    [1]
    """

    def __init__(
        self,
        values: U64Array,
        *,
        max_distance: int = 3,
        num_blocks: int = 4,
        leading_blocks: int | None = None,
    ) -> None:
        if not 0 <= max_distance < num_blocks <= BITS:
            raise ParameterError(
                f"BPHS needs 0 <= max_distance < num_blocks <= {BITS}; got max_distance="
                f"{max_distance}, num_blocks={num_blocks}."
            )
        leading = num_blocks - max_distance if leading_blocks is None else leading_blocks
        if not 1 <= leading <= num_blocks - max_distance:
            raise ParameterError(
                f"BPHS needs 1 <= leading_blocks <= num_blocks - max_distance = "
                f"{num_blocks - max_distance}; got leading_blocks={leading_blocks}. "
                f"Lower it or add blocks."
            )
        self.max_distance = max_distance
        self.design = BPHSDesign(num_blocks, leading)
        values = np.ascontiguousarray(values, dtype=np.uint64)
        if values.ndim != 1:
            raise ParameterError(f"values must be a 1-d array of uint64; got shape {values.shape}.")
        self.layout = BlockLayout.of(self.design)
        self._tables = np.empty((self.num_tables, values.shape[0]), np.uint64)
        self._rows = np.empty((self.num_tables, values.shape[0]), np.int64)
        for t in range(self.num_tables):
            permuted = self.layout.permute(values, t)
            rows = np.argsort(permuted, kind="stable")
            self._tables[t] = permuted[rows]
            self._rows[t] = rows

    @property
    def num_blocks(self) -> int:
        """``G``."""
        return self.design.num_blocks

    @property
    def leading_blocks(self) -> int:
        """``g``: the blocks of each table's header."""
        return self.design.leading_blocks

    @property
    def num_tables(self) -> int:
        """``T = C(G, g)``."""
        return self.design.num_tables

    def memory_bytes(self) -> int:
        """Bytes held: each table's permuted fingerprints and row numbers."""
        return int(self._tables.nbytes + self._rows.nbytes)

    def query(self, queries: U64Array, *, first_only: bool = False) -> tuple[I64Array, I64Array]:
        """``(query, row)`` pairs with ``popcount(values[row] ^ queries[query]) <= h``.

        BPHSA (all matches) by default: every such pair, each once. With ``first_only``
        (BPHSF, seed 004 §3) a query gets at most one row, the first found (tables in
        combination order, each scanned in sorted order), and its search stops there.
        Pairs are sorted by query, then row; queries are searched in parallel, in blocks
        whose run starts (one per table) take at most :data:`STARTS_PER_BLOCK` entries.
        """
        queries = np.ascontiguousarray(queries, dtype=np.uint64)
        step = max(1, STARTS_PER_BLOCK // self.num_tables)
        found_q, found_r = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
        for begin in range(0, queries.shape[0], step):
            query, row = self._query_block(queries[begin : begin + step], first_only)
            found_q.append(query + begin)
            found_r.append(row)
        return np.concatenate(found_q), np.concatenate(found_r)

    def _query_block(self, queries: U64Array, first_only: bool) -> tuple[I64Array, I64Array]:
        n = queries.shape[0]
        starts = np.empty((self.num_tables, n), dtype=np.int64)
        counts = np.zeros(n, dtype=np.int64)
        self._matches(queries, first_only, starts, counts)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        row = np.empty(int(offsets[-1]), dtype=np.int64)
        self._matches(queries, first_only, starts, offsets[:-1].copy(), offsets, row)
        return np.repeat(np.arange(n, dtype=np.int64), counts), row

    def _matches(
        self,
        queries: U64Array,
        first_only: bool,
        starts: I64Array,
        end: I64Array,
        offsets: I64Array | None = None,
        row: I64Array | None = None,
    ) -> None:
        """A pass of :func:`~neardup._kernels.hamming.table_matches` over every table.

        Table by table, each table's queries in blocks in threads: counting into ``end`` (no
        ``row``), or writing each query's rows to ``row`` from ``end[q] = offsets[q]`` on.
        """
        counting = row is None
        layout = self.layout
        args = (self._tables, self._rows, layout.sources, layout.shifts, layout.masks,
                layout.prefix_shifts, layout.lower_masks, queries, self.max_distance, first_only,
                counting, starts, end if offsets is None else offsets,
                np.empty(0, np.int64) if row is None else row, end)  # fmt: skip
        for table in range(self.num_tables):
            in_blocks(partial(kernels.table_matches, *args, table), queries.shape[0])


def bphs_batch_query(
    chunks: Iterable[tuple[U64Array, I64Array]],
    queries: U64Array,
    *,
    max_distance: int = 3,
    num_blocks: int = 4,
    leading_blocks: int | None = None,
) -> tuple[I64Array, I64Array]:
    """Batch BPHS (seed 004 §3): a stored collection, read chunk by chunk, against a batch.

    The ``T`` tables are built once, around the batch ``queries`` (``Q``), and each chunk's
    stored fingerprints are looked up in them, so no chunk is ever permuted or sorted ``T``
    times. A stored fingerprint cannot stop at its first match (other queries may still
    have none), so batch BPHSF is BPHSA, as the seed says: every pair is returned.

    Parameters
    ----------
    chunks
        ``(fingerprints, rows)`` of each chunk of the collection, e.g. as read from disk.
    queries
        The batch ``Q``.

    Returns
    -------
    query, row
        Every ``(query, row)`` within ``max_distance`` bits, distinct, sorted by query, then
        row.

    Examples
    --------
    >>> chunks = [(np.array([7, 8], np.uint64), np.array([10, 11])),
    ...           (np.array([6], np.uint64), np.array([12]))]
    >>> query, row = bphs_batch_query(chunks, np.array([8, 3], np.uint64), max_distance=1)
    >>> list(zip(query.tolist(), row.tolist()))
    [(0, 11), (1, 10)]
    """
    index = BlockPermutedIndex(
        queries, max_distance=max_distance, num_blocks=num_blocks, leading_blocks=leading_blocks
    )
    found_q, found_r = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
    for values, rows in chunks:
        if np.shape(values) != np.shape(rows):
            raise ParameterError(
                f"each chunk needs one row number per fingerprint; got fingerprints of shape "
                f"{np.shape(values)} and rows of shape {np.shape(rows)}."
            )
        position, query = index.query(values)
        found_q.append(query)
        found_r.append(np.asarray(rows, dtype=np.int64)[position])
    query, row = np.concatenate(found_q), np.concatenate(found_r)
    order = np.lexsort((row, query))
    query, row = query[order], row[order]
    distinct = np.ones(query.shape[0], dtype=bool)
    distinct[1:] = (query[1:] != query[:-1]) | (row[1:] != row[:-1])
    return query[distinct], row[distinct]
