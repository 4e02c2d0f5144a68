"""Graph contraction of the link graph (seed 002, "Graph contraction").

"Consider links (u1, v1) and (u2, v2). Say shingling leads you to believe that v1 and v2 are
mirror pages. Replace outlinks on u1 and u2 to point to unified node v. May make u1 and u2 look
more similar than before [...]. Could lead to cascaded collapses and whole site mirror
folding." :func:`contract_graph` starts from the content mirrors found by the pipeline and
repeats that step until nothing changes; every round is a few sorts over the edge arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neardup._types import BoolArray, I64Array, U64Array
from neardup.errors import ParameterError
from neardup.hashing.mix import FMIX_M1, fmix64

__all__ = ["ContractedGraph", "contract_graph"]

_SELF = -1
"""The target a node's link to itself counts as when link sets are compared."""


@dataclass(frozen=True, slots=True)
class ContractedGraph:
    """The link graph after mirror pages were collapsed.

    Attributes
    ----------
    representative
        Per original node: the node it was collapsed into (itself if it was kept). Every
        representative is its own representative.
    source, target, count
        The contracted edges: ``(representative[u], representative[v])`` of every original
        edge ``u → v``, distinct, sorted by source then target, each with the number of
        original edges it stands for. Self-loops (links inside one collapsed node, and links of
        a page to itself) are left out.
    rounds
        The rounds of link-based collapsing that changed something (0 when the initial merge
        was already stable).
    """

    representative: I64Array
    source: I64Array
    target: I64Array
    count: I64Array
    rounds: int

    @property
    def num_nodes(self) -> int:
        """Nodes left after contraction (distinct representatives)."""
        return int(np.count_nonzero(self.representative == np.arange(self.representative.size)))


def contract_graph(
    source: I64Array,
    target: I64Array,
    num_nodes: int,
    *,
    merged: I64Array,
    host: I64Array,
    host_group: I64Array,
    min_links: int = 2,
) -> ContractedGraph:
    """Collapse mirror pages and, in cascade, the pages whose out-links then agree.

    The nodes start collapsed as ``merged`` says (content mirrors; chains are followed to their
    end). Then, round after round: every edge is mapped through the current representatives,
    giving each current node the *set* of (contracted) nodes it links to, a link to itself
    counting as "itself" (so two mirror pages that each link to themselves agree). Two current
    nodes whose hosts differ but belong to one host group (``host_group[host[u1]] ==
    host_group[host[u2]]``, e.g. a pair of mirror hosts) and whose link sets are equal with at
    least ``min_links`` members are collapsed, the smaller index winning. Pairwise collapses are
    closed transitively: a set of nodes with one host group and one link set collapses whole
    when it spans at least two hosts. A collapsed node has the host of its representative. The
    rounds stop when one collapses nothing.

    Link sets are compared by two 64-bit order-free hashes, then element by element, so two
    different sets never collapse.

    Nodes whose link sets wait on each other (two mirrored index pages that link to their own
    children, whose children link back to their own index) never agree under this rule: a
    cycle of not-yet-collapsed mirror pages needs the content comparison to seed at least one
    of its nodes through ``merged``.

    Parameters
    ----------
    source, target
        The edges ``source[i] → target[i]`` (node numbers in ``[0, num_nodes)``; repeats and
        self-loops allowed).
    num_nodes
        The number of nodes.
    merged
        Per node, the node it is initially merged into (``merged[i] == i``: not merged).
    host
        Per node, its host's number (``[0, len(host_group))``).
    host_group
        Per host, its group: hosts of one group may have pages collapsed together.
    min_links
        The fewest distinct out-link targets two nodes must share to be collapsed.

    Returns
    -------
    ContractedGraph
        Representatives, contracted edges with multiplicity, and the number of rounds.

    Raises
    ------
    ParameterError
        On arrays of the wrong length, node or host numbers out of range, a cycle in
        ``merged``, or ``min_links < 1``.

    Examples
    --------
    Two mirror sites, pages 0-2 on host 0 and 3-5 on host 1; the leaves are known mirrors, and
    the index pages 0 and 3 fold once their links point to the same nodes:

    >>> graph = contract_graph(
    ...     np.array([0, 0, 3, 3]), np.array([1, 2, 4, 5]), 6,
    ...     merged=np.array([0, 1, 2, 3, 1, 2]), host=np.array([0, 0, 0, 1, 1, 1]),
    ...     host_group=np.array([0, 0]))
    >>> graph.representative.tolist(), graph.rounds
    ([0, 1, 2, 0, 1, 2], 1)
    >>> graph.source.tolist(), graph.target.tolist(), graph.count.tolist()
    ([0, 0], [1, 2], [2, 2])
    """
    source, target, merged, host, host_group = _checked(
        source, target, num_nodes, merged, host, host_group, min_links
    )
    rep = _resolve(merged)
    node_group = host_group[host]
    rounds = 0
    while True:
        winner = _collapse_round(rep, source, target, host, node_group, min_links)
        if winner is None:
            break
        rep = winner[rep]
        rounds += 1
    edge_source, edge_target, count = _contracted_edges(rep, source, target)
    return ContractedGraph(
        representative=rep, source=edge_source, target=edge_target, count=count, rounds=rounds
    )


