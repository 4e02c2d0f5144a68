"""Clustering: union-find equals breadth-first search; labels ignore the order of pairs."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from neardup import connected_components
from tests import reference
from tests.strategies import graphs


@given(graph=graphs(), seed=st.integers(0, 2**32 - 1))
def test_components_equal_bfs_and_ignore_edge_order(
    graph: tuple[int, list[tuple[int, int]]], seed: int
) -> None:
    num_nodes, edges = graph
    expected = reference.components(num_nodes, edges)
    first = np.array([a for a, _ in edges], dtype=np.int64)
    second = np.array([b for _, b in edges], dtype=np.int64)
    assert connected_components(num_nodes, first, second).labels.tolist() == expected
    order = np.random.default_rng(seed).permutation(len(edges))
    shuffled = connected_components(num_nodes, second[order], first[order])
    assert shuffled.labels.tolist() == expected


@given(graph=graphs(), lengths=st.lists(st.integers(0, 5), min_size=40, max_size=40))
def test_exactly_one_representative_per_cluster(
    graph: tuple[int, list[tuple[int, int]]], lengths: list[int]
) -> None:
    num_nodes, edges = graph
    first = np.array([a for a, _ in edges], dtype=np.int64)
    second = np.array([b for _, b in edges], dtype=np.int64)
    size = np.array(lengths[:num_nodes])
    for keep in ("first", "longest"):
        clusters = connected_components(num_nodes, first, second, keep=keep, lengths=size)  # type: ignore[arg-type]
        kept_labels = clusters.labels[clusters.keep]
        assert sorted(kept_labels.tolist()) == sorted(set(clusters.labels.tolist()))
        if keep == "longest":
            for label in set(clusters.labels.tolist()):
                members = np.flatnonzero(clusters.labels == label)
                best = members[np.argmax(size[members])]  # argmax: first of the longest
                assert clusters.keep[best]


def test_long_chains_do_not_recurse() -> None:
    n = 200_000
    chain = np.arange(n - 1, dtype=np.int64)
    clusters = connected_components(n, chain[::-1], chain[::-1] + 1)
    assert clusters.num_duplicate_clusters == 1
    assert clusters.labels.max() == 0
