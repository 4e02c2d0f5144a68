"""Numba kernels for Broder's feature filter: megashingles and shared-feature counts."""

from __future__ import annotations

from numba import njit, prange, uint64

from neardup._kernels.mix import fmix64


@njit(cache=True, nogil=True, parallel=True)
def megashingles(features, out):  # type: ignore[no-untyped-def]
    """``out[d, p]`` = a hash of the ``p``-th pair ``(i < j)`` of row ``d``'s features.

    Two documents share a megashingle exactly when they share two features at the same
    positions, so pairs with at least two common features are found with C(s, 2) lookups
    (seed 000, megashingles).
    """
    num = features.shape[1]
    for d in prange(features.shape[0]):
        p = 0
        for i in range(num):
            for j in range(i + 1, num):
                h = fmix64(uint64(i * 4096 + j) ^ uint64(0x6A09E667F3BCC908))
                h = fmix64(h ^ features[d, i])
                out[d, p] = fmix64(h ^ features[d, j])
                p += 1


@njit(cache=True, nogil=True, parallel=True)
def shared_features(features, first, second, out):  # type: ignore[no-untyped-def]
    """``out[p]`` = positions where rows ``first[p]`` and ``second[p]`` have equal features."""
    for p in prange(first.shape[0]):
        count = 0
        for i in range(features.shape[1]):
            if features[first[p], i] == features[second[p], i]:
                count += 1
        out[p] = count
