"""The batch job on Apache Spark: the local engine's stage functions, run on partitions.

::

    number      document keys 0..n-1 in input order (file, then line or row)
    sketch      mapInArrow: each Arrow batch through the local engine's BatchSketcher
    exact       a shuffle on the fingerprint; each partition through exact_groups
    candidates  a shuffle on (band, key); each partition's buckets through bucket_pairs (the
                bucket cap included), then the distinct pairs
    verify      mapInArrow over pairs joined to their signatures (estimate) and texts (exact);
                the pairs that the accept rule passes; the similarity histogram
    cluster     large-star / small-star connected components (:mod:`.spark_components`)
    keep        a shuffle on the label; each partition's clusters through representatives;
                each member scored against its representative as pairs are verified; with
                cluster="center", a shuffle of documents and pairs on the label, each
                partition's components through center_clusters
    pairs       all verified pairs, none, or the spanning ones: each cluster's pairs in one task,
                sorted, through the local union-find kernel

What is Spark's own is the session, the shuffles and the connected components; the rules are
the local engine's functions (:mod:`neardup.pipeline`, :mod:`neardup.cluster`,
:func:`neardup.lsh.banding.bucket_pairs`), the files are :mod:`neardup.io.spark`'s. A partition
renumbers its documents 0, 1, ... in key order before it calls them, so every choice depends on
document keys only, never on partitioning or task order: the clusters and pairs equal the local
engine's (``tests/engine/test_spark.py``). pyspark is imported lazily: the rest of neardup does
not need it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from neardup.candidates import candidate_scheme
from neardup.engine.spark_components import component_labels
from neardup.engine.spark_session import (
    StageJobs,
    errors_of_tasks,
    released_when_done,
    require_pyspark,
    spark_session,
)
from neardup.engine.spark_tasks import (
    BUCKETS_SCHEMA,
    CENTER_SCHEMA,
    DECIDED_SCHEMA,
    SCORED_COLUMNS,
    SCORED_SCHEMA,
    SKETCH_SCHEMA,
    VERIFIED_SCHEMA,
    bucket_batches,
    center_batches,
    decided_batches,
    exact_batches,
    keep_batches,
    score_batches,
    sketch_batches,
    spanning_batches,
)
from neardup.errors import InputError, ParameterError
from neardup.io.spark import (
    cluster_lines,
    comparable_column,
    keep_columns,
    pair_lines,
    read_inputs,
    spark_output,
    write_results,
)
from neardup.kinds import SKETCH_KINDS
from neardup.params import DedupConfig, OutputSpec, ReadSpec
from neardup.pipeline import (
    measures_every_candidate,
    size_floor,
    summarize,
    warn_of_giant_buckets,
)
from neardup.summary import (
    HISTOGRAM_BINS,
    ClusterSize,
    Counts,
    SimilarityHistogram,
    StageTimes,
    Summary,
)

__all__ = ["SparkDedupResult", "dedup_dataframe", "dedup_files_spark", "spark_session"]

SPARK_KINDS = tuple(name for name, kind in SKETCH_KINDS.items() if kind.spark)
"""Sketch kinds the Spark engine runs: those the registry marks ``spark``."""


@dataclass(frozen=True)
class SparkDedupResult:
    """DataFrames of a Spark dedup run, and its summary.

    Attributes
    ----------
    clusters
        ``doc, id, label, cluster, keep, similarity, line``: one row per document; ``label``
        is the cluster's smallest document key and ``cluster`` its id; ``similarity`` is to the
        representative; ``line`` is the ``clusters.jsonl`` line.
    pairs
        ``a_doc, b_doc, a, b, estimate, jaccard, exact, line``: exact duplicates (each linked
        to the first document of its group) and verified near-duplicate pairs; ``line`` is the
        ``pairs.jsonl`` line (without its newline, as for ``clusters``).
    kept
        The input rows (with ``doc``) of the documents kept; with ``annotate``, of
        every document, with that column added (a struct of ``cluster``, ``keep``,
        ``similarity``).
    summary
        Parameters, counts and timings, as in the local ``summary.json``.
    """

    clusters: Any
    pairs: Any
    kept: Any
    summary: Summary


def _exact_groups(sketched: Any) -> Any:
    """``sketched`` with each document's ``group_first`` (:func:`exact_groups`)."""
    fingerprints = sketched.select("doc", "fp_hi", "fp_lo", "is_empty")
    groups = fingerprints.repartition("fp_hi", "fp_lo").mapInArrow(
        exact_batches, "doc long, group_first long"
    )
    return sketched.join(groups, "doc")


