"""Numba kernels numbering 64-bit keys 1, 2, ... in order of first sight.

An open-addressing hash table (linear probing) whose ``numbers`` are 0 where a slot is free.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64


@njit(cache=True, nogil=True)
def number_keys(keys, slots, numbers, next_number, out):  # type: ignore[no-untyped-def]
    """Number each key, a new key ``next_number`` then on; return the next number unused.

    ``slots``/``numbers`` are an open-addressing table (linear probing, a power of two long,
    ``numbers`` 0 where a slot is free); the caller keeps it at most half full. ``out``
    receives each key's number. Cost: O(1) a key, expected.
    """
    mask = slots.shape[0] - 1
    for i in range(keys.shape[0]):
        key = keys[i]
        h = np.int64(key & uint64(mask))
        while numbers[h] != 0 and slots[h] != key:
            h = (h + 1) & mask
        if numbers[h] == 0:
            slots[h] = key
            numbers[h] = next_number
            next_number += 1
        out[i] = numbers[h]
    return next_number


@njit(cache=True, nogil=True)
def rehash(slots, numbers, new_slots, new_numbers):  # type: ignore[no-untyped-def]
    """Move every used slot of one table into a larger, empty one."""
    mask = new_slots.shape[0] - 1
    for s in range(slots.shape[0]):
        if numbers[s] != 0:
            h = np.int64(slots[s] & uint64(mask))
            while new_numbers[h] != 0:
                h = (h + 1) & mask
            new_slots[h] = slots[s]
            new_numbers[h] = numbers[s]
