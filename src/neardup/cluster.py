"""Clustering: verified pairs become clusters, each with one representative.

Connected components (single link) are the first step; :func:`center_clusters` then keeps in
each cluster only the documents verified against its representative, so that a chain
A ~ B ~ C does not join A and C when they share little.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Literal

import numpy as np

from neardup._kernels import cluster as kernels
from neardup._kernels.cluster import assign_to_centers
from neardup._parallel import in_blocks
from neardup._types import BoolArray, F64Array, I64Array
from neardup.errors import ParameterError

if TYPE_CHECKING:
    from neardup.keep import KeepValues

__all__ = [
    "Clusters",
    "UnionFind",
    "center_clusters",
    "connected_components",
    "preference_order",
    "representative_of",
    "representatives",
    "union_pairs",
]


@dataclass(frozen=True, slots=True)
class Clusters:
    """A partition of documents ``0 .. num_docs - 1``.

    Attributes
    ----------
    labels
        ``labels[d]`` is the smallest document of ``d``'s cluster, so labels are the same
        whatever the order of the pairs.
    keep
        ``keep[d]`` is true for exactly one document per cluster, its representative.
    similarity
        ``similarity[d]``: the similarity of ``d`` to its cluster's representative (1 for the
        representative), in the measure verification used; NaN where it was not measured
        (:func:`connected_components` measures nothing).
    cosine
        ``cosine[d]``: the embeddings' cosine of ``d`` to its representative, where a run
        measures it beside the similarity (``--method minhash+embedding``); else None.
    """

    labels: I64Array
    keep: BoolArray
    similarity: F64Array
    cosine: F64Array | None = None

    @property
    def num_docs(self) -> int:
        """Documents partitioned."""
        return int(self.labels.shape[0])

    def sizes(self) -> I64Array:
        """``sizes[d]``: the size of the cluster whose label is ``d`` (0 if none)."""
        return np.bincount(self.labels, minlength=self.num_docs)

    @property
    def num_clusters(self) -> int:
        """Clusters, singletons included."""
        return int(np.count_nonzero(self.sizes()))

    @property
    def num_duplicate_clusters(self) -> int:
        """Clusters of two or more documents."""
        return int(np.count_nonzero(self.sizes() > 1))

    def representative_of(self) -> I64Array:
        """``representative_of()[d]``: the kept document of ``d``'s cluster."""
        return representative_of(self.labels, self.keep)

    def min_similarity(self) -> F64Array:
        """``min_similarity()[d]``: the least similarity to the representative in ``d``'s cluster.

        Below the threshold, the cluster chained: some member joined through others, not on its
        own likeness to the representative. NaN where a similarity was not measured.
        """
        least = np.ones(self.num_docs)
        np.minimum.at(least, self.labels, self.similarity)
        return least[self.labels]


def representative_of(labels: I64Array, keep: BoolArray) -> I64Array:
    """``representative_of(labels, keep)[d]``: the kept document of ``d``'s cluster.

    Examples
    --------
    >>> representative_of(np.array([0, 0, 2, 0]), np.array([False, True, True, False])).tolist()
    [1, 1, 2, 1]
    """
    by_label = np.zeros(labels.shape[0], dtype=np.int64)
    kept = np.flatnonzero(keep)
    by_label[labels[kept]] = kept
    return by_label[labels]


class UnionFind:
    """Components of items ``0 .. num_items - 1`` as pairs join them: one ``int64`` an item.

    Each component is known by its smallest item, whatever the order of the pairs.

    Examples
    --------
    >>> components = UnionFind(4)
    >>> measured, joined = components.join(np.array([0, 1, 0]), np.array([1, 2, 2]))
    >>> joined.tolist(), components.labels().tolist()
    ([True, True, False], [0, 0, 0, 3])
    >>> components.connected(np.array([0, 0]), np.array([2, 3])).tolist()
    [True, False]
    """

    def __init__(self, num_items: int) -> None:
        self._parent = np.arange(num_items, dtype=np.int64)

    def connected(self, first: I64Array, second: I64Array) -> BoolArray:
        """Whether each pair's items are in one component already."""
        out = np.empty(first.shape[0], dtype=bool)
        run = partial(kernels.connected, self._parent, _int64(first), _int64(second), out)
        in_blocks(run, first.shape[0])
        return out

    def join(
        self,
        first: I64Array,
        second: I64Array,
        accepted: BoolArray | None = None,
        *,
        skip_joined: bool = False,
    ) -> tuple[BoolArray, BoolArray]:
        """Join the components of the pairs (those ``accepted``: all by default), in order.

        Returns ``(measured, joined)`` per pair: ``joined``, the pair merged two components
        (those pairs form a spanning forest: the first pair, in this order, to connect each
        item to its component); ``measured`` is false, with ``skip_joined``, for a pair whose
        items were already in one component when it was reached (whatever its similarity, it
        changes nothing), and true for every pair without.
        """
        count = first.shape[0]
        measured = np.empty(count, dtype=bool)
        joined = np.empty(count, dtype=bool)
        if accepted is None:
            accepted = np.ones(count, dtype=bool)
        kernels.join_in_order(
            self._parent, _int64(first), _int64(second), accepted, skip_joined, measured, joined
        )
        return measured, joined

    def labels(self) -> I64Array:
        """``labels[d]``: the smallest item of ``d``'s component (a read-only view, no copy)."""
        kernels.flatten(self._parent)
        view = self._parent.view()
        view.flags.writeable = False
        return view


