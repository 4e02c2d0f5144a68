"""The batch job as named stages, and :func:`dedup` composing them for texts in memory.

::

    fit_idf          for a TF-IDF SimHash and canonical forms: a first pass learning document
                     frequencies
    sketch_batches   normalise → shingle → sketch, batch by batch (BatchSketcher); keeps per
                     document only the id, the length, the exact fingerprint and the lookup keys
                     (spilled by column), and a way back to the text (the text store)
    exact_groups     documents with identical normalised text, grouped by fingerprint
    find_candidates  the sketch kind's candidate scheme (LSH bands one at a time, shared bottom-k
                     hashes, supershingles, or SimHashes within h bits) over one representative
                     per exact group, into sorted runs (on disk beyond half the working memory)
    verify_and_join  the candidates in (first, second) order, in chunks of bounded size: their
                     texts from the text store, shingled for the exact similarity (Jaccard,
                     weighted Jaccard, or cosine for SimHash) and sketched again for the
                     estimate; accepted by the verification mode's rule (accepted) and joined
                     by a union-find; a candidate already joined is not measured unless every
                     pair is wanted (measures_every_candidate)
    cluster_joined   one representative per component, every member's similarity to it
                     measured; with ``cluster="center"``, members below the threshold moved to
                     another center or their own (no chaining); the pairs that joined two
                     clusters (a spanning forest)

Each stage is timed; the :class:`~neardup.summary.Summary` reports every parameter, count and
timing (:func:`summarize`). The Spark engine takes the same steps on its partitions
(:class:`BatchSketcher`, :func:`exact_groups`, :func:`accepted`, the bucket cap of
:func:`~neardup.lsh.banding.bucket_pairs`, the keep rule of
:func:`~neardup.cluster.representatives`). No stage holds a Python object per document:
per-document state is a few NumPy arrays (90 to 130 bytes a document), the rest is spilled
or streamed.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from neardup._faults import crash_point
from neardup._kernels.compiling import Stopwatch
from neardup._kernels.verify import number_distinct, pair_chunks
from neardup._memory import release_free_memory
from neardup._progress import Progress
from neardup._types import Batch, BoolArray, F32Array, F64Array, I64Array, U64Array
from neardup.candidates import SetJoin, candidate_scheme
from neardup.candidates import estimate as estimate_similarity
from neardup.cluster import (
    Clusters,
    UnionFind,
    center_clusters,
    preference_order,
    representatives,
    union_pairs,
)
from neardup.embed import Encoder
from neardup.errors import InputError, NeardupWarning, ParameterError
from neardup.io.records import Ids, RecordBatch
from neardup.io.setstore import ShingleSetStore, SketchedSets
from neardup.io.spill import KeyColumns, PairRuns
from neardup.keep import KeepValues
from neardup.kinds import SKETCH_KINDS
from neardup.lsh.banding import equal_key_groups, near_key_share
from neardup.lsh.containment import second_contained
from neardup.pairs import CandidatePairs, Measured
from neardup.params import DedupConfig
from neardup.semantic import (
    EncodedCorpus,
    VectorScorer,
    cosine_candidates,
    describe_join,
    document_vectors,
)
from neardup.sketch import IDFWeights, OPHSketcher, make_sketcher
from neardup.sketch.signatures import Signatures, provenance_of
from neardup.sketch.simhash import SimHasher
from neardup.summary import (
    ClusterSize,
    Counts,
    SimilarityHistogram,
    StageTimes,
    Summary,
    histogram_counts,
)
from neardup.templates import HostTemplates
from neardup.text.normalize import TextStats, normalize_bytes, text_statistics
from neardup.text.shingle import Shingler, ShingleSets
from neardup.text.spans import byte_pieces, pack_strings
from neardup.verify import exact_containment, exact_jaccard, exact_similarity

__all__ = [
    "BatchSketcher",
    "Candidates",
    "DedupResult",
    "JoinedPairs",
    "PairScorer",
    "ScoredChunk",
    "Sketched",
    "SketchedBlock",
    "Timings",
    "VerifiedPairs",
    "accepted",
    "cluster_joined",
    "dedup",
    "duplicate_ids",
    "exact_candidates",
    "exact_groups",
    "find_candidates",
    "find_duplicates",
    "fit_idf",
    "measured",
    "measures_every_candidate",
    "score_pairs",
    "sketch_batches",
    "summarize",
    "verify_and_join",
    "warn_of_giant_buckets",
]

SKETCH_ROWS = 8192
"""Documents sketched per kernel call: their signature rows stay in cache until keyed."""

VERIFY_BYTES_PER_BYTE = 4
"""Memory a verification chunk holds per byte of its documents' text: the lines read again,
their decoded texts and the normalised ones while they are taken (three bytes), then the texts
and their shingle sets (made a few megabytes of text at a time; eight bytes a shingle, one
shingle a word: about 1.3 bytes per byte of English text, four for one-letter words)."""

ProgressCallback = Callable[[int], object]
"""Told an absolute amount of work done (input bytes, or pairs verified)."""


@dataclass
class Timings:
    """Seconds spent per stage, in the order the stages ran, and numba's compiling apart.

    A stage's seconds leave out the seconds numba spent compiling kernels in it (a first run
    on a cold cache: :class:`~neardup._kernels.compiling.Stopwatch`); those add up in
    ``compile_seconds``, so a first run's stages take what a later run's take.
    """

    seconds: dict[str, float] = field(default_factory=dict)
    compile_seconds: float = 0.0

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the enclosed block as stage ``name``."""
        watch = Stopwatch()
        try:
            with watch.running():
                yield
        finally:
            release_free_memory()  # what the stage dropped is not held through the next
            self.seconds[name] = self.seconds.get(name, 0.0) + watch.seconds
            self.compile_seconds += watch.compile_seconds

    def report(self, num_bytes: int) -> StageTimes:
        """Seconds per stage, the total, the throughput over ``num_bytes`` of text, compiling."""
        return StageTimes.measured(self.seconds, num_bytes, compile_seconds=self.compile_seconds)


