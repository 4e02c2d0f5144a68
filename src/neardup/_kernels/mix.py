"""The 64-bit mixing function every kernel shares.

Kernels in other files call (and inline) it. numba's on-disk cache does not notice a change to a
function called from another file; the cache directory is named for a hash of every kernel's
source (:mod:`neardup._kernels`), so a change here starts a new one.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64


@njit(cache=True, nogil=True, inline="always")
def fmix64(x: np.uint64) -> np.uint64:
    """MurmurHash3's 64-bit finaliser: a bijection with full avalanche."""
    x ^= x >> uint64(33)
    x *= uint64(0xFF51AFD7ED558CCD)
    x ^= x >> uint64(33)
    x *= uint64(0xC4CEB9FE1A85EC53)
    x ^= x >> uint64(33)
    return x
