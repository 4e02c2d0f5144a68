"""Clustering: verified pairs become connected components, each with one representative."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from neardup._kernels.cluster import component_roots
from neardup._types import BoolArray, I64Array

__all__ = ["Clusters", "connected_components", "representatives", "union_pairs"]


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
    """

    labels: I64Array
    keep: BoolArray

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
    first = np.ascontiguousarray(first, dtype=np.int64)
    second = np.ascontiguousarray(second, dtype=np.int64)
    joined = np.empty(first.shape[0], dtype=bool)
    labels = np.asarray(component_roots(num_docs, first, second, joined), dtype=np.int64)
    return labels, joined


def representatives(
    labels: I64Array, keep: Literal["first", "longest"] = "first", lengths: I64Array | None = None
) -> BoolArray:
    """One kept document per cluster.

    ``"first"`` keeps the smallest document of each cluster; ``"longest"`` keeps the one with
    the largest ``lengths`` entry, ties going to the smaller document.
    """
    num_docs = labels.shape[0]
    if keep == "first":
        return np.asarray(labels == np.arange(num_docs))
    if lengths is None:
        raise ValueError('representatives(keep="longest") needs lengths.')
    order = np.lexsort((np.arange(num_docs), -np.asarray(lengths), labels))
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
    return Clusters(labels=labels, keep=representatives(labels, keep, lengths))
