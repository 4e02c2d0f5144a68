"""Numba kernels for probabilistic SimHash matching: the VOSH order of bit-flip sets, and lookups.

VOSH (Sood and Loguinov, CIKM 2011, seed 004): for a fingerprint with bit-flip probabilities
``p_i <= 1/2``, the sets ``S`` of at most ``h`` bits in non-increasing ``p(u, S) = prod_{i in S}
p_i prod_{j not in S} (1 - p_j)``, i.e. by the product of the odds ``r_i = p_i / (1 - p_i)``.
With bits sorted by decreasing odds, a set is a sorted tuple of positions; its successors
(append the next position, or move the last one forward) never have larger products, and every
set has one parent, so a max-heap emits all sets once each, best first, in O(k log k). The heap
keeps each set directly as its flip mask.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64


@njit(cache=True, nogil=True)
def mass_within(log_odds, max_bits):  # type: ignore[no-untyped-def]
    """The sum, over the sets ``S`` of at most ``max_bits`` bits, of ``prod_{i in S} r_i``.

    Elementary symmetric sums of the odds ``r_i``, by dynamic programming. ``p(u, S)`` is the
    product times the constant ``prod_j (1 - p_j)``, so ratios of such sums are ratios of
    probabilities.
    """
    e = np.zeros(max_bits + 1, dtype=np.float64)
    e[0] = 1.0
    for i in range(log_odds.shape[0]):
        r = np.exp(log_odds[i])
        for k in range(min(max_bits, i + 1), 0, -1):
            e[k] += e[k - 1] * r
    return e.sum()


@njit(cache=True, nogil=True, inline="always")
def _push(keys, sets, lasts, sizes, n, key, positions, last, size):  # type: ignore[no-untyped-def]
    """Add an item to the array max-heap of ``n`` items (by ``keys``); return ``n + 1``."""
    i = n
    while i > 0:
        parent = (i - 1) >> 1
        if keys[parent] >= key:
            break
        keys[i], sets[i] = keys[parent], sets[parent]
        lasts[i], sizes[i] = lasts[parent], sizes[parent]
        i = parent
    keys[i], sets[i], lasts[i], sizes[i] = key, positions, last, size
    return n + 1


@njit(cache=True, nogil=True, inline="always")
def _drop_top(keys, sets, lasts, sizes, n):  # type: ignore[no-untyped-def]
    """Remove the top item of the heap of ``n`` items; return ``n - 1``."""
    n -= 1
    key, positions, last, size = keys[n], sets[n], lasts[n], sizes[n]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and keys[child + 1] > keys[child]:
            child += 1
        if keys[child] <= key:
            break
        keys[i], sets[i] = keys[child], sets[child]
        lasts[i], sizes[i] = lasts[child], sizes[child]
        i = child
    keys[i], sets[i], lasts[i], sizes[i] = key, positions, last, size
    return n


@njit(cache=True, nogil=True)
def vosh_masks(log_odds, order, max_bits, budget, recall, out):  # type: ignore[no-untyped-def]
    """Write the first flip masks (the empty set first) to ``out``; return how many.

    At most ``budget`` masks; with ``recall < 1``, stop as soon as the sets emitted hold that
    share of the probability of all sets of at most ``max_bits`` bits (the model's chance that
    a near copy's flip set is among them). ``order`` sorts the 64 bits by decreasing
    ``log_odds``; a mask has bit ``order[j]`` set for each position ``j`` of the set. The heap
    holds (log product, positions, last position, size) in four arrays; each pop pushes at
    most two successors, so ``2 * budget`` slots suffice.
    """
    if budget == 0:
        return 0
    target = recall * mass_within(log_odds, max_bits) if recall < 1.0 else np.inf
    out[0] = uint64(0)
    count = 1
    mass = 1.0
    if max_bits == 0:
        return count
    bit = np.empty(64, dtype=np.uint64)
    for j in range(64):
        bit[j] = uint64(1) << uint64(order[j])
    keys = np.empty(2 * budget + 2, dtype=np.float64)
    sets = np.empty(2 * budget + 2, dtype=np.uint64)
    lasts = np.empty(2 * budget + 2, dtype=np.int64)
    sizes = np.empty(2 * budget + 2, dtype=np.int64)
    n = _push(keys, sets, lasts, sizes, 0, log_odds[order[0]], bit[0], 0, 1)
    while n > 0 and count < budget and mass < target:
        key, mask, last, size = keys[0], sets[0], lasts[0], sizes[0]
        n = _drop_top(keys, sets, lasts, sizes, n)
        out[count] = mask
        count += 1
        mass += np.exp(key)
        if last + 1 < 64:
            step = log_odds[order[last + 1]]
            if size < max_bits:
                n = _push(keys, sets, lasts, sizes, n, key + step, mask | bit[last + 1],
                          last + 1, size + 1)  # fmt: skip
            moved = (mask & ~bit[last]) | bit[last + 1]
            n = _push(keys, sets, lasts, sizes, n, key - log_odds[order[last]] + step, moved,
                      last + 1, size)  # fmt: skip
    return count


@njit(cache=True, nogil=True)
def _find(values, header, header_bits, target):  # type: ignore[no-untyped-def]
    """Index of the first ``target`` in the sorted ``values`` (the header narrows it), or -1."""
    bucket = target >> uint64(64 - header_bits) if header_bits > 0 else uint64(0)
    low = header[bucket]
    high = header[bucket + 1]
    at = low + np.searchsorted(values[low:high], target)
    if at < high and values[at] == target:
        return at
    return -1


@njit(cache=True, nogil=True, parallel=True)
def psm_query(  # type: ignore[no-untyped-def]
    values, header, header_bits, queries, log_odds, max_bits, budget, recall, first_only,
    found, attempts, hits,
):  # fmt: skip
    """For each query, look up ``query ^ mask`` for the VOSH masks in order.

    ``found[q]`` gets how many stored fingerprints (with multiplicity) were hit (the first hit
    stops the search when ``first_only``), ``attempts[q]`` the lookups made, and
    ``hits[q, :found[q]]`` the sorted positions hit, as far as its columns reach.
    """
    cap = hits.shape[1]
    for q in prange(queries.shape[0]):
        order = np.argsort(-log_odds[q])
        masks = np.empty(budget, dtype=np.uint64)
        n = vosh_masks(log_odds[q], order, max_bits, budget, recall, masks)
        count = 0
        made = 0
        for i in range(n):
            made += 1
            target = queries[q] ^ masks[i]
            at = _find(values, header, header_bits, target)
            if at >= 0:
                while at < values.shape[0] and values[at] == target:
                    if count < cap:
                        hits[q, count] = at
                    count += 1
                    at += 1
                if first_only:
                    break
        found[q] = count
        attempts[q] = made


@njit(cache=True, nogil=True, parallel=True)
def flip_targets(  # type: ignore[no-untyped-def]
    queries, log_odds, max_bits, budget, recall, targets, counts
):
    """``targets[q, :counts[q]]`` = ``queries[q] ^ mask`` for its VOSH masks (batch mode)."""
    for q in prange(queries.shape[0]):
        order = np.argsort(-log_odds[q])
        masks = np.empty(budget, dtype=np.uint64)
        n = vosh_masks(log_odds[q], order, max_bits, budget, recall, masks)
        for i in range(n):
            targets[q, i] = queries[q] ^ masks[i]
        counts[q] = n
