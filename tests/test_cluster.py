"""Clustering: union-find equals breadth-first search; center clusters equal their rule."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from neardup import connected_components
from neardup.cluster import Clusters, center_clusters
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


@given(graph=graphs(), seed=st.integers(0, 2**32 - 1), threshold=st.sampled_from([0.3, 0.5, 0.8]))
def test_center_clusters_follow_their_rule(
    graph: tuple[int, list[tuple[int, int]]], seed: int, threshold: float
) -> None:
    num_nodes, drawn = graph
    rng = np.random.default_rng(seed)
    matrix = rng.random((num_nodes, num_nodes)).round(2)
    matrix = np.maximum(matrix, matrix.T)  # symmetric; verified pairs reach the threshold
    edges = [(a, b) for a, b in drawn if a != b and matrix[a, b] >= threshold]
    expected = reference.center_clusters(
        num_nodes, edges, lambda a, b: float(matrix[a, b]), threshold
    )
    first = np.array([a for a, _ in edges], dtype=np.int64)
    second = np.array([b for _, b in edges], dtype=np.int64)
    components = connected_components(num_nodes, first, second)
    representative = components.representative_of()
    docs = np.arange(num_nodes)
    similarity = np.where(components.keep, 1.0, matrix[docs, representative])
    order = rng.permutation(len(edges))
    clusters = center_clusters(
        Clusters(components.labels, components.keep, similarity),
        second[order],
        first[order],
        matrix[first, second][order],
        threshold,
    )
    labels, keep, to_center = expected
    assert clusters.labels.tolist() == labels
    assert clusters.keep.tolist() == keep
    assert clusters.similarity.tolist() == to_center
    center = clusters.representative_of()
    assert (clusters.similarity[~clusters.keep] >= threshold).all()
    assert (matrix[docs, center][~clusters.keep] == clusters.similarity[~clusters.keep]).all()
    assert (components.labels[center] == components.labels).all()  # centers refine components


def test_a_chain_splits_and_exact_copies_stay_together() -> None:
    # 0 ~ 1 ~ 2 ~ 3 in a chain; 4 is an exact copy of 3; 2 and 3 are far from 0.
    components = Clusters(
        labels=np.zeros(5, dtype=np.int64),
        keep=np.array([True, False, False, False, False]),
        similarity=np.array([1.0, 0.9, 0.5, 0.2, 0.2]),
    )
    clusters = center_clusters(
        components,
        np.array([0, 1, 2]),
        np.array([1, 2, 3]),
        np.array([0.9, 0.85, 0.9]),
        0.8,
        follows=np.array([0, 1, 2, 3, 3]),
    )
    assert clusters.labels.tolist() == [0, 0, 2, 2, 2]
    assert clusters.keep.tolist() == [True, False, True, False, False]
    assert clusters.min_similarity().tolist() == [0.9, 0.9, 0.9, 0.9, 0.9]
