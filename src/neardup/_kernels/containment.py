"""Numba kernels of the exact containment join: every set at least ``t`` contained in a later one.

The prefix-filtering join of :mod:`neardup._kernels.prefix` turned asymmetric. Containment of
``x`` in ``y`` is ``|x ∩ y| / |x|``: it does not shrink as ``y`` grows, so there is no length
filter and ``y`` cannot be indexed by a prefix of its own. Instead every set is looked up by the
items of its *probe prefix* (its first ``n - o + 1`` shared items, ``o`` the least overlap that
reaches ``t``: any ``y`` holding ``o`` of them holds one of these, MMDS §3.9.4), and the
inverted index lists, for each item in some probe prefix, every set holding it. Items held by
one set alone are not ranked (no ``y`` can share them); a set's size counts them all.

"At least ``t`` contained" means exactly what ``o / n >= t`` gives in float64, the value
reported (:func:`least_contained_overlap` steps that very test).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from neardup._kernels.prefix import grown, lower_bound


@njit(cache=True, nogil=True)
def least_contained_overlap(n, t):  # type: ignore[no-untyped-def]
    """The least overlap ``o`` with ``o / n >= t`` in float64 (``n > 0``, ``0 < t <= 1``)."""
    o = max(np.int64(math.floor(t * n)) - 1, np.int64(0))
    while o / n < t:
        o += 1
    return o


@njit(cache=True, nogil=True)
def probe_length(num_shared, size, t):  # type: ignore[no-untyped-def]
    """Shared items of a set of ``size`` items (``num_shared`` held by others) it is probed by.

    ``num_shared - o + 1`` (``o`` = :func:`least_contained_overlap`); 0 or less when the set
    cannot be contained in any other (too few of its items are held elsewhere).
    """
    if size == 0:
        return np.int64(0)
    return num_shared - least_contained_overlap(size, t) + 1


@njit(cache=True, nogil=True)
def mark_probed(ranks, offsets, sizes, t, marked):  # type: ignore[no-untyped-def]
    """``marked[w]`` = whether rank ``w`` is in some set's probe prefix. Cost: O(prefixes)."""
    for s in range(offsets.shape[0] - 1):
        start = offsets[s]
        for i in range(max(probe_length(offsets[s + 1] - start, sizes[s], t), 0)):
            marked[ranks[start + i]] = True


@njit(cache=True, nogil=True)
def holder_index(ranks, offsets, order, marked):  # type: ignore[no-untyped-def]
    """For each marked rank, the sets holding it, as processing positions (ascending).

    List ``w`` is ``entry_set[bounds[w]:bounds[w + 1]]`` with ``entry_pos``, the position of
    ``w`` in that set. Memory: 12 bytes an entry, 8 a rank.
    """
    bounds = np.zeros(marked.shape[0] + 1, dtype=np.int64)
    for s in range(order.shape[0]):
        for i in range(offsets[s], offsets[s + 1]):
            if marked[ranks[i]]:
                bounds[ranks[i] + 1] += 1
    for w in range(marked.shape[0]):
        bounds[w + 1] += bounds[w]
    fill = bounds[:-1].copy()
    entry_set = np.empty(bounds[-1], dtype=np.int64)
    entry_pos = np.empty(bounds[-1], dtype=np.int32)
    for k in range(order.shape[0]):
        s = order[k]
        start = offsets[s]
        for i in range(start, offsets[s + 1]):
            w = ranks[i]
            if marked[w]:
                entry_set[fill[w]] = k
                entry_pos[fill[w]] = i - start
                fill[w] += 1
    return bounds, entry_set, entry_pos


@njit(cache=True, nogil=True)
def _overlap_in(ranks, xa, xb, ya, yb, need):  # type: ignore[no-untyped-def]
    """``|x ∩ y|`` of the sorted ranks, -1 as soon as ``need`` is out of reach.

    Each item of ``x`` is searched in what is left of ``y`` (``O(|x| log |y|)``), or the two
    are merged when ``y`` is not much longer.
    """
    o = 0
    j = ya
    gallop = (yb - ya) > 8 * (xb - xa)
    for i in range(xa, xb):
        if o + (xb - i) < need or j >= yb:
            break
        w = ranks[i]
        if gallop:
            j = lower_bound(ranks, j, yb, w)
        else:
            while j < yb and ranks[j] < w:
                j += 1
        if j < yb and ranks[j] == w:
            o += 1
            j += 1
    return o if o >= need else -1


@njit(cache=True, nogil=True)
def containment_pairs(ranks, offsets, sizes, order, t, bounds, entry_set, entry_pos):  # type: ignore[no-untyped-def]
    """The pairs ``(x, y)``, ``y`` after ``x`` in ``order``, with ``|x ∩ y| / sizes[x] >= t``.

    For each ``x`` in ``order``, walk its probe prefix ``x[i]``; in the list of ``x[i]``, take
    the sets after ``x``; at ``y``'s position ``j`` of the item, ``x`` and ``y`` share at most
    ``A[y] + 1 + min(|x| - i - 1, |y| - j - 1)`` items (``A[y]`` the prefix items met so far,
    every earlier item of either being unshared by the other: the positional filter of MMDS
    §3.9.5, with ``|x|``, ``|y|`` their shared items), and below the overlap needed the pair
    is dropped. Survivors are counted by :func:`_overlap_in`.

    Returns ``(first, second, value, num_verified)``: ``first`` contained in ``second``, the
    containment, and the pairs counted. Memory: 16 bytes a set, plus the pairs.
    """
    n = order.shape[0]
    count = np.zeros(n, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    first = np.empty(64, dtype=np.int64)
    second = np.empty(64, dtype=np.int64)
    values = np.empty(64, dtype=np.float64)
    num_out = 0
    num_verified = 0
    for k in range(n):
        x = order[k]
        xa = offsets[x]
        nx = offsets[x + 1] - xa
        probe = probe_length(nx, sizes[x], t)
        if probe <= 0:
            continue
        need = least_contained_overlap(sizes[x], t)
        num_touched = 0
        for i in range(probe):
            w = ranks[xa + i]
            stop = bounds[w + 1]
            e = lower_bound(entry_set, bounds[w], stop, k + 1)
            while e < stop:
                ky = entry_set[e]
                j = np.int64(entry_pos[e])
                e += 1
                c = count[ky]
                if c < 0:
                    continue
                if c == 0:
                    touched[num_touched] = ky
                    num_touched += 1
                ny = offsets[order[ky] + 1] - offsets[order[ky]]
                if c + 1 + min(nx - i - 1, ny - j - 1) < need:
                    count[ky] = -1
                else:
                    count[ky] = c + 1
        for u in range(num_touched):
            ky = touched[u]
            if count[ky] > 0:
                num_verified += 1
                y = order[ky]
                o = _overlap_in(ranks, xa, xa + nx, offsets[y], offsets[y + 1], need)
                if o >= 0 and o / sizes[x] >= t:
                    if num_out == first.shape[0]:
                        first = grown(first, num_out)
                        second = grown(second, num_out)
                        values = grown(values, num_out)
                    first[num_out] = x
                    second[num_out] = y
                    values[num_out] = o / sizes[x]
                    num_out += 1
            count[ky] = 0
    return first[:num_out], second[:num_out], values[:num_out], num_verified
