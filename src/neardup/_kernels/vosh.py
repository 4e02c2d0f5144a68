"""Numba kernels for probabilistic SimHash matching (PSM; Sood and Loguinov, CIKM 2011, seed 004).

VOSH orders the sets ``S`` of at most ``h`` bits by ``p(u, S) = prod_{i in S} p_i
prod_{j not in S} (1 - p_j)``, i.e. by the product of the odds ``r_i = p_i / (1 - p_i)``. Bits
are referred to by rank (0 is the most volatile) and a set is a sorted tuple of ranks. For each
size ``s`` a tree is rooted at ``(0, .., s - 1)``; Algorithm 2 (*ProduceChildren*) gives a node
at most two children, each differing from it in one bit and later in the order ``≺``, so no
child is likelier than its parent (Lemma 1) and every set has one parent. A max-heap ``M``
seeded with the ``h`` roots then pops the sets in non-increasing probability, each pop pushing
its children: ``k`` sets cost Θ(k log k).

PSM applies VOSH to the top ``t`` bits of a fingerprint only (the *header*): for each set it
visits the header bucket ``header(x) ^ S`` of the sorted collection and scans it for
fingerprints within ``h`` bits of ``x`` (``h - |S|`` on the remaining bits, since the header
differs in exactly ``|S|``). The empty set, ``x``'s own bucket, comes first.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._kernels.hamming import popcount64

MIN_PROBABILITY = 1e-9
MAX_PROBABILITY = 0.5
"""Flip probabilities are clipped to this range: a bit flips at most half the time."""
MAX_SET_BITS = 8
"""The most bits a flip set may hold: a set's ranks are packed one byte each in a uint64."""
QUERIES_PER_BLOCK = 256
"""Most queries a thread takes at a time in :func:`psm_search` (each block allocates its scratch
once; a query may scan many buckets, so blocks stay small enough to share the work out)."""


@njit(cache=True, nogil=True)
def mass_within(odds, max_bits):  # type: ignore[no-untyped-def]
    """The sum, over the sets ``S`` of at most ``max_bits`` bits, of ``prod_{i in S} r_i``.

    Elementary symmetric sums of the odds ``r_i`` (the empty set counts 1), by dynamic
    programming. ``p(u, S)`` is the product times the constant ``prod_j (1 - p_j)``, so ratios
    of such sums are ratios of probabilities.
    """
    e = np.zeros(max_bits + 1, dtype=np.float64)
    e[0] = 1.0
    for i in range(odds.shape[0]):
        r = odds[i]
        for k in range(min(max_bits, i + 1), 0, -1):
            e[k] += e[k - 1] * r
    return e.sum()


@njit(cache=True, nogil=True, inline="always")
def _rank(packed, j):  # type: ignore[no-untyped-def]
    return np.int64((packed >> uint64(8 * j)) & uint64(0xFF))


@njit(cache=True, nogil=True, inline="always")
def _moved(packed, j):  # type: ignore[no-untyped-def]
    """``packed`` with its ``j``-th rank one higher."""
    return packed + (uint64(1) << uint64(8 * j))


@njit(cache=True, nogil=True, inline="always")
def _move(keys, packs, masks, sizes, source, target):  # type: ignore[no-untyped-def]
    keys[target], packs[target] = keys[source], packs[source]
    masks[target], sizes[target] = masks[source], sizes[source]


@njit(cache=True, nogil=True)
def _push(keys, packs, masks, sizes, n, key, packed, mask, size):  # type: ignore[no-untyped-def]
    """Add a set to the array max-heap of ``n`` sets (by ``keys``); return ``n + 1``."""
    i = n
    while i > 0:
        parent = (i - 1) >> 1
        if keys[parent] >= key:
            break
        _move(keys, packs, masks, sizes, parent, i)
        i = parent
    keys[i], packs[i], masks[i], sizes[i] = key, packed, mask, size
    return n + 1


@njit(cache=True, nogil=True)
def _drop_top(keys, packs, masks, sizes, n):  # type: ignore[no-untyped-def]
    """Remove the top set of the heap of ``n`` sets; return ``n - 1``."""
    n -= 1
    key, packed, mask, size = keys[n], packs[n], masks[n], sizes[n]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and keys[child + 1] > keys[child]:
            child += 1
        if keys[child] <= key:
            break
        _move(keys, packs, masks, sizes, child, i)
        i = child
    keys[i], packs[i], masks[i], sizes[i] = key, packed, mask, size
    return n


@njit(cache=True, nogil=True)
def heap_capacity(max_bits, budget):  # type: ignore[no-untyped-def]
    """Heap slots VOSH needs: the roots, and at most two children per set popped."""
    return max_bits + 2 * budget + 2


