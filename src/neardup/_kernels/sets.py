"""Numba kernels for shingle sets: each document's sorted, distinct shingle fingerprints.

:func:`shingle_sets` shingles a batch of texts (:func:`neardup._kernels.tokens.doc_shingles_into`)
into room for every shingle of each document, sorted (:func:`_sort_hashes`) and deduplicated,
with how many times each occurs; :func:`compact_sets` then packs the rooms end to end. The sets
are ``neardup.text.shingle.ShingleSets``: what exact Jaccard, IDF and the set-sampling
sketchers read.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._kernels.groups import insertion_sort
from neardup._kernels.tokens import doc_shingles_into, shingle_room

SORT_BY_INSERTION = 16
"""Sets of at most this many shingles are sorted by insertion alone; longer ones by a radix
pass first (45 shingles: 0.28 us against 0.56 us by insertion alone, 64: 0.40 against 1.17)."""


@njit(cache=True, nogil=True)
def _sort_hashes(values, n, scratch, counts):  # type: ignore[no-untyped-def]
    """Sort ``values[:n]`` (uniform 64-bit hashes) in place.

    A radix pass on the top bits, then insertion sort of each small bucket. ``scratch`` holds
    ``n`` values, ``counts`` 4,097 entries. Cost: O(n) expected.
    """
    if n <= SORT_BY_INSERTION:
        insertion_sort(values, np.int64(0), n)
        return
    bits = 4
    while bits < 12 and (n >> (bits + 3)) > 0:
        bits += 1
    shift = uint64(64 - bits)
    num_buckets = 1 << bits
    counts[: num_buckets + 1] = 0
    for i in range(n):
        counts[np.int64(values[i] >> shift) + 1] += 1
    for b in range(num_buckets):
        counts[b + 1] += counts[b]
    for i in range(n):
        bucket = np.int64(values[i] >> shift)
        scratch[counts[bucket]] = values[i]
        counts[bucket] += 1
    start = np.int64(0)  # not a literal 0: insertion_sort compiles once, for int64
    for b in range(num_buckets):  # counts[b] is now the end of bucket b
        insertion_sort(scratch, start, counts[b])
        start = counts[b]
    values[:n] = scratch[:n]


@njit(cache=True, nogil=True)
def sorted_distinct(values, n, scratch, counts, out, out_counts, base):  # type: ignore[no-untyped-def]
    """Sort ``values[:n]`` and write its distinct values to ``out[base:]``; how many there are.

    ``out_counts`` (unless empty: counts not wanted) gets how many times each occurs.
    ``scratch`` and ``counts`` as :func:`_sort_hashes` needs them.
    """
    if n == 0:
        return 0
    counting = out_counts.shape[0] > 0
    _sort_hashes(values, n, scratch, counts)
    out[base] = values[0]
    if counting:
        out_counts[base] = 1
    size = 1
    for s in range(1, n):
        if values[s] != values[s - 1]:
            out[base + size] = values[s]
            if counting:
                out_counts[base + size] = 1
            size += 1
        elif counting:
            out_counts[base + size - 1] += 1
    return size


@njit(cache=True, nogil=True)
def shingle_sets(  # type: ignore[no-untyped-def]
    buf,
    offsets,
    classes,
    byte_words,
    strip_punct,
    fold_ascii,
    is_char,
    rabin,
    stop_keys,
    k,
    out_offsets,
    out,
    out_counts,
    out_sizes,
    lo,
    hi,
):
    """Write the sorted, distinct shingle fingerprints of documents ``lo .. hi - 1``, with counts.

    Document ``d`` owns ``out[out_offsets[d]:out_offsets[d + 1]]`` (room for every shingle)
    and fills its first ``out_sizes[d]`` entries; ``out_counts`` (unless empty: counts not
    wanted) holds how many times each occurs in the document. Cost: O(s log s) for s
    shingles.
    """
    tokens, shingles = shingle_room(offsets, lo, hi)
    counts = np.empty(4097, dtype=np.int64)
    for d in range(lo, hi):
        num, _, _ = doc_shingles_into(
            buf, offsets[d], offsets[d + 1], classes, byte_words, strip_punct, fold_ascii,
            is_char, rabin, stop_keys, k, tokens, shingles,
        )  # fmt: skip
        out_sizes[d] = sorted_distinct(
            shingles, num, tokens, counts, out, out_counts, out_offsets[d]
        )


@njit(cache=True, nogil=True)
def compact_sets(scratch, scratch_counts, room_offsets, offsets, out, out_counts):  # type: ignore[no-untyped-def]
    """Pack each document's shingles (and counts, unless empty) from its room to ``offsets``."""
    counting = out_counts.shape[0] > 0
    for d in range(offsets.shape[0] - 1):
        src = room_offsets[d]
        dst = offsets[d]
        n = offsets[d + 1] - dst
        out[dst : dst + n] = scratch[src : src + n]
        if counting:
            out_counts[dst : dst + n] = scratch_counts[src : src + n]
