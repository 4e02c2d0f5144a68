"""Numba kernels for Broder's feature filter: megashingles and shared-feature counts."""

from __future__ import annotations

from numba import njit, uint64

from neardup._kernels.mix import fmix64


@njit(cache=True, nogil=True)
def megashingles(features, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[d, p]`` = a hash of the ``p``-th pair ``(i < j)`` of row ``d``'s features.

    Two documents share a megashingle exactly when they share two features at the same
    positions, so pairs with at least two common features are found with C(s, 2) lookups
    (seed 000, megashingles). For the rows ``lo .. hi - 1`` (as every kernel here: blocks run in
    threads at once).
    """
    num = features.shape[1]
    for d in range(lo, hi):
        p = 0
        for i in range(num):
            for j in range(i + 1, num):
                h = fmix64(uint64(i * 4096 + j) ^ uint64(0x6A09E667F3BCC908))
                h = fmix64(h ^ features[d, i])
                out[d, p] = fmix64(h ^ features[d, j])
                p += 1


@njit(cache=True, nogil=True)
def shared_features(features, first, second, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[p]`` = positions where rows ``first[p]`` and ``second[p]`` have equal features.

    For the pairs ``lo .. hi - 1``.
    """
    for p in range(lo, hi):
        count = 0
        for i in range(features.shape[1]):
            if features[first[p], i] == features[second[p], i]:
                count += 1
        out[p] = count