def _candidates(active: Any, config: DedupConfig) -> tuple[Any, int, int]:
    """Candidate pairs ``(first, second)`` of the active documents, and giant-bucket counts."""
    from pyspark.sql import functions as F  # noqa: N812

    scheme = candidate_scheme(config.sketch, config.lsh)
    postings = active.select("doc", F.posexplode("keys").alias("band", "key"))
    if scheme.shared_namespace:  # one namespace for all columns; EMPTY is no key
        postings = postings.where(F.col("key") != -1).withColumn("band", F.lit(0))
    found = postings.repartition("band", "key").mapInArrow(
        bucket_batches(config.lsh.max_bucket_size), BUCKETS_SCHEMA
    )
    found = found.localCheckpoint(eager=True)
    counts = found.where(F.col("first").isNull())
    giant, largest = counts.agg(F.sum("giant_buckets"), F.max("largest_bucket")).first()
    pairs = found.where(F.col("first").isNotNull()).select("first", "second").distinct()
    return pairs, int(giant or 0), int(largest or 0)


def check_runs(config: DedupConfig, write: OutputSpec | None = None) -> None:
    """Refuse what the Spark engine does not run: some sketch kinds, the exact families.

    And ``write.compress``: the Spark engine writes ``kept.parquet``, which Parquet compresses.
    """
    if write is not None and write.compress != "none":
        raise ParameterError(
            f"OutputSpec.compress compresses the local engine's kept corpus; the Spark engine "
            f"writes kept.parquet, compressed by Parquet: drop compress={write.compress!r}"
        )
    if config.embedding is not None:
        raise ParameterError(
            f"{config.embedding_method} runs on the local engine: encoding is the work, and one "
            "machine's cores do it (drop --engine spark)"
        )
    if config.sketch.kind not in SPARK_KINDS:
        raise ParameterError(
            f"the Spark engine runs sketch kinds {', '.join(SPARK_KINDS)}; "
            f"got {config.sketch.kind!r} (use the local engine for it)."
        )
    if config.host_templates:
        raise ParameterError(
            "--host-templates learns each host's template in a first pass over the inputs, on "
            "the local engine only: drop it, or drop --engine spark"
        )
    if config.explain:
        raise ParameterError(
            "explain (shared passages in pairs.jsonl) runs on the local engine only; drop "
            "--explain, or run `neardup compare A B --explain` on the pairs of interest."
        )
    if candidate_scheme(config.sketch, config.lsh).reads_sets:
        raise ParameterError(
            f"the Spark engine finds candidates from signatures; the exact "
            f"{config.lsh.family!r} family needs every shingle set on one machine (use the "
            "local engine for it)."
        )


