"""Numba kernel for LSH banding: the band keys of signature rows (pairs: ``groups``)."""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._kernels.mix import fmix64

BAND_SALT = uint64(0x2545F4914F6CDD1D)


@njit(cache=True, nogil=True)
def band_keys(sig, num_bands, num_rows, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[d, j]`` = a 64-bit hash of band ``j`` (slots ``j*r .. j*r + r - 1``) of row ``d``.

    For the rows ``lo .. hi - 1``.

    ``num_bands`` is *b* and ``num_rows`` is *r* of MMDS §3.4.1. The band index is mixed in, so
    equal slot values in different bands give different keys. Cost: O(b * r) per document.
    """
    start = np.empty(num_bands, dtype=np.uint64)
    for j in range(num_bands):
        start[j] = fmix64(uint64(j) + BAND_SALT)
    for d in range(lo, hi):
        # Row by row across the bands: the bands' hash chains are independent, so their
        # multiplications overlap instead of waiting for each other.
        h = out[d]
        for j in range(num_bands):  # a loop: a slice copy compiles seconds longer
            h[j] = start[j]
        for i in range(num_rows):
            for j in range(num_bands):
                h[j] = fmix64(h[j] ^ sig[d, j * num_rows + i])
