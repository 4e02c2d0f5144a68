"""Numba kernels for b-bit MinHash: keep b pseudo-random bits of each slot's winner, packed."""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._kernels.mix import fmix64


@njit(cache=True, nogil=True)
def pack_bits(values, key, num_bits, out, lo, hi):  # type: ignore[no-untyped-def]
    """Pack ``num_bits`` bits of ``fmix64(value ^ key)`` per slot, little-endian within bytes.

    Slot ``i`` of row ``d`` occupies bits ``i*b .. i*b + b - 1`` of ``out[d]`` (b divides 8).
    Hashing the winner first makes the kept bits independent of how the value was formed
    (seed 000: "pick a pseudo random 2 bits keyed off of the winning feature").

    For the rows ``lo .. hi - 1`` (as every kernel here: blocks run in threads at once).
    """
    mask = uint64((1 << num_bits) - 1)
    per_byte = 8 // num_bits
    for d in range(lo, hi):
        for byte in range(out.shape[1]):
            acc = 0
            for j in range(per_byte):
                slot = byte * per_byte + j
                if slot < values.shape[1]:
                    code = fmix64(values[d, slot] ^ key) & mask
                    acc |= np.int64(code) << (j * num_bits)
            out[d, byte] = acc


@njit(cache=True, nogil=True)
def matching_codes(packed, num_slots, num_bits, first, second, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[p]`` = slots whose b-bit codes agree between rows ``first[p]`` and ``second[p]``.

    For the pairs ``lo .. hi - 1``.
    """
    mask = (1 << num_bits) - 1
    per_byte = 8 // num_bits
    for p in range(lo, hi):
        a = packed[first[p]]
        b = packed[second[p]]
        count = 0
        for slot in range(num_slots):
            byte = slot // per_byte
            shift = (slot % per_byte) * num_bits
            if ((a[byte] >> shift) & mask) == ((b[byte] >> shift) & mask):
                count += 1
        out[p] = count


@njit(cache=True, nogil=True)
def unpack_codes(packed, num_slots, num_bits, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[d, i]`` = the b-bit code of slot ``i`` of row ``d``, as uint64 (for banding).

    For the rows ``lo .. hi - 1``.
    """
    mask = (1 << num_bits) - 1
    per_byte = 8 // num_bits
    for d in range(lo, hi):
        for slot in range(num_slots):
            byte = slot // per_byte
            shift = (slot % per_byte) * num_bits
            out[d, slot] = uint64((packed[d, byte] >> shift) & mask)
