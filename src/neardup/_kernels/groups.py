"""Numba kernels grouping items by equal 64- or 128-bit keys.

A radix sort of packed keys, the buckets of equal keys, and the pairs a bucket yields.

Items are numbered ``0 .. n - 1``; a key and the item number are packed into one ``uint64``
(the key's top bits, the item in the low ``item_bits``), so one sort of plain integers orders
items by key prefix and, within a prefix, by item. Runs of equal prefix are then split by the
full key, keeping items ascending. Used by LSH banding (one band at a time) and by exact
duplicate grouping (128-bit fingerprints).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

_SMALL = 32

QUICKSORT_MAX = 1 << 14
"""Longest segment :func:`sort_segment` gives numba's quicksort."""


@njit(cache=True, nogil=True)
def sort_segment(values):  # type: ignore[no-untyped-def]
    """Sort ``values`` in place in O(n log n) time, whatever their order.

    numba's quicksort (``values.sort()``) takes quadratic time on nearly sorted input: a
    sorted run with a few smaller values after it took 56 s for 1.5M values. Skewed hash
    buckets are such runs (a giant exact-duplicate group packs ascending item numbers), so a
    long segment is merge-sorted (stable, through ``argsort``; 4x slower on random values).
    """
    if values.shape[0] <= QUICKSORT_MAX:
        values.sort()
    else:
        values[:] = values[np.argsort(values, kind="mergesort")]


@njit(cache=True, nogil=True)
def insertion_sort(values, start, stop):  # type: ignore[no-untyped-def]
    """Sort ``values[start:stop]`` in place: the fastest sort for a few dozen values."""
    for i in range(start + 1, stop):
        v = values[i]
        j = i - 1
        while j >= start and values[j] > v:
            values[j + 1] = values[j]
            j -= 1
        values[j + 1] = v


@njit(cache=True, nogil=True)
def lower_bound(values, x):  # type: ignore[no-untyped-def]
    """The first place of ``x`` in the ascending ``values`` (``np.searchsorted``'s left side).

    A binary search of its own: numpy's compiles several generic helpers per dtype.
    """
    lo = 0
    hi = values.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if values[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True, inline="always")
def _packed(keys, i, item_bits):  # type: ignore[no-untyped-def]
    """Item ``i``'s key with its low ``item_bits`` bits replaced by ``i``."""
    shift = uint64(item_bits)
    low = uint64(i) & ((uint64(1) << shift) - uint64(1))
    return ((keys[i] >> shift) << shift) | low


@njit(cache=True, nogil=True)
def sort_small(keys, item_bits):  # type: ignore[no-untyped-def]
    """Sorted, the keys with each one's low ``item_bits`` bits replaced by its item number.

    ``item_bits = 0``: the keys themselves, sorted. For a few thousand keys: one thread, one
    sort (:func:`radix_counts`, :func:`radix_scatter` and :func:`sort_buckets` are the same
    for many keys, in threads).
    """
    out = np.empty(keys.shape[0], dtype=np.uint64)
    for i in range(keys.shape[0]):
        out[i] = _packed(keys, i, item_bits)
    out.sort()
    return out


@njit(cache=True, nogil=True)
def radix_counts(keys, shift, step, fill, lo, hi):  # type: ignore[no-untyped-def]
    """``fill[p, b]``: the keys of slice ``p`` (items ``p * step ..``) in bucket ``b``.

    For the slices ``lo .. hi - 1``; a key's bucket is its top bits (``key >> shift``).
    """
    n = keys.shape[0]
    for p in range(lo, hi):
        for i in range(p * step, min(n, (p + 1) * step)):
            fill[p, np.int64(keys[i] >> shift)] += 1


@njit(cache=True, nogil=True)
def radix_scatter(keys, item_bits, shift, step, at, out, lo, hi):  # type: ignore[no-untyped-def]
    """Put the packed keys of slices ``lo .. hi - 1`` in their buckets of ``out``.

    ``at[p, b]``: where slice ``p``'s first key of bucket ``b`` goes (after those of bucket
    ``b`` of the slices before it: the order within a bucket is the items' order).
    """
    n = keys.shape[0]
    for p in range(lo, hi):
        for i in range(p * step, min(n, (p + 1) * step)):
            bucket = np.int64(keys[i] >> shift)
            out[at[p, bucket]] = _packed(keys, i, item_bits)
            at[p, bucket] += 1