def dedup_dataframe(
    frame: Any,
    config: DedupConfig | None = None,
    *,
    id_column: str = "id",
    text_column: str = "text",
    order_column: str | None = None,
    keep_columns: Sequence[str] | None = None,
    annotate: str | None = None,
    reliable_checkpoints: bool = False,
    stages: StageJobs | None = None,
) -> SparkDedupResult:
    """Deduplicate a Spark DataFrame of ``id_column`` and ``text_column``.

    ``kept`` holds the rows of the documents kept, or with ``annotate`` every row with that
    column added (as :func:`~neardup.engine.frames.dedup_frame` does).

    Documents are numbered in the order of ``order_column`` (ascending, unique), or in the
    DataFrame's own order; "first" means first in that order, as in the local engine.
    ``keep_columns`` hold the values of ``config.keep_by``'s fields, in its order (default:
    the columns named as the fields). The
    result equals :func:`neardup.dedup` on the same texts in the same order. Spark jobs run
    in job groups ``neardup:<stage>`` (``stages``, which may show their progress too: see
    :class:`~neardup.engine.spark_session.StageJobs`).
    """
    require_pyspark()
    from pyspark.sql import functions as F  # noqa: N812

    config = config if config is not None else DedupConfig()
    check_runs(config)
    started = time.perf_counter()
    seconds: dict[str, float] = {}
    spark = frame.sparkSession

    stages = stages if stages is not None else StageJobs(spark)

    def lap(name: str, since: float, following: str) -> float:
        """Close stage ``name`` (timed since ``since``); Spark jobs now belong to ``following``."""
        now = time.perf_counter()
        seconds[name] = now - since
        stages.enter(following)
        return now

    stages.enter("read_sketch")
    numbered = _numbered(frame, order_column)
    docs = numbered.select(
        "doc",
        F.col(id_column).cast("string").alias("id"),
        F.col(text_column).alias("text"),
        *_keep_values(numbered, config, keep_columns),
    ).cache()
    num_docs = docs.count()
    if num_docs == 0:
        raise InputError("no usable records in the input")
    sketched = docs.select("doc", "text").mapInArrow(sketch_batches(config, "text"), SKETCH_SCHEMA)
    sketched = sketched.localCheckpoint(eager=True)
    now = lap("read_sketch", started, "exact")

    sketched = _exact_groups(sketched).cache()
    exact_links = sketched.where(F.col("doc") != F.col("group_first")).select(
        F.col("group_first").alias("first"), F.col("doc").alias("second")
    )
    now = lap("exact", now, "candidates")

    active = sketched.where((F.col("doc") == F.col("group_first")) & ~F.col("is_short"))
    candidates, num_giant, largest = _candidates(active, config)
    warn_of_giant_buckets(num_giant, largest, config)
    candidates = candidates.localCheckpoint(eager=True)
    num_candidates = candidates.count()
    now = lap("candidates", now, "verify")

    scored = _scored(candidates, sketched, docs, config, candidates=True).localCheckpoint(
        eager=True
    )
    verified = scored.where("accepted").drop("accepted").localCheckpoint(eager=True)
    now = lap("verify", now, "cluster")

    edges = exact_links.union(verified.select("first", "second")).toDF("src", "dst")
    labels = component_labels(edges, reliable_checkpoints=reliable_checkpoints)
    clusters = _clusters(docs, sketched, labels, verified, config)
    clusters = clusters.localCheckpoint(eager=True)
    now = lap("cluster", now, "write")

    decided = _decided(scored, verified, clusters.select("doc", "label"), num_candidates, config)
    pairs = _pairs(docs, exact_links, decided.reported)
    sizes = clusters.groupBy("label", "cluster").count().where("count > 1").cache()
    multi = sizes.agg(F.count("*"), F.sum("count")).first()
    num_kept = clusters.where("keep").count()
    num_bytes = int(sketched.agg(F.sum("num_bytes")).first()[0] or 0)
    counts = Counts(
        items=num_docs,
        bytes=num_bytes,
        short_documents=sketched.where("is_short").count(),
        empty_documents=sketched.where("is_empty").count(),
        exact_duplicates=exact_links.count(),
        candidate_pairs=num_candidates,
        already_joined=decided.already_joined,
        verified_pairs=decided.verified.count(),
        pairs_reported=decided.reported.count(),
        clusters=int(multi[0] or 0),
        documents_in_clusters=int(multi[1] or 0),
        removed=num_docs - num_kept,
        kept=num_kept,
        giant_buckets=num_giant,
        largest_bucket=largest,
        size_rejected=decided.size_rejected,
    )
    kept = _output_corpus(numbered, clusters, annotate)
    times = StageTimes.measured(seconds, num_bytes, total=time.perf_counter() - started)
    summary = summarize(
        config,
        counts,
        _biggest_clusters(sizes),
        times,
        spark_master=spark.sparkContext.master,
        histogram=decided.histogram,
    )
    return SparkDedupResult(clusters=clusters, pairs=pairs, kept=kept, summary=summary)


def _output_corpus(numbered: Any, clusters: Any, annotate: str | None) -> Any:
    """The input rows of the kept documents (with ``annotate``: of every document).

    Annotated rows carry the column ``annotate``: ``cluster``, ``keep``, ``similarity``.
    """
    from pyspark.sql import functions as F  # noqa: N812

    if annotate is None:
        return numbered.join(clusters.where("keep").select("doc"), "doc")
    note = F.struct("cluster", "keep", "similarity").alias(annotate)
    return numbered.join(clusters.select("doc", note), "doc")


