"""Numba kernels for Hamming-space search over 64-bit fingerprints."""

from __future__ import annotations

import numpy as np
from numba import njit, uint64


@njit(cache=True, nogil=True, inline="always")
def popcount64(x):  # type: ignore[no-untyped-def]
    """Set bits of a 64-bit word (SWAR)."""
    x = x - ((x >> uint64(1)) & uint64(0x5555555555555555))
    x = (x & uint64(0x3333333333333333)) + ((x >> uint64(2)) & uint64(0x3333333333333333))
    x = (x + (x >> uint64(4))) & uint64(0x0F0F0F0F0F0F0F0F)
    return (x * uint64(0x0101010101010101)) >> uint64(56)


@njit(cache=True, nogil=True, inline="always")
def _permuted(v, sources, shifts, masks):  # type: ignore[no-untyped-def]
    """``v`` with block ``b`` (``(v >> sources[b]) & masks[b]``) moved to ``shifts[b]``."""
    acc = uint64(0)
    for b in range(sources.shape[0]):
        acc |= ((v >> sources[b]) & masks[b]) << shifts[b]
    return acc


@njit(cache=True, nogil=True)
def permute_blocks(values, sources, shifts, masks, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[i]``: ``values[i]`` with its blocks moved as :func:`_permuted` says (BPHS's pi_i).

    For the values ``lo .. hi - 1`` (blocks of values run in threads at once).
    """
    for i in range(lo, hi):
        out[i] = _permuted(values[i], sources, shifts, masks)


@njit(cache=True, nogil=True, inline="always")
def _first_table_for(x, lower_masks):  # type: ignore[no-untyped-def]
    """Whether no block outside this table's leading ones, below its last, agrees.

    ``x`` is the xor of the (permuted) fingerprints; ``lower_masks`` are the bits, where they
    sit once permuted, of each block that comes before the table's last leading block and is
    not leading (0: padding). The first table (in the order of ``itertools.combinations``)
    whose leading blocks all agree is the one whose leading blocks are the ``g`` smallest
    agreeing ones, so each pair is reported by exactly one table.
    """
    for b in range(lower_masks.shape[0]):
        mask = lower_masks[b]
        if mask != uint64(0) and (x & mask) == uint64(0):
            return False
    return True


@njit(cache=True, nogil=True)
def table_matches(  # type: ignore[no-untyped-def]
    tables, rows, sources, shifts, masks, prefix_shifts, lower_masks, queries, max_distance,
    first_only, count_only, starts, offsets, out_row, end, t, lo, hi,
):  # fmt: skip
    """BPHS lookups (seed 004 §3) in table ``t`` for the queries ``lo .. hi - 1``.

    The caller takes the tables in order, each one's blocks of queries in threads at once (one
    table's entries in cache, not ``T``'s). ``tables[t]`` is sorted, ``rows[t]`` the row of
    each entry, ``sources/shifts/masks[t]`` its block permutation: each query is permuted, its
    header (the top ``64 - prefix_shifts[t]`` bits) binary-searched and the entries sharing it
    scanned; an entry within ``max_distance`` counts if this is the first table whose leading
    blocks agree (``lower_masks[t]``, see :func:`_first_table_for`). With ``first_only``
    (BPHSF) a query's search stops at its first match.

    Two passes: with ``count_only``, ``end[q]`` counts query ``q``'s matches (from 0) and the
    runs' starts ``starts[t, q]`` are written; then the rows go to ``out_row`` from
    ``end[q] = offsets[q]`` on, the runs scanned again from ``starts`` (one binary search per
    query and table in all), and after the last table each query's rows are sorted. Cost per
    query: ``T`` permutations, binary searches and runs scanned (seed eq. 9).
    """
    size = tables.shape[1]
    within = uint64(max_distance)
    table, table_rows, shift, lower = tables[t], rows[t], prefix_shifts[t], lower_masks[t]
    source, to, mask = sources[t], shifts[t], masks[t]
    for q in range(lo, hi):
        k = end[q]
        if first_only and k > (0 if count_only else offsets[q]):
            continue
        v = _permuted(queries[q], source, to, mask)
        header = v >> shift
        if count_only:
            starts[t, q] = np.searchsorted(table, header << shift, side="left")
        i = starts[t, q]
        while i < size and (table[i] >> shift) == header:
            x = table[i] ^ v
            if popcount64(x) <= within and _first_table_for(x, lower):
                if not count_only:
                    out_row[k] = table_rows[i]
                k += 1
                if first_only:
                    break
            i += 1
        end[q] = k
    if not count_only and t == tables.shape[0] - 1:
        for q in range(lo, hi):
            out_row[offsets[q] : end[q]].sort()
