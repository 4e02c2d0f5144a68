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

from neardup._types import BoolArray, I64Array, U64Array
from neardup.errors import ParameterError
from neardup.hamming.bphs import BlockPermutedIndex, choose_blocks
from neardup.lsh.banding import candidate_pairs
from neardup.pairs import CandidatePairs
from neardup.sketch.simhash import hamming_distance

__all__ = ["FingerprintTables", "near_pairs"]


class FingerprintTables:
    """Block-permuted tables over fingerprints of one or two 64-bit words: exact within ``h``.

    Two words are searched half by half with radius ``h // 2`` (pigeonhole), then the full
    distance is checked. ``num_blocks`` ``None`` chooses ``G`` from the number of rows.
    """

    def __init__(self, rows: U64Array, max_distance: int, num_blocks: int | None = None) -> None:
        if rows.ndim != 2 or rows.shape[1] not in (1, 2):
            raise ParameterError(
                f"fingerprints must be rows of 1 or 2 uint64 words; got shape {rows.shape}."
            )
        self.rows = rows
        self.max_distance = max_distance
        words = rows.shape[1]
        per_word = max_distance if words == 1 else max_distance // 2
        blocks = num_blocks if num_blocks is not None else choose_blocks(rows.shape[0], per_word)
        self.tables = [
            BlockPermutedIndex(
                np.ascontiguousarray(rows[:, word]), max_distance=per_word, num_blocks=blocks
            )
            for word in range(words)
        ]

    def memory_bytes(self) -> int:
        """Bytes of every table."""
        return sum(table.memory_bytes() for table in self.tables)

    def query(self, queries: U64Array) -> tuple[I64Array, I64Array]:
        """Every ``(query, row)`` within ``max_distance`` bits, sorted by query, then row."""
        if len(self.tables) == 1:
            return self.tables[0].query(queries[:, 0])
        num_rows = max(self.rows.shape[0], 1)
        codes = []
        for word, table in enumerate(self.tables):
            query, row = table.query(np.ascontiguousarray(queries[:, word]))
            codes.append(query * num_rows + row)
        code = np.unique(np.concatenate(codes))
        query, row = code // num_rows, code % num_rows
        close = hamming_distance(queries[query], self.rows[row]) <= self.max_distance
        return query[close], row[close]


def near_pairs(
    values: U64Array,
    max_distance: int,
    *,
    active: BoolArray | None = None,
    num_blocks: int | None = None,
    max_bucket_size: int = 1000,
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
    left, right = _distinct_pairs(distinct, max_distance, num_blocks)
    lead = docs[first_of]
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
    rows: U64Array, max_distance: int, num_blocks: int | None
) -> tuple[I64Array, I64Array]:
    """``(i, j)``, ``i < j``, of distinct rows within ``max_distance`` bits."""
    query, row = FingerprintTables(rows, max_distance, num_blocks).query(rows)
    keep = query < row
    return query[keep], row[keep]
