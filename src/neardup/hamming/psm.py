"""Probabilistic SimHash matching (PSM, seed 004): one sorted copy, header flips in VOSH order.

Instead of ``C(G, g)`` permuted copies (:mod:`.bphs`), PSM keeps the fingerprints once, sorted,
with a table of ``2^t + 1`` offsets of the buckets of their top ``t`` bits (the header; the
seed's best ``t`` is ``log2 n``). A query ``x`` visits its own bucket, then the buckets
``header(x) ^ S`` for flip sets ``S`` of the header bits in non-increasing probability (VOSH,
:mod:`neardup._kernels.vosh`), scanning each for fingerprints within ``h`` bits of ``x``: a
neighbour differing in header bits ``S`` and in at most ``h - |S|`` others is found exactly when
``S`` comes up. PSMF (``first_only``) stops at the first; PSMA tries every set of its budget.
The bit probabilities come from each query's SimHash weights (:class:`~neardup.hamming.flips.
FlipModel`). With every set of at most ``h`` header bits (the default budget) the search is
exact; the budget ``k`` and the recall knob trade recall for speed.

Batch mode (:func:`psm_batch_query`) keeps the collection on disk as sorted runs
(:class:`~neardup.hamming.runs.SortedRuns`), reads it in chunks, searches each chunk with its own
header table, drops a query from the batch at its first match under PSMF (and stops reading when
none is left), and appends the batch to the file as one more sorted run.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from math import comb, log2
from pathlib import Path

import numpy as np

from neardup._kernels import vosh as kernels
from neardup._parallel import in_blocks
from neardup._types import BoolArray, F64Array, I64Array, U64Array
from neardup.errors import ParameterError
from neardup.hamming.runs import SortedRuns

__all__ = ["PSMIndex", "PSMMatches", "psm_batch_query", "vosh_masks"]

MAX_HEADER_BITS = 32
INITIAL_HITS = 16
"""Hit columns per query in the first pass; a query with more makes the search run again."""


def vosh_masks(
    probabilities: F64Array, max_bits: int, budget: int, recall: float = 1.0
) -> U64Array:
    """The first flip masks over the bits of ``probabilities`` (at most 64) in VOSH order.

    The empty mask first; ``budget`` masks, or fewer where ``recall < 1`` is reached first (see
    :meth:`PSMIndex.query`) or every set of at most ``max_bits`` bits has come up.

    Examples
    --------
    >>> p = np.full(64, 1e-3); p[[5, 9]] = [0.4, 0.3]
    >>> [bin(int(m)) for m in vosh_masks(p, max_bits=2, budget=4)]
    ['0b0', '0b100000', '0b1000000000', '0b1000100000']
    """
    _check_search(max_bits, budget, recall)
    p = np.ascontiguousarray(probabilities, dtype=np.float64)
    if not 0 < p.shape[0] <= 64 or p.ndim != 1:
        raise ParameterError(f"flip probabilities for 1 to 64 bits; got shape {p.shape}.")
    out = np.empty(budget, dtype=np.uint64)
    n = kernels.vosh_masks(p, max_bits, budget, recall, out)
    return out[:n]


def header_bits_for(num_fingerprints: int) -> int:
    """Seed 004's ``t = d = log2 n`` (rounded; at most 32): about one fingerprint a bucket.

    Examples
    --------
    >>> header_bits_for(1_000_000), header_bits_for(1), header_bits_for(2**40)
    (20, 0, 32)
    """
    return min(MAX_HEADER_BITS, round(log2(max(num_fingerprints, 1))))


def all_sets(header_bits: int, max_distance: int) -> int:
    """``sum_{i <= h} C(t, i)``: the flip sets of an exact search (the empty set included).

    Examples
    --------
    >>> all_sets(23, 3)  # seed 004's t = 23, h = 3
    2048
    """
    return sum(comb(header_bits, i) for i in range(min(max_distance, header_bits) + 1))


def flip_budget(budget: int | None, header_bits: int, max_distance: int) -> int:
    """The flip sets a search tries: ``budget``, at most every one (:func:`all_sets`).

    Without a budget, all of them: an exact search.

    Examples
    --------
    >>> flip_budget(None, 23, 3), flip_budget(8, 23, 3), flip_budget(5000, 23, 3)
    (2048, 8, 2048)
    """
    every = all_sets(header_bits, max_distance)
    return every if budget is None else min(budget, every)


def _header_table(values: U64Array, header_bits: int) -> I64Array:
    """``2^t + 1`` offsets: the sorted ``values``' bucket ``b`` is ``[table[b], table[b + 1])``."""
    table = np.zeros(2**header_bits + 1, dtype=np.int64 if values.shape[0] >= 2**31 else np.int32)
    if header_bits:
        counts = np.bincount((values >> np.uint64(64 - header_bits)).astype(np.int64),
                             minlength=2**header_bits)  # fmt: skip
        np.cumsum(counts, out=table[1:])
    else:
        table[1] = values.shape[0]
    return table