def _keep_values(frame: Any, config: DedupConfig, columns: Sequence[str] | None) -> list[Any]:
    """The ``keep_by`` values as columns ``keep0``, ``keep1``, ... (:func:`comparable_column`)."""
    from pyspark.sql import functions as F  # noqa: N812

    names = [name for name, _ in config.keep_fields]
    columns = list(columns) if columns is not None else names
    values = []
    for i, (name, column) in enumerate(zip(names, columns, strict=True)):
        if column not in frame.columns:
            raise InputError(f"the DataFrame has no column {column!r} to keep by")
        kind = frame.schema[column].dataType
        value, _ = comparable_column(F.col(column), kind, name, "the DataFrame")
        values.append(value.alias(f"keep{i}"))
    return values


def _numbered(frame: Any, order_column: str | None) -> Any:
    """``frame`` with a ``doc`` column: 0, 1, ... in ``order_column`` order (or frame order)."""
    from pyspark.sql.types import LongType, StructField, StructType

    ordered = frame.orderBy(order_column) if order_column else frame
    schema = StructType([StructField("doc", LongType(), False), *ordered.schema.fields])
    return frame.sparkSession.createDataFrame(
        ordered.rdd.zipWithIndex().map(lambda pair: (pair[1], *pair[0])), schema
    )


def _scored(
    pairs: Any, sketched: Any, docs: Any, config: DedupConfig, *, candidates: bool = False
) -> Any:
    """The pairs ``(first, second)`` with their similarities (:func:`score_batches`).

    ``candidates``: the pairs verification decides (some left unmeasured by their sizes).
    """
    signature = sketched.select("doc", "signature")
    joined = pairs.join(signature.toDF("first", "a_signature"), "first").join(
        signature.toDF("second", "b_signature"), "second"
    )
    if config.verify_mode == "exact":
        text = docs.select("doc", "text")
        joined = joined.join(text.toDF("first", "a_text"), "first").join(
            text.toDF("second", "b_text"), "second"
        )
    return joined.mapInArrow(score_batches(config, candidates=candidates), SCORED_SCHEMA)


def _binned(frame: Any) -> tuple[np.ndarray, int, int]:
    """``frame``'s pairs by similarity bin, those not measured, and all of them, in one pass.

    Bins as :func:`~neardup.summary.histogram_counts` bins; a pair not measured has a NaN
    similarity (rejected by its sets' sizes).
    """
    from pyspark.sql import functions as F  # noqa: N812

    column = F.col("similarity")
    binned = F.when(F.isnan(column), F.lit(-1)).otherwise(
        F.least(F.floor(F.greatest(F.least(column, F.lit(1.0)), F.lit(0.0)) * 50), F.lit(49))
    )
    bins = np.zeros(HISTOGRAM_BINS, dtype=np.int64)
    not_measured = total = 0
    for row in frame.groupBy(binned.alias("bin")).count().collect():
        total += row["count"]
        if row["bin"] == -1:
            not_measured = row["count"]
        elif row["bin"] is not None:
            bins[int(row["bin"])] = row["count"]
    return bins, not_measured, total


def _clusters(docs: Any, sketched: Any, labels: Any, verified: Any, config: DedupConfig) -> Any:
    """One row per document: its cluster (the label and its id), keep flag, similarities, line.

    The local engine's :func:`~neardup.pipeline.cluster_joined`: representatives by the keep
    rule, each exact group's first scored against its representative (copies share it), and
    with ``cluster="center"`` :func:`~neardup.cluster.center_clusters` cluster by cluster.
    """
    from pyspark.sql import functions as F  # noqa: N812

    values = [f"keep{i}" for i in range(len(config.keep_by))]
    labelled = (
        sketched.select("doc", "length", "group_first")
        .join(labels.withColumnRenamed("node", "doc"), "doc", "left")
        .withColumn("label", F.coalesce("label", "doc"))
    )
    if values:
        labelled = labelled.join(docs.select("doc", *values), "doc")
    kept = labelled.repartition("label").mapInArrow(
        keep_batches(config), "doc long, label long, keep boolean"
    )
    kept = labelled.join(kept.drop("label"), "doc").localCheckpoint(eager=True)
    representative = kept.where("keep").select("label", F.col("doc").alias("first"))
    members = kept.where(~F.col("keep") & (F.col("doc") == F.col("group_first")))
    pairs = members.join(representative, "label").select("first", F.col("doc").alias("second"))
    scored = _scored(pairs, sketched, docs, config).select(
        F.col("second").alias("group_first"), F.col("similarity")
    )
    measured_docs = kept.join(scored, "group_first", "left").withColumn(
        "similarity", F.coalesce("similarity", F.lit(1.0))
    )
    if config.cluster == "center":
        measured_docs = _centers(measured_docs, verified, config, docs)
    least = measured_docs.groupBy("label").agg(F.min("similarity").alias("min_similarity"))
    ids = docs.select("doc", "id")
    named = (
        measured_docs.select("doc", "label", "keep", "similarity")
        .join(least, "label")
        .join(ids, "doc")
        .join(ids.toDF("label", "cluster"), "label")
    )
    line = cluster_lines(
        *(F.col(c) for c in ("id", "cluster", "keep", "similarity", "min_similarity"))
    )
    return named.select("doc", "id", "label", "cluster", "keep", "similarity", line.alias("line"))