class TextStore(Protocol):
    """Where verification finds the normalised texts of the documents it needs.

    :class:`~neardup.io.arena.TextArena` keeps a copy in a file;
    :class:`~neardup.io.jsonl.JSONLineTexts` reads plain JSONL lines again;
    :class:`StringTexts` normalises the caller's strings again (:func:`dedup`).
    """

    def append(self, records: RecordBatch, normalized: Batch) -> None:
        """Take note of a batch (its records and their normalised texts)."""

    def finish(self) -> None:
        """End appending."""

    def sizes(self) -> I64Array:
        """About how many bytes each document's text has."""

    def take(self, docs: I64Array) -> Batch:
        """The normalised texts of ``docs``, in that order."""


@dataclass(frozen=True, slots=True)
class Sketched:
    """What the first pass keeps per document.

    Small fixed-size arrays, the ids, the keys (spilled by column) and where the texts can be
    found again (:class:`TextStore`).
    """

    ids: Ids
    lengths: I64Array
    """Characters per document, before normalisation (``keep="longest"`` compares these)."""
    fingerprints: U64Array
    """``uint64[num_docs, 2]``: the 128-bit fingerprint of each normalised text."""
    is_short: BoolArray
    """Documents with no shingle at all: matched only by their exact fingerprint."""
    is_empty: BoolArray
    """Documents with no token at all (empty, or only separators): matched with nothing."""
    keys: KeyColumns
    """Lookup keys of the candidate scheme (LSH band keys for banding), one row per document."""
    texts: TextStore
    num_bytes: int
    """UTF-8 bytes of normalised text sketched."""
    idf: IDFWeights | None = None
    """The IDF weights of a TF-IDF SimHash (verification weighs the shingles with them too)."""
    keep_values: KeepValues | None = None
    """The ``keep_by`` fields' values, when representatives are chosen by them."""
    kept_sets: SketchedSets | None = None
    """The shingle sets kept as the documents were sketched (:func:`keeps_sets`)."""
    host_templates: Mapping[str, Any] | None = None
    """How the hosts' templates left out of the texts were learned (``--host-templates``)."""

    @property
    def num_docs(self) -> int:
        """Documents sketched."""
        return len(self.ids)


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


@dataclass(frozen=True, slots=True)
class DedupResult:
    """The outcome of a dedup run.

    Attributes
    ----------
    ids
        Document ids in input order (a read-only sequence of ``str``).
    clusters
        ``labels`` (smallest member of each document's cluster) and ``keep`` flags.
    exact_pairs
        ``(first, second)``: each exact duplicate linked to the first document of its group.
    pairs
        Verified near-duplicate pairs between exact-group representatives: all of them, the
        spanning ones, or none, as ``config.pairs`` says.
    summary
        Every parameter, count and timing, as written to ``summary.json``.
    vectors
        The embedding method's vectors, one row per document (an exact copy has its group's,
        an empty document zeros); ``None`` for the other methods.
    """

    ids: Sequence[str]
    clusters: Clusters
    exact_pairs: tuple[I64Array, I64Array]
    pairs: VerifiedPairs
    summary: Summary
    vectors: F32Array | None = None


