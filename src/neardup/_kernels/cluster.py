"""Numba kernel for clustering: union-find over pairs into connected components."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _find(parent, x):  # type: ignore[no-untyped-def]
    while parent[x] != x:
        parent[x] = parent[parent[x]]  # path halving
        x = parent[x]
    return x


@njit(cache=True, nogil=True)
def component_roots(num_items, first, second, joined):  # type: ignore[no-untyped-def]
    """For each item, the smallest item of its connected component under the given edges.

    Union-find with path halving; the smaller root always wins, so the labels do not depend on
    the order of the edges. ``joined[e]`` is set when edge ``e`` merged two components as the
    edges were taken in order (Kruskal's rule: those edges form a spanning forest).
    Cost: O((n + e) * alpha(n)), iterative (no recursion).
    """
    parent = np.arange(num_items)
    for e in range(first.shape[0]):
        ra = _find(parent, first[e])
        rb = _find(parent, second[e])
        joined[e] = ra != rb
        if ra < rb:
            parent[rb] = ra
        elif rb < ra:
            parent[ra] = rb
    for x in range(num_items):
        parent[x] = _find(parent, x)
    return parent
