"""Numba kernels for LSH banding: band keys and candidate pairs from sorted buckets."""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64

from neardup._kernels.mix import fmix64

BAND_SALT = uint64(0x2545F4914F6CDD1D)


@njit(cache=True, nogil=True, parallel=True)
def band_keys(sig, num_bands, num_rows, out):  # type: ignore[no-untyped-def]
    """``out[d, j]`` = a 64-bit hash of band ``j`` (slots ``j*r .. j*r + r - 1``) of row ``d``.

    ``num_bands`` is *b* and ``num_rows`` is *r* of MMDS §3.4.1. The band index is mixed in, so
    equal slot values in different bands give different keys. Cost: O(b * r) per document.
    """
    for d in prange(sig.shape[0]):
        for j in range(num_bands):
            h = fmix64(uint64(j) + BAND_SALT)
            base = j * num_rows
            for i in range(num_rows):
                h = fmix64(h ^ sig[d, base + i])
            out[d, j] = h


@njit(cache=True, nogil=True)
def _pairs_in_run(length, cap):  # type: ignore[no-untyped-def]
    """Pairs a bucket of ``length`` members yields: all of them, or ``cap - 1`` per member."""
    if length <= cap:
        return length * (length - 1) // 2
    full = cap * (cap - 1) // 2
    return full + (length - cap) * (cap - 1)


@njit(cache=True, nogil=True)
def bucket_pairs(keys, docs, cap):  # type: ignore[no-untyped-def]
    """Candidate pairs from one band: documents whose keys are equal, within ``cap``.

    ``keys`` is sorted and ``docs[i]`` is the document of ``keys[i]``, ascending within each run
    of equal keys. A run of up to ``cap`` members yields all its pairs; a longer run (a *giant*
    bucket) pairs each member with the ``cap - 1`` members just before it, so the cost stays
    linear in its size. Returns ``(first, second, num_giant, largest)`` with
    ``first < second``. Cost: O(n + pairs).
    """
    n = keys.shape[0]
    total = 0
    num_giant = 0
    largest = 0
    start = 0
    while start < n:
        end = start + 1
        while end < n and keys[end] == keys[start]:
            end += 1
        length = end - start
        total += _pairs_in_run(length, cap)
        if length > cap:
            num_giant += 1
        largest = max(largest, length)
        start = end
    first = np.empty(total, dtype=np.int64)
    second = np.empty(total, dtype=np.int64)
    k = 0
    start = 0
    while start < n:
        end = start + 1
        while end < n and keys[end] == keys[start]:
            end += 1
        for j in range(start + 1, end):
            low = max(start, j - cap + 1) if end - start > cap else start
            for i in range(low, j):
                first[k] = docs[i]
                second[k] = docs[j]
                k += 1
        start = end
    return first, second, num_giant, largest