@dataclass(frozen=True, slots=True)
class PSMMatches:
    """What a PSM search found: ``(query[i], row[i])`` pairs, and the buckets visited per query.

    Pairs are sorted by query, then row; ``row`` numbers the fingerprints as given.
    """

    query: I64Array
    row: I64Array
    attempts: I64Array

    def found_per_query(self) -> I64Array:
        """Stored fingerprints found for each query."""
        counts: I64Array = np.bincount(self.query, minlength=self.attempts.shape[0])
        return counts


class PSMIndex:
    """Online PSM: one sorted copy of the fingerprints and a header table of their top bits.

    Parameters
    ----------
    header_bits
        ``t``; ``None`` takes seed 004's optimum ``log2 n`` (:func:`header_bits_for`).

    Examples
    --------
    >>> index = PSMIndex(np.array([0b1011, 0b1000, 2**63], np.uint64), header_bits=1)
    >>> p = np.full((1, 64), 0.01); p[0, 63] = 0.4
    >>> query = np.array([0b1001 | 2**63], np.uint64)
    >>> found = index.query(query, p, max_distance=2, first_only=True)
    >>> found.row.tolist(), found.attempts.tolist()  # its own bucket first, then bit 63 flipped
    ([2], [1])
    """

    def __init__(self, values: U64Array, *, header_bits: int | None = None) -> None:
        values = np.asarray(values, dtype=np.uint64)
        t = header_bits_for(values.shape[0]) if header_bits is None else header_bits
        if not 0 <= t <= MAX_HEADER_BITS:
            raise ParameterError(f"header_bits must be in [0, {MAX_HEADER_BITS}]; got {t}.")
        order = np.argsort(values, kind="stable")
        self.rows: I64Array = order.astype(np.int32 if values.shape[0] < 2**31 else np.int64)
        self.values: U64Array = values[order]
        self.header_bits = t
        self.header = _header_table(self.values, t)

    def __len__(self) -> int:
        return int(self.values.shape[0])

    def memory_bytes(self) -> int:
        """The single copy, its row numbers and the header table."""
        return int(self.values.nbytes + self.rows.nbytes + self.header.nbytes)

    def query(
        self,
        queries: U64Array,
        probabilities: F64Array | None = None,
        *,
        max_distance: int = 3,
        budget: int | None = None,
        recall: float = 1.0,
        first_only: bool = False,
    ) -> PSMMatches:
        """Stored fingerprints within ``max_distance`` bits found by the likeliest header flips.

        ``probabilities[q]`` are query ``q``'s 64 flip probabilities (only the top ``t`` count;
        ``None``: all alike). A query visits at most ``budget`` buckets (its own included;
        ``None``: every set of at most ``h`` header bits, an exact search) and, with
        ``recall < 1``, stops once the sets tried hold that share of the model's probability of
        all sets (the model's chance that a near copy was reachable). ``first_only`` stops at
        the first hit (PSMF); otherwise all hits of the sets tried (PSMA).
        """
        queries = np.ascontiguousarray(queries, dtype=np.uint64)
        p = _per_query(probabilities, queries)
        _check_search(max_distance, 1 if budget is None else budget, recall)
        budget = flip_budget(budget, self.header_bits, max_distance)
        active = np.ones(queries.shape[0], dtype=bool)
        query, row, attempts = _search(self.values, self.rows, self.header, self.header_bits,
                                       queries, p, active, max_distance, budget, recall,
                                       first_only)  # fmt: skip
        return PSMMatches(query=query, row=row, attempts=attempts)


