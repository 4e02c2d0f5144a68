"""Numba kernels for Hamming-space search over 64-bit fingerprints."""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64


@njit(cache=True, nogil=True, inline="always")
def popcount64(x):  # type: ignore[no-untyped-def]
    """Set bits of a 64-bit word (SWAR)."""
    x = x - ((x >> uint64(1)) & uint64(0x5555555555555555))
    x = (x & uint64(0x3333333333333333)) + ((x >> uint64(2)) & uint64(0x3333333333333333))
    x = (x + (x >> uint64(4))) & uint64(0x0F0F0F0F0F0F0F0F)
    return (x * uint64(0x0101010101010101)) >> uint64(56)


@njit(cache=True, nogil=True, parallel=True)
def permute_blocks(values, sources, shifts, masks, out):  # type: ignore[no-untyped-def]
    """Move bit blocks: block ``b`` (``(v >> sources[b]) & masks[b]``) to ``shifts[b]``."""
    for i in prange(values.shape[0]):
        v = values[i]
        acc = uint64(0)
        for b in range(sources.shape[0]):
            acc |= ((v >> sources[b]) & masks[b]) << shifts[b]
        out[i] = acc


@njit(cache=True, nogil=True)
def count_table_matches(table, queries, prefix_bits, max_distance, counts):  # type: ignore[no-untyped-def]
    """``counts[q]``: entries of ``table`` within ``max_distance`` of query ``q``.

    Only entries sharing the query's top ``prefix_bits`` bits are scanned (``table`` is sorted).
    """
    shift = uint64(64 - prefix_bits)
    for q in range(queries.shape[0]):
        v = queries[q]
        low = v >> shift << shift if prefix_bits > 0 else uint64(0)
        start = np.searchsorted(table, low, side="left")
        n = 0
        i = start
        while i < table.shape[0] and (prefix_bits == 0 or (table[i] >> shift) == (v >> shift)):
            if popcount64(table[i] ^ v) <= max_distance:
                n += 1
            i += 1
        counts[q] = n


@njit(cache=True, nogil=True)
def table_matches(table, rows, queries, prefix_bits, max_distance, offsets, out_query, out_row):  # type: ignore[no-untyped-def]
    """Write the matches counted by :func:`count_table_matches` (``offsets`` from its counts)."""
    shift = uint64(64 - prefix_bits)
    for q in range(queries.shape[0]):
        v = queries[q]
        low = v >> shift << shift if prefix_bits > 0 else uint64(0)
        i = np.searchsorted(table, low, side="left")
        k = offsets[q]
        while i < table.shape[0] and (prefix_bits == 0 or (table[i] >> shift) == (v >> shift)):
            if popcount64(table[i] ^ v) <= max_distance:
                out_query[k] = q
                out_row[k] = rows[i]
                k += 1
            i += 1
