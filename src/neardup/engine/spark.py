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
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

import numpy as np

from neardup._faults import fail_task_once
from neardup._types import Batch
from neardup.candidates import candidate_scheme
from neardup.candidates import estimate as estimate_similarity
from neardup.cluster import (
    Clusters,
    UnionFind,
    center_clusters,
    preference_order,
    representatives,
    union_pairs,
)
from neardup.engine.spark_components import component_labels
from neardup.errors import InputError, MissingExtraError, ParameterError
from neardup.io.spark import (
    cluster_lines,
    comparable_column,
    keep_columns,
    pair_lines,
    read_inputs,
    spark_output,
    write_results,
)
from neardup.keep import KeepValues, comparable
from neardup.kinds import SKETCH_KINDS
from neardup.lsh.banding import bucket_pairs
from neardup.pairs import CandidatePairs
from neardup.params import DedupConfig
from neardup.pipeline import (
    BatchSketcher,
    accepted,
    exact_groups,
    measured,
    measures_every_candidate,
    summarize,
    warn_of_giant_buckets,
)
from neardup.sketch import make_sketcher
from neardup.sketch.signatures import Signatures
from neardup.summary import (
    HISTOGRAM_BINS,
    ClusterSize,
    Counts,
    SimilarityHistogram,
    StageTimes,
    Summary,
)
from neardup.text.spans import pack_strings
from neardup.verify import exact_similarity

__all__ = ["SparkDedupResult", "dedup_dataframe", "dedup_files_spark", "spark_session"]

SPARK_KINDS = tuple(name for name, kind in SKETCH_KINDS.items() if kind.spark)
"""Sketch kinds the Spark engine runs: those the registry marks ``spark``."""

_SKETCH_SCHEMA = (
    "doc long, length long, num_bytes long, is_short boolean, is_empty boolean, fp_hi long, "
    "fp_lo long, signature binary, keys array<long>"
)
_BUCKETS_SCHEMA = "first long, second long, giant_buckets long, largest_bucket long"
_VERIFIED_SCHEMA = "first long, second long, estimate double, jaccard double"
_SCORED_SCHEMA = (
    "first long, second long, estimate double, jaccard double, similarity double, accepted boolean"
)
_SCORED_COLUMNS = ("first", "second", "estimate", "jaccard", "similarity", "accepted")
_DECIDED_SCHEMA = _SCORED_SCHEMA + ", measured boolean, joined boolean"
_CENTER_SCHEMA = "doc long, label long, keep boolean, similarity double"


def _require_pyspark() -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise MissingExtraError(
            "the Spark engine needs pyspark: pip install 'neardup[spark]'"
        ) from None


