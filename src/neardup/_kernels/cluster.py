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


@njit(cache=True, nogil=True)
def assign_to_centers(order, center, similarity, adj_offsets, adj_docs, adj_similarity, threshold):  # type: ignore[no-untyped-def]
    """Give each document left without a center one: the best center it is verified against.

    ``center[d]`` is ``d``'s center, ``d`` itself for a center, or -1; the documents of
    ``order`` with -1 are taken in that order. Each joins the center ``c`` (``center[c] == c``)
    of its edges (``adj_docs[adj_offsets[d]:adj_offsets[d + 1]]``, similarities
    ``adj_similarity``) with the highest similarity at or above ``threshold`` (ties to the
    smaller ``c``), or else becomes a center itself, so that documents after it may join it.
    ``similarity[d]`` is set to the similarity to its center (1 for a center).
    The CENTER rule of Haveliwala et al. (2000), run on what verification already measured.
    Cost: O(len(order) + edges of those documents).
    """
    for i in range(order.shape[0]):
        d = order[i]
        if center[d] != -1:
            continue
        best = -1
        best_similarity = -1.0
        for e in range(adj_offsets[d], adj_offsets[d + 1]):
            c = adj_docs[e]
            s = adj_similarity[e]
            if (
                center[c] == c
                and s >= threshold
                and (s > best_similarity or (s == best_similarity and c < best))
            ):
                best = c
                best_similarity = s
        if best >= 0:
            center[d] = best
            similarity[d] = best_similarity
        else:
            center[d] = d
            similarity[d] = 1.0