def _centers(measured_docs: Any, verified: Any, config: DedupConfig, docs: Any) -> Any:
    """Each component through :func:`~neardup.cluster.center_clusters`, whole in one task.

    Document rows and the component's verified pairs travel in one frame (``other`` is null
    on a document's row), shuffled on the component's label.
    """
    from pyspark.sql import functions as F  # noqa: N812

    values = [f"keep{i}" for i in range(len(config.keep_by))]
    doc_rows = measured_docs.select(
        "label", "doc", "keep", "similarity", "length", F.col("group_first").alias("follows"),
        F.lit(None).cast("long").alias("other"), *values,
    )  # fmt: skip
    edge_rows = verified.join(
        measured_docs.select(F.col("doc").alias("first"), "label"), "first"
    ).select(
        "label", F.col("first").alias("doc"), F.lit(None).cast("boolean").alias("keep"),
        "similarity", F.lit(None).cast("long").alias("length"),
        F.lit(None).cast("long").alias("follows"), F.col("second").alias("other"),
        *(F.lit(None).cast(docs.schema[v].dataType).alias(v) for v in values),
    )  # fmt: skip
    rows = doc_rows.unionByName(edge_rows).repartition("label")
    centered = rows.mapInArrow(center_batches(config), CENTER_SCHEMA)
    return measured_docs.drop("label", "keep", "similarity").join(centered, "doc")


def _reported(verified: Any, labels: Any, config: DedupConfig) -> Any:
    """The verified pairs ``config.pairs`` reports; ``labels``: each document's final cluster.

    ``"spanning"``: of the pairs inside one cluster, those that join two clusters when they
    are merged in ``(first, second)`` order, as the local engine's union-find takes them.
    Clusters are disjoint, so that is decided cluster by cluster: each cluster's pairs go to
    one task, sorted, through the same union-find kernel.
    """
    if config.pairs == "all":
        return verified
    if config.pairs == "none":
        return verified.limit(0)
    labelled = (
        verified.join(labels.toDF("first", "label"), "first")
        .join(labels.toDF("second", "second_label"), "second")
        .where("label = second_label")
    )
    return labelled.repartition("label").mapInArrow(spanning_batches, VERIFIED_SCHEMA)


class _Decided(NamedTuple):
    """The candidates as the local engine's verification leaves them (:func:`_decided`)."""

    verified: Any
    """The pairs measured and accepted."""
    reported: Any
    """Those of them ``pairs.jsonl`` reports."""
    already_joined: int
    size_rejected: int | None
    histogram: SimilarityHistogram


def _decided(
    scored: Any, verified: Any, labels: Any, num_candidates: int, config: DedupConfig
) -> _Decided:
    """The pairs counted as the local engine counts them.

    ``scored``: every candidate; ``verified``: those accepted; ``labels``: each document's
    final cluster. A candidate is decided when reached apart (measured, or rejected by its
    sets' sizes: a NaN similarity); the others were already joined.
    """
    if measures_every_candidate(config):
        decided, reported = scored, _reported(verified, labels, config)
    else:
        decided, verified = _measured_in_order(scored, labels)
        reported = verified if config.pairs == "spanning" else verified.limit(0)
    candidate_bins, size_rejected, num_decided = _binned(decided)
    return _Decided(
        verified,
        reported,
        num_candidates - num_decided,
        size_rejected if size_floor(config) is not None else None,
        SimilarityHistogram.of(candidate_bins, _binned(verified)[0]),
    )