@dataclass(frozen=True, slots=True)
class SketchedBlock:
    """Up to :data:`SKETCH_ROWS` consecutive documents of a batch, sketched and keyed."""

    start: int
    """The block's first document, within its batch."""
    signatures: Signatures
    keys: U64Array
    """The candidate scheme's lookup keys, one row per document."""
    is_empty: BoolArray
    """Documents with no token at all (empty, or only separators): matched with nothing."""

    @property
    def stop(self) -> int:
        """One past the block's last document, within its batch."""
        return self.start + self.signatures.num_docs


class BatchSketcher:
    """The per-batch step of both engines: normalise, then sketch and key block by block.

    The signature rows of at most :data:`SKETCH_ROWS` documents exist at once, so they stay in
    cache until keyed. ``idf``: the weights of ``weighting="tfidf"`` (:func:`fit_idf`).
    """

    def __init__(self, config: DedupConfig, idf: IDFWeights | None = None) -> None:
        self._spec = config.sketch.normalize
        self._sketcher = make_sketcher(config.sketch, idf)
        self._scheme = candidate_scheme(config.sketch, config.lsh)

    def normalize(
        self, texts: Batch, stats: TextStats | None = None, *, in_place: bool = False
    ) -> tuple[Batch, TextStats]:
        """The normalised texts, and the raw texts' statistics (``stats``, when known).

        ``in_place``: the normalised texts may be written over ``texts`` (the caller owns
        that buffer alone).
        """
        stats = stats if stats is not None else text_statistics(texts)
        return normalize_bytes(texts, self._spec, stats, in_place=in_place), stats

    def blocks(
        self, normalized: Batch, kept: SketchedSets | None = None
    ) -> Iterator[SketchedBlock]:
        """The normalised texts sketched and keyed, a block of documents at a time.

        ``kept``: where the shingle sets it chooses go, from the same pass (OPH only); it is
        told of every document.
        """
        no_token = self._sketcher.no_token_fingerprint
        for start in range(0, normalized.num_docs, SKETCH_ROWS):
            stop = min(start + SKETCH_ROWS, normalized.num_docs)
            part = Batch(data=normalized.data, offsets=normalized.offsets[start : stop + 1])
            weights = None
            chosen = kept.chosen(np.diff(part.offsets)) if kept is not None else None
            if chosen is not None and chosen.any():
                assert kept is not None
                assert isinstance(self._sketcher, OPHSketcher)
                signatures, sets = self._sketcher.sketch_keeping_sets(part, chosen)
                kept.append(sets, chosen)
            else:
                if kept is not None:
                    kept.skip(part.num_docs)
                if self._scheme.reads_bit_weights:
                    assert isinstance(self._sketcher, SimHasher)
                    signatures, weights = self._sketcher.sketch_with_bit_weights(part)
                else:
                    signatures = self._sketcher.sketch(part)
            yield SketchedBlock(
                start=start,
                signatures=signatures,
                keys=self._scheme.keys(signatures.values, weights),
                is_empty=(signatures.fingerprints == no_token).all(axis=1),
            )


def sketch_batches(
    batches: Iterable[RecordBatch],
    config: DedupConfig,
    keys: KeyColumns,
    texts: TextStore,
    *,
    idf: IDFWeights | None = None,
    progress: ProgressCallback | None = None,
    kept: SketchedSets | None = None,
    templates: HostTemplates | None = None,
) -> Sketched:
    """Normalise and sketch record batches; keep per document only what later stages need.

    Each batch goes through :class:`BatchSketcher`: the lookup keys of each block are appended
    to ``keys`` and its signature rows dropped. The normalised texts go to ``texts``; the
    shingle sets verification will want, to ``kept`` (:func:`keeps_sets`). ``idf``: the
    weights of ``weighting="tfidf"`` (:func:`fit_idf`); ``templates``: the hosts' templates
    the normalised texts are stripped of (``config.host_templates``).
    """
    step = BatchSketcher(config, idf)
    ids: list[Ids] = []
    lengths: list[I64Array] = []
    fingerprints: list[U64Array] = []
    short: list[BoolArray] = []
    empty: list[BoolArray] = []
    num_bytes = 0
    if kept is not None:
        kept.keeping = False  # until a batch shows dense near copies
    for batch in batches:
        normalized, stats = step.normalize(batch.texts, batch.stats, in_place=True)
        normalized = _stripped(batch.ids, normalized, templates)
        texts.append(batch, normalized)
        first_block = len(fingerprints)
        observed: list[U64Array] = []
        for block in step.blocks(normalized, kept):
            keys.append(block.keys)
            fingerprints.append(block.signatures.fingerprints)
            short.append(block.signatures.is_short)
            empty.append(block.is_empty)
            observed.append(block.keys[:, :2])
        if kept is not None and observed:
            kept.keeping = _dense_near_copies(
                np.concatenate(observed),
                np.concatenate(fingerprints[first_block:]),
                np.concatenate(short[first_block:]),
            )
        lengths.append(stats.chars)
        ids.append(batch.ids)
        num_bytes += normalized.num_bytes
        if progress is not None:
            progress(batch.position)
    texts.finish()
    if not ids:
        raise InputError("no usable records in the input")
    return Sketched(
        ids=Ids.concat(_emptied(ids)),
        lengths=np.concatenate(_emptied(lengths)),
        fingerprints=np.concatenate(_emptied(fingerprints)),
        is_short=np.concatenate(_emptied(short)),
        is_empty=np.concatenate(_emptied(empty)),
        keys=keys,
        texts=texts,
        num_bytes=num_bytes,
        idf=idf,
        kept_sets=kept,
    )