def _int64(values: I64Array) -> I64Array:
    return np.ascontiguousarray(values, dtype=np.int64)


def union_pairs(num_docs: int, first: I64Array, second: I64Array) -> tuple[I64Array, BoolArray]:
    """Component labels (the smallest member) and, per pair, whether it joined two components.

    The pairs that joined components, taken in the given order, form a spanning forest: the
    first pair (in that order) to connect each document to its cluster. For pairs sorted
    ``(first, second)`` that is the minimum spanning forest under that order, which no other
    order of processing (or engine) can change.

    Examples
    --------
    >>> labels, joined = union_pairs(4, np.array([0, 1, 0]), np.array([1, 2, 2]))
    >>> labels.tolist(), joined.tolist()
    ([0, 0, 0, 3], [True, True, False])
    """
    components = UnionFind(num_docs)
    _, joined = components.join(first, second)
    return components.labels(), joined


def preference_order(
    num_docs: int,
    keep: Literal["first", "longest"] = "first",
    lengths: I64Array | None = None,
    values: KeepValues | None = None,
) -> I64Array:
    """The documents, those ``keep`` prefers as representatives first.

    ``"first"``: in input order; ``"longest"``: by decreasing ``lengths``, ties in input order.
    ``values`` (``keep_by``) order before either: by each field in turn, towards its
    preferred end, a document without a value after those with one, the rest in input order.
    """
    if values is not None:
        return _by_values(num_docs, values)
    if keep == "first":
        return np.arange(num_docs, dtype=np.int64)
    if lengths is None:
        raise ParameterError('keep="longest" needs lengths.')
    return np.lexsort((np.arange(num_docs), -np.asarray(lengths))).astype(np.int64)


