"""Numba kernels for k-permutation MinHash: ``num_perm`` linear permutations of 64-bit values.

Signatures of a batch of texts (shingled by :func:`neardup._kernels.tokens.doc_shingles_into`;
the batch's shape and the fingerprint schemes are described in :mod:`neardup._kernels.tokens`),
each slot the least of all its values or found by left-to-right minima of lead bytes, and
signatures of integer sets. A slot no value reached holds :data:`EMPTY`, as in the
one-permutation and bottom-k kernels (``oph``, ``bottomk``). Each kernel works on a block of
documents ``lo .. hi - 1`` (its last two arguments): blocks run in threads at once
(``neardup._parallel.in_blocks``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._kernels.tokens import doc_shingles_into, shingle_room

EMPTY = uint64(0xFFFFFFFFFFFFFFFF)
"""The value of a slot no shingle reached (the largest uint64): a document without one."""


@njit(cache=True, nogil=True)
def minhash_signatures(  # type: ignore[no-untyped-def]
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
    perm_a,
    perm_b,
    sig,
    num_shingles,
    fingerprint,
    lo,
    hi,
):
    """Classic MinHash: ``sig[d, i] = min over shingles x of (a_i * x + b_i) mod 2^64``.

    For the documents ``lo .. hi - 1``. ``perm_a`` (odd) and ``perm_b`` define ``num_perm``
    linear permutations of the 64-bit shingle fingerprints (MMDS §3.3.5; seed 000 "discharging
    the supposition"). Also writes each document's shingle count and its 128-bit exact
    fingerprint. A document without a shingle keeps the EMPTY sentinel in every slot. Cost:
    O(shingles * num_perm) per document.
    """
    num_perm = perm_a.shape[0]
    tokens, shingles = shingle_room(offsets, lo, hi)
    for d in range(lo, hi):
        num, fp_hi, fp_lo = doc_shingles_into(
            buf, offsets[d], offsets[d + 1], classes, byte_words, strip_punct, fold_ascii,
            is_char, rabin, stop_keys, k, tokens, shingles,
        )  # fmt: skip
        row = sig[d]
        for i in range(num_perm):
            row[i] = EMPTY
        for s in range(num):
            x = shingles[s]
            for i in range(num_perm):
                v = perm_a[i] * x + perm_b[i]
                row[i] = min(row[i], v)
        num_shingles[d] = num
        fingerprint[d, 0] = fp_hi
        fingerprint[d, 1] = fp_lo


@njit(cache=True, nogil=True)
def minhash_lead_byte_signatures(  # type: ignore[no-untyped-def]
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
    lead_tables,
    perm_a,
    perm_b,
    sig,
    num_shingles,
    fingerprint,
    lo,
    hi,
):
    """MinHash by left-to-right minima: a lead byte per permutation first, the full value if needed.

    For the documents ``lo .. hi - 1``. Slot ``i`` ranks shingles by the injection
    ``(lead_i(x), a_i * x + b_i)``: the lead bytes of eight permutations come at once from a
    random GF(2)-linear map of ``x`` (``lead_tables[g]``: eight byte-indexed tables per group
    of eight slots), and the 64-bit value is computed only for a shingle whose lead byte ties or
    beats the slot's current one (seed 003, "one trick based on left-to-right minima"; seed 000,
    "improving sampling"). Slot values are the full values of the winners, so two documents
    agree in a slot exactly when their winners agree.
    Cost: O(shingles * num_perm) compares, O(shingles * (num_perm / 8) * 8) lookups, and about
    ``H_256 + shingles / 256`` full values per slot.
    """
    num_perm = perm_a.shape[0]
    num_groups = lead_tables.shape[0]
    tokens, shingles = shingle_room(offsets, lo, hi)
    lead = np.empty(num_perm, dtype=np.int64)
    words = np.empty(num_groups, dtype=np.uint64)
    lead_bytes = words.view(np.uint8)  # little-endian: byte 8g + b is slot 8g + b's lead
    for d in range(lo, hi):
        num, fp_hi, fp_lo = doc_shingles_into(
            buf, offsets[d], offsets[d + 1], classes, byte_words, strip_punct, fold_ascii,
            is_char, rabin, stop_keys, k, tokens, shingles,
        )  # fmt: skip
        row = sig[d]
        for i in range(num_perm):
            row[i] = EMPTY
            lead[i] = 256
        for s in range(num):
            x = shingles[s]
            for g in range(num_groups):
                leads = uint64(0)
                for j in range(8):
                    leads ^= lead_tables[g, j, (x >> uint64(8 * j)) & uint64(0xFF)]
                words[g] = leads
            for i in range(num_perm):
                byte = np.int64(lead_bytes[i])
                if byte < lead[i]:
                    lead[i] = byte
                    row[i] = perm_a[i] * x + perm_b[i]
                elif byte == lead[i]:
                    row[i] = min(row[i], perm_a[i] * x + perm_b[i])
        num_shingles[d] = num
        fingerprint[d, 0] = fp_hi
        fingerprint[d, 1] = fp_lo


@njit(cache=True, nogil=True)
def minhash_of_sets(hashes, offsets, perm_a, perm_b, modulus, sig, lo, hi):  # type: ignore[no-untyped-def]
    """MinHash of integer sets: ``sig[d, i] = min over x in set d of (a_i * x + b_i) mod m``.

    For the sets ``lo .. hi - 1``. Set ``d`` is ``hashes[offsets[d]:offsets[d + 1]]``;
    ``modulus`` 0 means 2^64 (wrap-around), otherwise ``m = modulus`` with every value below
    2^32. This is MMDS §3.3.5 (Example 3.8). An empty set keeps EMPTY. Cost: O(|set| *
    num_perm).
    """
    num_perm = perm_a.shape[0]
    m = uint64(modulus)
    for d in range(lo, hi):
        row = sig[d]
        for i in range(num_perm):
            row[i] = EMPTY
        for s in range(offsets[d], offsets[d + 1]):
            x = hashes[s]
            for i in range(num_perm):
                v = perm_a[i] * x + perm_b[i]
                if m != 0:
                    v = v % m
                row[i] = min(row[i], v)
