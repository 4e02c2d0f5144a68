"""Numba kernels for verifying candidate pairs: agreeing slots, shared (weighted) shingles."""

from __future__ import annotations

from numba import njit, prange


@njit(cache=True, nogil=True, parallel=True)
def agreeing_slots(values, first, second, out):  # type: ignore[no-untyped-def]
    """``out[p]`` = slots where rows ``first[p]`` and ``second[p]`` of ``values`` are equal."""
    num_perm = values.shape[1]
    for p in prange(first.shape[0]):
        a = values[first[p]]
        b = values[second[p]]
        count = 0
        for i in range(num_perm):
            if a[i] == b[i]:
                count += 1
        out[p] = count


@njit(cache=True, nogil=True, parallel=True)
def weighted_overlaps(  # type: ignore[no-untyped-def]
    hashes, weights, offsets, first, second, low, dot
):
    """Shared features of two weighted sets, by a merge of their sorted features.

    ``low[p]`` = the sum of the smaller weights, ``dot[p]`` = the sum of the weights' products
    (with unit weights: the size of the intersection, twice).
    """
    for p in prange(first.shape[0]):
        i, i_end = offsets[first[p]], offsets[first[p] + 1]
        j, j_end = offsets[second[p]], offsets[second[p] + 1]
        smaller = 0.0
        product = 0.0
        while i < i_end and j < j_end:
            x, y = hashes[i], hashes[j]
            if x == y:
                smaller += min(weights[i], weights[j])
                product += weights[i] * weights[j]
                i += 1
                j += 1
            elif x < y:
                i += 1
            else:
                j += 1
        low[p] = smaller
        dot[p] = product