def _by_values(num_docs: int, values: KeepValues) -> I64Array:
    """:func:`preference_order` by ``keep_by`` values: one stable sort of Arrow columns."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = {f"key{i}": column for i, column in enumerate(values.columns)}
    table = pa.table({**columns, "doc": pa.array(np.arange(num_docs, dtype=np.int64))})
    keys = [
        (name, "descending" if direction == "max" else "ascending")
        for name, direction in zip(columns, values.directions, strict=True)
    ]
    order = pc.sort_indices(table, sort_keys=[*keys, ("doc", "ascending")])  # nulls at the end
    ranked: I64Array = order.to_numpy().astype(np.int64)
    return ranked


def representatives(
    labels: I64Array,
    keep: Literal["first", "longest"] = "first",
    lengths: I64Array | None = None,
    values: KeepValues | None = None,
) -> BoolArray:
    """One kept document per cluster, the first of :func:`preference_order` in each.

    ``"first"`` keeps the smallest document of each cluster; ``"longest"`` keeps the one with
    the largest ``lengths`` entry, ties going to the smaller document; ``values`` the one
    their fields prefer.
    """
    num_docs = labels.shape[0]
    if keep == "first" and values is None:
        return np.asarray(labels == np.arange(num_docs))
    rank = np.empty(num_docs, dtype=np.int64)
    rank[preference_order(num_docs, keep, lengths, values)] = np.arange(num_docs)
    order = np.lexsort((rank, labels))
    is_first = np.ones(num_docs, dtype=bool)
    is_first[1:] = labels[order][1:] != labels[order][:-1]
    is_kept = np.zeros(num_docs, dtype=bool)
    is_kept[order[is_first]] = True
    return is_kept


def connected_components(
    num_docs: int,
    first: I64Array,
    second: I64Array,
    *,
    keep: Literal["first", "longest"] = "first",
    lengths: I64Array | None = None,
) -> Clusters:
    """Cluster documents by the pairs ``(first[i], second[i])`` and pick representatives.

    Parameters
    ----------
    keep
        ``"first"`` keeps the smallest document of each cluster; ``"longest"`` keeps the one
        with the largest ``lengths`` entry, ties going to the smaller document.

    Examples
    --------
    >>> c = connected_components(5, np.array([3, 1]), np.array([4, 3]))
    >>> c.labels.tolist(), c.keep.tolist()
    ([0, 1, 2, 1, 1], [True, True, True, False, False])
    >>> lengths = np.array([1, 1, 1, 1, 9])
    >>> connected_components(5, np.array([3, 1]), np.array([4, 3]), keep="longest",
    ...                      lengths=lengths).keep.tolist()
    [True, False, True, False, True]
    """
    labels, _ = union_pairs(num_docs, first, second)
    return Clusters(
        labels=labels,
        keep=representatives(labels, keep, lengths),
        similarity=np.full(num_docs, np.nan),
    )


def center_clusters(
    components: Clusters,
    first: I64Array,
    second: I64Array,
    pair_similarity: F64Array,
    threshold: float,
    *,
    order: I64Array | None = None,
    follows: I64Array | None = None,
) -> Clusters:
    """Clusters that do not chain: each member verified against its representative.

    A member of ``components`` whose similarity to its representative
    (``components.similarity``) reaches ``threshold`` stays. The others are taken in ``order``
    (the keep rule's preference, :func:`preference_order`; default input order): each joins
    the center it has a verified pair with (``first``, ``second``, ``pair_similarity``) at the
    threshold with the highest similarity, or becomes the center of a new cluster that later
    ones may join. Centers are the representatives; a cluster's label is its smallest member.

    ``components.similarity`` must be measured for every document that is not a copy
    (``follows[d] == d``). ``follows[d]`` (default ``d``) names the document whose place ``d``
    takes: an exact duplicate follows the first of its group, with its similarity, so exact
    copies are never split. The result depends on the documents' numbers, never on the order
    of the pairs.

    Examples
    --------
    A chain 0 ~ 1 ~ 2 where 2 is far from 0, and 3 ~ 2:

    >>> chain = Clusters(labels=np.zeros(4, dtype=np.int64),
    ...                  keep=np.array([True, False, False, False]),
    ...                  similarity=np.array([1.0, 0.9, 0.4, 0.3]))
    >>> c = center_clusters(chain, np.array([0, 1, 2]), np.array([1, 2, 3]),
    ...                     np.array([0.9, 0.85, 0.95]), 0.8)
    >>> c.labels.tolist(), c.keep.tolist(), c.similarity.tolist()
    ([0, 0, 2, 2], [True, False, True, False], [1.0, 0.9, 1.0, 0.95])
    """
    num_docs = components.num_docs
    docs = np.arange(num_docs, dtype=np.int64)
    follows = docs if follows is None else np.asarray(follows, dtype=np.int64)
    order = docs if order is None else np.asarray(order, dtype=np.int64)
    similarity = components.similarity.astype(np.float64, copy=True)
    center = components.representative_of().copy()
    is_leader = follows == docs
    left = is_leader & (similarity < threshold)
    center[left] = -1
    source = np.concatenate([first, second]).astype(np.int64)
    target = np.concatenate([second, first]).astype(np.int64)
    weight = np.concatenate([pair_similarity, pair_similarity]).astype(np.float64)
    mine = np.flatnonzero(left[source])
    by_source = mine[np.argsort(source[mine], kind="stable")]
    adj_offsets = np.zeros(num_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(source[by_source], minlength=num_docs), out=adj_offsets[1:])
    assign_to_centers(
        np.ascontiguousarray(order[left[order]]),
        center,
        similarity,
        adj_offsets,
        np.ascontiguousarray(target[by_source]),
        np.ascontiguousarray(weight[by_source]),
        float(threshold),
    )
    center = center[follows]
    similarity = similarity[follows]
    smallest = np.full(num_docs, num_docs, dtype=np.int64)
    np.minimum.at(smallest, center, docs)
    return Clusters(labels=smallest[center], keep=center == docs, similarity=similarity)
