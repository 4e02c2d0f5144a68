"""Numba kernels for verifying candidate pairs: agreeing slots, shared (weighted) shingles."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def agreeing_slots(values, first, second, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[p]`` = slots where rows ``first[p]`` and ``second[p]`` of ``values`` are equal.

    For the pairs ``lo .. hi - 1`` (as every kernel here: blocks run in threads at once).
    """
    num_perm = values.shape[1]
    for p in range(lo, hi):
        a = values[first[p]]
        b = values[second[p]]
        count = 0
        for i in range(num_perm):
            if a[i] == b[i]:
                count += 1
        out[p] = count


@njit(cache=True, nogil=True)
def set_overlaps(hashes, offsets, first, second, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[p]`` = ``|A ∩ B|`` of the pair's sorted distinct sets, by a merge.

    The merge steps without a branch on the comparison (hashes are random: a branch would be
    mispredicted every other step), 1.8x as fast on sets of 45 shingles.
    """
    for p in range(lo, hi):
        i, i_end = offsets[first[p]], offsets[first[p] + 1]
        j, j_end = offsets[second[p]], offsets[second[p] + 1]
        shared = 0
        while i < i_end and j < j_end:
            x, y = hashes[i], hashes[j]
            shared += x == y
            i += x <= y
            j += y <= x
        out[p] = shared


@njit(cache=True, nogil=True)
def weighted_overlaps(  # type: ignore[no-untyped-def]
    hashes, weights, offsets, first, second, low, dot, lo, hi
):
    """Shared features of two weighted sets, by a merge of their sorted features.

    ``low[p]`` = the sum of the smaller weights, ``dot[p]`` = the sum of the weights' products
    (with unit weights: the size of the intersection, twice).
    """
    for p in range(lo, hi):
        i, i_end = offsets[first[p]], offsets[first[p] + 1]
        j, j_end = offsets[second[p]], offsets[second[p] + 1]
        smaller = 0.0
        product = 0.0
        while i < i_end and j < j_end:
            x, y = hashes[i], hashes[j]
            if x == y:
                smaller += min(weights[i], weights[j])
                product += weights[i] * weights[j]
                i += 1
                j += 1
            elif x < y:
                i += 1
            else:
                j += 1
        low[p] = smaller
        dot[p] = product


@njit(cache=True, nogil=True, inline="always")
def _doc_cost(d, sizes, set_sizes, per_doc, per_byte):  # type: ignore[no-untyped-def]
    """What document ``d`` costs a run of :func:`pair_chunks`."""
    if set_sizes.shape[0] and set_sizes[d] >= 0:
        return per_doc + 8 * np.int64(set_sizes[d])
    return per_doc + per_byte * sizes[d]


@njit(cache=True, nogil=True)
def size_bounded(set_sizes, first, second, floor, out):  # type: ignore[no-untyped-def]
    """``out[p]``: pair ``p``'s sets are both made, and their sizes keep it below ``floor``.

    ``|A ∩ B| / |A ∪ B|`` is at most ``min / max`` of the sizes, and as floats too (the
    division is monotone, and equal to the bound where the smaller set is in the other), so a
    pair whose bound is below ``floor`` has a similarity below it, measured or not. A size of
    -1 is a set not made yet (not bounded); two empty sets (similarity 0 here, not 0 / 0) are
    not bounded either. Cost: O(pairs), no array made.

    Examples
    --------
    >>> out = np.empty(4, dtype=np.bool_)
    >>> size_bounded(np.array([40, 50, 51, 0, -1]), np.array([0, 0, 3, 4]),
    ...              np.array([1, 2, 3, 2]), 0.8, out)
    >>> out.tolist()
    [False, True, False, False]
    """
    for p in range(first.shape[0]):
        a, b = set_sizes[first[p]], set_sizes[second[p]]
        low, high = min(a, b), max(a, b)
        out[p] = low >= 0 and high > 0 and low / high < floor


@njit(cache=True, nogil=True)
def pair_chunks(first, second, sizes, set_sizes, per_doc, per_byte, budget, mark, unread):  # type: ignore[no-untyped-def]
    """Split pairs into runs whose distinct documents cost at most ``budget`` bytes each.

    Document ``d`` costs ``per_doc`` plus its shingle set's 8 bytes a shingle where
    ``set_sizes[d] >= 0`` (its set is made: ``set_sizes`` may be empty), else ``per_byte *
    sizes[d]``, counted once per run; a pair with ``unread[p]`` (``unread`` may be empty) reads
    no document and costs nothing; a run holds at least one pair. ``mark`` (one entry per
    document, all -1) is scratch. Returns the run boundaries ``[0, ..., len(first)]``. Cost:
    O(pairs).
    """
    n = first.shape[0]
    out = np.empty(n + 1, dtype=np.int64)
    out[0] = 0
    if n == 0:
        return out[:1]
    k = 0
    run = 0
    used = 0
    start = 0
    for p in range(n):
        if unread.shape[0] and unread[p]:
            continue
        a, b = first[p], second[p]
        cost_a = _doc_cost(a, sizes, set_sizes, per_doc, per_byte)
        cost_b = _doc_cost(b, sizes, set_sizes, per_doc, per_byte) if b != a else 0
        add = 0
        if mark[a] != run:
            add += cost_a
        if mark[b] != run:
            add += cost_b
        if used + add > budget and p > start:
            k += 1
            out[k] = p
            run += 1
            start = p
            used = 0
            add = cost_a + cost_b
        mark[a] = run
        mark[b] = run
        used += add
    out[k + 1] = n
    return out[: k + 2]


@njit(cache=True, nogil=True)
def number_distinct(docs, mark, distinct, local):  # type: ignore[no-untyped-def]
    """Number the distinct documents of ``docs`` in order of first sight; how many there are.

    ``distinct[:count]`` gets them and ``local[i]`` the number of ``docs[i]``. ``mark`` (one
    entry per document, all -1) is scratch, left as it was. Cost: O(len(docs)).
    """
    count = 0
    for i in range(docs.shape[0]):
        d = docs[i]
        if mark[d] < 0:
            mark[d] = count
            distinct[count] = d
            count += 1
        local[i] = mark[d]
    for i in range(count):
        mark[distinct[i]] = -1
    return count
