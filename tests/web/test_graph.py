"""Graph contraction (seed 002): cascaded collapses of mirror pages, against a plain reference."""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup.errors import ParameterError
from neardup.web.graph import contract_graph
from tests.strategies import graphs


def _reference(
    num_nodes: int,
    edges: list[tuple[int, int]],
    merged: list[int],
    host: list[int],
    host_group: list[int],
    min_links: int,
) -> tuple[list[int], list[tuple[int, int, int]], int]:
    """The documented rule, literally: pairs of nodes, sets, a union per pair, min wins."""
    rep = list(range(num_nodes))
    for node in range(num_nodes):
        r = node
        while merged[r] != r:
            r = merged[r]
        rep[node] = r
    rounds = 0
    while True:
        links: dict[int, set[int]] = {}
        for u, v in edges:
            su, tv = rep[u], rep[v]
            links.setdefault(su, set()).add(-1 if su == tv else tv)
        nodes = sorted(links)
        parent = {n: n for n in nodes}

        def find(x: int, parent: dict[int, int] = parent) -> int:
            while parent[x] != x:
                x = parent[x]
            return x

        for i, u1 in enumerate(nodes):
            for u2 in nodes[i + 1 :]:
                if (
                    host[u1] != host[u2]
                    and host_group[host[u1]] == host_group[host[u2]]
                    and links[u1] == links[u2]
                    and len(links[u1]) >= min_links
                ):
                    a, b = find(u1), find(u2)
                    parent[max(a, b)] = min(a, b)
        winner = {n: find(n) for n in nodes}
        if all(w == n for n, w in winner.items()):
            break
        rep = [winner.get(r, r) for r in rep]
        rounds += 1
    contracted = Counter((rep[u], rep[v]) for u, v in edges if rep[u] != rep[v])
    return rep, [(s, t, c) for (s, t), c in sorted(contracted.items())], rounds


def _check(
    num_nodes: int,
    edges: list[tuple[int, int]],
    merged: list[int],
    host: list[int],
    host_group: list[int],
    min_links: int,
) -> int:
    source = np.array([u for u, _ in edges], dtype=np.int64)
    target = np.array([v for _, v in edges], dtype=np.int64)
    graph = contract_graph(
        source,
        target,
        num_nodes,
        merged=np.array(merged, dtype=np.int64),
        host=np.array(host, dtype=np.int64),
        host_group=np.array(host_group, dtype=np.int64),
        min_links=min_links,
    )
    rep, contracted, rounds = _reference(num_nodes, edges, merged, host, host_group, min_links)
    assert graph.representative.tolist() == rep
    got = list(zip(graph.source.tolist(), graph.target.tolist(), graph.count.tolist(), strict=True))
    assert got == contracted
    assert graph.rounds == rounds
    assert graph.representative.dtype == graph.source.dtype == graph.count.dtype == np.int64
    return rounds


@st.composite
def random_cases(
    draw: st.DrawFn,
) -> tuple[int, list[tuple[int, int]], list[int], list[int], list[int], int]:
    """Any graph; merges pointing at smaller nodes (chains allowed); a few hosts and groups."""
    num_nodes, edges = draw(graphs(max_nodes=16))
    merged = [draw(st.integers(0, i)) if draw(st.booleans()) else i for i in range(num_nodes)]
    num_hosts = draw(st.integers(1, 4))
    host = [draw(st.integers(0, num_hosts - 1)) for _ in range(num_nodes)]
    host_group = [draw(st.integers(0, 1)) for _ in range(num_hosts)]
    return num_nodes, edges, merged, host, host_group, draw(st.integers(1, 3))


