"""Numba kernels for exact distances of row pairs, and the candidates a query meets in tables.

The pair kernels compute, for each pair ``p``, the exact cosine similarity, L1, L2 or Hamming
distance between row ``first[p]`` of ``left`` and row ``second[p]`` of ``right`` (the same array
for a self-join), accumulating in float64 whatever the input dtype, the coordinates of a pair
summed in order (no reassociation), so a value does not depend on the number of threads.
:func:`table_candidates` walks the sorted band tables of an in-memory index for a batch of
queries. Every kernel here is serial over the items (pairs, queries) ``lo .. hi - 1``, its last
two arguments: blocks of items run in threads at once (:func:`neardup._parallel.in_blocks`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._kernels.groups import sort_segment


@njit(cache=True, nogil=True, inline="always")
def _popcount64(x):  # type: ignore[no-untyped-def]
    """Set bits of a 64-bit word (SWAR)."""
    x = x - ((x >> uint64(1)) & uint64(0x5555555555555555))
    x = (x & uint64(0x3333333333333333)) + ((x >> uint64(2)) & uint64(0x3333333333333333))
    x = (x + (x >> uint64(4))) & uint64(0x0F0F0F0F0F0F0F0F)
    return (x * uint64(0x0101010101010101)) >> uint64(56)


@njit(cache=True, nogil=True)
def cosine_pairs(left, right, first, second, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[p]`` = cos(angle) of rows ``left[first[p]]`` and ``right[second[p]]``.

    ``x·y / (|x| |y|)``; 0 when either row is the zero vector (it has no direction). A value
    within the sums' rounding error of ±1 (``(dim + 3) 2^-52``) is ±1, so a copy or a scaled copy
    scores exactly 1 and a threshold of 1 finds it. For the pairs ``lo .. hi - 1``.
    Cost: O(dim) per pair.
    """
    dim = left.shape[1]
    slack = (dim + 3) * 2.0**-52
    for p in range(lo, hi):
        a = left[first[p]]
        b = right[second[p]]
        dot = 0.0
        norm_a = 0.0
        norm_b = 0.0
        for i in range(dim):
            x = np.float64(a[i])
            y = np.float64(b[i])
            dot += x * y
            norm_a += x * x
            norm_b += y * y
        if norm_a == 0.0 or norm_b == 0.0:
            out[p] = 0.0
        else:
            cosine = dot / (np.sqrt(norm_a) * np.sqrt(norm_b))
            if cosine > 1.0 - slack:
                cosine = 1.0
            elif cosine < slack - 1.0:
                cosine = -1.0
            out[p] = cosine


@njit(cache=True, nogil=True)
def l1_pairs(left, right, first, second, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[p]`` = sum of ``|x_i - y_i|`` over the coordinates of the pair's rows.

    Exact for integer rows while the sum stays below 2**53. For the pairs ``lo .. hi - 1``.
    Cost: O(dim) per pair.
    """
    dim = left.shape[1]
    for p in range(lo, hi):
        a = left[first[p]]
        b = right[second[p]]
        total = 0.0
        for i in range(dim):
            total += abs(np.float64(a[i]) - np.float64(b[i]))
        out[p] = total


@njit(cache=True, nogil=True)
def l2_pairs(left, right, first, second, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[p]`` = the Euclidean distance ``sqrt(sum (x_i - y_i)^2)`` of the pair's rows.

    For the pairs ``lo .. hi - 1``. Cost: O(dim) per pair.
    """
    dim = left.shape[1]
    for p in range(lo, hi):
        a = left[first[p]]
        b = right[second[p]]
        total = 0.0
        for i in range(dim):
            d = np.float64(a[i]) - np.float64(b[i])
            total += d * d
        out[p] = np.sqrt(total)


@njit(cache=True, nogil=True)
def hamming_pairs(left, right, first, second, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[p]`` = the bits in which the pair's packed rows (``uint64`` words) differ.

    The popcount of the words' XOR, summed. For the pairs ``lo .. hi - 1``. Cost: O(words)
    per pair.
    """
    words = left.shape[1]
    for p in range(lo, hi):
        a = left[first[p]]
        b = right[second[p]]
        total = uint64(0)
        for w in range(words):
            total += _popcount64(a[w] ^ b[w])
        out[p] = np.float64(total)


@njit(cache=True, nogil=True)
def table_candidates(  # type: ignore[no-untyped-def]
    table_items, begins, ends, alive, limit, offsets, out, found, checked, lo, hi
):
    """The distinct live items each query meets in the band tables, walked in band order.

    Query ``q`` meets, in band ``l``, the entries ``table_items[l, begins[q, l]:ends[q, l]]``
    (the run of the band's sorted table equal to its key). Entries are taken band after band,
    skipping items not ``alive``; with ``limit >= 0`` the walk stops once ``limit`` entries have
    been taken, duplicates counted (the probe of seed 002 stops after ``2L``). The distinct items
    taken are written ascending to ``out[offsets[q]:offsets[q] + found[q]]`` (``offsets[q + 1] -
    offsets[q]`` must be at least the entries taken); ``checked[q]`` = the entries taken.
    For the queries ``lo .. hi - 1``. Cost: O(entries taken · log) per query.
    """
    num_bands = begins.shape[1]
    for q in range(lo, hi):
        start = offsets[q]
        taken = 0
        for band in range(num_bands):
            if limit >= 0 and taken >= limit:
                break
            for t in range(begins[q, band], ends[q, band]):
                item = table_items[band, t]
                if not alive[item]:
                    continue
                out[start + taken] = item
                taken += 1
                if limit >= 0 and taken >= limit:
                    break
        checked[q] = taken
        segment = out[start : start + taken]
        sort_segment(segment)
        distinct = 0
        for t in range(taken):
            if t == 0 or segment[t] != segment[t - 1]:
                segment[distinct] = segment[t]
                distinct += 1
        found[q] = distinct
