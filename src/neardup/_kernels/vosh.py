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
from numba import njit, prange, uint64

from neardup._kernels.hamming import popcount64

MIN_PROBABILITY = 1e-9
MAX_PROBABILITY = 0.5
"""Flip probabilities are clipped to this range: a bit flips at most half the time."""
MAX_SET_BITS = 8
"""The most bits a flip set may hold: a set's ranks are packed one byte each in a uint64."""
QUERIES_PER_TASK = 256
"""Queries one parallel task takes (each task allocates its scratch once)."""


@njit(cache=True, nogil=True)
def mass_within(log_odds, max_bits):  # type: ignore[no-untyped-def]
    """The sum, over the sets ``S`` of at most ``max_bits`` bits, of ``prod_{i in S} r_i``.

    Elementary symmetric sums of the odds ``r_i`` (the empty set counts 1), by dynamic
    programming. ``p(u, S)`` is the product times the constant ``prod_j (1 - p_j)``, so ratios
    of such sums are ratios of probabilities.
    """
    e = np.zeros(max_bits + 1, dtype=np.float64)
    e[0] = 1.0
    for i in range(log_odds.shape[0]):
        r = np.exp(log_odds[i])
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


@njit(cache=True, nogil=True, inline="always")
def _log_odds(p):  # type: ignore[no-untyped-def]
    p = min(max(p, MIN_PROBABILITY), MAX_PROBABILITY)
    return np.log(p) - np.log1p(-p)


@njit(cache=True, nogil=True)
def vosh(  # type: ignore[no-untyped-def]
    probabilities, bits, max_bits, budget, recall, out_masks, out_sizes, order, log_odds,
    keys, packs, masks, sizes,
):  # fmt: skip
    """Write the first flip sets (the empty set first) as masks; return how many.

    ``probabilities[i]`` is candidate bit ``i``'s flip probability, ``bits[i]`` its mask in the
    fingerprint. At most ``budget`` sets; with ``recall < 1``, stop as soon as the sets emitted
    hold that share of the probability of all sets of at most ``max_bits`` bits (the model's
    chance that a near copy's flip set is among them). ``out_sizes`` gets each set's size.
    ``order`` and ``log_odds`` (one slot per bit) and ``keys``, ``packs``, ``masks``, ``sizes``
    (:func:`heap_capacity` slots) are scratch. Bits are ranked by an insertion sort (ties by
    position) and a rank's log odds computed when a set first reaches it.
    """
    if budget == 0:
        return 0
    m = probabilities.shape[0]
    max_bits = min(max_bits, m)
    for i in range(m):  # order: bits by decreasing probability, ties by position
        j = i
        while j > 0 and probabilities[order[j - 1]] < probabilities[i]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i
    known = 0
    target = np.inf
    if recall < 1.0:
        for r in range(m):
            log_odds[r] = _log_odds(probabilities[order[r]])
        known = m
        target = recall * mass_within(log_odds[:m], max_bits)
    out_masks[0] = uint64(0)
    out_sizes[0] = 0
    count = 1
    mass = 1.0
    n = 0
    root_key = 0.0
    root_pack = uint64(0)
    root_mask = uint64(0)
    for s in range(max_bits):  # the root (0, .., s) of the tree of sets of s + 1 bits
        if known <= s:
            log_odds[s] = _log_odds(probabilities[order[s]])
            known = s + 1
        root_key += log_odds[s]
        root_pack |= uint64(s) << uint64(8 * s)
        root_mask |= bits[order[s]]
        n = _push(keys, packs, masks, sizes, n, root_key, root_pack, root_mask, s + 1)
    while n > 0 and count < budget and mass < target:
        key, packed, mask, size = keys[0], packs[0], masks[0], sizes[0]
        n = _drop_top(keys, packs, masks, sizes, n)
        out_masks[count] = mask
        out_sizes[count] = size
        count += 1
        mass += np.exp(key)
        last = _rank(packed, size - 1)
        if last <= m - 2:  # left child: the last bit one rank down
            if known <= last + 1:
                log_odds[last + 1] = _log_odds(probabilities[order[last + 1]])
                known = last + 2
            n = _push(keys, packs, masks, sizes, n, key - log_odds[last] + log_odds[last + 1],
                      _moved(packed, size - 1), mask ^ bits[order[last]] ^ bits[order[last + 1]],
                      size)  # fmt: skip
        for j in range(size - 2, -1, -1):  # right child: the first gap from the right
            here = _rank(packed, j)
            gap = _rank(packed, j + 1) - here
            if gap >= 2:
                if gap == 2:  # rank here + 1 is below the set's last: its log odds are known
                    n = _push(keys, packs, masks, sizes, n,
                              key - log_odds[here] + log_odds[here + 1], _moved(packed, j),
                              mask ^ bits[order[here]] ^ bits[order[here + 1]], size)  # fmt: skip
                break
    return count