@njit(cache=True, nogil=True)
def ranks_needed(num_bits, max_bits, budget, recall):  # type: ignore[no-untyped-def]
    """How many of the likeliest bits the first ``budget`` sets can reach.

    A set whose last rank is ``r`` has at least ``r - size + 1`` ancestors, all popped before
    it, so the sets popped within the budget, and the children they push, stay below rank
    ``budget + max_bits - 1``; the recall knob weighs every set, so it needs every bit.
    """
    if recall < 1.0:
        return num_bits
    return min(num_bits, budget + max_bits - 1)


@njit(cache=True, nogil=True)
def rank_bits(probabilities, ranks, order, odds):  # type: ignore[no-untyped-def]
    """``order[:ranks]``: the ``ranks`` likeliest bits (ties by position); ``odds[r]`` theirs.

    An insertion sort that keeps the top ``ranks`` only: once they are full, most bits are
    turned away by one comparison with the last kept.
    """
    kept = 0
    for i in range(probabilities.shape[0]):
        p = probabilities[i]
        if kept == ranks:
            if ranks == 0 or probabilities[order[ranks - 1]] >= p:
                continue
            j = ranks - 1
        else:
            j = kept
            kept += 1
        while j > 0 and probabilities[order[j - 1]] < p:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i
    for r in range(kept):
        p = min(max(probabilities[order[r]], MIN_PROBABILITY), MAX_PROBABILITY)
        odds[r] = p / (1.0 - p)


@njit(cache=True, nogil=True)
def vosh_roots(order, odds, bits, max_bits, keys, packs, masks, sizes):  # type: ignore[no-untyped-def]
    """Seed ``M`` with the root ``(0, .., s - 1)`` of each size's tree; return the heap size."""
    n = 0
    key = 1.0
    packed = uint64(0)
    mask = uint64(0)
    for s in range(max_bits):
        key *= odds[s]
        packed |= uint64(s) << uint64(8 * s)
        mask |= bits[order[s]]
        n = _push(keys, packs, masks, sizes, n, key, packed, mask, s + 1)
    return n


@njit(cache=True, nogil=True)
def vosh_pop(order, odds, ranked, bits, keys, packs, masks, sizes, n):  # type: ignore[no-untyped-def]
    """Take the likeliest set from ``M`` and push its children (Algorithm 2).

    Returns ``(mask, size, odds product, heap size)``. A key is the product of the set's odds
    (``p(u, S)`` up to a constant factor); ranks at or beyond ``ranked`` are not pushed.
    """
    key, packed, mask, size = keys[0], packs[0], masks[0], sizes[0]
    n = _drop_top(keys, packs, masks, sizes, n)
    last = _rank(packed, size - 1)
    if last + 1 < ranked:  # left child: the last bit one rank down
        n = _push(keys, packs, masks, sizes, n, key / odds[last] * odds[last + 1],
                  _moved(packed, size - 1), mask ^ bits[order[last]] ^ bits[order[last + 1]],
                  size)  # fmt: skip
    for j in range(size - 2, -1, -1):  # right child: the first gap from the right
        here = _rank(packed, j)
        gap = _rank(packed, j + 1) - here
        if gap >= 2:
            if gap == 2:
                n = _push(keys, packs, masks, sizes, n, key / odds[here] * odds[here + 1],
                          _moved(packed, j), mask ^ bits[order[here]] ^ bits[order[here + 1]],
                          size)  # fmt: skip
            break
    return mask, size, key, n


@njit(cache=True, nogil=True)
def vosh_masks(probabilities, max_bits, budget, recall, out):  # type: ignore[no-untyped-def]
    """The first flip sets of ``n <= 64`` bits (the empty set first) as masks; return how many.

    Bit ``i`` flips with ``probabilities[i]``, ``i < n``. At most ``budget`` sets; with
    ``recall < 1``, stop as soon as the sets emitted hold that share of the probability of all
    sets of at most ``max_bits`` bits (the model's chance that a near copy's flip set is among
    them).
    """
    num_bits = probabilities.shape[0]
    bits = np.empty(num_bits, dtype=np.uint64)
    for i in range(num_bits):
        bits[i] = uint64(1) << uint64(i)
    max_bits = min(max_bits, num_bits)
    ranked = ranks_needed(num_bits, max_bits, budget, recall)
    order, odds = np.empty(num_bits, np.int64), np.empty(num_bits, np.float64)
    rank_bits(probabilities, ranked, order, odds)
    cap = heap_capacity(max_bits, budget)
    keys, packs = np.empty(cap, np.float64), np.empty(cap, np.uint64)
    masks, sizes = np.empty(cap, np.uint64), np.empty(cap, np.int64)
    target = recall * mass_within(odds, max_bits) if recall < 1.0 else np.inf
    out[0] = uint64(0)
    count = 1
    mass = 1.0
    n = vosh_roots(order, odds, bits, max_bits, keys, packs, masks, sizes)
    while n > 0 and count < budget and mass < target:
        mask, _, key, n = vosh_pop(order, odds, ranked, bits, keys, packs, masks, sizes, n)
        out[count] = mask
        count += 1
        mass += key
    return count


