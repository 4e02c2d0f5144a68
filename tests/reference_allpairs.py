"""Exact all-pairs Jaccard above a threshold: the ground truth of the recall tests.

Two ways, neither using neardup (its shingle hashing aside, when it made the sets):

* :func:`brute_force_pairs`: every pair, Python set operations. For small samples, and to
  check the second;
* :func:`all_pairs_above`: an inverted index (element -> documents) with prefix filtering,
  in plain NumPy, for corpora of thousands of documents. If ``J(A, B) >= t`` then
  ``|A ∩ B| >= t |A|`` (as ``|A ∪ B| >= |A|``), so with every set's elements ordered by one
  common order (rarest first), the first ``|A| - ceil(t |A|) + 1`` elements of ``A`` and those
  of ``B`` share an element (Bayardo, Ma and Srikant, "Scaling up all pairs similarity
  search", WWW 2007). Only pairs sharing a prefix element are candidates; each is counted
  exactly. No pair is missed and no estimate is involved.

Also the benchmarks' ground truth (``bench/dedup_vs_peers.py``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence, Set
from typing import Protocol

import numpy as np

Pairs = dict[tuple[int, int], float]


class FlatSets(Protocol):
    """Sets as one flat array of sorted distinct elements per document and its offsets
    (``neardup.text.ShingleSets`` is one)."""

    @property
    def hashes(self) -> np.ndarray: ...
    @property
    def offsets(self) -> np.ndarray: ...


def brute_force_pairs(sets: Sequence[Set[Hashable]], threshold: float) -> Pairs:
    """Every pair ``(a, b)``, ``a < b``, of non-empty sets with ``|A ∩ B| / |A ∪ B| >= t``."""
    out: Pairs = {}
    for a in range(len(sets)):
        for b in range(a + 1, len(sets)):
            union = len(sets[a] | sets[b])
            if union and sets[a] and sets[b]:
                jaccard = len(sets[a] & sets[b]) / union
                if jaccard >= threshold:
                    out[(a, b)] = jaccard
    return out


def _flat(sets: FlatSets | Iterable[Iterable[int]]) -> tuple[np.ndarray, np.ndarray]:
    """``(elements, offsets)``: each document's distinct elements, sorted, one after another."""
    if hasattr(sets, "hashes") and hasattr(sets, "offsets"):
        elements = np.asarray(sets.hashes, dtype=np.uint64)
        offsets = np.asarray(sets.offsets, dtype=np.int64)
    else:
        parts = [sorted({int(x) for x in s}) for s in sets]
        elements = np.array([x for p in parts for x in p], dtype=np.uint64)
        offsets = np.cumsum([0] + [len(p) for p in parts], dtype=np.int64)
    doc_of = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
    new_doc = doc_of[1:] != doc_of[:-1]
    if not np.all(new_doc | (elements[1:] > elements[:-1])):  # not yet sorted and distinct
        order = np.lexsort((elements, doc_of))
        elements, doc_of = elements[order], doc_of[order]
        new_doc = doc_of[1:] != doc_of[:-1]
    keep = np.ones(elements.shape[0], dtype=bool)
    keep[1:] = new_doc | (elements[1:] != elements[:-1])
    sizes = np.bincount(doc_of[keep], minlength=offsets.shape[0] - 1)
    return elements[keep], np.r_[0, np.cumsum(sizes)].astype(np.int64)


def _pairs_within_groups(members: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``uint64`` codes ``a * 2^32 + b`` of every pair ``a < b`` within each group, groups of
    one size at a time (members ascending within each group)."""
    codes = [np.empty(0, dtype=np.uint64)]
    for size in np.unique(sizes[sizes >= 2]).tolist():
        chosen = starts[sizes == size]
        block = members[chosen[:, None] + np.arange(size)[None, :]]  # one row per group
        i, j = np.triu_indices(size, 1)
        first, second = block[:, i].ravel(), block[:, j].ravel()
        codes.append((first.astype(np.uint64) << np.uint64(32)) | second.astype(np.uint64))
    return np.unique(np.concatenate(codes))


def all_pairs_above(sets: FlatSets | Iterable[Iterable[int]], threshold: float) -> Pairs:
    """Every pair ``(a, b)``, ``a < b``, of non-empty sets with exact Jaccard >= ``threshold``.

    ``sets``: integer sets, as :class:`FlatSets` or one iterable per document.
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1]; got {threshold}")
    elements, offsets = _flat(sets)
    num_docs = offsets.shape[0] - 1
    sizes = np.diff(offsets)
    doc_of = np.repeat(np.arange(num_docs, dtype=np.int64), sizes)
    # The common order: rarest element first (ties by value), within each document; as one
    # int64 key per element (document, frequency, value's rank), which sorts faster than three.
    distinct, element_id, frequency = np.unique(elements, return_inverse=True, return_counts=True)
    rarity = frequency[element_id].astype(np.int64) * distinct.shape[0] + element_id
    order = np.argsort(doc_of * (int(rarity.max(initial=0)) + 1) + rarity, kind="stable")
    rank = np.arange(order.shape[0]) - np.repeat(offsets[:-1], sizes)
    # Prefix of |A| - ceil(t |A|) + 1 elements; the ceiling taken 1e-9 low can only lengthen it.
    prefix = sizes - np.ceil(threshold * sizes - 1e-9).astype(np.int64) + 1
    chosen = order[rank < np.repeat(prefix, sizes)]
    # The inverted index of the prefixes: element -> the documents (ascending) holding it.
    by_element = np.argsort(element_id[chosen] * num_docs + doc_of[chosen], kind="stable")
    index_elements = element_id[chosen][by_element]
    index_docs = doc_of[chosen][by_element]
    starts = np.flatnonzero(np.r_[True, index_elements[1:] != index_elements[:-1]])
    group_sizes = np.diff(np.r_[starts, index_elements.shape[0]])
    codes = _pairs_within_groups(index_docs, starts, group_sizes)
    first = (codes >> np.uint64(32)).astype(np.int64)
    second = (codes & np.uint64(0xFFFFFFFF)).astype(np.int64)
    # Exact intersections, one document's candidates at a time: its partners' elements, each
    # looked up in its own sorted set, counted per partner.
    out: Pairs = {}
    if first.shape[0] == 0:
        return out
    bounds = np.flatnonzero(np.r_[True, first[1:] != first[:-1], True])
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        a = int(first[lo])
        partners = second[lo:hi]
        own = elements[offsets[a] : offsets[a + 1]]
        lengths = sizes[partners]
        positions = np.repeat(offsets[partners] - np.cumsum(lengths) + lengths, lengths)
        theirs = elements[positions + np.arange(positions.shape[0])]
        at = np.minimum(np.searchsorted(own, theirs), own.shape[0] - 1)
        found = own[at] == theirs
        shared = np.bincount(np.repeat(np.arange(partners.shape[0]), lengths)[found],
                             minlength=partners.shape[0])  # fmt: skip
        jaccard = shared / (sizes[a] + lengths - shared)
        for b, value in zip(partners.tolist(), jaccard.tolist(), strict=True):
            if value >= threshold:
                out[(a, b)] = value
    return out