def _measured_in_order(scored: Any, labels: Any) -> tuple[Any, Any]:
    """The candidates the local engine measures, and the accepted ones among them.

    The local engine (:func:`~neardup.pipeline.verify_and_join`) takes the candidates in
    ``(first, second)`` order and leaves out those whose documents the pairs before already
    joined: a pair between two clusters is always measured; within a cluster, its pairs
    (whole in one task) are taken in order through the same union-find
    (:func:`decided_batches`). The accepted pairs measured are the spanning ones.
    """
    labelled = scored.join(labels.toDF("first", "label"), "first").join(
        labels.toDF("second", "second_label"), "second"
    )
    across = labelled.where("label != second_label").select(*SCORED_COLUMNS)
    decided = (
        labelled.where("label = second_label")
        .select(*SCORED_COLUMNS, "label")
        .repartition("label")
        .mapInArrow(decided_batches, DECIDED_SCHEMA)
        .localCheckpoint(eager=True)
    )
    measured = across.union(decided.where("measured").select(*SCORED_COLUMNS))
    verified = decided.where("joined").select(*SCORED_COLUMNS).drop("accepted")
    return measured, verified


def _pairs(docs: Any, exact_links: Any, verified: Any) -> Any:
    """Exact links and reported pairs, with both ids and their ``pairs.jsonl`` line."""
    from pyspark.sql import functions as F  # noqa: N812

    ids = docs.select("doc", "id")
    exact = exact_links.select(
        "first", "second", F.lit(1.0).alias("estimate"), F.lit(1.0).alias("jaccard"),
        F.lit(True).alias("exact"),
    )  # fmt: skip
    near = verified.select("first", "second", "estimate", "jaccard", F.lit(False).alias("exact"))
    both = (
        exact.union(near)
        .join(ids.toDF("first", "a"), "first")
        .join(ids.toDF("second", "b"), "second")
    )
    columns = [F.col(name) for name in ("a", "b", "estimate", "jaccard", "exact")]
    return both.select(
        F.col("first").alias("a_doc"), F.col("second").alias("b_doc"),
        "a", "b", "estimate", "jaccard", "exact", pair_lines(*columns).alias("line"),
    )  # fmt: skip


def _biggest_clusters(sizes: Any, count: int = 5) -> list[ClusterSize]:
    """The largest clusters of ``sizes`` (label, cluster, count), as the local summary lists them.

    Ties go to the smaller label.
    """
    from pyspark.sql import functions as F  # noqa: N812

    top = sizes.orderBy(F.desc("count"), "label").take(count)
    return [ClusterSize(row["cluster"], row["count"]) for row in top]


def dedup_files_spark(
    spark: Any,
    inputs: Sequence[str],
    output: str,
    config: DedupConfig | None = None,
    *,
    read: ReadSpec | None = None,
    write: OutputSpec | None = None,
    overwrite: bool = False,
    show_progress: bool = False,
) -> Summary:
    """``neardup dedup --engine spark``: read, deduplicate, write ``output``; return the summary.

    ``output`` may be any Hadoop-compatible path: ``clusters.jsonl``, ``pairs.jsonl`` (text,
    ordered by document) and ``kept.parquet`` (or ``annotated.parquet``) are written by Spark
    as directories of parts; on a local path they are then joined into single files,
    byte-identical to the local engine's, and the directory appears only when the run succeeded
    (:func:`neardup.io.spark.spark_output`). ``read`` and ``write`` are the local engine's
    (:func:`~neardup.jobs.dedup.dedup_files`), but for ``write.compress``: Parquet compresses
    the kept corpus itself. ``show_progress``: each stage's tasks on stderr.
    """
    config = config if config is not None else DedupConfig()
    read = read if read is not None else ReadSpec()
    write = write if write is not None else OutputSpec()
    check_runs(config, write)
    with (
        spark_output(spark, output, kind="dedup", overwrite=overwrite, inputs=inputs) as out,
        errors_of_tasks(),
        released_when_done(spark),
        StageJobs(spark, show_progress=show_progress) as stages,
    ):
        result = dedup_dataframe(
            read_inputs(spark, inputs, config, read),
            config,
            order_column="order",
            keep_columns=keep_columns(config),
            annotate=write.annotate,
            stages=stages,
        )
        pairs = result.pairs if config.pairs != "none" else None
        written = write_results(out, result.clusters, pairs, result.kept, write.annotate)
        summary = dataclasses.replace(
            result.summary,
            inputs=tuple(inputs),
            outputs={**written, "summary": "summary.json"},
            read=read,
            write=write,
        )
        out.write_json("summary.json", summary.to_dict())
    return summary