@njit(cache=True, nogil=True, inline="always")
def _scan(values, rows, start, stop, x, max_bits, first_only, hits, q, count):  # type: ignore[no-untyped-def]
    """Record the rows of ``values[start:stop]`` within ``max_bits`` of ``x``: the new count.

    They become query ``q``'s hits, as far as its columns reach (the first only, when
    ``first_only``).
    """
    for at in range(start, stop):
        if popcount64(values[at] ^ x) <= max_bits:
            if count < hits.shape[1]:
                hits[q, count] = rows[at]
            count += 1
            if first_only:
                break
    return count


@njit(cache=True, nogil=True)
def psm_search(  # type: ignore[no-untyped-def]
    values, rows, header, header_bits, queries, probabilities, active, max_bits, budget, recall,
    first_only, found, attempts, hits, lo, hi,
):  # fmt: skip
    """PSM over one sorted collection with its header table (``2^t + 1`` bucket offsets).

    For each active query: its own bucket, then the VOSH sets over its ``t`` header bits
    (``probabilities[q]`` holds all 64 bits' flip probabilities; the header is the top ``t``),
    each visiting its header bucket and keeping the fingerprints within ``max_bits`` of the
    query. ``found[q]`` gets the hits (the first stops the query when ``first_only``),
    ``attempts[q]`` the buckets visited, and ``hits[q, :found[q]]`` the ``rows`` of the
    fingerprints hit, ascending, as far as its columns reach. For the queries ``lo .. hi - 1``
    (blocks of queries run in threads at once, each allocating its scratch once).
    """
    shift = 64 - header_bits
    bits = np.empty(header_bits, dtype=np.uint64)
    for i in range(header_bits):
        bits[i] = uint64(1) << uint64(shift + i)
    set_bits = min(max_bits, header_bits, MAX_SET_BITS)
    ranked = ranks_needed(header_bits, set_bits, budget, recall)
    slots = heap_capacity(set_bits, budget)
    keys = np.empty(slots, dtype=np.float64)
    packs = np.empty(slots, dtype=np.uint64)
    masks = np.empty(slots, dtype=np.uint64)
    sizes = np.empty(slots, dtype=np.int64)
    order = np.empty(header_bits, dtype=np.int64)
    odds = np.empty(header_bits, dtype=np.float64)
    low = np.empty(budget, dtype=np.int64)
    high = np.empty(budget, dtype=np.int64)
    for q in range(lo, hi):
        if not active[q]:
            continue
        x = queries[q]
        own = x >> uint64(shift) if header_bits > 0 else uint64(0)
        count = _scan(values, rows, header[own], header[own + 1], x, max_bits, first_only,
                      hits, q, 0)  # fmt: skip
        made = 1
        if budget > 1 and set_bits > 0 and not (first_only and count > 0):
            rank_bits(probabilities[q, shift:], ranked, order, odds)
            target = recall * mass_within(odds, set_bits) if recall < 1.0 else np.inf
            mass = 1.0
            n = vosh_roots(order, odds, bits, set_bits, keys, packs, masks, sizes)
            sets = 0
            while n > 0 and sets + 1 < budget and mass < target:
                flip, _, key, n = vosh_pop(order, odds, ranked, bits, keys, packs, masks,
                                           sizes, n)  # fmt: skip
                mass += key
                low[sets] = (x ^ flip) >> uint64(shift)  # the bucket, for now
                sets += 1
            for i in range(sets):  # independent loads: the memory system overlaps them
                bucket = low[i]
                low[i] = header[bucket]
                high[i] = header[bucket + 1]
            for i in range(sets):
                made += 1
                count = _scan(values, rows, low[i], high[i], x, max_bits, first_only, hits,
                              q, count)  # fmt: skip
                if first_only and count > 0:
                    break
        kept = min(count, hits.shape[1])
        if kept > 1:
            hits[q, :kept].sort()  # rows ascending
        found[q] = count
        attempts[q] = made


@njit(cache=True, nogil=True)
def flip_probabilities(weights, step, table, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[d, j]``: the flip probability of ``|W[d, j]|`` over the row's root mean square.

    ``table[i]`` holds the probability at ``i * step`` (cells beyond the last take the last);
    a row of zeros takes ``table[0]`` everywhere. For the rows ``lo .. hi - 1`` (blocks of rows
    run in threads at once).
    """
    last = table.shape[0] - 1
    width = weights.shape[1]
    for d in range(lo, hi):
        squares = 0.0
        for j in range(width):
            squares += weights[d, j] * weights[d, j]
        scale = np.sqrt(squares / width) * step
        inverse = 1.0 / scale if scale > 0.0 else 0.0
        for j in range(width):
            cell = abs(weights[d, j]) * inverse
            out[d, j] = table[int(cell)] if cell < last else table[last]  # NaN: the last