def _search(
    values: U64Array,
    rows: I64Array,
    header: I64Array,
    header_bits: int,
    queries: U64Array,
    probabilities: F64Array,
    active: BoolArray,
    max_distance: int,
    budget: int,
    recall: float,
    first_only: bool,
) -> tuple[I64Array, I64Array, I64Array]:
    """``(query, row, attempts)``: the PSM kernel's hits, sorted by query, then row.

    Each query has :data:`INITIAL_HITS` columns for its hits; the few with more (a fingerprint
    repeated many times, boilerplate) are searched again, alone, with room for all of them.
    """
    cap = 1 if first_only else INITIAL_HITS
    found = np.zeros(queries.shape[0], dtype=np.int64)
    attempts = np.zeros(queries.shape[0], dtype=np.int64)
    hits = np.empty((queries.shape[0], cap), dtype=np.int64)
    run = partial(kernels.psm_search, values, rows, header, header_bits, queries, probabilities,
                  active, max_distance, budget, recall, first_only, found, attempts,
                  hits)  # fmt: skip
    in_blocks(run, queries.shape[0], max_block=kernels.QUERIES_PER_BLOCK)
    starts = np.concatenate([[0], np.cumsum(found)])
    row = np.empty(int(starts[-1]), dtype=np.int64)
    query, column = np.nonzero(np.arange(cap) < found[:, None])
    row[starts[query] + column] = hits[query, column]
    more = np.flatnonzero(found > cap)
    if more.shape[0]:
        wide = np.empty((more.shape[0], int(found[more].max())), dtype=np.int64)
        again = np.zeros(more.shape[0], dtype=np.int64)  # the same counts, once more
        run = partial(kernels.psm_search, values, rows, header, header_bits, queries[more],
                      probabilities[more], active[more], max_distance, budget, recall,
                      first_only, again, np.zeros_like(again), wide)  # fmt: skip
        in_blocks(run, more.shape[0], max_block=kernels.QUERIES_PER_BLOCK)
        query, column = np.nonzero(np.arange(wide.shape[1]) < again[:, None])
        row[starts[more[query]] + column] = wide[query, column]
    return np.repeat(np.arange(queries.shape[0], dtype=np.int64), found), row, attempts


def psm_batch_query(
    runs: SortedRuns | Path | str,
    queries: U64Array,
    probabilities: F64Array | None = None,
    *,
    max_distance: int = 3,
    budget: int | None = None,
    recall: float = 1.0,
    first_only: bool = False,
    chunk_rows: int | None = None,
    append: bool = False,
) -> PSMMatches:
    """Batch PSM (seed 004): the collection on disk, read in chunks, matched against a batch ``Q``.

    Each chunk of at most ``chunk_rows`` fingerprints (default ``|Q|``, the seed's ``m``) gets a
    header table of ``log2`` of that many bits and is searched as :meth:`PSMIndex.query` searches
    (same ``budget``, ``recall`` and ``first_only`` per chunk; ``attempts`` adds up the buckets
    visited). Under PSMF a query leaves ``Q`` at its first match, and reading stops once ``Q`` is
    empty. With ``append`` the batch is then sorted and appended to the file as one more run.
    """
    runs = runs if isinstance(runs, SortedRuns) else SortedRuns(runs)
    queries = np.ascontiguousarray(queries, dtype=np.uint64)
    p = _per_query(probabilities, queries)
    chunk_rows = max(queries.shape[0], 1) if chunk_rows is None else chunk_rows
    t = header_bits_for(chunk_rows)
    _check_search(max_distance, 1 if budget is None else budget, recall)
    budget = flip_budget(budget, t, max_distance)
    active = np.ones(queries.shape[0], dtype=bool)
    attempts = np.zeros(queries.shape[0], dtype=np.int64)
    found_q: list[I64Array] = []
    found_r: list[I64Array] = []
    for values, rows in runs.chunks(chunk_rows):
        if not active.any():
            break
        query, row, made = _search(values, rows, _header_table(values, t), t, queries, p,
                                   active, max_distance, budget, recall, first_only)  # fmt: skip
        attempts += made
        if first_only:
            active[query] = False
        found_q.append(query)
        found_r.append(row)
    if append:
        runs.append(queries)
    query = np.concatenate(found_q) if found_q else np.empty(0, np.int64)
    row = np.concatenate(found_r) if found_r else np.empty(0, np.int64)
    order = np.lexsort((row, query))
    return PSMMatches(query=query[order], row=row[order], attempts=attempts)


def _per_query(probabilities: F64Array | None, queries: U64Array) -> F64Array:
    if probabilities is None:
        return np.full((queries.shape[0], 64), kernels.MAX_PROBABILITY)
    p = np.ascontiguousarray(probabilities, dtype=np.float64)
    if p.shape != (queries.shape[0], 64):
        raise ParameterError(
            f"flip probabilities must be one row of 64 per query; got shape {p.shape} for "
            f"{queries.shape[0]} queries."
        )
    return p


def _check_search(max_distance: int, budget: int, recall: float) -> None:
    if not 0 <= max_distance <= kernels.MAX_SET_BITS or budget < 1 or not 0 < recall <= 1:
        raise ParameterError(
            f"PSM needs 0 <= max_distance <= {kernels.MAX_SET_BITS}, budget >= 1 and "
            f"0 < recall <= 1; got max_distance={max_distance}, budget={budget}, "
            f"recall={recall}."
        )