DENSE_SHARE = 0.05
"""A batch where this share of the documents shares a key of the first two columns with a
document of another text (:func:`~neardup.lsh.banding.near_key_share`) holds dense near copies:
the next batch keeps its short documents' shingle sets (:class:`~neardup.io.setstore.
SketchedSets`)."""


def _dense_near_copies(keys: U64Array, fingerprints: U64Array, is_short: BoolArray) -> bool:
    """Whether a batch's keys (two columns) and fingerprints show dense near copies.

    See :data:`DENSE_SHARE`.

    Where near copies are dense, most documents are verified, and keeping their sets as they
    are sketched spares verification most of its work (dense 10M: 61.5 s to 37.7 s); where
    they are rare, the sets would be made for nothing.
    Within one batch the share is a fraction of the corpus's, and two columns see a fraction
    of the near pairs, so the bar is low. Measured per 32 MB batch: the dense 1M corpus of
    ``bench/scale.py`` 10-11%; its sparse 1M corpus 13% in the first batch (its copies' sources
    all lie before them), then 4.4% and falling; 800k short documents without a near copy 0%;
    the RFCs under 4%.
    """
    usable = ~is_short
    return near_key_share(keys[usable], fingerprints[usable, 0]) >= DENSE_SHARE


def keeps_sets(config: DedupConfig) -> bool:
    """Whether verification reads shingle sets, so that sketching may keep them.

    Under exact verification of OPH sketches (:class:`PairScorer`), the default; not under the
    embedding method alone, which measures vectors.
    """
    return (
        config.verify_mode == "exact" and config.sketch.kind == "oph" and not config.embedding_only
    )


def _emptied(parts: list[Any]) -> list[Any]:
    """The parts, the list emptied.

    Each kind of array is then joined and its parts freed before the next kind is joined: the
    peak holds one array twice, not all of them.
    """
    taken = list(parts)
    parts.clear()
    return taken


def fit_idf(
    batches: Iterable[RecordBatch], config: DedupConfig, templates: HostTemplates | None = None
) -> IDFWeights | None:
    """The IDF of the corpus when ``config``'s sketch uses it (a first pass), else None.

    A TF-IDF SimHash weighs its shingles by it; canonical forms keep the terms of a band of it.
    ``templates``: the hosts' templates the texts are compared without.
    """
    kind = SKETCH_KINDS[config.sketch.kind]
    weighs_by_tf = "weighting" in kind.options and config.sketch.weighting == "tf"
    if not kind.uses_idf or weighs_by_tf:
        return None
    spec = config.sketch.normalize
    normalized = (_stripped(b.ids, normalize_bytes(b.texts, spec), templates) for b in batches)
    return IDFWeights(config.sketch).fit_batches(normalized)


def _stripped(ids: Sequence[str], normalized: Batch, templates: HostTemplates | None) -> Batch:
    """The normalised texts without their hosts' templates, where there are templates."""
    return normalized if templates is None else templates.strip(ids, normalized)


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


