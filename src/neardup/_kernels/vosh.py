"""Numba kernels for probabilistic SimHash matching: the VOSH order of bit-flip sets, and lookups.

VOSH (Sood and Loguinov, CIKM 2011, seed 004): for a fingerprint with bit-flip probabilities
``p_i <= 1/2``, the sets ``S`` of at most ``h`` bits in non-increasing ``p(u, S) = prod_{i in S}
p_i prod_{j not in S} (1 - p_j)``, i.e. by the product of the odds ``r_i = p_i / (1 - p_i)``.
With bits sorted by decreasing odds, a set is a sorted tuple of positions; its successors
(append the next position, or move the last one forward) never have larger products, and every
set has one parent, so a max-heap emits all sets once each, best first, in O(k log k).
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit, prange, uint64


@njit(cache=True, nogil=True)
def vosh_masks(log_odds, order, max_bits, budget, out):  # type: ignore[no-untyped-def]
    """Write the first ``budget`` flip masks (the empty set first) to ``out``; return how many.

    ``order`` sorts the 64 bits by decreasing ``log_odds``; a mask has bit ``order[j]`` set for
    each position ``j`` of the set.
    """
    count = 0
    if budget == 0:
        return 0
    out[0] = uint64(0)
    count = 1
    if max_bits == 0:
        return count
    # Heap items: (-log product, positions mask, last position, size).
    heap = [(-log_odds[order[0]], uint64(1), 0, 1)]
    while heap and count < budget:
        neg, positions, last, size = heapq.heappop(heap)
        mask = uint64(0)
        for j in range(64):
            if (positions >> uint64(j)) & uint64(1):
                mask |= uint64(1) << uint64(order[j])
        out[count] = mask
        count += 1
        if last + 1 < 64:
            step = log_odds[order[last + 1]]
            if size < max_bits:
                heapq.heappush(
                    heap,
                    (neg - step, positions | (uint64(1) << uint64(last + 1)), last + 1, size + 1),
                )
            moved = (positions & ~(uint64(1) << uint64(last))) | (uint64(1) << uint64(last + 1))
            heapq.heappush(heap, (neg + log_odds[order[last]] - step, moved, last + 1, size))
    return count


@njit(cache=True, nogil=True)
def _find(values, header, header_bits, target):  # type: ignore[no-untyped-def]
    """Index of ``target`` in the sorted ``values`` (the header narrows the range), or -1."""
    bucket = target >> uint64(64 - header_bits) if header_bits > 0 else uint64(0)
    low = header[bucket]
    high = header[bucket + 1]
    at = low + np.searchsorted(values[low:high], target)
    if at < high and values[at] == target:
        return at
    return -1


@njit(cache=True, nogil=True, parallel=True)
def psm_query(  # type: ignore[no-untyped-def]
    values, header, header_bits, queries, log_odds, max_bits, budget, first_only, found, attempts
):
    """For each query, look up ``query ^ mask`` for the VOSH masks in order, up to ``budget``.

    ``found[q]`` gets how many stored fingerprints (with multiplicity) were hit (the first hit
    stops the search when ``first_only``); ``attempts[q]`` the lookups made.
    """
    for q in prange(queries.shape[0]):
        order = np.argsort(-log_odds[q])
        masks = np.empty(budget, dtype=np.uint64)
        n = vosh_masks(log_odds[q], order, max_bits, budget, masks)
        hits = 0
        made = 0
        for i in range(n):
            made += 1
            at = _find(values, header, header_bits, queries[q] ^ masks[i])
            if at >= 0:
                while at < values.shape[0] and values[at] == queries[q] ^ masks[i]:
                    hits += 1
                    at += 1
                if first_only:
                    break
        found[q] = hits
        attempts[q] = made