@njit(cache=True, nogil=True)
def vosh_masks(probabilities, max_bits, budget, recall, out):  # type: ignore[no-untyped-def]
    """:func:`vosh` over all 64 bits (bit ``i`` flips with ``probabilities[i]``): how many sets."""
    bits = np.empty(64, dtype=np.uint64)
    for i in range(64):
        bits[i] = uint64(1) << uint64(i)
    max_bits = min(max_bits, 64)
    sizes = np.empty(budget, dtype=np.int64)
    cap = heap_capacity(max_bits, budget)
    order, log_odds = np.empty(64, np.int64), np.empty(64, np.float64)
    keys, packs = np.empty(cap, np.float64), np.empty(cap, np.uint64)
    masks, set_sizes = np.empty(cap, np.uint64), np.empty(cap, np.int64)
    return vosh(probabilities, bits, max_bits, budget, recall, out, sizes, order, log_odds,
                keys, packs, masks, set_sizes)  # fmt: skip


@njit(cache=True, nogil=True, parallel=True)
def psm_search(  # type: ignore[no-untyped-def]
    values, header, header_bits, queries, probabilities, active, max_bits, budget, recall,
    first_only, found, attempts, hits,
):  # fmt: skip
    """PSM over one sorted collection with its header table (``2^t + 1`` bucket offsets).

    For each active query, the VOSH sets over its ``t`` header bits (``probabilities[q]`` holds
    all 64 bits' flip probabilities; the header is the top ``t``), each visiting its header
    bucket and keeping the fingerprints within ``max_bits`` of the query. ``found[q]`` gets
    the hits (the first stops the query when ``first_only``), ``attempts[q]`` the buckets
    visited, and ``hits[q, :found[q]]`` the positions hit, as far as its columns reach.
    """
    shift = 64 - header_bits
    bits = np.empty(header_bits, dtype=np.uint64)
    for i in range(header_bits):
        bits[i] = uint64(1) << uint64(shift + i)
    set_bits = min(max_bits, header_bits, MAX_SET_BITS)
    cap = hits.shape[1]
    num_queries = queries.shape[0]
    for task in prange((num_queries + QUERIES_PER_TASK - 1) // QUERIES_PER_TASK):
        masks = np.empty(budget, dtype=np.uint64)
        set_sizes = np.empty(budget, dtype=np.int64)
        slots = heap_capacity(set_bits, budget)
        keys = np.empty(slots, dtype=np.float64)
        packs = np.empty(slots, dtype=np.uint64)
        heap_masks = np.empty(slots, dtype=np.uint64)
        heap_sizes = np.empty(slots, dtype=np.int64)
        order = np.empty(header_bits, dtype=np.int64)
        log_odds = np.empty(header_bits, dtype=np.float64)
        for q in range(task * QUERIES_PER_TASK, min(num_queries, (task + 1) * QUERIES_PER_TASK)):
            if not active[q]:
                continue
            x = queries[q]
            n = vosh(probabilities[q, shift:], bits, set_bits, budget, recall, masks, set_sizes,
                     order, log_odds, keys, packs, heap_masks, heap_sizes)  # fmt: skip
            count = 0
            made = 0
            for i in range(n):
                made += 1
                bucket = (x ^ masks[i]) >> uint64(shift) if header_bits > 0 else uint64(0)
                for at in range(header[bucket], header[bucket + 1]):
                    if popcount64(values[at] ^ x) <= max_bits:
                        if count < cap:
                            hits[q, count] = at
                        count += 1
                        if first_only:
                            break
                if first_only and count > 0:
                    break
            found[q] = count
            attempts[q] = made


@njit(cache=True, nogil=True, parallel=True)
def flip_probabilities(weights, step, table, out):  # type: ignore[no-untyped-def]
    """``out[d, j]``: the flip probability of ``|W[d, j]|`` over the row's root mean square.

    ``table[i]`` holds the probability at ``i * step`` (cells beyond the last take the last);
    a row of zeros takes ``table[0]`` everywhere.
    """
    last = table.shape[0] - 1
    width = weights.shape[1]
    for d in prange(weights.shape[0]):
        squares = 0.0
        for j in range(width):
            squares += weights[d, j] * weights[d, j]
        scale = np.sqrt(squares / width) * step
        for j in range(width):
            cell = 0 if scale == 0.0 else int(min(abs(weights[d, j]) / scale, last))
            out[d, j] = table[cell]
