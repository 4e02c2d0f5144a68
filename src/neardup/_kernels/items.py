"""Numba kernels for item sets: grouping item hashes into sorted sets, and imprecise features.

Called by :mod:`neardup.io.itemsets` (grouping) and :func:`neardup.join.items.imprecise_features`
(real coordinates quantised on shifted grids, seed 000); the call chains stay in this file but
for ``mix.fmix64``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._kernels.groups import sort_segment
from neardup._kernels.mix import fmix64

CELL_SALT = uint64(0x2545F4914F6CDD1D)
GOLDEN = uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def scatter_by_owner(owners, values, starts, out):  # type: ignore[no-untyped-def]
    """A stable counting sort: ``values`` placed in ``out`` grouped by owner, in input order.

    ``starts[o]`` is where owner ``o``'s group begins in ``out`` (advanced as values are
    placed). Cost: O(n).
    """
    for i in range(owners.shape[0]):
        owner = owners[i]
        out[starts[owner]] = values[i]
        starts[owner] += 1


@njit(cache=True, nogil=True)
def sort_unique_segments(values, offsets, sizes, lo, hi):  # type: ignore[no-untyped-def]
    """Sort each segment in place and gather its distinct values at its front.

    Segment ``s`` is ``values[offsets[s]:offsets[s + 1]]``; ``sizes[s]`` receives how many
    distinct values it holds. For the segments ``lo .. hi - 1`` (blocks of segments run in
    threads at once).

    Cost: O(m log m) per segment of m values.
    """
    for s in range(lo, hi):
        segment = values[offsets[s] : offsets[s + 1]]
        sort_segment(segment)
        size = min(1, segment.shape[0])
        for i in range(1, segment.shape[0]):
            if segment[i] != segment[size - 1]:
                segment[size] = segment[i]
                size += 1
        sizes[s] = size


@njit(cache=True, nogil=True)
def order_segments_by_key(keys, order, offsets, lo, hi):  # type: ignore[no-untyped-def]
    """Sort each segment ``order[offsets[s]:offsets[s + 1]]`` of row numbers by ``keys[row]``.

    Stable (rows of equal keys keep their order). For the segments ``lo .. hi - 1`` (blocks of
    segments run in threads at once). Cost: O(m log m) per segment of m rows.
    """
    for s in range(lo, hi):
        rows = order[offsets[s] : offsets[s + 1]].copy()
        ranked = np.argsort(keys[rows], kind="mergesort")
        order[offsets[s] : offsets[s + 1]] = rows[ranked]


@njit(cache=True, nogil=True)
def grid_cell_features(vectors, shifts, cell_width, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[i]``: the sorted hashes of the grid cells that row ``i``'s coordinates fall in.

    For coordinate ``j`` and grid ``k`` (of ``g = shifts.shape[0]``), with the shift
    ``u = shifts[k, j]`` and width ``w = cell_width``, the cell is
    ``c = floor((x[i, j] + u) / w)`` and the feature is
    ``fmix64(fmix64((j * g + k) ^ CELL_SALT) + c * GOLDEN)`` (``c`` as a two's-complement
    64-bit word): a bijection of ``c`` for each ``(j, k)``, so two values share the feature
    exactly when they share the cell. ``out`` is ``(n, dim * g)``; each row is sorted. For the
    rows ``lo .. hi - 1`` (blocks of rows run in threads at once).
    Cost: O(n * dim * g * log(dim * g)).
    """
    num_grids = shifts.shape[0]
    dim = vectors.shape[1]
    for i in range(lo, hi):
        row = out[i]
        for j in range(dim):
            x = vectors[i, j]
            for k in range(num_grids):
                cell = np.int64(np.floor((x + shifts[k, j]) / cell_width))
                key = fmix64(uint64(j * num_grids + k) ^ CELL_SALT)
                row[j * num_grids + k] = fmix64(key + uint64(cell) * GOLDEN)
        row.sort()
