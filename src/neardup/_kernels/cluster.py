"""Numba kernel for clustering: union-find over pairs into connected components."""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def _find(parent, x):  # type: ignore[no-untyped-def]
    while parent[x] != x:
        parent[x] = parent[parent[x]]  # path halving
        x = parent[x]
    return x


@njit(cache=True, nogil=True, inline="always")
def _root(parent, x):  # type: ignore[no-untyped-def]
    """``x``'s root, ``parent`` only read (so that threads may share it)."""
    while parent[x] != x:
        x = parent[x]
    return x


@njit(cache=True, nogil=True)
def connected(parent, first, second, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[e]``: whether ``first[e]`` and ``second[e]`` are in one component of ``parent``.

    For the pairs ``lo .. hi - 1``; ``parent`` is only read, so blocks run in threads at once
    (the joins halve the paths). Cost: O(e * alpha(n)).
    """
    for e in range(lo, hi):
        out[e] = _root(parent, first[e]) == _root(parent, second[e])


@njit(cache=True, nogil=True)
def join_in_order(parent, first, second, accepted, skip_joined, measured, joined):  # type: ignore[no-untyped-def]
    """Take the pairs in order, joining the components of those ``accepted``.

    ``parent``: a union-find forest (path halving; the smaller root always wins, so each
    root is the smallest item of its component whatever the order), kept between calls.
    ``joined[e]`` is set when pair ``e`` merged two components (Kruskal's rule: those pairs
    form a spanning forest). With ``skip_joined``, a pair whose items are already in one
    component when it is reached counts as not ``measured`` (its similarity decides nothing);
    otherwise every pair is. Cost: O(e * alpha(n)), iterative (no recursion).
    """
    for e in range(first.shape[0]):
        ra = _find(parent, first[e])
        rb = _find(parent, second[e])
        measured[e] = ra != rb or not skip_joined
        joined[e] = accepted[e] and ra != rb
        if joined[e]:
            if ra < rb:
                parent[rb] = ra
            else:
                parent[ra] = rb


@njit(cache=True, nogil=True)
def flatten(parent):  # type: ignore[no-untyped-def]
    """Point every item of ``parent`` at its root (the smallest item of its component)."""
    for x in range(parent.shape[0]):
        parent[x] = _find(parent, x)


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