def warn_of_giant_buckets(num_giant: int, largest: int, config: DedupConfig) -> None:
    """Warn when buckets above ``config.lsh.max_bucket_size`` were paired linearly.

    ``num_giant``: how many there were; ``largest``: the documents of the largest bucket.
    """
    if num_giant:
        warnings.warn(
            f"{num_giant} LSH buckets held more than {config.lsh.max_bucket_size} documents "
            f"(largest: {largest}); in them each document was paired only with the documents "
            "just before it. Boilerplate shared by many documents usually causes this.",
            NeardupWarning,
            stacklevel=3,
        )


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

    def chunks(self, pairs: CandidatePairs) -> Iterator[ScoredChunk]:
        """``pairs`` in consecutive chunks whose documents fit in a quarter of the memory.

        A document counts its shingle set's bytes once the set is made, else what its text
        costs (:data:`VERIFY_BYTES_PER_BYTE`).
        """
        bounds = pair_chunks(
            pairs.first,
            pairs.second,
            self._sizes,
            self.sets.set_sizes if self.sets is not None else np.empty(0, dtype=np.int32),
            64 if self.sets is not None else 8 * self.sketcher.width + 64,
            VERIFY_BYTES_PER_BYTE,
            self.config.working_memory // 4,
            self._mark,
        )
        self._mark[pairs.first] = -1  # the scratch back as the next call expects it
        self._mark[pairs.second] = -1
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            yield ScoredChunk(self, pairs, lo, hi)


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

    def chunks(self, pairs: CandidatePairs) -> Iterator[MeasuredChunk]:
        """``pairs`` in consecutive chunks."""
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

    def __init__(self, scorer: PairScorer, pairs: CandidatePairs, lo: int, hi: int) -> None:
        self.lo, self.hi = lo, hi
        self._scorer = scorer
        docs, local = scorer.distinct(np.concatenate([pairs.first[lo:hi], pairs.second[lo:hi]]))
        self._docs = docs
        self._first, self._second = local[: hi - lo], local[hi - lo :]
        self._sets: ShingleSets | None = None
        self._batch: Batch | None = None
        if scorer.sets is not None:
            self._sets = scorer.sets.sets(docs)
        else:
            self._batch = scorer.texts.take(docs)

    def measure(self, positions: I64Array, *, with_estimate: bool = True) -> Measured:
        """``(estimate, exact)`` of the pairs at ``positions`` (within ``lo .. hi - 1``).

        ``with_estimate=False`` leaves the estimates NaN where the exact similarity is measured.
        """
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
            exact = exact_jaccard(self._sets, local)
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
        return Measured(estimate, exact_similarity(self._batch, local, config.sketch, scorer.idf))

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

    def chunks(self, pairs: CandidatePairs) -> Iterator[EitherChunk]:
        """The shingles' chunks, each measuring the cosine too."""
        for chunk in self.shingles.chunks(pairs):
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