@st.composite
def mirrored_cases(
    draw: st.DrawFn,
) -> tuple[int, list[tuple[int, int]], list[int], list[int], list[int], int]:
    """A site copied onto two or three hosts, some copies merged, some links edited: cascades."""
    size, site_edges = draw(graphs(max_nodes=10))
    copies = draw(st.integers(2, 3))
    num_nodes = size * copies
    edges = [(u + c * size, v + c * size) for c in range(copies) for u, v in site_edges]
    extra = st.tuples(st.integers(0, num_nodes - 1), st.integers(0, num_nodes - 1))
    edges += draw(st.lists(extra, max_size=3))
    merged = list(range(num_nodes))
    for node in range(size, num_nodes):
        if draw(st.booleans()):
            merged[node] = node % size
    host = [node // size for node in range(num_nodes)]
    host_group = [0] * copies if draw(st.booleans()) else [0, 1, 0][:copies]
    return num_nodes, edges, merged, host, host_group, draw(st.integers(1, 2))


@given(case=random_cases())
def test_contraction_equals_the_reference_on_random_graphs(
    case: tuple[int, list[tuple[int, int]], list[int], list[int], list[int], int],
) -> None:
    _check(*case)


@given(case=mirrored_cases())
def test_contraction_equals_the_reference_on_mirrored_sites(
    case: tuple[int, list[tuple[int, int]], list[int], list[int], list[int], int],
) -> None:
    _check(*case)


def _two_mirror_sites() -> tuple[list[tuple[int, int]], int, list[int], list[int], list[int]]:
    """Site A (host 0), its mirror B (host 1), a same-shaped decoy C (host 2, another group).

    Each site: index → two sections → two leaves each; the leaves link back to the index's
    style sheet node (one per site, equal in content). Content comparison found the leaves
    and the style sheets of A and B to be mirrors (``merged``), not the index or section pages
    (banner and rewritten links). The decoy C has the same links to A's style sheet but is in
    its own host group.
    """
    # per site: 0 index, 1-2 sections, 3-6 leaves, 7 style sheet
    site = [(0, 1), (0, 2), (1, 3), (1, 4), (2, 5), (2, 6)]
    site += [(leaf, 7) for leaf in range(3, 7)] + [(0, 7), (1, 7), (2, 7)]
    edges = [(u + 8 * s, v + 8 * s) for s in range(3) for u, v in site]
    num_nodes = 24
    merged = list(range(num_nodes))
    for node in [3, 4, 5, 6, 7]:
        merged[node + 8] = node  # B's leaves and style sheet are A's
        merged[node + 16] = node  # and so are the decoy's: its pages are copies
    host = [n // 8 for n in range(num_nodes)]
    host_group = [0, 0, 1]  # A and B are candidate mirror hosts; C is not
    return edges, num_nodes, merged, host, host_group


def test_a_mirrored_site_folds_in_two_rounds() -> None:
    edges, num_nodes, merged, host, host_group = _two_mirror_sites()
    rounds = _check(num_nodes, edges, merged, host, host_group, 2)
    assert rounds == 2
    graph = contract_graph(
        np.array([u for u, _ in edges]),
        np.array([v for _, v in edges]),
        num_nodes,
        merged=np.array(merged),
        host=np.array(host),
        host_group=np.array(host_group),
    )
    rep = graph.representative.tolist()
    # round 1: B's sections (9, 10) fold into A's (1, 2); round 2: B's index (8) into A's (0)
    assert rep[8:16] == list(range(8))
    # the decoy keeps its index and sections: another host group
    assert rep[16:19] == [16, 17, 18]
    assert rep[19:24] == [3, 4, 5, 6, 7]
    assert graph.num_nodes == 11
    # A's index now stands for both indexes: its links count twice
    edges_of = {
        (s, t): c
        for s, t, c in zip(
            graph.source.tolist(), graph.target.tolist(), graph.count.tolist(), strict=True
        )
    }
    assert edges_of[(0, 1)] == 2
    assert edges_of[(1, 3)] == 2
    assert edges_of[(16, 17)] == 1
    assert edges_of[(3, 7)] == 3  # leaf 3 of A, B and C


def test_without_the_seed_merge_nothing_folds_and_same_host_pages_stay_apart() -> None:
    edges, num_nodes, _, host, host_group = _two_mirror_sites()
    assert _check(num_nodes, edges, list(range(num_nodes)), host, host_group, 2) == 0
    # two pages of one host with equal links are not mirrors of each other
    same_host = [(0, 2), (0, 3), (1, 2), (1, 3)]
    assert _check(4, same_host, [0, 1, 2, 3], [0, 0, 0, 0], [0], 2) == 0
    # ... but a third page on a mirror host with the same links joins them all
    assert _check(5, [*same_host, (4, 2), (4, 3)], [0, 1, 2, 3, 4], [0, 0, 0, 0, 1], [0, 0], 2) == 1


def test_min_links() -> None:
    edges = [(0, 2), (1, 2)]
    assert _check(3, edges, [0, 1, 2], [0, 1, 0], [0, 0], 2) == 0
    assert _check(3, edges, [0, 1, 2], [0, 1, 0], [0, 0], 1) == 1


def test_bad_arguments() -> None:
    one = np.array([0])
    with pytest.raises(ParameterError, match="cycle"):
        contract_graph(one, one, 2, merged=np.array([1, 0]), host=np.array([0, 0]), host_group=one)
    with pytest.raises(ParameterError, match="target"):
        contract_graph(
            one, np.array([2]), 2, merged=np.array([0, 1]), host=np.array([0, 0]), host_group=one
        )
    with pytest.raises(ParameterError, match="merged"):
        contract_graph(one, one, 2, merged=np.array([0]), host=np.array([0, 0]), host_group=one)
    with pytest.raises(ParameterError, match="host"):
        contract_graph(one, one, 2, merged=np.array([0, 1]), host=np.array([0, 1]), host_group=one)
    with pytest.raises(ParameterError, match="equal lengths"):
        contract_graph(
            one, np.array([0, 1]), 2, merged=np.array([0, 1]), host=np.array([0, 0]), host_group=one
        )
    with pytest.raises(ParameterError, match="min_links"):
        contract_graph(
            one, one, 2, merged=np.array([0, 1]), host=np.array([0, 0]), host_group=one, min_links=0
        )
    empty = contract_graph(
        np.zeros(0, dtype=np.int64),
        np.zeros(0, dtype=np.int64),
        0,
        merged=np.zeros(0, dtype=np.int64),
        host=np.zeros(0, dtype=np.int64),
        host_group=np.zeros(0, dtype=np.int64),
    )
    assert empty.rounds == 0
    assert empty.source.size == 0


def test_a_large_mirrored_crawl_contracts_quickly() -> None:
    """100 sites of 2,000 pages, each mirrored once: whole trees fold, rounds = tree depth."""
    rng = np.random.default_rng(7)
    sites, pages = 100, 2000
    parent = np.concatenate([[0], rng.integers(0, np.arange(1, pages))])  # a random tree
    local_s, local_t = parent[1:], np.arange(1, pages)
    offsets = np.arange(2 * sites) * pages
    source = (local_s[None, :] + offsets[:, None]).ravel()
    target = (local_t[None, :] + offsets[:, None]).ravel()
    num_nodes = 2 * sites * pages
    host = np.repeat(np.arange(2 * sites), pages)
    host_group = np.arange(2 * sites) // 2  # site 2k and 2k+1 are mirror hosts
    is_leaf = np.ones(pages, dtype=bool)
    is_leaf[local_s] = False
    merged = np.arange(num_nodes)
    mirror = (host % 2 == 1) & np.tile(is_leaf, 2 * sites)
    merged[mirror] -= pages
    start = time.perf_counter()
    graph = contract_graph(
        source, target, num_nodes, merged=merged, host=host, host_group=host_group, min_links=1
    )
    elapsed = time.perf_counter() - start
    # every inner node folds too, so each mirror collapses wholly onto its original
    assert graph.num_nodes == sites * pages
    height = np.zeros(pages, dtype=np.int64)
    for node in range(pages - 1, 0, -1):
        height[parent[node]] = max(height[parent[node]], height[node] + 1)
    assert graph.rounds == height[0]
    assert int(graph.count.sum()) == source.size
    assert elapsed < 10
