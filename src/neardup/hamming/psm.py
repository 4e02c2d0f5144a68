"""Probabilistic SimHash matching (PSM, seed 004): one sorted copy, bit flips in VOSH order.

Instead of ``C(G, g)`` permuted copies (:mod:`.bphs`), PSM keeps the fingerprints once, sorted,
with a header table of ``2^t + 1`` offsets for their top ``t`` bits, and for a query ``u`` looks
up ``u ^ mask`` for flip sets in non-increasing probability ``p(u, S)`` (VOSH) until a match
(first-match, PSMF) or the budget ``k`` (all-match, PSMA). A bit's flip probability comes from
the query's own SimHash weight ``W_i``: a near copy flips bit ``i`` when its weight change
crosses zero, ``p_i = P(dW opposite to W_i and |dW| > |W_i|)``, estimated from an empirical
sample of weight changes (:func:`flip_probabilities`). With the full budget (every set of at
most ``h`` bits) PSM finds exactly what BPHS finds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from neardup._kernels import vosh as kernels
from neardup._parallel import parallel_section
from neardup._types import F64Array, I64Array, U64Array
from neardup.errors import ParameterError
from neardup.io.output import AtomicDirectory

__all__ = [
    "PSMIndex",
    "PSMMatches",
    "flip_probabilities",
    "psm_batch_query",
    "save_sorted",
    "vosh_masks",
]

MAX_FLIP_PROBABILITY = 0.5
MIN_FLIP_PROBABILITY = 1e-9


def flip_probabilities(bit_weights: F64Array, weight_changes: F64Array) -> F64Array:
    """``p_i = 1/2 P(|dW| > |W_i|)`` per bit, from a sample of per-bit weight changes ``dW``.

    ``weight_changes`` holds ``W(v) - W(u)`` of near-duplicate pairs (any shape); symmetric
    changes cross zero in the right direction half of the time.
    """
    changes = np.sort(np.abs(np.ravel(weight_changes)))
    if changes.size == 0:
        raise ParameterError("flip_probabilities needs a non-empty sample of weight changes.")
    above = 1.0 - np.searchsorted(changes, np.abs(bit_weights), side="right") / changes.size
    p: F64Array = np.clip(0.5 * above, MIN_FLIP_PROBABILITY, MAX_FLIP_PROBABILITY)
    return p


def vosh_masks(
    probabilities: F64Array, max_bits: int, budget: int, recall: float = 1.0
) -> U64Array:
    """The first flip masks of one fingerprint in VOSH order (the empty mask first).

    ``budget`` masks, or fewer where ``recall < 1`` is reached first (see :meth:`PSMIndex.query`).

    Examples
    --------
    >>> p = np.full(64, 1e-3); p[[5, 9]] = [0.4, 0.3]
    >>> [bin(int(m)) for m in vosh_masks(p, max_bits=2, budget=4)]
    ['0b0', '0b100000', '0b1000000000', '0b1000100000']
    """
    log_odds = _log_odds(np.asarray(probabilities, dtype=np.float64)[None, :])[0]
    out = np.empty(budget, dtype=np.uint64)
    order = np.argsort(-log_odds, kind="stable")
    n = kernels.vosh_masks(log_odds, order, max_bits, budget, recall, out)
    return out[:n]


def _log_odds(probabilities: F64Array) -> F64Array:
    p = np.clip(probabilities, MIN_FLIP_PROBABILITY, MAX_FLIP_PROBABILITY)
    odds: F64Array = np.log(p) - np.log1p(-p)
    return odds


@dataclass(frozen=True, slots=True)
class PSMMatches:
    """What a PSM search found: ``(query[i], row[i])`` pairs, and the lookups per query.

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

    Examples
    --------
    >>> index = PSMIndex(np.array([0b1011, 0b1000, 2**63], np.uint64), header_bits=4)
    >>> p = np.full((1, 64), 0.01); p[0, 1] = 0.4
    >>> query = np.array([0b1001], np.uint64)
    >>> found = index.query(query, p, max_distance=2, budget=3, first_only=True)
    >>> found.row.tolist(), found.attempts.tolist()  # the likeliest flip (bit 1) hits 2nd
    ([0], [2])
    """

    def __init__(self, values: U64Array, *, header_bits: int = 16) -> None:
        if not 0 <= header_bits <= 32:
            raise ParameterError(f"header_bits must be in [0, 32]; got {header_bits}.")
        values = np.asarray(values, dtype=np.uint64)
        self.rows: I64Array = np.argsort(values, kind="stable").astype(np.int64)
        self.values = values[self.rows]
        self.header_bits = header_bits
        buckets = np.arange(2**header_bits + 1, dtype=np.uint64)
        bounds = buckets << np.uint64(64 - header_bits) if header_bits else buckets * 0
        self.header: I64Array = np.searchsorted(self.values, bounds[:-1]).astype(np.int64)
        self.header = np.append(self.header, self.values.shape[0])

    def memory_bytes(self) -> int:
        """The single copy, its row numbers and the header table."""
        return int(self.values.nbytes + self.rows.nbytes + self.header.nbytes)

    def query(
        self,
        queries: U64Array,
        probabilities: F64Array,
        *,
        max_distance: int = 3,
        budget: int = 1000,
        recall: float = 1.0,
        first_only: bool = False,
    ) -> PSMMatches:
        """Stored fingerprints found by flipping each query's likeliest bit sets.

        ``probabilities[q]`` are query ``q``'s 64 flip probabilities. A query tries at most
        ``budget`` flip sets (the empty set included) and, with ``recall < 1``, stops once
        the sets tried hold that share of the model's probability of all sets of at most
        ``max_distance`` bits (the recall knob: the model's chance that a near copy was
        reachable). ``first_only`` stops at the first hit (PSMF); otherwise all hits (PSMA).
        """
        queries = np.ascontiguousarray(queries, dtype=np.uint64)
        log_odds = _log_odds(_per_query(probabilities, queries))
        _check_search(max_distance, budget, recall)
        cap = 1 if first_only else 16
        while True:
            found = np.zeros(queries.shape[0], dtype=np.int64)
            attempts = np.zeros(queries.shape[0], dtype=np.int64)
            hits = np.empty((queries.shape[0], cap), dtype=np.int64)
            with parallel_section:
                kernels.psm_query(
                    self.values, self.header, self.header_bits, queries, log_odds,
                    max_distance, budget, recall, first_only, found, attempts, hits,
                )  # fmt: skip
            if found.max(initial=0) <= cap:
                break
            cap = int(found.max())  # rare: a query with more hits than columns; run again
        query = np.repeat(np.arange(queries.shape[0]), found)
        row = self.rows[hits[np.arange(cap) < found[:, None]]]
        order = np.lexsort((row, query))
        return PSMMatches(query=query[order], row=row[order], attempts=attempts)


def save_sorted(values: U64Array, directory: Path | str) -> None:
    """Write fingerprints for :func:`psm_batch_query`: sorted, with their row numbers, as .npy.

    ``directory`` must not exist; it appears whole or not at all.
    """
    values = np.asarray(values, dtype=np.uint64)
    rows = np.argsort(values, kind="stable")
    with AtomicDirectory(directory) as tmp:
        np.save(tmp / "fingerprints.npy", values[rows])
        np.save(tmp / "rows.npy", rows.astype(np.int64))


def psm_batch_query(
    directory: Path | str,
    queries: U64Array,
    probabilities: F64Array,
    *,
    max_distance: int = 3,
    budget: int = 1000,
    recall: float = 1.0,
    first_only: bool = False,
    chunk_rows: int = 1 << 22,
    max_targets: int = 1 << 25,
) -> PSMMatches:
    """Batch PSM: a collection on disk (:func:`save_sorted`) read in chunks.

    Queries are taken in groups of at most ``max_targets / budget``; each group's flip targets
    (``query ^ mask`` for its VOSH masks, as in :meth:`PSMIndex.query`) are sorted and merged
    with each chunk of the sorted collection as it is read, so RAM holds one chunk and one
    group's targets, whatever the collection's size. ``first_only`` keeps, per query, the hits
    of its earliest flip set.
    """
    directory = Path(directory)
    queries = np.ascontiguousarray(queries, dtype=np.uint64)
    log_odds = _log_odds(_per_query(probabilities, queries))
    _check_search(max_distance, budget, recall)
    fingerprints = np.load(directory / "fingerprints.npy", mmap_mode="r")
    rows = np.load(directory / "rows.npy", mmap_mode="r")
    group = max(1, max_targets // budget)
    attempts = np.zeros(queries.shape[0], dtype=np.int64)
    found_q: list[I64Array] = []
    found_r: list[I64Array] = []
    for begin in range(0, queries.shape[0], group):
        part = slice(begin, begin + group)
        targets = np.zeros((queries[part].shape[0], budget), dtype=np.uint64)
        with parallel_section:
            kernels.flip_targets(queries[part], log_odds[part], max_distance, budget, recall,
                                 targets, attempts[part])  # fmt: skip
        used = np.arange(budget) < attempts[part, None]
        owner, attempt = np.nonzero(used)
        flat = targets[used]
        order = np.argsort(flat, kind="stable")
        query, row, made = _merge(
            flat[order], owner[order] + begin, attempt[order], fingerprints, rows, chunk_rows
        )
        if first_only and query.shape[0]:
            earliest = np.full(queries.shape[0], budget, dtype=np.int64)
            np.minimum.at(earliest, query, made)
            keep = made == earliest[query]
            query, row = query[keep], row[keep]
            reached = earliest < budget
            attempts[reached] = earliest[reached] + 1
        found_q.append(query)
        found_r.append(row)
    query, row = np.concatenate(found_q), np.concatenate(found_r)
    order = np.lexsort((row, query))
    return PSMMatches(query=query[order], row=row[order], attempts=attempts)


def _merge(
    targets: U64Array,
    owner: I64Array,
    attempt: I64Array,
    fingerprints: U64Array,
    rows: I64Array,
    chunk_rows: int,
) -> tuple[I64Array, I64Array, I64Array]:
    """``(query, row, attempt)`` of every sorted target equal to a stored fingerprint."""
    found: list[tuple[I64Array, I64Array, I64Array]] = []
    for start in range(0, fingerprints.shape[0], chunk_rows):
        chunk = np.asarray(fingerprints[start : start + chunk_rows])
        low = np.searchsorted(targets, chunk[0], side="left")
        high = np.searchsorted(targets, chunk[-1], side="right")
        first = np.searchsorted(chunk, targets[low:high], side="left")
        runs = np.searchsorted(chunk, targets[low:high], side="right") - first
        hit = np.repeat(np.arange(low, high), runs)
        position = np.repeat(first, runs) + _offsets_within_runs(runs)
        found.append((owner[hit], np.asarray(rows[start + position], np.int64), attempt[hit]))
    if not found:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    query, row, made = (np.concatenate(column) for column in zip(*found, strict=True))
    return query.astype(np.int64), row, made.astype(np.int64)


def _offsets_within_runs(runs: I64Array) -> I64Array:
    """``0, 1, .., runs[0] - 1, 0, 1, .., runs[1] - 1, ...``."""
    offsets: I64Array = np.arange(runs.sum()) - np.repeat(np.cumsum(runs) - runs, runs)
    return offsets


def _per_query(probabilities: F64Array, queries: U64Array) -> F64Array:
    p = np.asarray(probabilities, dtype=np.float64)
    if p.shape != (queries.shape[0], 64):
        raise ParameterError(
            f"flip probabilities must be one row of 64 per query; got shape {p.shape} for "
            f"{queries.shape[0]} queries."
        )
    return p


def _check_search(max_distance: int, budget: int, recall: float) -> None:
    if not 0 <= max_distance <= 64 or budget < 1 or not 0 < recall <= 1:
        raise ParameterError(
            "PSM needs 0 <= max_distance <= 64, budget >= 1 and 0 < recall <= 1; got "
            f"max_distance={max_distance}, budget={budget}, recall={recall}."
        )