def spark_session(master: str | None = None, conf: Sequence[str] = ()) -> Any:
    """A SparkSession for neardup: ``master`` (default ``local[*]``) and ``key=value`` settings.

    Python workers run this interpreter unless ``PYSPARK_PYTHON`` says otherwise.
    """
    _require_pyspark()
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("neardup").master(master or "local[*]")
    builder = builder.config("spark.ui.showConsoleProgress", "false")
    for item in conf:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ParameterError(f"--spark-conf takes KEY=VALUE; got {item!r}.")
        builder = builder.config(key.strip(), value.strip())
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


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
        The input rows (with ``doc``) of the documents kept; with ``config.annotate``, of
        every document, with that column added (a struct of ``cluster``, ``keep``,
        ``similarity``).
    summary
        Parameters, counts and timings, as in the local ``summary.json``.
    """

    clusters: Any
    pairs: Any
    kept: Any
    summary: Summary


def _uint64_as_int64(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.uint64).view(np.int64)


def _column(table: Any, name: str) -> np.ndarray:
    return np.asarray(table.column(name).to_numpy())


def _partition(batches: Iterator[Any], *order: str) -> Any:
    """A partition's Arrow batches as one table, sorted by ``order`` (None when empty).

    After a shuffle on a key, a partition holds every row of its keys: a bucket, an exact group
    or a cluster is whole in it.
    """
    import pyarrow as pa

    received = [batch for batch in batches if batch.num_rows]
    if not received:
        return None
    return pa.Table.from_batches(received).sort_by([(name, "ascending") for name in order])


def _sketch_batches(config: DedupConfig, text_column: str) -> Callable[[Iterator[Any]], Any]:
    """The mapInArrow function: (doc, text) batches through :class:`BatchSketcher`."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        step = BatchSketcher(config)
        for batch in batches:
            fail_task_once()
            texts = Batch(*pack_strings(batch.column(text_column).to_pylist()))
            normalized, stats = step.normalize(texts, in_place=True)
            sizes = np.diff(normalized.offsets)
            for block in step.blocks(normalized):
                rows = slice(block.start, block.stop)
                signatures = block.signatures
                keys = _uint64_as_int64(block.keys)
                fingerprints = _uint64_as_int64(signatures.fingerprints)
                yield pa.RecordBatch.from_pydict(
                    {
                        "doc": batch.column("doc").slice(block.start, signatures.num_docs),
                        "length": pa.array(stats.chars[rows], pa.int64()),
                        "num_bytes": pa.array(sizes[rows], pa.int64()),
                        "is_short": pa.array(signatures.is_short, pa.bool_()),
                        "is_empty": pa.array(block.is_empty, pa.bool_()),
                        "fp_hi": pa.array(fingerprints[:, 0], pa.int64()),
                        "fp_lo": pa.array(fingerprints[:, 1], pa.int64()),
                        "signature": pa.array(
                            [row.tobytes() for row in signatures.values], pa.binary()
                        ),
                        "keys": pa.ListArray.from_arrays(
                            pa.array(
                                np.arange(signatures.num_docs + 1) * keys.shape[1], pa.int32()
                            ),
                            pa.array(keys.reshape(-1), pa.int64()),
                        ),
                    }
                )

    return run


def _exact_batches(batches: Iterator[Any]) -> Iterator[Any]:
    """The mapInArrow function: whole exact groups → each document's :func:`exact_groups` first."""
    import pyarrow as pa

    table = _partition(batches, "doc")
    if table is None:
        return
    docs = _column(table, "doc")
    fingerprints = np.stack([_column(table, "fp_hi"), _column(table, "fp_lo")], axis=1)
    first, _ = exact_groups(fingerprints.view(np.uint64), _column(table, "is_empty"))
    yield pa.RecordBatch.from_pydict({"doc": docs, "group_first": docs[first]})


def _exact_groups(sketched: Any) -> Any:
    """``sketched`` with each document's ``group_first`` (:func:`exact_groups`)."""
    fingerprints = sketched.select("doc", "fp_hi", "fp_lo", "is_empty")
    groups = fingerprints.repartition("fp_hi", "fp_lo").mapInArrow(
        _exact_batches, "doc long, group_first long"
    )
    return sketched.join(groups, "doc")


def _bucket_batches(max_bucket_size: int) -> Callable[[Iterator[Any]], Any]:
    """The mapInArrow function: whole buckets → their pairs (:func:`bucket_pairs`).

    After the pairs comes one row of the partition's bucket counts (its ``first`` null).
    """

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        table = _partition(batches, "doc")
        if table is None:
            return
        nodes, docs = np.unique(_column(table, "doc"), return_inverse=True)
        bands = _column(table, "band")
        keys = _column(table, "key").view(np.uint64)
        buckets = ((keys[bands == b], docs[bands == b]) for b in np.unique(bands).tolist())
        found = bucket_pairs(buckets, nodes.shape[0], max_bucket_size)
        yield pa.RecordBatch.from_pydict(
            {
                "first": pa.array(nodes[found.first], pa.int64()),
                "second": pa.array(nodes[found.second], pa.int64()),
                "giant_buckets": pa.nulls(len(found), pa.int64()),
                "largest_bucket": pa.nulls(len(found), pa.int64()),
            }
        )
        yield pa.RecordBatch.from_pydict(
            {
                "first": pa.nulls(1, pa.int64()),
                "second": pa.nulls(1, pa.int64()),
                "giant_buckets": pa.array([found.num_giant_buckets], pa.int64()),
                "largest_bucket": pa.array([found.largest_bucket], pa.int64()),
            }
        )

    return run


