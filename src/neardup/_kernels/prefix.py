"""Numba kernels of the exact set-similarity join: prefix, position and suffix filtering.

The all-pairs join of MMDS §3.9 as Xiao et al. (2008) refine it (PPJoin, PPJoin+): every set is
a sorted array of *ranks* (its items renumbered by one global order), the sets are taken by
increasing size, and each set's first items (its *prefix*) are looked up in an inverted index of
the prefixes of the sets before it. A pair survives the length filter (§3.9.3), must share a
prefix item (§3.9.4), the overlap bound from the positions of that item (§3.9.5-3.9.6: the
suffix lengths after it) and, once, a lower bound on the Hamming distance of the suffixes
(PPJoin+'s suffix filter); then its overlap is counted by a merge that stops as soon as the
threshold is out of reach.

"Jaccard at least ``t``" means here exactly what ``o / (|x| + |y| - o) >= t`` gives in float64
(``o`` the overlap): the value a plain-Python brute force computes, the value reported. Every
filter is derived from :func:`min_overlap`, the least integer overlap passing that very test,
so no float rounding can drop a pair at the threshold (for instance 9/10 at ``t = 0.9``, where
``(1 - 0.9) * 10`` is ``0.9999999999999998`` in float64 and MMDS's ``floor((1 - J) L) + 1``
would index one item too few).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, uint64

from neardup._kernels.groups import sort_segment
from neardup._kernels.mix import fmix64


@njit(cache=True, nogil=True)
def min_overlap(nx, ny, t):  # type: ignore[no-untyped-def]
    """The least overlap ``o <= min(nx, ny)`` with ``o / (nx + ny - o) >= t`` (float64).

    ``min(nx, ny) + 1`` when no overlap reaches ``t`` (the sizes alone rule the pair out).
    Mathematically ``ceil(t / (1 + t) * (nx + ny))`` (MMDS §3.9; Xiao et al. 2008, Lemma 1);
    here the search starts just below that and steps up with the exact float test, so the
    answer is the float test's. Cost: O(1) (two or three steps).
    """
    total = nx + ny
    top = min(nx, ny)
    o = np.int64(math.floor(t / (1.0 + t) * total)) - 1
    o = max(o, np.int64(0))
    while o <= top and o / (total - o) < t:
        o += 1
    return min(o, top + 1)


@njit(cache=True, nogil=True)
def min_partner_size(n, t):  # type: ignore[no-untyped-def]
    """The least size ``m <= n`` of a set that can reach Jaccard ``t`` with a set of size ``n``.

    The length filter (MMDS §3.9.3): ``J(x, y) <= |y| / |x|`` for ``|y| <= |x|``, so ``y`` must
    have ``m / n >= t``. ``n + 1`` when ``n = 0``.
    """
    if n == 0:
        return np.int64(1)
    m = max(np.int64(math.floor(t * n)) - 1, np.int64(1))
    while m <= n and m / n < t:
        m += 1
    return m


@njit(cache=True, nogil=True)
def probe_prefix_length(n, t):  # type: ignore[no-untyped-def]
    """Items of a set of size ``n`` looked up in the index: ``n - o + 1``.

    ``o = min_overlap(n, min_partner_size(n, t))``, the least overlap a partner no larger than
    the set needs: two sets sharing ``o`` items share one of their first ``n - o + 1`` (MMDS
    §3.9.4, whose ``floor((1 - J) n) + 1`` it equals in exact arithmetic). 0 for an empty set.
    """
    if n == 0:
        return np.int64(0)
    return n - min_overlap(n, min_partner_size(n, t), t) + 1


@njit(cache=True, nogil=True)
def index_prefix_length(n, t):  # type: ignore[no-untyped-def]
    """Items of a set of size ``n`` put in the index: ``n - min_overlap(n, n) + 1``.

    Only larger sets probe the index later, and they need at least ``min_overlap(n, n)``
    shared items (Xiao et al. 2008, §4: the shorter *mid-prefix*). 0 for an empty set.
    """
    if n == 0:
        return np.int64(0)
    return n - min_overlap(n, n, t) + 1


@njit(cache=True, nogil=True)
def hopeless_sets(offsets, is_shared, t, out):  # type: ignore[no-untyped-def]
    """``out[s]`` = whether set ``s`` can have no partner at Jaccard ``t``.

    Any partner of a set of size ``n`` shares at least ``c = n - p + 1`` of its elements
    (``p`` = :func:`probe_prefix_length`; larger partners need more): a set with ``p`` or
    more elements no other set holds (``is_shared`` false; it may be true for some of those)
    shares at most ``n - p`` and has none, and neither has an empty set. With the global
    order rarest first, these are the sets whose whole probe prefix is unshared. Cost: O(N).
    """
    for s in range(offsets.shape[0] - 1):
        singles = 0
        for i in range(offsets[s], offsets[s + 1]):
            singles += not is_shared[i]
        out[s] = singles >= probe_prefix_length(offsets[s + 1] - offsets[s], t)


@njit(cache=True, nogil=True)
def possibly_shared(hashes, bits):  # type: ignore[no-untyped-def]
    """Whether each of ``hashes`` may occur twice or more: never false for one that does.

    Each value goes to one of ``2^bits`` slots (the top bits of ``fmix64(value)``); a slot
    met twice marks all its values. Equal values meet in their slot, so a value held by two
    sets is always marked; a value held by one set is marked only when another value shares
    its slot (about ``distinct / 2^bits`` of them). A slot's two bits (met once, met twice)
    share a word, one memory access a value. Cost: two passes over the values; ``2^bits``
    two-bit slots.
    """
    words = max(1 << (bits - 5), 1)
    seen = np.zeros(words, dtype=np.uint64)
    shift = uint64(64 - bits)
    for i in range(hashes.shape[0]):
        slot = fmix64(hashes[i]) >> shift
        word = slot >> uint64(5)
        once = uint64(1) << ((slot & uint64(31)) << uint64(1))
        seen[word] |= (seen[word] & once) << uint64(1) | once
    out = np.empty(hashes.shape[0], dtype=np.bool_)
    for i in range(hashes.shape[0]):
        slot = fmix64(hashes[i]) >> shift
        twice = ((slot & uint64(31)) << uint64(1)) + uint64(1)
        out[i] = (seen[slot >> uint64(5)] >> twice) & uint64(1) != 0
    return out


@njit(cache=True, nogil=True)
def gather_sets(values, offsets, chosen, new_offsets, out, is_sorted, lo, hi):  # type: ignore[no-untyped-def]
    """Copy the sets ``chosen`` of ``values`` into ``out``, sorting each unless ``is_sorted``.

    Set ``chosen[c]`` (``values[offsets[chosen[c]]:...]``) goes to
    ``out[new_offsets[c]:new_offsets[c + 1]]``, for ``c`` in ``lo .. hi - 1`` (blocks of sets
    run in threads at once); cost O(N log s) for those ``N`` values.
    """
    for c in range(lo, hi):
        start = offsets[chosen[c]]
        at = new_offsets[c]
        size = new_offsets[c + 1] - at
        for i in range(size):
            out[at + i] = values[start + i]
        if not is_sorted:
            sort_segment(out[at : at + size])


@njit(cache=True, nogil=True)
def prefix_index(ranks, offsets, order, t, first_shared, num_tokens):  # type: ignore[no-untyped-def]
    """The inverted index of every set's index prefix, lists in processing order.

    Set ``order[k]`` is the ``k``-th processed. Ranks below ``first_shared`` belong to one set
    each and are left out (their lists could never pair two sets). List ``w`` is
    ``entry_set[bounds[w - first_shared]:bounds[w - first_shared + 1]]`` (processing positions
    ``k``, ascending) with ``entry_pos`` (the 0-based position of ``w`` in that set). Cost:
    O(total prefix length); memory 12 bytes an entry, 8 a shared rank.
    """
    num_lists = num_tokens - first_shared
    bounds = np.zeros(num_lists + 1, dtype=np.int64)
    for k in range(order.shape[0]):
        x = order[k]
        start = offsets[x]
        for i in range(index_prefix_length(offsets[x + 1] - start, t)):
            w = ranks[start + i]
            if w >= first_shared:
                bounds[w - first_shared + 1] += 1
    for w in range(num_lists):
        bounds[w + 1] += bounds[w]
    fill = bounds[:-1].copy()
    entry_set = np.empty(bounds[num_lists], dtype=np.int64)
    entry_pos = np.empty(bounds[num_lists], dtype=np.int32)
    for k in range(order.shape[0]):
        x = order[k]
        start = offsets[x]
        for i in range(index_prefix_length(offsets[x + 1] - start, t)):
            w = ranks[start + i] - first_shared
            if w >= 0:
                entry_set[fill[w]] = k
                entry_pos[fill[w]] = i
                fill[w] += 1
    return bounds, entry_set, entry_pos


@njit(cache=True, nogil=True)
def lower_bound(values, lo, hi, value):  # type: ignore[no-untyped-def]
    """The first position in ``values[lo:hi]`` (sorted) holding ``value`` or more (``hi``: none)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if values[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def suffix_distance_bound(ranks, xa, xb, ya, yb, hmax, depth):  # type: ignore[no-untyped-def]
    """A lower bound on the Hamming distance ``|x Δ y|`` of ``ranks[xa:xb]`` and ``ranks[ya:yb]``.

    PPJoin+'s suffix filter (Xiao et al. 2008, Algorithm 3): ``y``'s middle item ``w`` splits
    both sets into the items before ``w`` and after it (found in ``x`` by binary search), and
    ``|x Δ y| = |xl Δ yl| + |xr Δ yr| + [w not in x] >= ||xl| - |yl|| + ||xr| - |yr|| + ...``;
    the halves are split again, ``depth`` levels deep, each side given what is left of the
    budget ``hmax``. Every value returned is a lower bound, whether it stops early (past
    ``hmax``) or not; here the whole of ``x`` is searched (the paper narrows the search to
    where a position could keep the bound within ``hmax``, a speed-up only).
    Cost: O(2^depth log |x|).
    """
    nx = xb - xa
    ny = yb - ya
    gap = abs(nx - ny)
    if depth == 0 or nx == 0 or ny == 0 or gap > hmax:
        return gap
    mid = ya + ny // 2
    w = ranks[mid]
    p = lower_bound(ranks, xa, xb, w)
    found = p < xb and ranks[p] == w
    diff = 0 if found else 1
    xr = p + 1 if found else p
    right_gap = abs((xb - xr) - (yb - mid - 1))
    bound = abs((p - xa) - (mid - ya)) + right_gap + diff
    if bound > hmax:
        return bound
    left = suffix_distance_bound(ranks, xa, p, ya, mid, hmax - right_gap - diff, depth - 1)
    bound = left + right_gap + diff
    if bound > hmax:
        return bound
    right = suffix_distance_bound(ranks, xr, xb, mid + 1, yb, hmax - left - diff, depth - 1)
    return left + right + diff


@njit(cache=True, nogil=True)
def _overlap_reaching(ranks, xa, xb, ya, yb, need):  # type: ignore[no-untyped-def]
    """``|x ∩ y|`` by a merge of the sorted ranks; -1 as soon as ``need`` is out of reach."""
    o = 0
    i = xa
    j = ya
    while i < xb and j < yb:
        if o + min(xb - i, yb - j) < need:
            return -1
        a = ranks[i]
        b = ranks[j]
        if a == b:
            o += 1
            i += 1
            j += 1
        elif a < b:
            i += 1
        else:
            j += 1
    return o if o >= need else -1


@njit(cache=True, nogil=True)
def grown(values, size):  # type: ignore[no-untyped-def]
    """``values[:size]`` in an array twice as long."""
    out = np.empty(2 * values.shape[0], dtype=values.dtype)
    out[:size] = values[:size]
    return out


@njit(cache=True, nogil=True)
def prefix_join_pairs(  # type: ignore[no-untyped-def]
    ranks,
    offsets,
    order,
    sorted_sizes,
    t,
    first_shared,
    bounds,
    entry_set,
    entry_pos,
    depth,
):
    """The pairs of sets with Jaccard >= ``t``, each found from the larger set.

    Sets are processed in ``order`` (by size); for each ``x`` (PPJoin+, Xiao et al. 2008,
    Algorithm 1 with the suffix filter), walk its :func:`probe_prefix_length` first items
    ``x[i]``; in the list of ``x[i]``, take the sets
    ``y`` processed before ``x`` and no smaller than :func:`min_partner_size` (a binary
    search: lists are in processing order, hence by size); at ``y``'s position ``j`` of the
    item, the overlap is at most ``A[y] + 1 + min(|x| - i - 1, |y| - j - 1)`` (``A[y]`` the
    shared prefix items met so far: the positional filter, MMDS §3.9.5-3.9.6); below
    ``min_overlap(|x|, |y|)`` the pair is dropped for good. At the first shared item, the
    items before ``i`` and ``j`` are known to differ, so the suffixes may differ in at most
    ``|x| + |y| - 2 o - i - j`` items; :func:`suffix_distance_bound` (``depth`` levels; 0: no
    suffix filter) drops the pair when they must differ in more. Survivors are verified by
    :func:`_overlap_reaching`, kept when ``o / (|x| + |y| - o) >= t``.

    Returns ``(first, second, value, num_verified)``: the pairs as set numbers,
    ``first < second``, unsorted, their Jaccard, and the pairs verified. Memory: 16 bytes a
    set (two scratch arrays), plus the pairs.
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
        if nx == 0:
            continue
        low = lower_bound(sorted_sizes, 0, k, min_partner_size(nx, t))
        num_touched = 0
        for i in range(probe_prefix_length(nx, t)):
            w = ranks[xa + i] - first_shared
            if w < 0:
                continue
            stop = bounds[w + 1]
            e = lower_bound(entry_set, bounds[w], stop, low)
            while e < stop:
                ky = entry_set[e]
                if ky >= k:
                    break
                e += 1
                c = count[ky]
                if c < 0:
                    continue
                if c == 0:
                    touched[num_touched] = ky
                    num_touched += 1
                y = order[ky]
                ya = offsets[y]
                ny = offsets[y + 1] - ya
                j = np.int64(entry_pos[e - 1])
                need = min_overlap(nx, ny, t)
                if c + 1 + min(nx - i - 1, ny - j - 1) < need:
                    count[ky] = -1
                    continue
                if c == 0 and depth > 0:
                    hmax = nx + ny - 2 * need - i - j
                    bound = suffix_distance_bound(
                        ranks, xa + i + 1, xa + nx, ya + j + 1, ya + ny, hmax, depth
                    )
                    if bound > hmax:
                        count[ky] = -1
                        continue
                count[ky] = c + 1
        for u in range(num_touched):
            ky = touched[u]
            if count[ky] > 0:
                num_verified += 1
                y = order[ky]
                ya = offsets[y]
                ny = offsets[y + 1] - ya
                o = _overlap_reaching(ranks, xa, xa + nx, ya, ya + ny, min_overlap(nx, ny, t))
                if o >= 0:
                    value = o / (nx + ny - o)
                    if value >= t:
                        if num_out == first.shape[0]:
                            first = grown(first, num_out)
                            second = grown(second, num_out)
                            values = grown(values, num_out)
                        first[num_out] = min(x, y)
                        second[num_out] = max(x, y)
                        values[num_out] = value
                        num_out += 1
            count[ky] = 0
    return first[:num_out], second[:num_out], values[:num_out], num_verified
