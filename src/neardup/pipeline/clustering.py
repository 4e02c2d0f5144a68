"""The cluster stage: a representative per component, every member's similarity to it measured.

With ``cluster="center"``, members below the threshold move to another center or their own (no
chaining); the pairs that joined two clusters form a spanning forest.
"""

from __future__ import annotations

import numpy as np

from neardup._types import BoolArray, F64Array, I64Array
from neardup.cluster import (
    Clusters,
    UnionFind,
    center_clusters,
    preference_order,
    representatives,
    union_pairs,
)
from neardup.pairs import CandidatePairs
from neardup.params import DedupConfig
from neardup.pipeline.scoring import EitherScorer, PairScorer, Scorer, measured
from neardup.pipeline.sketching import Sketched
from neardup.pipeline.verification import (
    VERIFY_BLOCK_PAIRS,
    VerifiedPairs,
)


def cluster_joined(
    sketched: Sketched,
    exact_first: I64Array,
    components: UnionFind,
    pairs: VerifiedPairs,
    joined: BoolArray,
    scorer: Scorer,
) -> tuple[Clusters, BoolArray]:
    """Clusters of the exact links and the verified pairs, as ``config.cluster`` says.

    ``components``: the documents joined by the verified ``pairs`` (``joined``: per pair,
    whether it joined two components, taken in order); the exact copies join their group's
    first document here. ``"components"``: the connected components; ``"center"``:
    :func:`~neardup.cluster.center_clusters` on them, which needs every accepted pair in
    ``pairs`` (:func:`measures_every_candidate`). Each document's similarity to its
    representative is measured by ``scorer`` (of the run's texts and config), for the first of
    each exact group; its copies share it.
    With an :class:`EitherScorer` the clusters also hold each document's cosine to its
    representative. Returns the clusters and, per pair, whether it joined two clusters (under
    ``"center"``, of the pairs within one cluster, in their order): a spanning forest.
    """
    config = scorer.config
    num_docs = sketched.num_docs
    docs = np.arange(num_docs, dtype=np.int64)
    linked = exact_first != docs
    # A copy follows its group's first (an earlier document), which is in the component.
    labels = components.labels()[exact_first]
    keep = representatives(labels, config.keep, sketched.lengths, sketched.keep_values)
    similarity = np.ones(num_docs)
    vectors = scorer.vectors if isinstance(scorer, EitherScorer) else None
    cosine = np.ones(num_docs) if vectors is not None else None
    members = np.flatnonzero(~linked & ~keep)
    if isinstance(scorer, PairScorer):
        known = _measured_to_representative(pairs, labels, keep, config, similarity)
        members = members[~known[members]]
    if members.shape[0]:
        representative = np.zeros(num_docs, dtype=np.int64)  # by label
        representative[labels[keep]] = np.flatnonzero(keep)
        for lo in range(0, members.shape[0], VERIFY_BLOCK_PAIRS):
            block = members[lo : lo + VERIFY_BLOCK_PAIRS]
            to_representative = CandidatePairs(first=representative[labels[block]], second=block)
            similarity[block] = scorer.similarity(to_representative)
            if vectors is not None and cosine is not None:
                cosine[block] = vectors.similarity(to_representative)
        del representative
    clusters = Clusters(
        labels=labels,
        keep=keep,
        similarity=similarity[exact_first],
        cosine=None if cosine is None else cosine[exact_first],
    )
    if config.cluster == "components":
        return clusters, joined
    clusters = center_clusters(
        clusters,
        pairs.first,
        pairs.second,
        measured(pairs.estimate, pairs.jaccard, config),
        config.lsh.threshold,
        order=preference_order(num_docs, config.keep, sketched.lengths, sketched.keep_values),
        follows=exact_first,
    )
    inside = clusters.labels[pairs.first] == clusters.labels[pairs.second]
    _, joined_inside = union_pairs(num_docs, pairs.first[inside], pairs.second[inside])
    joined = np.zeros(len(pairs), dtype=bool)
    joined[inside] = joined_inside
    return clusters, joined


def _measured_to_representative(
    pairs: VerifiedPairs,
    labels: I64Array,
    keep: BoolArray,
    config: DedupConfig,
    similarity: F64Array,
) -> BoolArray:
    """Per document, whether verification measured it against its representative already.

    Such a pair (one of ``pairs``, one document kept, both of one cluster by ``labels``)
    gives the member's ``similarity`` as the scorer would measure it again: the same sets,
    the same arithmetic. On dense corpora most members joined their cluster through their
    representative (dense 1M: three in four), so most of the cluster stage's reads go.
    """
    value = measured(pairs.estimate, pairs.jaccard, config)
    same = (labels[pairs.first] == labels[pairs.second]) & ~np.isnan(value)
    known = np.zeros(labels.shape[0], dtype=bool)
    for representative, member in ((pairs.first, pairs.second), (pairs.second, pairs.first)):
        found = same & keep[representative]
        similarity[member[found]] = value[found]
        known[member[found]] = True
    return known


def reported_pairs(joined: BoolArray, config: DedupConfig) -> BoolArray:
    """Which verified pairs ``config.pairs`` reports, given those that joined two clusters."""
    if config.pairs == "all":
        return np.ones(joined.shape[0], dtype=bool)
    if config.pairs == "spanning":
        return joined
    return np.zeros(joined.shape[0], dtype=bool)