def _candidates(active: Any, config: DedupConfig) -> tuple[Any, int, int]:
    """Candidate pairs ``(first, second)`` of the active documents, and giant-bucket counts."""
    from pyspark.sql import functions as F  # noqa: N812

    scheme = candidate_scheme(config.sketch, config.lsh)
    postings = active.select("doc", F.posexplode("keys").alias("band", "key"))
    if scheme.shared_namespace:  # one namespace for all columns; EMPTY is no key
        postings = postings.where(F.col("key") != -1).withColumn("band", F.lit(0))
    found = postings.repartition("band", "key").mapInArrow(
        _bucket_batches(config.lsh.max_bucket_size), _BUCKETS_SCHEMA
    )
    found = found.localCheckpoint(eager=True)
    counts = found.where(F.col("first").isNull())
    giant, largest = counts.agg(F.sum("giant_buckets"), F.max("largest_bucket")).first()
    pairs = found.where(F.col("first").isNotNull()).select("first", "second").distinct()
    return pairs, int(giant or 0), int(largest or 0)


def _score_batches(config: DedupConfig) -> Callable[[Iterator[Any]], Any]:
    """The mapInArrow function: pairs with both signatures (and texts) → their similarities.

    Each pair's estimate, exact similarity (``verify="exact"``), the similarity verification
    goes by (:func:`~neardup.pipeline.measured`) and whether :func:`~neardup.pipeline.accepted`
    passes it.
    """

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        width = make_sketcher(config.sketch).width
        for batch in batches:
            count = batch.num_rows
            rows = [
                np.frombuffer(blob, dtype=np.uint64)
                for column in ("a_signature", "b_signature")
                for blob in batch.column(column).to_pylist()
            ]
            values = np.stack(rows) if rows else np.empty((0, width), dtype=np.uint64)
            signatures = Signatures(
                values=values,
                num_shingles=np.ones(2 * count, dtype=np.int64),
                fingerprints=np.zeros((2 * count, 2), dtype=np.uint64),
                spec=config.sketch,
            )
            local = CandidatePairs(first=np.arange(count), second=np.arange(count, 2 * count))
            estimate = estimate_similarity(signatures, local)
            jaccard = np.full(count, np.nan)
            if config.verify_mode == "exact" and count:
                texts = batch.column("a_text").to_pylist() + batch.column("b_text").to_pylist()
                jaccard = exact_similarity(texts, local, config.sketch)
            yield pa.RecordBatch.from_pydict(
                {
                    "first": batch.column("first"),
                    "second": batch.column("second"),
                    "estimate": pa.array(estimate, pa.float64()),
                    "jaccard": pa.array(jaccard, pa.float64()),
                    "similarity": pa.array(measured(estimate, jaccard, config), pa.float64()),
                    "accepted": pa.array(accepted(estimate, jaccard, config)),
                }
            )

    return run


def _keep_batches(config: DedupConfig) -> Callable[[Iterator[Any]], Any]:
    """The mapInArrow function: whole clusters → each document's keep flag.

    The local keep rule, :func:`~neardup.cluster.representatives`, cluster by cluster.
    """

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        table = _partition(batches, "doc")
        if table is None:
            return
        docs, labels = _column(table, "doc"), _column(table, "label")
        kept = representatives(
            np.searchsorted(docs, labels),
            config.keep,
            _column(table, "length"),
            _table_keep_values(table, config),
        )
        yield pa.RecordBatch.from_pydict({"doc": docs, "label": labels, "keep": kept})

    return run


def _table_keep_values(table: Any, config: DedupConfig) -> KeepValues | None:
    """The ``keep0``, ``keep1``, ... columns of a partition's table (None without keep_by)."""
    if not config.keep_by:
        return None
    columns = [
        comparable(table.column(f"keep{i}").combine_chunks(), name, "the Spark rows")
        for i, (name, _) in enumerate(config.keep_fields)
    ]
    return KeepValues.of(config, columns)


