"""The stages composed: :func:`dedup` of texts in memory, and the summary of a run."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from neardup._faults import crash_point
from neardup._progress import Progress
from neardup._types import Batch, F32Array, I64Array
from neardup.candidates import candidate_scheme
from neardup.cluster import (
    Clusters,
)
from neardup.embed import Encoder
from neardup.errors import InputError
from neardup.io.records import Ids, RecordBatch
from neardup.io.setstore import SketchedSets
from neardup.io.spill import KeyColumns
from neardup.keep import KeepValues
from neardup.params import DEFAULT_BATCH_BYTES, DedupConfig
from neardup.pipeline.clustering import cluster_joined, reported_pairs
from neardup.pipeline.exact import duplicate_ids, exact_groups
from neardup.pipeline.finding import (
    Candidates,
    _cosine_candidates,
    find_candidates,
    warn_of_giant_buckets,
)
from neardup.pipeline.scoring import EitherScorer, PairScorer, Scorer, measured, size_floor
from neardup.pipeline.shared import TextStore, Timings
from neardup.pipeline.sketching import Sketched, fit_idf, keeps_sets, sketch_batches
from neardup.pipeline.verification import JoinedPairs, VerifiedPairs, verify_and_join
from neardup.semantic import (
    EncodedCorpus,
    VectorScorer,
    document_vectors,
)
from neardup.sketch import IDFWeights
from neardup.sketch.signatures import provenance_of
from neardup.summary import (
    ClusterSize,
    Counts,
    SimilarityHistogram,
    StageTimes,
    Summary,
    histogram_counts,
)
from neardup.templates import HostTemplates
from neardup.text.normalize import normalize_bytes
from neardup.text.spans import pack_strings


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
    reported = found.pairs.subset(reported_pairs(joined, config))
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
        batches = _string_batches(ids, texts, DEFAULT_BATCH_BYTES)
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
        lambda: _string_batches(ids, texts, DEFAULT_BATCH_BYTES),
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
        size_rejected=found.num_size_rejected if size_floor(config) is not None else None,
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
