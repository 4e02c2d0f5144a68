"""MurmurHash3's 64-bit finaliser over NumPy arrays, for hashes made outside the kernels."""

from __future__ import annotations

import numpy as np

from neardup._types import U64Array

__all__ = ["FMIX_M1", "fmix64"]

FMIX_M1 = np.uint64(0xFF51AFD7ED558CCD)
FMIX_M2 = np.uint64(0xC4CEB9FE1A85EC53)


def fmix64(x: U64Array) -> U64Array:
    """``fmix64`` of each value (the same function as ``neardup._kernels.mix.fmix64``).

    Examples
    --------
    >>> int(fmix64(np.array([1], dtype=np.uint64))[0]) == 0xB456BCFC34C2CB2C
    True
    """
    x = x ^ (x >> np.uint64(33))
    x = x * FMIX_M1
    x = x ^ (x >> np.uint64(33))
    x = x * FMIX_M2
    return x ^ (x >> np.uint64(33))
