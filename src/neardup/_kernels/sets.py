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


@njit(cache=True, nogil=True)
def _sort_hashes(values, n, scratch, counts):  # type: ignore[no-untyped-def]
    """Sort ``values[:n]`` (uniform 64-bit hashes) in place.

    A radix pass on the top bits, then insertion sort of each small bucket. ``scratch`` holds
    ``n`` values, ``counts`` 4,097 entries. Cost: O(n) expected.
    """
    if n <= 64:
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
    counting = out_counts.shape[0] > 0
    tokens, shingles = shingle_room(offsets, lo, hi)
    counts = np.empty(4097, dtype=np.int64)
    for d in range(lo, hi):
        num, _, _ = doc_shingles_into(
            buf, offsets[d], offsets[d + 1], classes, byte_words, strip_punct, fold_ascii,
            is_char, rabin, stop_keys, k, tokens, shingles,
        )  # fmt: skip
        size = 0
        if num > 0:
            _sort_hashes(shingles, num, tokens, counts)
            ordered = shingles
            base = out_offsets[d]
            out[base] = ordered[0]
            if counting:
                out_counts[base] = 1
            size = 1
            for s in range(1, num):
                if ordered[s] != ordered[s - 1]:
                    out[base + size] = ordered[s]
                    if counting:
                        out_counts[base + size] = 1
                    size += 1
                elif counting:
                    out_counts[base + size - 1] += 1
        out_sizes[d] = size


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
