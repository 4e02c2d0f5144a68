"""The verify stage: the candidates in (first, second) order, measured and joined by a union-find.

A candidate already joined is not measured unless every pair is wanted
(:func:`measures_every_candidate`); the verification mode's rule (:func:`accepted`) decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from neardup._types import BoolArray, F64Array, I64Array
from neardup.cluster import (
    UnionFind,
)
from neardup.lsh.containment import second_contained
from neardup.pairs import CandidatePairs
from neardup.params import DedupConfig
from neardup.pipeline.scoring import MeasuredChunk, Scorer, measured, size_floor
from neardup.pipeline.shared import ProgressCallback
from neardup.summary import (
    histogram_counts,
)


@dataclass(frozen=True, slots=True)
class VerifiedPairs:
    """Near-duplicate pairs accepted by verification, with both similarity measures.

    ``jaccard`` is the exact similarity of the run's measure (:attr:`DedupConfig.measure`),
    NaN where it was not computed (``verify="signature"`` or ``"none"``).
    """

    first: I64Array
    second: I64Array
    estimate: F64Array
    jaccard: F64Array
    cosine: F64Array | None = None
    """The vectors' cosine beside the shingles' Jaccard (``--method minhash+embedding``)."""
    candidate_counts: I64Array | None = None
    """The candidates verified, by similarity (:func:`histogram_counts`); None for a subset."""

    def __len__(self) -> int:
        return int(self.first.shape[0])

    def subset(self, mask: BoolArray) -> VerifiedPairs:
        """The pairs where ``mask`` is true."""
        return VerifiedPairs(
            self.first[mask],
            self.second[mask],
            self.estimate[mask],
            self.jaccard[mask],
            None if self.cosine is None else self.cosine[mask],
        )

    def found_by(self, config: DedupConfig) -> NDArray[np.int8]:
        """Per pair, what reached its threshold, by code of :data:`~neardup.io.results.FOUND_BY`.

        Of a run that measures ``cosine`` beside the Jaccard (:attr:`DedupConfig.combined`):
        0 the Jaccard alone, 1 the cosine alone, 2 both.
        """
        assert self.cosine is not None
        by_shingles = accepted(self.estimate, self.jaccard, config)
        by_embedding = cosine_reached(self.cosine, config)
        return (2 * by_embedding + by_shingles - 1).astype(np.int8)

    def contained_first(self, lengths: I64Array) -> VerifiedPairs:
        """The pairs with their contained member first, the shorter by ``lengths``.

        As containment reports them (``pairs.jsonl``'s ``a``): ``first`` may then exceed
        ``second``.
        """
        swap = second_contained(self.first, self.second, lengths)
        return VerifiedPairs(
            np.where(swap, self.second, self.first),
            np.where(swap, self.first, self.second),
            self.estimate,
            self.jaccard,
            self.cosine,
        )


VERIFY_BLOCK_PAIRS = 1 << 21
"""Candidates :func:`verify_and_join` takes from the runs at a time (about 80 MB with the
arrays made from them); those already joined are dropped before their texts are read."""


VERIFY_ROUND_PAIRS = 1 << 14
"""Candidates measured per round of :func:`verify_and_join`, within a chunk whose texts are
read and shingled already: a candidate whose documents the rounds before joined is not
measured (components clustering, pairs other than ``all``), so smaller rounds measure fewer
such candidates; each round pays a few kernel calls."""


@dataclass(frozen=True, slots=True)
class JoinedPairs:
    """What verification leaves: the components and the pairs that matter to the output.

    Attributes
    ----------
    components
        The documents joined by every accepted pair (the exact links not yet).
    pairs
        The accepted pairs kept, in ``(first, second)`` order: all of them
        (:func:`measures_every_candidate`), else those that joined two components.
    joined
        Per kept pair, whether it joined two components when the pairs were taken in order.
    num_candidates
        Candidate pairs taken.
    num_already_joined
        Candidates not measured: their documents were already in one component when reached.
    num_size_rejected
        Candidates rejected unmeasured when reached apart: their shingle sets' sizes alone keep
        their Jaccard similarity below the threshold (:func:`size_floor`).
    """

    components: UnionFind
    pairs: VerifiedPairs
    joined: BoolArray
    num_candidates: int
    num_already_joined: int
    num_size_rejected: int = 0


def measures_every_candidate(config: DedupConfig) -> bool:
    """Whether verification measures every candidate pair.

    It must for ``pairs="all"`` (every pair at the threshold is listed) and for
    ``cluster="center"`` (the centers are chosen among all the pairs). Connected components
    with the spanning pairs (or none) are decided by fewer: a candidate whose documents are
    already joined, by the pairs before it in ``(first, second)`` order, changes neither the
    components nor the spanning forest, and is not measured.
    """
    return config.pairs == "all" or config.cluster != "components"


def verify_and_join(
    candidates: Iterable[tuple[I64Array, I64Array]],
    num_docs: int,
    scorer: Scorer,
    progress: ProgressCallback | None = None,
) -> JoinedPairs:
    """Verify candidate pairs, given in ``(first, second)`` order a block at a time, and join.

    Unless :func:`measures_every_candidate`, the candidates whose documents are already
    joined are left out of each block, the rest read in memory-bounded chunks
    (:meth:`PairScorer.chunks`: each document's text read once a chunk, or its shingle set
    made once a run) and measured in rounds of :data:`VERIFY_ROUND_PAIRS`, each round
    leaving out what the rounds before joined; the pairs ``config.verify_mode`` accepts are
    joined in order. The result is the same as measuring every candidate first and joining
    after (the components, the spanning pairs), and what is held grows with the documents and
    the pairs kept, not with the candidates. The candidate histogram counts the pairs measured
    under the order's rule, not those measured before they were known to be joined, so it
    depends on no block, chunk or round size.
    """
    joining = _Joining(num_docs, scorer.config)
    every = joining.every
    num_candidates = 0
    for block_first, block_second in _blocks(candidates, VERIFY_BLOCK_PAIRS):
        num_candidates += block_first.shape[0]
        apart = slice(None) if every else ~joining.components.connected(block_first, block_second)
        first, second = block_first[apart], block_second[apart]
        joining.num_already_joined += block_first.shape[0] - first.shape[0]
        for chunk in scorer.chunks(CandidatePairs(first=first, second=second), candidates=True):
            step = VERIFY_ROUND_PAIRS if scorer.measures_in_parts else chunk.hi - chunk.lo
            for lo in range(chunk.lo, chunk.hi, step):
                joining.take(chunk, first, second, lo, min(lo + step, chunk.hi))
            del chunk  # its texts or sets go before the next chunk's are read
        if progress is not None:
            progress(num_candidates)
    return joining.result(num_candidates)


class _Joining:
    """What :func:`verify_and_join` builds as it goes: the components, the pairs kept, counts."""

    def __init__(self, num_docs: int, config: DedupConfig) -> None:
        self.config = config
        self.every = measures_every_candidate(config)
        self.components = UnionFind(num_docs)
        self.kept: list[VerifiedPairs] = []
        self.joined: list[BoolArray] = []
        self.counts = histogram_counts(np.empty(0))
        self.num_already_joined = 0
        self.num_size_rejected = 0
        self.floor = size_floor(config)

    def take(
        self, chunk: MeasuredChunk, first: I64Array, second: I64Array, lo: int, hi: int
    ) -> None:
        """Measure pairs ``lo .. hi - 1`` of the chunk (those still apart) and join them."""
        config, count = self.config, hi - lo
        first, second = first[lo:hi], second[lo:hi]
        todo = (
            np.ones(count, dtype=bool) if self.every else ~self.components.connected(first, second)
        )
        at = np.flatnonzero(todo)
        values = chunk.measure(lo + at)
        estimate, jaccard = np.full(count, np.nan), np.full(count, np.nan)
        estimate[at], jaccard[at] = values.estimate, values.exact
        passed = accepted(estimate, jaccard, config)
        cosine = None
        if values.cosine is not None:
            cosine = np.full(count, np.nan)
            cosine[at] = values.cosine
            passed |= cosine_reached(cosine, config)
        passed &= todo
        decided, joined = self.components.join(first, second, passed, skip_joined=not self.every)
        similarity = measured(estimate, jaccard, config)[decided]
        self.counts += histogram_counts(similarity)
        self.num_already_joined += count - int(decided.sum())
        if self.floor is not None:  # not measured: below the floor by the sets' sizes
            self.num_size_rejected += int(np.isnan(similarity).sum())
        chosen = passed if self.every else joined
        pairs = VerifiedPairs(first, second, estimate, jaccard, cosine)
        self.kept.append(pairs.subset(chosen))
        self.joined.append(joined[chosen])

    def result(self, num_candidates: int) -> JoinedPairs:
        """The components, the pairs kept in order, and the counts."""
        kept = self.kept
        ints, reals = np.empty(0, dtype=np.int64), np.empty(0)
        cosine = None
        if self.config.combined:
            cosine = np.concatenate([reals, *(p.cosine for p in kept if p.cosine is not None)])
        pairs = VerifiedPairs(
            np.concatenate([ints, *(p.first for p in kept)]),
            np.concatenate([ints, *(p.second for p in kept)]),
            np.concatenate([reals, *(p.estimate for p in kept)]),
            np.concatenate([reals, *(p.jaccard for p in kept)]),
            cosine,
            candidate_counts=self.counts,
        )
        return JoinedPairs(
            components=self.components,
            pairs=pairs,
            joined=np.concatenate([np.empty(0, dtype=bool), *self.joined]),
            num_candidates=num_candidates,
            num_already_joined=self.num_already_joined,
            num_size_rejected=self.num_size_rejected,
        )


def _blocks(
    blocks: Iterable[tuple[I64Array, I64Array]], size: int
) -> Iterator[tuple[I64Array, I64Array]]:
    """The pairs of ``blocks`` again, at most ``size`` at a time."""
    for first, second in blocks:
        for lo in range(0, first.shape[0], size):
            yield first[lo : lo + size], second[lo : lo + size]


def accepted(estimate: F64Array, jaccard: F64Array, config: DedupConfig) -> BoolArray:
    """Which pairs verification accepts, given their estimated and exact similarities.

    ``config.verify_mode`` says: ``"exact"``, the exact similarity reaches the threshold;
    ``"signature"``, the estimate does; ``"none"``, every candidate passes.

    Examples
    --------
    >>> estimate, jaccard = np.array([0.9, 0.7]), np.array([0.7, 0.9])
    >>> accepted(estimate, jaccard, DedupConfig()).tolist()
    [False, True]
    >>> accepted(estimate, jaccard, DedupConfig(verify="signature")).tolist()
    [True, False]
    """
    mode = config.verify_mode
    if mode == "exact":
        return np.asarray(jaccard >= config.lsh.threshold)
    if mode == "signature":
        return np.asarray(estimate >= config.lsh.threshold)
    return np.ones(estimate.shape[0], dtype=bool)


def cosine_reached(cosine: F64Array, config: DedupConfig) -> BoolArray:
    """Which pairs' embeddings reach ``config``'s cosine threshold.

    ``minhash+embedding`` joins these beside those :func:`accepted` accepts; a NaN (not
    measured) reaches nothing.
    """
    assert config.cosine_threshold is not None
    return np.asarray(cosine >= config.cosine_threshold)
