"""All pairs of a collection's fingerprints within Hamming distance ``h``: the SimHash self-join.

Documents with the *same* fingerprint are paired as the members of an LSH bucket are (all
pairs up to ``max_bucket_size`` members, then each with the ones just before it), so
boilerplate shared by thousands of pages cannot make the join quadratic. Distinct fingerprints
within ``h`` bits are found with block-permuted tables (:mod:`.bphs`) and pair their first
documents; clustering then joins each group through its first member. 128-bit fingerprints
are searched half by half: by pigeonhole, two within ``h`` bits are within ``h // 2`` bits on
one of their 64-bit halves; the full distance is then checked.
"""

from __future__ import annotations

import numpy as np

from neardup._types import BoolArray, F64Array, I64Array, U64Array
from neardup.errors import ParameterError
from neardup.hamming.bphs import BlockPermutedIndex, choose_blocks
from neardup.hamming.flips import FlipLevels
from neardup.hamming.psm import PSMIndex
from neardup.lsh.banding import candidate_pairs
from neardup.pairs import CandidatePairs
from neardup.params import Search, per_word_radius
from neardup.sketch.simhash import hamming_distance

__all__ = ["FingerprintTables", "near_pairs"]

QUERY_ROWS = 100_000
"""Fingerprints searched at once when each brings its 64 flip probabilities per word."""


class FingerprintTables:
    """A search over fingerprints of one or two 64-bit words for every row within ``h`` bits.

    Two words are searched half by half with radius ``h // 2`` (pigeonhole), then the full
    distance is checked. ``search`` picks block-permuted tables (``num_blocks`` ``None``
    chooses ``G`` from the number of rows) or PSM (``budget`` flip sets per query and word,
    ``None`` for all of them).
    """

    def __init__(
        self,
        rows: U64Array,
        max_distance: int,
        num_blocks: int | None = None,
        *,
        search: Search = "tables",
        budget: int | None = None,
    ) -> None:
        if rows.ndim != 2 or rows.shape[1] not in (1, 2):
            raise ParameterError(
                f"fingerprints must be rows of 1 or 2 uint64 words; got shape {rows.shape}."
            )
        self.rows = rows
        self.max_distance = max_distance
        self.budget = budget
        words = rows.shape[1]
        self.per_word = per_word_radius(64 * words, max_distance)
        self.tables: list[BlockPermutedIndex | PSMIndex]
        if search == "psm":
            self.tables = [PSMIndex(np.ascontiguousarray(rows[:, w])) for w in range(words)]
        else:
            g = choose_blocks(rows.shape[0], self.per_word) if num_blocks is None else num_blocks
            self.tables = [
                BlockPermutedIndex(
                    np.ascontiguousarray(rows[:, w]), max_distance=self.per_word, num_blocks=g
                )
                for w in range(words)
            ]

    def memory_bytes(self) -> int:
        """Bytes of every table."""
        return sum(table.memory_bytes() for table in self.tables)

    def query(
        self, queries: U64Array, probabilities: F64Array | None = None
    ) -> tuple[I64Array, I64Array]:
        """Every ``(query, row)`` within ``max_distance`` bits, sorted by query, then row.

        ``probabilities`` (``float64[num_queries, 64 * words]``) are the queries' flip
        probabilities for PSM (:class:`~neardup.hamming.flips.FlipModel`); ``None``: all alike.
        """
        if len(self.tables) == 1:
            return self._search(0, queries, probabilities)
        num_rows = max(self.rows.shape[0], 1)
        codes = []
        for word in range(len(self.tables)):
            query, row = self._search(word, queries, probabilities)
            codes.append(query * num_rows + row)
        code = np.unique(np.concatenate(codes))
        query, row = code // num_rows, code % num_rows
        close = hamming_distance(queries[query], self.rows[row]) <= self.max_distance
        return query[close], row[close]

    def _search(
        self, word: int, queries: U64Array, probabilities: F64Array | None
    ) -> tuple[I64Array, I64Array]:
        """``(query, row)`` within ``h`` (or ``h // 2``) bits on one word."""
        table = self.tables[word]
        values = np.ascontiguousarray(queries[:, word])
        if isinstance(table, BlockPermutedIndex):
            return table.query(values)
        p = None if probabilities is None else probabilities[:, 64 * word : 64 * (word + 1)]
        found = table.query(values, p, max_distance=self.per_word, budget=self.budget)
        return found.query, found.row