def measured(estimate: F64Array, jaccard: F64Array, config: DedupConfig) -> F64Array:
    """The similarity verification goes by: exact under ``verify="exact"``, else the estimate."""
    return jaccard if config.verify_mode == "exact" else estimate


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
    """

    components: UnionFind
    pairs: VerifiedPairs
    joined: BoolArray
    num_candidates: int
    num_already_joined: int


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
        for chunk in scorer.chunks(CandidatePairs(first=first, second=second)):
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
        self.counts += histogram_counts(measured(estimate, jaccard, config)[decided])
        self.num_already_joined += count - int(decided.sum())
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


@dataclass(frozen=True, slots=True)
class Candidates:
    """Candidate pairs in sorted runs, and the buckets the scheme found too large to pair fully."""

    runs: PairRuns
    num_giant_buckets: int = 0
    largest_bucket: int = 0
    scheme: Mapping[str, Any] | None = None
    """How they were found, where it is not the config's banding (the embedding method's
    cosine join: :func:`~neardup.semantic.describe_join`)."""


def find_candidates(
    sketched: Sketched, active: BoolArray, config: DedupConfig, work_dir: Path | None = None
) -> Candidates:
    """Candidate pairs among the ``active`` documents, by the sketch kind's scheme.

    They are gathered into sorted runs (:class:`~neardup.io.spill.PairRuns`), written to
    ``work_dir`` once they outgrow half of ``config.working_memory`` (kept in memory when
    ``work_dir`` is None). The lookup keys are released then (``sketched.keys``: their files,
    8 bytes a band a document, leave the disk before verification writes its shingle sets).
    """
    runs = PairRuns(
        sketched.num_docs, work_dir, memory_bytes=config.working_memory // 2, with_values=False
    )
    scheme = candidate_scheme(config.sketch, config.lsh)
    if scheme.reads_sets:
        found = exact_candidates(sketched.texts, active, sketched.lengths, config)
        runs.add(found.first, found.second)
        candidates = Candidates(runs)
    else:
        candidates = Candidates(runs, *scheme.gather_pairs(sketched.keys, active, runs))
    sketched.keys.release()
    return candidates


def find_duplicates(
    sketched: Sketched,
    config: DedupConfig,
    timings: Timings,
    *,
    show_progress: bool = False,
    work_dir: Path | None = None,
    corpus: EncodedCorpus | None = None,
) -> DedupResult:
    """Every stage after sketching: exact groups, candidates, verification, clustering.

    ``work_dir``: where candidate pairs go when they outgrow half of the working memory
    (``config.memory_gb``; in memory when None), and the shingle sets verification makes (an
    anonymous temporary file when None), or the embedding method's vectors. ``corpus``: where
    the embedding method's vectors come from (``None``: ``config.embedding``'s model or file).
    """
    num_docs = sketched.num_docs
    with timings.stage("exact"):
        group_first, is_first = exact_groups(sketched.fingerprints, sketched.is_empty)
    vectors: F32Array | None = None
    if config.embedding is not None:
        encoded = is_first & ~sketched.is_empty
        with timings.stage("embed"):
            vectors = document_vectors(
                corpus if corpus is not None else EncodedCorpus(config.embedding),
                sketched.texts, sketched.ids, group_first, encoded, config, work_dir,
                show_progress=show_progress,
            )  # fmt: skip
    with timings.stage("candidates"):
        candidates = None
        if config.embedding_only:
            sketched.keys.release()  # the shingle bands' files (the join writes its own)
        else:
            candidates = find_candidates(sketched, is_first & ~sketched.is_short, config, work_dir)
        if vectors is not None:
            candidates = _cosine_candidates(vectors, encoded, config, work_dir, candidates)
    assert candidates is not None
    scorer = _scorer(sketched, config, work_dir, vectors)
    warn_of_giant_buckets(candidates.num_giant_buckets, candidates.largest_bucket, config)
    runs = candidates.runs
    with scorer:
        try:
            with (
                timings.stage("verify"),
                Progress("verify", runs.num_stored(), unit="pairs", enabled=show_progress) as bar,
            ):
                scorer.prepare(runs.members())
                crash_point("verifying")
                found = verify_and_join(runs.pairs(), num_docs, scorer, bar)
        finally:
            runs.close()
        with timings.stage("cluster"):
            clusters, joined = cluster_joined(
                sketched, group_first, found.components, found.pairs, found.joined, scorer
            )
    reported = found.pairs.subset(_reported(joined, config))
    if config.measure == "containment":
        reported = reported.contained_first(sketched.lengths)
    docs = np.arange(num_docs, dtype=np.int64)
    linked = group_first != docs
    summary = _summary(
        sketched, config, candidates, found, reported, clusters, int(linked.sum()), timings
    )
    return DedupResult(
        ids=sketched.ids,
        clusters=clusters,
        exact_pairs=(group_first[linked], docs[linked]),
        pairs=reported,
        summary=summary,
        vectors=vectors,
    )


def _cosine_candidates(
    vectors: F32Array,
    active: BoolArray,
    config: DedupConfig,
    work_dir: Path | None,
    shingles: Candidates | None = None,
) -> Candidates:
    """The embedding method's candidates (:func:`~neardup.semantic.cosine_candidates`) as runs.

    With the ``shingles``' candidates (``minhash+embedding``), added to theirs: the summary's
    ``lsh`` section is then the shingles' banding with the cosine join under ``"cosine"``.
    """
    if shingles is None:
        runs = PairRuns(
            active.shape[0], work_dir, memory_bytes=config.working_memory // 2, with_values=False
        )
        shingles = Candidates(runs)
    first, second, info = cosine_candidates(vectors, active, config, work_dir)
    shingles.runs.add(first, second)
    assert config.cosine_threshold is not None
    scheme = describe_join(info, vectors.shape[1], config.cosine_threshold)
    if not config.embedding_only:
        scheme = {**candidate_scheme(config.sketch, config.lsh).describe(), "cosine": scheme}
    return Candidates(
        shingles.runs,
        num_giant_buckets=shingles.num_giant_buckets + int(info.get("num_giant_buckets", 0)),
        largest_bucket=max(shingles.largest_bucket, int(info.get("largest_bucket", 0))),
        scheme=scheme,
    )


def _scorer(
    sketched: Sketched, config: DedupConfig, work_dir: Path | None, vectors: F32Array | None
) -> Scorer:
    """What measures the run's pairs: shingles, vectors, or both (:class:`EitherScorer`)."""
    if vectors is not None and config.embedding_only:
        return VectorScorer(vectors, config)
    shingles = PairScorer(
        sketched.texts, config, sketched.idf, work_dir, sketched.lengths, sketched.kept_sets
    )
    return shingles if vectors is None else EitherScorer(shingles, VectorScorer(vectors, config))


