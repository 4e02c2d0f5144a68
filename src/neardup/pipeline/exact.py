"""The exact stage: documents whose normalised texts are identical, grouped by fingerprint."""

from __future__ import annotations

import numpy as np

from neardup._types import BoolArray, I64Array, U64Array
from neardup.candidates import SetJoin, candidate_scheme
from neardup.io.records import Ids
from neardup.lsh.banding import equal_key_groups
from neardup.pairs import CandidatePairs
from neardup.params import DedupConfig
from neardup.pipeline.shared import TextStore
from neardup.text.shingle import Shingler


def duplicate_ids(ids: Ids) -> tuple[int, int] | None:
    """Two documents with the same id, the later as early as can be; None when ids are unique.

    Examples
    --------
    >>> duplicate_ids(Ids.of(["a", "b", "c", "b", "a"]))
    (1, 3)
    >>> duplicate_ids(Ids.of(["a", "b"])) is None
    True
    """
    hashes = ids.hashes()
    members, bounds = equal_key_groups(
        np.ascontiguousarray(hashes[:, 0]), np.ascontiguousarray(hashes[:, 1])
    )
    firsts, seconds = members[bounds[:-1]], members[bounds[:-1] + 1]
    for g in np.argsort(seconds, kind="stable").tolist():
        a, b = int(firsts[g]), int(seconds[g])
        if ids[a] == ids[b]:  # not two ids whose hashes collide
            return a, b
    return None


def exact_groups(
    fingerprints: U64Array, alone: BoolArray | None = None
) -> tuple[I64Array, BoolArray]:
    """Group documents with equal 128-bit fingerprints.

    Returns ``(group_first, is_first)``: for each document the first document (input order) with
    the same fingerprint, and whether it is that first document itself. Documents marked
    ``alone`` (those without a token) are each a group of their own.

    Examples
    --------
    >>> fp = np.array([[1, 2], [3, 4], [1, 2]], dtype=np.uint64)
    >>> first, is_first = exact_groups(fp)
    >>> first.tolist(), is_first.tolist()
    ([0, 1, 0], [True, True, False])
    """
    num_docs = fingerprints.shape[0]
    group_first = np.arange(num_docs, dtype=np.int64)
    members, bounds = equal_key_groups(
        np.ascontiguousarray(fingerprints[:, 0]), np.ascontiguousarray(fingerprints[:, 1])
    )
    sizes = np.diff(bounds)
    group_first[members] = np.repeat(members[bounds[:-1]], sizes)
    if alone is not None:
        group_first[alone] = np.flatnonzero(alone)
    return group_first, group_first == np.arange(num_docs)


def exact_candidates(
    texts: TextStore, active: BoolArray, lengths: I64Array, config: DedupConfig
) -> CandidatePairs:
    """Every pair of ``active`` documents whose shingle sets reach the threshold.

    The exact families (:class:`~neardup.candidates.SetJoin`: ``prefix``, ``containment``,
    where the shorter of two ``lengths`` is the contained): the active documents' texts are
    shingled together, so they and their sets must fit in memory (8 bytes per distinct
    shingle of each document, and about 40 bytes per element of the sets the filter keeps:
    :func:`~neardup.lsh.prefix.exact_set_pairs`,
    :func:`~neardup.lsh.containment.exact_containment_pairs`).
    """
    docs = np.flatnonzero(active)
    sets = Shingler(config.sketch.shingle, config.sketch.normalize).shingle_sets(texts.take(docs))
    scheme = candidate_scheme(config.sketch, config.lsh)
    assert isinstance(scheme, SetJoin)
    found = scheme.set_pairs(sets, lengths[docs])
    return CandidatePairs(first=docs[found.first], second=docs[found.second])