@njit(cache=True, nogil=True)
def sort_buckets(out, bounds, shift, bits, lo, hi):  # type: ignore[no-untyped-def]
    """Sort each bucket ``out[bounds[b]:bounds[b + 1]]``, ``b`` in ``lo .. hi - 1``, in place.

    A bucket of more than a few dozen keys is first split by a second radix digit (its keys'
    ``bits`` bits from ``shift`` up; none when ``bits`` is 0), its parts then sorted alone:
    a bucket of a few thousand keys stays in cache while it is split.
    """
    num_digits = 1 << bits
    mask = uint64(num_digits - 1)
    counts = np.empty(num_digits + 1, dtype=np.int64)
    for b in range(lo, hi):
        start, stop = bounds[b], bounds[b + 1]
        if stop - start <= _SMALL:
            insertion_sort(out, start, stop)
        elif bits == 0:
            sort_segment(out[start:stop])
        else:
            counts[:] = 0
            for i in range(start, stop):
                counts[np.int64((out[i] >> shift) & mask) + 1] += 1
            for d in range(num_digits):
                counts[d + 1] += counts[d]
            split = np.empty(stop - start, dtype=np.uint64)
            for i in range(start, stop):
                digit = np.int64((out[i] >> shift) & mask)
                split[counts[digit]] = out[i]
                counts[digit] += 1
            first = np.int64(0)  # not a literal 0: insertion_sort compiles once, for int64
            for d in range(num_digits):  # counts[d] is now the end of part d
                if counts[d] - first <= _SMALL:
                    insertion_sort(split, first, counts[d])
                else:
                    sort_segment(split[first : counts[d]])
                first = counts[d]
            out[start:stop] = split


@njit(cache=True, nogil=True)
def _bucket(items, start, stop, members, bounds, m, num):  # type: ignore[no-untyped-def]
    """Append ``items[start:stop]`` as a bucket when it holds two or more; the new ends."""
    if stop - start < 2:
        return m, num
    bounds[num] = m
    for t in range(start, stop):
        members[m] = items[t]
        m += 1
    return m, num + 1


@njit(cache=True, nogil=True)
def _split_by_low_word(items, start, stop, keys_lo, members, bounds, m, num):  # type: ignore[no-untyped-def]
    """The buckets of ``items[start:stop]`` (one high word) by ascending ``keys_lo``, a scan each.

    Items keep their order in each bucket; returns the new ends of ``members`` and ``bounds``.
    """
    taken = np.zeros(stop - start, dtype=np.bool_)
    left = stop - start
    while left >= 2:
        low = uint64(0)
        found = False
        for t in range(start, stop):  # the smallest low word not yet taken
            if not taken[t - start] and (not found or keys_lo[items[t]] < low):
                low = keys_lo[items[t]]
                found = True
        first = m
        for t in range(start, stop):
            if not taken[t - start] and keys_lo[items[t]] == low:
                taken[t - start] = True
                members[m] = items[t]
                m += 1
        left -= m - first
        if m - first >= 2:
            bounds[num] = first
            num += 1
        else:
            m = first  # a key of one item: no bucket
    return m, num


@njit(cache=True, nogil=True)
def _split_run(packed, i, j, keys_hi, keys_lo, item_bits, members, bounds, m, num):  # type: ignore[no-untyped-def]
    """The buckets of ``packed[i:j]`` (one prefix, several keys), by key, items ascending.

    The keys of the run differ in their low ``item_bits`` bits only: those bits above the
    item's place in the run make one sortable word (``item_bits <= 32``), so one sort orders
    the run by ``keys_hi``, ties by item. Equal ``keys_hi`` with different ``keys_lo`` (two
    128-bit keys sharing their high word) are split by ascending ``keys_lo``, a scan each.
    Appends to ``members`` from ``m`` and to ``bounds`` from ``num``; returns the new ends.
    """
    shift = uint64(item_bits)
    item_mask = (uint64(1) << shift) - uint64(1)
    run = j - i
    order = np.empty(run, dtype=np.uint64)
    for t in range(run):
        item = np.int64(packed[i + t] & item_mask)
        order[t] = ((keys_hi[item] & item_mask) << shift) | uint64(t)
    sort_segment(order)
    items = np.empty(run, dtype=np.int64)
    for t in range(run):
        items[t] = np.int64(packed[i + np.int64(order[t] & item_mask)] & item_mask)
    wide = keys_lo.shape[0] > 0
    start = 0
    while start < run:
        stop = start + 1
        while stop < run and keys_hi[items[stop]] == keys_hi[items[start]]:
            stop += 1
        if not wide:
            m, num = _bucket(items, start, stop, members, bounds, m, num)
        else:
            m, num = _split_by_low_word(items, start, stop, keys_lo, members, bounds, m, num)
        start = stop
    return m, num