def _reported(joined: BoolArray, config: DedupConfig) -> BoolArray:
    """Which verified pairs ``config.pairs`` reports, given those that joined two clusters."""
    if config.pairs == "all":
        return np.ones(joined.shape[0], dtype=bool)
    if config.pairs == "spanning":
        return joined
    return np.zeros(joined.shape[0], dtype=bool)


def dedup(
    texts: Sequence[str],
    ids: Sequence[str] | None = None,
    config: DedupConfig | None = None,
    fields: Mapping[str, Sequence[Any]] | None = None,
    *,
    encoder: Encoder | None = None,
) -> DedupResult:
    """Find near-duplicate clusters among in-memory texts.

    Parameters
    ----------
    texts
        The documents.
    ids
        Their ids (default: ``"0"``, ``"1"``, ...).
    config
        Every parameter; the defaults are word 5-shingles, OPH with 128 slots, threshold 0.8,
        exact verification and the spanning pairs.
    fields
        The values of the ``config.keep_by`` fields, one per text (numbers, strings, dates;
        None where a document has none), e.g. ``{"quality": [0.3, 0.9, 0.5]}``.
    encoder
        The embedding method's encoder (``config.embedding``): any object with
        ``encode(list[str]) -> ndarray`` (:class:`neardup.embed.Encoder`), used instead of
        loading ``config.embedding.model``.

    Examples
    --------
    >>> base = "the quick brown fox jumps over the lazy dog and runs far away into the woods"
    >>> result = dedup([base, base + " today", "an entirely different sentence about cats"])
    >>> result.clusters.labels.tolist(), result.clusters.keep.tolist()
    ([0, 0, 2], [True, False, True])
    """
    config = config if config is not None else DedupConfig()
    if ids is None:
        ids = [str(i) for i in range(len(texts))]
    if len(ids) != len(texts):
        raise InputError(f"dedup got {len(texts)} texts but {len(ids)} ids")
    ids = list(map(str, ids))
    duplicate = duplicate_ids(Ids.of(ids))
    if duplicate is not None:
        a, b = duplicate
        raise InputError(f"ids[{a}] and ids[{b}] are both {ids[a]!r}; ids must be unique")
    templates = None
    if config.host_templates:
        batches = _string_batches(ids, texts, config.batch_bytes)
        templates = HostTemplates.learn(batches, config.sketch.normalize)
    values = None
    if config.keep_by:
        if fields is None:
            raise InputError(
                f"keep_by names {', '.join(map(repr, config.keep_by))}: pass their values as "
                "fields={name: values}, one per text"
            )
        values = KeepValues.of_mapping(config, fields, len(texts))
    return dedup_batches(
        lambda: _string_batches(ids, texts, config.batch_bytes),
        StringTexts(texts, config, ids, templates),
        config,
        values,
        encoder=encoder,
        templates=templates,
    )


def dedup_batches(
    batches: Callable[[], Iterable[RecordBatch]],
    texts: TextStore,
    config: DedupConfig,
    keep_values: KeepValues | None = None,
    *,
    encoder: Encoder | None = None,
    templates: HostTemplates | None = None,
) -> DedupResult:
    """Every stage over documents held in memory.

    ``batches()`` gives them as record batches (once more to fit the IDF of a TF-IDF SimHash);
    ``texts`` gives them again to verification; ``keep_values`` are the ``keep_by`` values;
    ``encoder`` the embedding method's, if not ``config.embedding.model``'s; ``templates``
    the hosts' templates the texts were stripped of (``config.host_templates``).
    """
    corpus = EncodedCorpus.of_run(config, encoder)
    timings = Timings()
    with timings.stage("idf"):
        idf = fit_idf(batches(), config, templates)
    kept = SketchedSets() if keeps_sets(config) else None
    try:
        with timings.stage("read_sketch"):
            sketched = sketch_batches(
                batches(), config, KeyColumns(), texts, idf=idf, kept=kept, templates=templates
            )
        if keep_values is not None:
            sketched = replace(sketched, keep_values=keep_values)
        if templates is not None:
            sketched = replace(sketched, host_templates=templates.describe())
        return find_duplicates(sketched, config, timings, corpus=corpus)
    finally:
        if kept is not None:
            kept.close()