def check_runs(config: DedupConfig) -> None:
    """Refuse what the Spark engine does not run: some sketch kinds, the exact families."""
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
    reliable_checkpoints: bool = False,
) -> SparkDedupResult:
    """Deduplicate a Spark DataFrame of ``id_column`` and ``text_column``.

    Documents are numbered in the order of ``order_column`` (ascending, unique), or in the
    DataFrame's own order; "first" means first in that order, as in the local engine.
    ``keep_columns`` hold the values of ``config.keep_by``'s fields, in its order (default:
    the columns named as the fields). The
    result equals :func:`neardup.dedup` on the same texts in the same order. Spark jobs run
    in job groups ``neardup:<stage>``, so the UI and its REST API attribute time and shuffle
    bytes to the stages (``bench/spark.py`` reads them).
    """
    _require_pyspark()
    from pyspark.sql import functions as F  # noqa: N812

    config = config if config is not None else DedupConfig()
    check_runs(config)
    started = time.perf_counter()
    seconds: dict[str, float] = {}
    spark = frame.sparkSession

    def lap(name: str, since: float, following: str) -> float:
        """Close stage ``name`` (timed since ``since``); Spark jobs now belong to ``following``."""
        now = time.perf_counter()
        seconds[name] = now - since
        spark.sparkContext.setJobGroup(f"neardup:{following}", following)
        return now

    spark.sparkContext.setJobGroup("neardup:read_sketch", "read_sketch")
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
    sketched = docs.select("doc", "text").mapInArrow(
        _sketch_batches(config, "text"), _SKETCH_SCHEMA
    )
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

    scored = _scored(candidates, sketched, docs, config).localCheckpoint(eager=True)
    verified = scored.where("accepted").drop("accepted").localCheckpoint(eager=True)
    now = lap("verify", now, "cluster")

    edges = exact_links.union(verified.select("first", "second")).toDF("src", "dst")
    labels = component_labels(edges, reliable_checkpoints=reliable_checkpoints)
    clusters = _clusters(docs, sketched, labels, verified, config)
    clusters = clusters.localCheckpoint(eager=True)
    now = lap("cluster", now, "write")

    verified, reported, already_joined, histogram = _decided(
        scored, verified, clusters.select("doc", "label"), num_candidates, config
    )
    pairs = _pairs(docs, exact_links, reported)
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
        already_joined=already_joined,
        verified_pairs=verified.count(),
        pairs_reported=reported.count(),
        clusters=int(multi[0] or 0),
        documents_in_clusters=int(multi[1] or 0),
        removed=num_docs - num_kept,
        kept=num_kept,
        giant_buckets=num_giant,
        largest_bucket=largest,
    )
    kept = _output_corpus(numbered, clusters, config)
    times = StageTimes.measured(seconds, num_bytes, total=time.perf_counter() - started)
    summary = summarize(
        config,
        counts,
        _biggest_clusters(sizes),
        times,
        spark_master=spark.sparkContext.master,
        histogram=histogram,
    )
    return SparkDedupResult(clusters=clusters, pairs=pairs, kept=kept, summary=summary)


def _output_corpus(numbered: Any, clusters: Any, config: DedupConfig) -> Any:
    """The input rows of the kept documents (with ``config.annotate``: of every document).

    Annotated rows carry the column ``config.annotate``: ``cluster``, ``keep``, ``similarity``.
    """
    from pyspark.sql import functions as F  # noqa: N812

    if config.annotate is None:
        return numbered.join(clusters.where("keep").select("doc"), "doc")
    note = F.struct("cluster", "keep", "similarity").alias(config.annotate)
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


def _scored(pairs: Any, sketched: Any, docs: Any, config: DedupConfig) -> Any:
    """The pairs ``(first, second)`` with their similarities (:func:`_score_batches`)."""
    signature = sketched.select("doc", "signature")
    joined = pairs.join(signature.toDF("first", "a_signature"), "first").join(
        signature.toDF("second", "b_signature"), "second"
    )
    if config.verify_mode == "exact":
        text = docs.select("doc", "text")
        joined = joined.join(text.toDF("first", "a_text"), "first").join(
            text.toDF("second", "b_text"), "second"
        )
    return joined.mapInArrow(_score_batches(config), _SCORED_SCHEMA)


