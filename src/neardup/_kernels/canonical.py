"""Numba kernel of canonical-form fingerprints (I-Match): one hash of a document's kept terms."""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._kernels.mix import fmix64

CANONICAL_START = np.uint64(0x9E3779B97F4A7C15)
"""``h_0`` of the fold over a document's kept terms (2^64 / golden ratio)."""

NO_TERM = np.uint64(0xFFFFFFFFFFFFFFFF)
"""The fingerprint of a document without a kept term (``EMPTY_SLOT``)."""


@njit(cache=True, nogil=True)
def canonical_fingerprints(hashes, offsets, lexicon, is_filtered, values, num_kept, lo, hi):  # type: ignore[no-untyped-def]
    """Each document's canonical-form fingerprint and its number of kept terms.

    For the documents ``lo .. hi - 1``. Document ``d``'s distinct term hashes
    ``hashes[offsets[d]:offsets[d + 1]]`` are sorted ascending; the kept ones
    ``x_1 < ... < x_n`` are those in the sorted ``lexicon`` (all of them when not
    ``is_filtered``). The fingerprint folds them in that order,
    ``h_i = fmix64(h_{i-1} ^ x_i)`` from ``h_0 = CANONICAL_START``, and is ``h_n``; with no
    kept term (``n = 0``) it is ``NO_TERM``. ``values[d, 0]`` receives it, ``num_kept[d]``
    receives ``n``. Seed 004 §2 and I-Match (Chowdhury et al. 2002), which hash the sorted
    kept terms with SHA-1; here 64 bits. Cost: O(terms * log(lexicon)).
    """
    num_terms = lexicon.shape[0]
    for d in range(lo, hi):
        h = uint64(CANONICAL_START)
        n = 0
        low = 0  # the terms ascend, so each search starts where the last one ended
        for i in range(offsets[d], offsets[d + 1]):
            x = hashes[i]
            if is_filtered:
                low += np.searchsorted(lexicon[low:], x)
                if low == num_terms or lexicon[low] != x:
                    continue
            h = fmix64(h ^ x)
            n += 1
        values[d, 0] = h if n > 0 else uint64(NO_TERM)
        num_kept[d] = n