def _string_batches(
    ids: Sequence[str], texts: Sequence[str], batch_chars: int
) -> Iterator[RecordBatch]:
    """The strings packed about ``batch_chars`` characters at a time."""
    start, size = 0, 0
    for end, text in enumerate(texts, start=1):
        size += len(text)
        if size >= batch_chars or end == len(texts):
            yield RecordBatch.of(ids[start:end], texts[start:end])
            start, size = end, 0


class StringTexts:
    """The caller's strings as a :class:`TextStore`: normalised again when they are taken.

    Nothing is copied: the strings are already in memory, and verification needs few of them.
    """

    def __init__(
        self,
        texts: Sequence[str],
        config: DedupConfig,
        ids: Sequence[str] = (),
        templates: HostTemplates | None = None,
    ) -> None:
        self._texts = texts
        self._spec = config.sketch.normalize
        self._ids, self._templates = ids, templates

    def append(self, records: RecordBatch, normalized: Batch) -> None:
        """Nothing to keep: the strings stay where they are."""

    def finish(self) -> None:
        """Nothing to finish."""

    def sizes(self) -> I64Array:
        """Characters of each text (about its size in bytes)."""
        return np.fromiter(map(len, self._texts), dtype=np.int64, count=len(self._texts))

    def take(self, docs: I64Array) -> Batch:
        """The normalised texts of ``docs``, in that order."""
        chosen = [self._texts[d] for d in docs.tolist()]
        normalized = normalize_bytes(Batch(*pack_strings(chosen)), self._spec)
        if self._templates is None:
            return normalized
        return self._templates.strip([self._ids[d] for d in docs.tolist()], normalized)


def summarize(
    config: DedupConfig,
    counts: Counts,
    biggest_clusters: Iterable[ClusterSize],
    times: StageTimes,
    *,
    idf: IDFWeights | None = None,
    spark_master: str | None = None,
    histogram: SimilarityHistogram | None = None,
    scheme: Mapping[str, Any] | None = None,
) -> Summary:
    """The summary of a run (of either engine) with these parameters, counts and times.

    ``scheme``: how candidates were found, where not by the config's own scheme.
    """
    return Summary(
        config=config,
        lsh=scheme
        if scheme is not None
        else candidate_scheme(config.sketch, config.lsh).describe(),
        signatures=provenance_of(config.sketch),
        counts=counts,
        biggest_clusters=tuple(biggest_clusters),
        times=times,
        idf=idf.describe() if idf is not None else None,
        spark_master=spark_master,
        similarity_histogram=histogram,
    )


def _summary(
    sketched: Sketched,
    config: DedupConfig,
    candidates: Candidates,
    found: JoinedPairs,
    reported: VerifiedPairs,
    clusters: Clusters,
    num_exact: int,
    timings: Timings,
) -> Summary:
    sizes = clusters.sizes()
    num_docs = sketched.num_docs
    verified = found.pairs
    # Accepted among the pairs measured: every pair kept (those kept are the accepted ones,
    # or, when some were not measured, the ones that joined two components, which are then
    # exactly the accepted pairs measured).
    verified_counts = histogram_counts(measured(verified.estimate, verified.jaccard, config))
    num_verified = len(verified)
    kept = int(clusters.keep.sum())
    counts = Counts(
        items=num_docs,
        bytes=sketched.num_bytes,
        short_documents=int(sketched.is_short.sum()),
        empty_documents=int(sketched.is_empty.sum()),
        exact_duplicates=num_exact,
        candidate_pairs=found.num_candidates,
        already_joined=found.num_already_joined,
        verified_pairs=num_verified,
        pairs_reported=len(reported),
        clusters=int(np.count_nonzero(sizes > 1)),
        documents_in_clusters=int(sizes[sizes > 1].sum()),
        removed=num_docs - kept,
        kept=kept,
        giant_buckets=candidates.num_giant_buckets,
        largest_bucket=candidates.largest_bucket,
    )
    biggest = (
        ClusterSize(sketched.ids[label], int(sizes[label]))
        for label in np.argsort(-sizes, kind="stable")[:5].tolist()
        if sizes[label] > 1
    )
    histogram = None
    if verified.candidate_counts is not None:
        histogram = SimilarityHistogram.of(verified.candidate_counts, verified_counts)
    summary = summarize(
        config,
        counts,
        biggest,
        timings.report(sketched.num_bytes),
        idf=sketched.idf,
        histogram=histogram,
        scheme=candidates.scheme,
    )
    return replace(summary, host_templates=sketched.host_templates)
