"""Numba kernels for bottom-k sketches: made from text, and merged for the estimators.

:func:`bottom_k_sketches` shingles a batch of texts
(:func:`neardup._kernels.tokens.doc_shingles_into`, see that module for the batch's shape and the
fingerprint schemes) and keeps each document's smallest distinct hashes; :func:`bottom_k_counts`
merges the sorted rows of pairs. Each kernel works on a block of items ``lo .. hi - 1`` (its
last two arguments): blocks run in threads at once (``neardup._parallel.in_blocks``).
"""

from __future__ import annotations

from numba import njit

from neardup._kernels.minhash import EMPTY
from neardup._kernels.mix import fmix64
from neardup._kernels.tokens import doc_shingles_into, shingle_room


@njit(cache=True, nogil=True)
def bottom_k_sketches(  # type: ignore[no-untyped-def]
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
    key,
    sketch,
    num_shingles,
    fingerprint,
    lo,
    hi,
):
    """Bottom-k sketches: the smallest distinct ``h(x) = fmix64((x ^ key[0]) * key[1])``.

    For the documents ``lo .. hi - 1``. Row ``d`` of ``sketch`` holds its ``sketch.shape[1]``
    smallest ascending, padded with EMPTY. Broder 2000 §4 (seed 003). Also writes shingle
    counts and exact fingerprints. Cost: O(s log s) for s shingles.
    """
    width = sketch.shape[1]
    tokens, shingles = shingle_room(offsets, lo, hi)
    for d in range(lo, hi):
        num, fp_hi, fp_lo = doc_shingles_into(
            buf, offsets[d], offsets[d + 1], classes, byte_words, strip_punct, fold_ascii,
            is_char, rabin, stop_keys, k, tokens, shingles,
        )  # fmt: skip
        for s in range(num):
            tokens[s] = fmix64((shingles[s] ^ key[0]) * key[1])  # the tokens are done with
        ordered = tokens[:num]
        ordered.sort()
        row = sketch[d]
        for i in range(width):
            row[i] = EMPTY
        count = 0
        for s in range(num):
            if count == width:
                break
            if s > 0 and ordered[s] == ordered[s - 1]:
                continue
            row[count] = ordered[s]
            count += 1
        num_shingles[d] = num
        fingerprint[d, 0] = fp_hi
        fingerprint[d, 1] = fp_lo


@njit(cache=True, nogil=True)
def bottom_k_counts(sketch, sizes, first, second, k, out, lo, hi):  # type: ignore[no-untyped-def]
    """Per pair, the counts the resemblance and containment estimators need.

    For the pairs ``lo .. hi - 1``. With ``S(A)``, ``S(B)`` the sorted sketches and ``U`` the
    ``k`` smallest of their union: ``out[p, 0] = |U|``, ``out[p, 1] = |U ∩ S(A) ∩ S(B)|``
    (resemblance), ``out[p, 2]`` = elements of S(A) not above B's threshold, ``out[p, 3]`` =
    those also in S(B) (containment of A in B), and ``out[p, 4]``, ``out[p, 5]`` the same for
    B in A. A sketch with fewer than ``k`` elements holds its whole set, so its threshold is
    infinite.
    """
    for p in range(lo, hi):
        a = sketch[first[p]]
        b = sketch[second[p]]
        na = sizes[first[p]]
        nb = sizes[second[p]]
        i = 0
        j = 0
        union = 0
        both = 0
        while union < k and (i < na or j < nb):
            if j >= nb or (i < na and a[i] < b[j]):
                i += 1
            elif i >= na or b[j] < a[i]:
                j += 1
            else:
                both += 1
                i += 1
                j += 1
            union += 1
        out[p, 0] = union
        out[p, 1] = both
        for side in range(2):
            x = a if side == 0 else b
            y = b if side == 0 else a
            nx = na if side == 0 else nb
            ny = nb if side == 0 else na
            full = ny < k
            limit = y[ny - 1] if ny > 0 else 0
            seen = 0
            shared = 0
            jj = 0
            for ii in range(nx):
                v = x[ii]
                if not full and v > limit:
                    break
                seen += 1
                while jj < ny and y[jj] < v:
                    jj += 1
                if jj < ny and y[jj] == v:
                    shared += 1
            out[p, 2 + 2 * side] = seen
            out[p, 3 + 2 * side] = shared
