"""Seed 004's PSM transcribed into plain Python: the reference the kernels are tested against.

Written from the paper's text, not from the kernels: Algorithm 2 (*ProduceChildren*) with
1-based bit numbers, the max-heap ``M`` over ``p(u, S)`` seeded with the roots of the ``h`` VOSH
trees, and the online lookup (header hash table of ``t`` bits, linear scan of each bucket for
pages within ``h - i`` bits on the remaining ``b - t``).
"""

from __future__ import annotations

import heapq
from math import prod

B = 64


def produce_children(s: tuple[int, ...], b: int) -> list[tuple[int, ...]]:
    """Algorithm 2: the left child adds 1 to the last bit while it stays <= b; the right child
    scans the bits from right to left for the first gap of size at least 2 and, if that gap is
    exactly 2, increments the bit on the left of it (otherwise there is no right child)."""
    h = len(s)
    children = []
    if s[h - 1] <= b - 1:
        left = list(s)
        left[h - 1] += 1
        children.append(tuple(left))
    for j in range(h - 2, -1, -1):  # 0-based j: the gap between bits j and j + 1
        gap = s[j + 1] - s[j]
        if gap >= 2:
            if gap == 2:
                right = list(s)
                right[j] += 1
                children.append(tuple(right))
            break
    return children


def vosh_order(p: list[float], h: int, k: int) -> list[frozenset[int]]:
    """The first ``k`` sets (the empty one first) of at most ``h`` of the bits ``0..len(p)-1``.

    Bits are renumbered 1..b in decreasing ``p`` (ties by position); ``M`` holds
    ``(p(u, S), S)`` and starts with the roots ``(1..i)`` for ``i = 1..h``; each extraction
    inserts the extracted set's children. ``p(u, S) = prod_{i in S} p_i prod_{j not in S} (1 -
    p_j)``, computed in full as the paper writes it.
    """
    b = len(p)
    volatile = sorted(range(b), key=lambda i: (-p[i], i))  # rank r (1-based) -> bit

    def probability(s: tuple[int, ...]) -> float:
        chosen = {volatile[r - 1] for r in s}
        return prod(p[i] if i in chosen else 1 - p[i] for i in range(b))

    out = [frozenset[int]()]
    heap = [(-probability(tuple(range(1, i + 1))), tuple(range(1, i + 1)))
            for i in range(1, min(h, b) + 1)]  # fmt: skip
    heapq.heapify(heap)
    while heap and len(out) < k:
        _, s = heapq.heappop(heap)
        out.append(frozenset(volatile[r - 1] for r in s))
        for child in produce_children(s, b):
            heapq.heappush(heap, (-probability(child), child))
    return out


def psm_online(
    values: list[int], x: int, p: list[float], t: int, h: int, k: int, first: bool
) -> tuple[list[int], int]:
    """PSMF/PSMA for one query: the indices of ``values`` found, and the lookups made.

    ``p`` has the flip probability of each of the 64 bits (bit 0 the lowest); VOSH works on the
    ``t`` most significant. A lookup flips the set's header bits of ``x``, reads that header's
    bucket from the hash table, and scans it for hashes within ``h - i`` on the other bits.
    """
    table: dict[int, list[int]] = {}
    for i, v in enumerate(values):
        table.setdefault(v >> (B - t), []).append(i)
    low = (1 << (B - t)) - 1
    found: list[int] = []
    lookups = 0
    for flip in vosh_order(p[B - t :], h, k):  # header bit i is fingerprint bit B - t + i
        lookups += 1
        header = (x >> (B - t)) ^ sum(1 << i for i in flip)
        for i in table.get(header, []):
            if bin((values[i] ^ x) & low).count("1") <= h - len(flip):
                found.append(i)
                if first:
                    return found, lookups
    return found, lookups
