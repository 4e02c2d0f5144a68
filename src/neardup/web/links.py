"""The link graph of a crawl, and its contraction by mirror pages (seed 002).

Nodes are canonical URLs: every crawled page's and every link target's (a target need not have
been crawled). Each page's node is first merged into its cluster representative's; then
:func:`~neardup.web.graph.contract_graph` collapses pages on mirror hosts whose out-links have
become the same, round after round, until nothing changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neardup._types import I64Array
from neardup.cluster import connected_components
from neardup.text.urls import url_host
from neardup.web.graph import ContractedGraph, contract_graph
from neardup.web.mirrors import MirrorPair

__all__ = ["LinkGraph", "contract_links"]


@dataclass(frozen=True, slots=True)
class LinkGraph:
    """The contracted graph: each kept node's URL and host, and the edges between kept nodes.

    ``members[i]`` is the number of crawled pages merged into node ``urls[i]``; node numbers in
    ``source``/``target`` index ``urls``.
    """

    urls: list[str]
    hosts: list[str]
    members: I64Array
    source: I64Array
    target: I64Array
    count: I64Array
    rounds: int
    num_nodes_before: int
    num_edges_before: int


def contract_links(
    canonical: Sequence[str],
    links: Sequence[Sequence[str]],
    representative: I64Array,
    mirrors: Sequence[MirrorPair],
    *,
    min_links: int = 2,
) -> LinkGraph:
    """Build the crawl's link graph over canonical URLs and contract it.

    ``canonical`` and ``links`` are per page (links already canonical); ``representative`` the
    page each page was clustered into.
    """
    counts = np.fromiter((len(out) for out in links), dtype=np.int64, count=len(links))
    flat = [url for out in links for url in out]
    names, node_of = np.unique(np.asarray([*canonical, *flat], dtype=object), return_inverse=True)
    node_of = node_of.astype(np.int64)
    num_pages = len(canonical)
    page_node = node_of[:num_pages]
    source = np.repeat(page_node, counts)
    target = node_of[num_pages:]
    num_nodes = len(names)
    merged = np.arange(num_nodes, dtype=np.int64)
    merged[page_node] = page_node[representative]
    hosts = [url_host(str(name)) for name in names]
    host_names, host_of = np.unique(np.asarray(hosts, dtype=object), return_inverse=True)
    index = {str(h): i for i, h in enumerate(host_names)}
    pairs = np.array([(index[m.a], index[m.b]) for m in mirrors], dtype=np.int64).reshape(-1, 2)
    host_group = connected_components(len(host_names), pairs[:, 0], pairs[:, 1]).labels
    graph: ContractedGraph = contract_graph(
        source,
        target,
        num_nodes,
        merged=merged,
        host=host_of.astype(np.int64),
        host_group=host_group,
        min_links=min_links,
    )
    kept = np.flatnonzero(graph.representative == np.arange(num_nodes))
    renumber = np.full(num_nodes, -1, dtype=np.int64)
    renumber[kept] = np.arange(kept.shape[0])
    members = np.bincount(
        renumber[graph.representative[page_node]], minlength=kept.shape[0]
    ).astype(np.int64)
    return LinkGraph(
        urls=[str(names[i]) for i in kept],
        hosts=[hosts[i] for i in kept],
        members=members,
        source=renumber[graph.source],
        target=renumber[graph.target],
        count=graph.count,
        rounds=graph.rounds,
        num_nodes_before=num_nodes,
        num_edges_before=int(source.shape[0]),
    )