def near_pairs(
    values: U64Array,
    max_distance: int,
    *,
    active: BoolArray | None = None,
    num_blocks: int | None = None,
    max_bucket_size: int = 1000,
    search: Search = "tables",
    budget: int | None = None,
    flips: FlipLevels | None = None,
) -> CandidatePairs:
    """Pairs of documents whose fingerprint rows are at most ``max_distance`` bits apart.

    Parameters
    ----------
    values
        ``uint64[num_docs, words]``, one or two words per fingerprint.
    active
        Documents taking part (others are never paired); all by default.
    num_blocks
        ``G`` of the tables (``None``: :func:`~neardup.hamming.choose_blocks`).
    search, budget
        As for :class:`FingerprintTables`.
    flips
        PSM's flip model and every document's weight levels (rows of ``values``), which order
        each document's header flips; ``None``: every header bit is as likely to flip. With a
        budget a pair may come up from one side only: it is kept from either.

    Examples
    --------
    >>> values = np.array([[0b0111], [0b0001], [0b0111], [7 << 61]], dtype=np.uint64)
    >>> pairs = near_pairs(values, 2)
    >>> list(zip(pairs.first.tolist(), pairs.second.tolist()))
    [(0, 1), (0, 2)]
    """
    num_docs, _words = values.shape
    docs = np.arange(num_docs, dtype=np.int64)
    if active is not None:
        docs = docs[active]
    distinct, first_of, group = np.unique(
        values[docs], axis=0, return_index=True, return_inverse=True
    )
    keys = np.zeros((num_docs, 1), dtype=np.uint64)
    keys[docs, 0] = group.reshape(-1)
    in_group = np.zeros(num_docs, dtype=bool)
    in_group[docs] = True
    same = candidate_pairs(keys, active=in_group, max_bucket_size=max_bucket_size)
    lead = docs[first_of]
    left, right = _distinct_pairs(distinct, lead, max_distance, num_blocks, search, budget, flips)
    first, second = np.minimum(lead[left], lead[right]), np.maximum(lead[left], lead[right])
    codes = np.unique(np.concatenate([same.first * num_docs + same.second,
                                      first * num_docs + second]))  # fmt: skip
    return CandidatePairs(
        first=codes // max(num_docs, 1),
        second=codes % max(num_docs, 1),
        num_giant_buckets=same.num_giant_buckets,
        largest_bucket=same.largest_bucket,
    )


def _distinct_pairs(
    distinct: U64Array,
    lead: I64Array,
    max_distance: int,
    num_blocks: int | None,
    search: Search,
    budget: int | None,
    flips: FlipLevels | None,
) -> tuple[I64Array, I64Array]:
    """``(i, j)``, ``i < j``, of the ``distinct`` rows within ``max_distance`` bits.

    ``lead[i]``: the document whose weight levels stand for row ``i`` (``flips``). Rows are
    searched :data:`QUERY_ROWS` at a time, so their flip probabilities exist a block at a time.
    """
    tables = FingerprintTables(distinct, max_distance, num_blocks, search=search, budget=budget)
    if flips is None:
        query, row = tables.query(distinct)
    else:
        found_q, found_r = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
        for start in range(0, distinct.shape[0], QUERY_ROWS):
            block = slice(start, start + QUERY_ROWS)
            q, r = tables.query(distinct[block], flips.probabilities(lead[block]))
            found_q.append(q + start)
            found_r.append(r)
        query, row = np.concatenate(found_q), np.concatenate(found_r)
    other = query != row
    return np.minimum(query, row)[other], np.maximum(query, row)[other]