def _checked(
    source: I64Array,
    target: I64Array,
    num_nodes: int,
    merged: I64Array,
    host: I64Array,
    host_group: I64Array,
    min_links: int,
) -> tuple[I64Array, I64Array, I64Array, I64Array, I64Array]:
    """The arrays as contiguous int64, after checking lengths and ranges."""
    if num_nodes < 0:
        raise ParameterError(f"num_nodes: must be at least 0, got {num_nodes}")
    if min_links < 1:
        raise ParameterError(f"min_links: must be at least 1, got {min_links}")
    arrays = []
    for name, array, length, bound in (
        ("source", source, None, num_nodes),
        ("target", target, None, num_nodes),
        ("merged", merged, num_nodes, num_nodes),
        ("host", host, num_nodes, None),
        ("host_group", host_group, None, None),
    ):
        values = np.ascontiguousarray(array, dtype=np.int64)
        if values.ndim != 1 or (length is not None and values.shape[0] != length):
            want = "one per node" if length is not None else "a 1-d array"
            raise ParameterError(f"{name}: need {want} ({length}), got shape {values.shape}")
        limit = len(host_group) if name == "host" else bound
        if values.size and (values.min() < 0 or (limit is not None and values.max() >= limit)):
            raise ParameterError(
                f"{name}: values must be in [0, {limit}), got {values.min()}..{values.max()}"
            )
        arrays.append(values)
    if arrays[0].shape != arrays[1].shape:
        raise ParameterError(
            f"source, target: need equal lengths, got {arrays[0].size} and {arrays[1].size}"
        )
    return arrays[0], arrays[1], arrays[2], arrays[3], arrays[4]


def _resolve(merged: I64Array) -> I64Array:
    """Each node's final representative, by pointer jumping; a cycle is an error."""
    rep = merged.copy()
    for _ in range(max(1, int(merged.size).bit_length() + 1)):
        nxt = rep[rep]
        if np.array_equal(nxt, rep):
            break
        rep = nxt
    if rep.size and not np.array_equal(merged[rep], rep):
        bad = int(np.flatnonzero(merged[rep] != rep)[0])
        raise ParameterError(
            f"merged: node {bad} is on a cycle of merges; every chain must end at a node i "
            "with merged[i] == i"
        )
    return rep


def _run_starts(*keys: I64Array | U64Array) -> BoolArray:
    """True where a run of equal (sorted) key tuples begins."""
    n = keys[0].shape[0]
    start = np.zeros(n, dtype=bool)
    if n:
        start[0] = True
        for key in keys:  # over the few key columns
            start[1:] |= key[1:] != key[:-1]
    return start


def _collapse_round(
    rep: I64Array,
    source: I64Array,
    target: I64Array,
    host: I64Array,
    node_group: I64Array,
    min_links: int,
) -> I64Array | None:
    """One round: ``winner[r]`` per current node, or None when nothing collapses."""
    s = rep[source]
    t = rep[target]
    t = np.where(t == s, _SELF, t)
    order = np.lexsort((t, s))
    s, t = s[order], t[order]
    first = _run_starts(s, t)
    s, t = s[first], t[first]  # distinct (node, link target) pairs, sorted
    node_start = np.flatnonzero(_run_starts(s))
    if node_start.size < 2:
        return None
    nodes = s[node_start]
    size = np.diff(np.append(node_start, s.size))
    shifted = (t + 2).astype(np.uint64)
    h1 = np.add.reduceat(fmix64(shifted), node_start)
    h2 = np.add.reduceat(fmix64(shifted * FMIX_M1 + np.uint64(0x9E3779B97F4A7C15)), node_start)
    eligible = size >= min_links
    nodes, node_start, size, h1, h2 = (a[eligible] for a in (nodes, node_start, size, h1, h2))
    if nodes.size < 2:
        return None
    group = node_group[nodes]
    order = np.lexsort((nodes, h2, h1, size, group))
    nodes, node_start, size, group = nodes[order], node_start[order], size[order], group[order]
    run = np.cumsum(_run_starts(group, size, h1[order], h2[order])) - 1
    run_first = np.flatnonzero(_run_starts(run))
    leader = run_first[run]  # the first (smallest) node of each member's run
    # Element by element: each member's link list against its run leader's.
    rows = np.repeat(np.arange(nodes.size), size)
    within = np.arange(rows.size) - np.repeat(np.cumsum(size) - size, size)
    mismatch = t[node_start[rows] + within] != t[node_start[leader[rows]] + within]
    agrees = np.bincount(rows[mismatch], minlength=nodes.size) == 0
    member_host = np.where(agrees, host[nodes], -1)
    hosts_low = np.minimum.reduceat(
        np.where(agrees, member_host, np.iinfo(np.int64).max), run_first
    )
    hosts_high = np.maximum.reduceat(member_host, run_first)
    spans_hosts = (hosts_high > hosts_low)[run]
    collapse = agrees & spans_hosts & (nodes != nodes[leader])
    if not collapse.any():
        return None
    winner = np.arange(rep.size, dtype=np.int64)
    winner[nodes[collapse]] = nodes[leader[collapse]]
    return winner


def _contracted_edges(
    rep: I64Array, source: I64Array, target: I64Array
) -> tuple[I64Array, I64Array, I64Array]:
    """Distinct contracted edges without self-loops, sorted, with multiplicity."""
    s = rep[source]
    t = rep[target]
    keep = s != t
    s, t = s[keep], t[keep]
    order = np.lexsort((t, s))
    s, t = s[order], t[order]
    start = np.flatnonzero(_run_starts(s, t))
    count = np.diff(np.append(start, s.size)).astype(np.int64)
    return s[start], t[start], count
