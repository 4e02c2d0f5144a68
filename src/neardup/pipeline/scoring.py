"""How a candidate pair is measured: its estimate, and its exact similarity from its texts.

The texts (or shingle sets) are read back chunk by chunk, in bounded memory.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import numpy as np

from neardup._kernels.verify import number_distinct, pair_chunks, size_bounded
from neardup._types import Batch, BoolArray, F64Array, I64Array
from neardup.candidates import estimate as estimate_similarity
from neardup.errors import ParameterError
from neardup.io.setstore import ShingleSetStore, SketchedSets
from neardup.lsh.containment import second_contained
from neardup.pairs import CandidatePairs, Measured
from neardup.params import DedupConfig
from neardup.pipeline.shared import ProgressCallback, TextStore
from neardup.pipeline.sketching import keeps_sets
from neardup.semantic import (
    VectorScorer,
)
from neardup.sketch import IDFWeights, OPHSketcher, make_sketcher
from neardup.text.shingle import Shingler, ShingleSets
from neardup.text.spans import byte_pieces
from neardup.verify import exact_containment, exact_jaccard, exact_similarity

VERIFY_BYTES_PER_BYTE = 4
"""Memory a verification chunk holds per byte of its documents' text: the lines read again,
their decoded texts and the normalised ones while they are taken (three bytes), then the texts
and their shingle sets (made a few megabytes of text at a time; eight bytes a shingle, one
shingle a word: about 1.3 bytes per byte of English text, four for one-letter words)."""


def score_pairs(
    pairs: CandidatePairs,
    texts: TextStore,
    config: DedupConfig,
    idf: IDFWeights | None = None,
    progress: ProgressCallback | None = None,
) -> tuple[F64Array, F64Array]:
    """The estimated and (``verify="exact"``) exact similarity of each pair: :class:`PairScorer`."""
    with PairScorer(texts, config, idf) as scorer:
        return scorer.score(pairs, progress)


class PairScorer:
    """The estimated and (``verify="exact"``) exact similarity of pairs of one text store.

    Pairs are taken in chunks whose documents (texts, signature rows and shingle sets) fit in
    ``config.working_memory / 4`` (:meth:`chunks`); each chunk's texts come from ``texts`` once
    and are sketched again for the estimate (with OPH and exact verification, only for the
    pairs at the threshold, from their shingle sets; the other estimates are NaN). The exact
    similarity (:func:`~neardup.verify.exact_similarity`, weighing by ``idf`` for a TF-IDF
    SimHash) is NaN under the other verification modes. What every call needs (the sketcher,
    the texts' sizes, one scratch entry per document) is made once, so that many calls cost
    what their pairs cost; with OPH and exact verification, so is each document's shingle set
    (:class:`~neardup.io.setstore.ShingleSetStore`, a file in ``work_dir``), however many
    chunks it is in. Close the scorer (or use it in a ``with``) to release that file.

    Under containment (:attr:`DedupConfig.measure`) the exact value of a pair is the
    containment of its shorter document by ``lengths`` (required then) in the other
    (:func:`~neardup.lsh.containment.second_contained`), whichever order it is given in; there
    is no estimate.
    """

    def __init__(
        self,
        texts: TextStore,
        config: DedupConfig,
        idf: IDFWeights | None = None,
        work_dir: Path | None = None,
        lengths: I64Array | None = None,
        kept: SketchedSets | None = None,
    ) -> None:
        self.texts = texts
        self.config = config
        self.idf = idf
        self.sketcher = make_sketcher(config.sketch, idf)
        self._sizes = texts.sizes()
        if config.measure == "containment" and lengths is None:
            raise ParameterError(
                "PairScorer under containment needs the documents' lengths: the shorter of a "
                "pair is the contained one."
            )
        self.lengths = lengths
        self._mark = np.full(self._sizes.shape[0], -1, dtype=np.int64)
        self.sets: ShingleSetStore | None = None
        if keeps_sets(config):
            shingler = Shingler(config.sketch.shingle, config.sketch.normalize)
            self.sets = ShingleSetStore(
                self._sizes.shape[0],
                lambda docs: shingler.shingle_sets(texts.take(docs)),
                work_dir,
                kept,
            )

    def prepare(self, needed: BoolArray) -> None:
        """Make the shingle sets of the ``needed`` documents now, in document order.

        With OPH and exact verification (:attr:`sets`; else nothing to do). The texts are read
        in the order they lie in their files, a sixteenth of the working memory of text at a
        time, rather than scattered over the chunks of pairs: on an input larger than the page
        cache, one pass instead of a random read per document.
        """
        if self.sets is None:
            return
        docs = np.flatnonzero(needed)
        bounds = byte_pieces(self._sizes[docs], self.config.working_memory // 16)
        for lo, hi in itertools.pairwise(bounds):
            self.sets.make(docs[lo:hi])

    def distinct(self, docs: I64Array) -> tuple[I64Array, I64Array]:
        """The distinct documents of ``docs`` in order of first sight, and each one's place.

        Numbered through the scratch entry of each document (:func:`~neardup._kernels.verify.
        number_distinct`), in one pass rather than :func:`np.unique`'s sort. Given a chunk's
        first documents, then its second ones, the sets of both sides then lie in the order the
        pairs (sorted by their first) ask for them: the measuring reads them as a stream
        (dense 10M: verification 45.7 s numbered in document order, 38.5 s so).
        """
        distinct = np.empty(docs.shape[0], dtype=np.int64)
        local = np.empty(docs.shape[0], dtype=np.int64)
        count = number_distinct(docs, self._mark, distinct, local)
        return distinct[:count], local

    def close(self) -> None:
        """Release the shingle sets' file."""
        if self.sets is not None:
            self.sets.close()

    def __enter__(self) -> PairScorer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def measures_in_parts(self) -> bool:
        """Whether a chunk's pairs may be measured a part at a time at no extra cost.

        True for OPH with exact verification (the chunk's shingle sets are at hand); the
        other kinds measure a chunk's pairs at once (:meth:`ScoredChunk.measure` is then
        called once per chunk).
        """
        return self.sets is not None

    def score(
        self,
        pairs: CandidatePairs,
        progress: ProgressCallback | None = None,
        *,
        with_estimate: bool = True,
    ) -> tuple[F64Array, F64Array]:
        """``(estimate, exact)`` of each pair; ``progress`` told the pairs scored so far.

        ``with_estimate=False`` leaves the estimates NaN where the exact similarity is measured.
        """
        estimate = np.full(len(pairs), np.nan)
        jaccard = np.full(len(pairs), np.nan)
        for chunk in self.chunks(pairs):
            positions = np.arange(chunk.lo, chunk.hi)
            estimate[positions], jaccard[positions], _ = chunk.measure(
                positions, with_estimate=with_estimate
            )
            if progress is not None:
                progress(chunk.hi)
            del chunk  # its texts or sets go before the next chunk's are read
        return estimate, jaccard

    def similarity(self, pairs: CandidatePairs) -> F64Array:
        """The similarity verification goes by (:func:`measured`) of each pair, and no other."""
        exact = self.config.verify_mode == "exact"
        return measured(*self.score(pairs, with_estimate=not exact), self.config)

    def chunks(self, pairs: CandidatePairs, *, candidates: bool = False) -> Iterator[ScoredChunk]:
        """``pairs`` in consecutive chunks whose documents fit in a quarter of the memory.

        A document counts its shingle set's bytes once the set is made, else what its text
        costs (:data:`VERIFY_BYTES_PER_BYTE`). ``candidates``: the pairs are candidates that
        verification decides, so that those below :func:`size_floor` by their sets' sizes are not
        measured; where both sets are made already, their documents are not even read.
        """
        floor = size_floor(self.config) if candidates else None
        unread = np.empty(0, dtype=bool)
        if floor is not None and self.sets is not None:
            unread = np.empty(len(pairs), dtype=bool)
            size_bounded(self.sets.set_sizes, pairs.first, pairs.second, floor, unread)
        bounds = pair_chunks(
            pairs.first,
            pairs.second,
            self._sizes,
            self.sets.set_sizes if self.sets is not None else np.empty(0, dtype=np.int32),
            64 if self.sets is not None else 8 * self.sketcher.width + 64,
            VERIFY_BYTES_PER_BYTE,
            self.config.working_memory // 4,
            self._mark,
            unread,
        )
        self._mark[pairs.first] = -1  # the scratch back as the next call expects it
        self._mark[pairs.second] = -1
        for lo, hi in itertools.pairwise(bounds.tolist()):
            yield ScoredChunk(
                self, pairs, lo, hi, unread[lo:hi] if unread.shape[0] else None, floor
            )


class MeasuredChunk(Protocol):
    """Pairs ``lo .. hi - 1`` of some pairs, ready to be measured (:meth:`ScoredChunk.measure`)."""

    lo: int
    hi: int

    def measure(self, positions: I64Array, *, with_estimate: bool = True) -> Measured:
        """What is measured of the pairs at ``positions`` (within ``lo .. hi - 1``)."""
        ...


class Scorer(Protocol):
    """What verification and clustering ask of a measure.

    :class:`PairScorer` (shingles), :class:`~neardup.semantic.VectorScorer` (the embedding
    method's cosine) or :class:`EitherScorer` (both).
    """

    config: DedupConfig

    @property
    def measures_in_parts(self) -> bool:
        """Whether a chunk's pairs may be measured a part at a time at no extra cost."""
        ...

    def prepare(self, needed: BoolArray) -> None:
        """Make ready what measuring the ``needed`` documents' pairs reads."""
        ...

    def chunks(self, pairs: CandidatePairs, *, candidates: bool = False) -> Iterator[MeasuredChunk]:
        """``pairs`` in consecutive chunks; ``candidates``: the pairs verification decides."""
        ...

    def similarity(self, pairs: CandidatePairs) -> F64Array:
        """The similarity verification goes by, of each pair."""
        ...

    def __enter__(self) -> Scorer: ...

    def __exit__(self, *exc_info: object) -> None: ...


class ScoredChunk:
    """Pairs ``lo .. hi - 1`` of some pairs, their documents' texts (or sets) taken once.

    :meth:`measure` scores any of them, as often as asked.
    """

    def __init__(
        self,
        scorer: PairScorer,
        pairs: CandidatePairs,
        lo: int,
        hi: int,
        unread: BoolArray | None = None,
        floor: float | None = None,
    ) -> None:
        self.lo, self.hi = lo, hi
        self._scorer = scorer
        self._floor = floor
        self._unread = unread if unread is not None else np.zeros(hi - lo, dtype=bool)
        read = ~self._unread
        firsts, seconds = pairs.first[lo:hi][read], pairs.second[lo:hi][read]
        docs, local = scorer.distinct(np.concatenate([firsts, seconds]))
        self._docs = docs
        self._first = np.full(hi - lo, -1, dtype=np.int64)
        self._second = np.full(hi - lo, -1, dtype=np.int64)
        self._first[read], self._second[read] = local[: firsts.shape[0]], local[firsts.shape[0] :]
        self._sets: ShingleSets | None = None
        self._batch: Batch | None = None
        if scorer.sets is not None:
            self._sets = scorer.sets.sets(docs)
        else:
            self._batch = scorer.texts.take(docs)

    def measure(self, positions: I64Array, *, with_estimate: bool = True) -> Measured:
        """``(estimate, exact)`` of the pairs at ``positions`` (within ``lo .. hi - 1``).

        ``with_estimate=False`` leaves the estimates NaN where the exact similarity is measured.
        A pair below the chunk's floor by its sets' sizes is not measured: both NaN.
        """
        unread = self._unread[positions - self.lo]
        if not unread.any():
            return self._measured(positions, with_estimate)
        estimate, exact = np.full(positions.shape[0], np.nan), np.full(positions.shape[0], np.nan)
        read = ~unread
        estimate[read], exact[read], _ = self._measured(positions[read], with_estimate)
        return Measured(estimate, exact)

    def _measured(self, positions: I64Array, with_estimate: bool = True) -> Measured:
        """:meth:`measure` of pairs whose documents the chunk has read."""
        scorer, config = self._scorer, self._scorer.config
        local = CandidatePairs(
            first=self._first[positions - self.lo], second=self._second[positions - self.lo]
        )
        estimate = np.full(len(local), np.nan)
        if config.measure == "containment":
            return Measured(estimate, self._containment(local))
        if self._sets is not None:
            # The shingle sets give the exact Jaccard, and then the OPH rows of the pairs
            # at the threshold (no second pass over the text, no row matrix).
            assert isinstance(scorer.sketcher, OPHSketcher)
            exact = exact_jaccard(self._sets, local, self._floor)
            if with_estimate:
                near = np.flatnonzero(exact >= config.lsh.threshold)
                estimate[near] = scorer.sketcher.agreement_of_sets(
                    self._sets, local.first[near], local.second[near]
                )
            return Measured(estimate, exact)
        assert self._batch is not None
        if with_estimate or config.verify_mode != "exact":
            estimate = estimate_similarity(scorer.sketcher.sketch(self._batch), local)
        if config.verify_mode != "exact":
            return Measured(estimate, np.full(len(local), np.nan))
        exact = exact_similarity(self._batch, local, config.sketch, scorer.idf, self._floor)
        if self._floor is not None:
            estimate[np.isnan(exact)] = np.nan  # not measured: neither of them
        return Measured(estimate, exact)

    def _containment(self, local: CandidatePairs) -> F64Array:
        """The containment of each pair's shorter document in the other."""
        spec = self._scorer.config.sketch
        sets = self._sets
        if sets is None:
            assert self._batch is not None
            sets = Shingler(spec.shingle, spec.normalize).shingle_sets(self._batch)
        docs, lengths = self._docs, self._scorer.lengths
        assert lengths is not None  # the scorer requires them under containment
        swap = second_contained(docs[local.first], docs[local.second], lengths)
        return exact_containment(sets, local, swap)


class EitherScorer:
    """The shingles' Jaccard and the vectors' cosine of each pair (``minhash+embedding``).

    Verification joins a pair when either reaches its threshold (:class:`_Joining`); the
    similarity to a cluster's representative is the Jaccard, the run's measure.
    """

    def __init__(self, shingles: PairScorer, vectors: VectorScorer) -> None:
        self.config = shingles.config
        self.shingles, self.vectors = shingles, vectors

    @property
    def measures_in_parts(self) -> bool:
        """As the shingles' scorer (a vector is a small row at hand)."""
        return self.shingles.measures_in_parts

    def prepare(self, needed: BoolArray) -> None:
        """Make the ``needed`` documents' shingle sets."""
        self.shingles.prepare(needed)

    def chunks(self, pairs: CandidatePairs, *, candidates: bool = False) -> Iterator[EitherChunk]:
        """The shingles' chunks, each measuring the cosine too."""
        for chunk in self.shingles.chunks(pairs, candidates=candidates):
            yield EitherChunk(chunk, self.vectors, pairs)

    def similarity(self, pairs: CandidatePairs) -> F64Array:
        """The Jaccard of each pair."""
        return self.shingles.similarity(pairs)

    def close(self) -> None:
        """Release the shingle sets' file."""
        self.shingles.close()

    def __enter__(self) -> EitherScorer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class EitherChunk:
    """A chunk of :class:`EitherScorer`: its shingles' chunk, and the cosine of its pairs."""

    def __init__(self, chunk: ScoredChunk, vectors: VectorScorer, pairs: CandidatePairs) -> None:
        self.lo, self.hi = chunk.lo, chunk.hi
        self._chunk, self._vectors, self._pairs = chunk, vectors, pairs

    def measure(self, positions: I64Array, *, with_estimate: bool = True) -> Measured:
        """The estimate and Jaccard of the pairs at ``positions``, and their cosine."""
        estimate, jaccard, _ = self._chunk.measure(positions, with_estimate=with_estimate)
        pairs = CandidatePairs(
            first=self._pairs.first[positions], second=self._pairs.second[positions]
        )
        return Measured(estimate, jaccard, self._vectors.similarity(pairs))


def size_floor(config: DedupConfig) -> float | None:
    """The similarity below which verification rejects a candidate unmeasured, by set sizes.

    A pair whose shingle sets' sizes alone keep its Jaccard similarity below the threshold
    (:func:`~neardup._kernels.verify.size_bounded`) cannot pass it, and is not measured: the
    threshold, under exact verification of the Jaccard similarity; else None (no such rule).
    The Spark engine rejects the same pairs, so both count and bin the same.
    """
    if config.verify_mode == "exact" and config.measure == "jaccard":
        return config.lsh.threshold
    return None


def measured(estimate: F64Array, jaccard: F64Array, config: DedupConfig) -> F64Array:
    """The similarity verification goes by: exact under ``verify="exact"``, else the estimate."""
    return jaccard if config.verify_mode == "exact" else estimate