@njit(cache=True, nogil=True)
def equal_key_buckets(packed, keys_hi, keys_lo, item_bits):  # type: ignore[no-untyped-def]
    """Buckets of two or more items with equal keys, items ascending in each.

    ``packed`` is sorted, each entry the key's top bits above the item number (``item_bits``
    low bits); ``keys_hi[item]`` is the full key (and ``keys_lo[item]`` its low word for 128-bit
    keys; empty for 64-bit ones). Returns ``(members, bounds)``: bucket ``b`` is
    ``members[bounds[b]:bounds[b + 1]]``, buckets in order of their first member's key.
    Cost: O(n) plus a sort of each run of equal prefix whose full keys differ.
    """
    n = packed.shape[0]
    item_mask = (uint64(1) << uint64(item_bits)) - uint64(1)
    shift = uint64(item_bits)
    wide = keys_lo.shape[0] > 0
    in_runs = 0  # items whose prefix equals a neighbour's: the only ones that can pair
    for t in range(1, n):
        in_runs += (packed[t] >> shift) == (packed[t - 1] >> shift)
    members = np.empty(2 * in_runs, dtype=np.int64)
    bounds = np.empty(in_runs + 2, dtype=np.int64)
    m = np.int64(0)  # not literal zeros: _split_run compiles once, for int64
    num = np.int64(0)
    i = np.int64(0)
    while i < n:
        prefix = packed[i] >> shift
        j = i + 1
        while j < n and (packed[j] >> shift) == prefix:
            j += 1
        if j - i >= 2:
            first = np.int64(packed[i] & item_mask)
            same = True
            for t in range(i + 1, j):
                item = np.int64(packed[t] & item_mask)
                if keys_hi[item] != keys_hi[first] or (wide and keys_lo[item] != keys_lo[first]):
                    same = False
                    break
            if same:  # nearly always: one bucket, its items ascending already
                bounds[num] = m
                num += 1
                for t in range(i, j):
                    members[m] = np.int64(packed[t] & item_mask)
                    m += 1
            else:  # equal prefixes, different keys: split by key
                m, num = _split_run(
                    packed, i, j, keys_hi, keys_lo, item_bits, members, bounds, m, num
                )
        i = j
    bounds[num] = m
    return members[:m], bounds[: num + 1]


@njit(cache=True, nogil=True)
def member_pair_ends(bounds, cap):  # type: ignore[no-untyped-def]
    """``int64[members]``: the pairs the members up to each one yield, counted cumulatively.

    Member ``j`` of bucket ``docs[bounds[b]:bounds[b + 1]]`` pairs with the members before it
    in its bucket (the ``cap - 1`` just before it in a bucket of more than ``cap``), as
    :func:`bucket_pairs` pairs them; ``ends[j]`` is the pairs of members ``0 .. j``. Splitting
    the members where ``ends`` crosses multiples of a chunk size gives chunks of pairs of
    bounded size (:func:`member_pairs`). Cost: O(members).
    """
    num_members = bounds[bounds.shape[0] - 1] if bounds.shape[0] else 0
    ends = np.empty(num_members, dtype=np.int64)
    total = 0
    for b in range(bounds.shape[0] - 1):
        start, end = bounds[b], bounds[b + 1]
        giant = end - start > cap
        for j in range(start, end):
            rank = j - start
            total += min(rank, cap - 1) if giant else rank
            ends[j] = total
    return ends


@njit(cache=True, nogil=True)
def member_pairs(docs, bounds, cap, bucket, lo, hi, num_pairs):  # type: ignore[no-untyped-def]
    """The pairs members ``lo .. hi - 1`` yield, each with those before it in its bucket.

    ``bucket``: the bucket of member ``lo``; ``num_pairs``: how many pairs they yield
    (:func:`member_pair_ends`). Over all members, the pairs of :func:`bucket_pairs` in its
    order (a member's pairs follow those of the members before it). Returns
    ``(first, second)`` with ``first < second``. Cost: O(hi - lo + pairs).
    """
    first = np.empty(num_pairs, dtype=np.int64)
    second = np.empty(num_pairs, dtype=np.int64)
    k = 0
    b = bucket
    for j in range(lo, hi):
        while bounds[b + 1] <= j:
            b += 1
        start, end = bounds[b], bounds[b + 1]
        low = max(start, j - cap + 1) if end - start > cap else start
        for i in range(low, j):
            first[k] = docs[i]
            second[k] = docs[j]
            k += 1
    return first, second


@njit(cache=True, nogil=True)
def drop_repeats(values):  # type: ignore[no-untyped-def]
    """Move the first of each run of equal ``values`` (sorted) to the front, in order; how many."""
    n = values.shape[0]
    if n == 0:
        return 0
    kept = 1
    for i in range(1, n):
        if values[i] != values[kept - 1]:
            values[kept] = values[i]
            kept += 1
    return kept
