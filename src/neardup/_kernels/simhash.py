"""Numba kernel for weighted SimHash (Charikar 2002): 64-bit word fingerprints that keep cosine.

A batch of texts is shingled by :func:`neardup._kernels.tokens.doc_shingles_into` (see that module
for the batch's shape and the fingerprint schemes); each shingle occurrence, weighted (by IDF
when given), votes on every bit through a sign or a Gaussian projection of its hash. The kernel
works on a block of documents ``lo .. hi - 1`` (its last two arguments): blocks run in threads
at once (``neardup._parallel.in_blocks``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._kernels.mix import fmix64
from neardup._kernels.tokens import doc_shingles_into, shingle_room

_GOLDEN = uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def simhash_signatures(  # type: ignore[no-untyped-def]
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
    keys,
    gaussians,
    idf_keys,
    idf_values,
    missing_idf,
    fingerprint_out,
    bit_weights,
    num_shingles,
    fingerprint,
    lo,
    hi,
):
    """Weighted SimHash (Charikar 2002): 64-bit words of fingerprints that preserve cosine.

    For the documents ``lo .. hi - 1``. ``fingerprint_out`` has one column per 64 bits. Each
    shingle occurrence has a weight (1, times its IDF when ``idf_keys`` is not empty: sorted
    shingle fingerprints with ``idf_values``; ``missing_idf`` for others). For word ``w`` let
    ``h = fmix64((x ^ keys[2w]) * keys[2w + 1])``. Sign projection (``gaussians`` empty): the
    weight is added to ``W_j`` where bit ``j`` of ``h`` is set and subtracted where it is
    clear. Gaussian projection: ``gaussians`` holds the 65,536 quantiles of the standard
    normal; bit ``j = 4m + t`` adds the weight times ``gaussians[16 bits t of
    fmix64(h ^ (m + 1) * golden)]``. Bit ``j`` is ``W_j >= 0`` (seed 004, Algorithm 1: "bits of
    simhash with non-negative W_j are set to 1"), so a document without a shingle is all ones;
    ``bit_weights[d]`` keeps the ``W_j`` (seed 004: they predict which bits flip) when it has a
    column per bit.
    Cost: O(bits) per shingle occurrence (16 more hashes per 64 bits when Gaussian).
    """
    words = fingerprint_out.shape[1]
    bits = 64 * words
    keep_weights = bit_weights.shape[1] == bits
    tokens, shingles = shingle_room(offsets, lo, hi)
    weights = np.empty(bits, dtype=np.float64)
    for d in range(lo, hi):
        num, fp_hi, fp_lo = doc_shingles_into(
            buf, offsets[d], offsets[d + 1], classes, byte_words, strip_punct, fold_ascii,
            is_char, rabin, stop_keys, k, tokens, shingles,
        )  # fmt: skip
        for j in range(bits):
            weights[j] = 0.0
        for s in range(num):
            x = shingles[s]
            w = 1.0
            if idf_keys.shape[0]:
                at = np.searchsorted(idf_keys, x)
                seen = at < idf_keys.shape[0] and idf_keys[at] == x
                w = idf_values[at] if seen else missing_idf
            for word in range(words):
                h = fmix64((x ^ keys[2 * word]) * keys[2 * word + 1])
                base = 64 * word
                if gaussians.shape[0]:
                    for m in range(16):
                        r = fmix64(h ^ (uint64(m + 1) * _GOLDEN))
                        for t in range(4):
                            quantile = gaussians[(r >> uint64(16 * t)) & uint64(0xFFFF)]
                            weights[base + 4 * m + t] += w * quantile
                else:
                    for j in range(64):
                        if (h >> uint64(j)) & uint64(1):
                            weights[base + j] += w
                        else:
                            weights[base + j] -= w
        for word in range(words):
            out = uint64(0)
            for j in range(64):
                if weights[64 * word + j] >= 0:
                    out |= uint64(1) << uint64(j)
            fingerprint_out[d, word] = out
        if keep_weights:
            bit_weights[d, :] = weights
        num_shingles[d] = num
        fingerprint[d, 0] = fp_hi
        fingerprint[d, 1] = fp_lo