def _similarity_histogram(scored: Any, verified: Any) -> SimilarityHistogram:
    """The candidates and verified pairs by similarity, binned as :func:`histogram_counts` bins."""
    from pyspark.sql import functions as F  # noqa: N812

    def counts(frame: Any) -> np.ndarray:
        column = F.col("similarity")
        binned = F.least(
            F.floor(F.greatest(F.least(column, F.lit(1.0)), F.lit(0.0)) * 50), F.lit(49)
        )
        rows = frame.where(~F.isnan(column)).groupBy(binned.alias("bin")).count().collect()
        out = np.zeros(HISTOGRAM_BINS, dtype=np.int64)
        for row in rows:
            out[int(row["bin"])] = row["count"]
        return out

    return SimilarityHistogram.of(counts(scored), counts(verified))


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
        _keep_batches(config), "doc long, label long, keep boolean"
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
    centered = rows.mapInArrow(_center_batches(config), _CENTER_SCHEMA)
    return measured_docs.drop("label", "keep", "similarity").join(centered, "doc")


def _center_batches(config: DedupConfig) -> Callable[[Iterator[Any]], Any]:
    """The mapInArrow function: whole components and their pairs → center clusters."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.compute as pc

        table = _partition(batches, "doc", "other")
        if table is None:
            return
        is_doc = pc.is_null(table.column("other"))
        rows, edges = table.filter(is_doc), table.filter(pc.invert(is_doc))
        docs = _column(rows, "doc")

        def local(name: str, frame: Any = rows) -> np.ndarray:
            return np.searchsorted(docs, _column(frame, name))

        components = Clusters(
            labels=local("label"),
            keep=_column(rows, "keep"),
            similarity=_column(rows, "similarity"),
        )
        clusters = center_clusters(
            components,
            local("doc", edges),
            local("other", edges),
            _column(edges, "similarity"),
            config.lsh.threshold,
            order=preference_order(
                docs.shape[0],
                config.keep,
                _column(rows, "length"),
                _table_keep_values(rows, config),
            ),
            follows=local("follows"),
        )
        yield pa.RecordBatch.from_pydict(
            {
                "doc": docs,
                "label": docs[clusters.labels],
                "keep": clusters.keep,
                "similarity": clusters.similarity,
            }
        )

    return run


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
    return labelled.repartition("label").mapInArrow(_spanning_batches, _VERIFIED_SCHEMA)


def _decided(
    scored: Any, verified: Any, labels: Any, num_candidates: int, config: DedupConfig
) -> tuple[Any, Any, int, SimilarityHistogram]:
    """Accepted, reported, not measured, histogram: the pairs counted as the local engine does.

    Returns the pairs measured and accepted, those reported, how many candidates were not
    measured, and the similarity histogram. ``scored``: every candidate; ``verified``: those
    accepted; ``labels``: each document's final cluster.
    """
    if measures_every_candidate(config):
        reported = _reported(verified, labels, config)
        return verified, reported, 0, _similarity_histogram(scored, verified)
    measured_pairs, verified = _measured_in_order(scored, labels)
    reported = verified if config.pairs == "spanning" else verified.limit(0)
    histogram = _similarity_histogram(measured_pairs, verified)
    return verified, reported, num_candidates - measured_pairs.count(), histogram


def _measured_in_order(scored: Any, labels: Any) -> tuple[Any, Any]:
    """The candidates the local engine measures, and the accepted ones among them.

    The local engine (:func:`~neardup.pipeline.verify_and_join`) takes the candidates in
    ``(first, second)`` order and leaves out those whose documents the pairs before already
    joined: a pair between two clusters is always measured; within a cluster, its pairs
    (whole in one task) are taken in order through the same union-find
    (:func:`_decided_batches`). The accepted pairs measured are the spanning ones.
    """
    labelled = scored.join(labels.toDF("first", "label"), "first").join(
        labels.toDF("second", "second_label"), "second"
    )
    across = labelled.where("label != second_label").select(*_SCORED_COLUMNS)
    decided = (
        labelled.where("label = second_label")
        .select(*_SCORED_COLUMNS, "label")
        .repartition("label")
        .mapInArrow(_decided_batches, _DECIDED_SCHEMA)
        .localCheckpoint(eager=True)
    )
    measured = across.union(decided.where("measured").select(*_SCORED_COLUMNS))
    verified = decided.where("joined").select(*_SCORED_COLUMNS).drop("accepted")
    return measured, verified


def _decided_batches(batches: Iterator[Any]) -> Iterator[Any]:
    """The mapInArrow function: whole clusters' candidates, in order → measured, joined."""
    import pyarrow as pa

    table = _partition(batches, "first", "second")
    if table is None:
        return
    num_nodes, first, second = _numbered_pairs(table)
    measured, joined = UnionFind(num_nodes).join(
        first, second, table.column("accepted").to_numpy(zero_copy_only=False), skip_joined=True
    )
    columns = {name: table.column(name) for name in _SCORED_COLUMNS}
    yield from pa.table(
        {**columns, "measured": pa.array(measured), "joined": pa.array(joined)}
    ).to_batches()


