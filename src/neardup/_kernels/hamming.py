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


@njit(cache=True, nogil=True, inline="always")
def _first_table_for(x, lower_shifts, lower_masks):  # type: ignore[no-untyped-def]
    """Whether no block outside this table's leading ones, below its last, agrees.

    ``x`` is the xor of the (permuted) fingerprints; ``lower_*`` locate the blocks that come
    before the table's last leading block and are not leading. The first table (in the order
    of ``itertools.combinations``) whose leading blocks all agree is the one whose leading
    blocks are the smallest agreeing ones, so each pair is reported by exactly one table.
    """
    for b in range(lower_shifts.shape[0]):
        if ((x >> lower_shifts[b]) & lower_masks[b]) == uint64(0):
            return False
    return True


@njit(cache=True, nogil=True)
def table_matches(  # type: ignore[no-untyped-def]
    table, rows, queries, prefix_bits, max_distance, lower_shifts, lower_masks, count_only,
    counts, offsets, out_query, out_row,
):  # fmt: skip
    """Matches of each query in one sorted table that no earlier table reports.

    Entries sharing the query's top ``prefix_bits`` bits are scanned (``table`` is sorted) and
    kept within ``max_distance``. With ``count_only`` only ``counts[q]`` is written; otherwise
    the matches go to ``out_query``/``out_row`` from ``offsets[q]`` on.
    """
    shift = uint64(64 - prefix_bits)
    for q in range(queries.shape[0]):
        v = queries[q]
        low = v >> shift << shift if prefix_bits > 0 else uint64(0)
        i = np.searchsorted(table, low, side="left")
        k = 0 if count_only else offsets[q]
        while i < table.shape[0] and (prefix_bits == 0 or (table[i] >> shift) == (v >> shift)):
            x = table[i] ^ v
            if popcount64(x) <= max_distance and _first_table_for(x, lower_shifts, lower_masks):
                if not count_only:
                    out_query[k] = q
                    out_row[k] = rows[i]
                k += 1
            i += 1
        if count_only:
            counts[q] = k