def _spanning_batches(batches: Iterator[Any]) -> Iterator[Any]:
    """The mapInArrow function: whole clusters' pairs, in order → those that join clusters."""
    table = _partition(batches, "first", "second")
    if table is None:
        return
    _, joined = union_pairs(*_numbered_pairs(table))
    yield from table.select(["first", "second", "estimate", "jaccard"]).filter(joined).to_batches()


def _numbered_pairs(table: Any) -> tuple[int, Any, Any]:
    """A partition's pairs with its documents numbered ``0 .. n - 1``: ``(n, first, second)``."""
    first, second = _column(table, "first"), _column(table, "second")
    nodes, local = np.unique(np.concatenate([first, second]), return_inverse=True)
    return int(nodes.shape[0]), local[: first.shape[0]], local[first.shape[0] :]


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


@contextmanager
def _errors_of_tasks() -> Iterator[None]:
    """Raise a task's :class:`InputError` (which reaches the driver wrapped by Spark) as such."""
    try:
        yield
    except Exception as exc:
        marker = "neardup.errors.InputError: "
        if marker not in str(exc):
            raise
        raise InputError(str(exc).split(marker, 1)[1].splitlines()[0]) from None


@contextmanager
def released_when_done(spark: Any) -> Iterator[None]:
    """Unpersist every RDD (checkpoints, cached frames) that the block persisted.

    A run caches its documents and checkpoints its stages in the executors' memory; once its
    outputs are written nothing needs them, and a session that runs many jobs (a notebook, a
    service, a test suite) would otherwise hold them until the driver's garbage collector
    happens to release them, and run out of memory first.
    """
    context = spark.sparkContext
    before = set(context._jsc.getPersistentRDDs().keys())
    try:
        yield
    finally:
        from py4j.protocol import Py4JError

        with suppress(Py4JError):  # a JVM that died took what it held with it
            for key, rdd in context._jsc.getPersistentRDDs().items():
                if key not in before:
                    rdd.unpersist(False)


def dedup_files_spark(
    spark: Any,
    inputs: Sequence[str],
    output: str,
    config: DedupConfig | None = None,
    *,
    overwrite: bool = False,
) -> Summary:
    """``neardup dedup --engine spark``: read, deduplicate, write ``output``; return the summary.

    ``output`` may be any Hadoop-compatible path: ``clusters.jsonl``, ``pairs.jsonl`` (text,
    ordered by document) and ``kept.parquet`` (or ``annotated.parquet``) are written by Spark
    as directories of parts; on a local path they are then joined into single files,
    byte-identical to the local engine's, and the directory appears only when the run succeeded
    (:func:`neardup.io.spark.spark_output`).
    """
    config = config if config is not None else DedupConfig()
    with (
        spark_output(spark, output, kind="dedup", overwrite=overwrite, inputs=inputs) as out,
        _errors_of_tasks(),
        released_when_done(spark),
    ):
        result = dedup_dataframe(
            read_inputs(spark, inputs, config),
            config,
            order_column="order",
            keep_columns=keep_columns(config),
        )
        pairs = result.pairs if config.pairs != "none" else None
        written = write_results(out, result.clusters, pairs, result.kept, config.annotate)
        summary = dataclasses.replace(
            result.summary,
            inputs=tuple(inputs),
            outputs={**written, "summary": "summary.json"},
        )
        out.write_json("summary.json", summary.to_dict())
    return summary
