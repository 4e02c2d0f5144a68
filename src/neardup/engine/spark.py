"""The batch job on Apache Spark, with the local engine's kernels, stages and results.

::

    number      document keys 0..n-1 in input order (file, then line or row)
    sketch      mapInArrow: the sketcher and candidate scheme of the local engine, batch by batch
    exact       documents with equal 128-bit fingerprints → the smallest key of the group
    candidates  a shuffle on (band, key); buckets above max_bucket_size paired linearly, by key
    verify      mapInArrow over pairs joined to their signatures (estimate) and texts (exact)
    cluster     large-star / small-star connected components (:mod:`.spark_components`)
    keep        the smallest key ("first") or the longest text per cluster, ties to the smaller
    pairs       all verified pairs, none, or the spanning ones: each cluster's pairs in one task,
                sorted, through the local union-find kernel

Every choice depends on document keys only, never on partitioning or task order, so the clusters
and pairs equal the local engine's (``tests/engine/test_spark.py``). pyspark is imported lazily:
the rest of neardup does not need it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neardup._version import __version__
from neardup.candidates import candidate_scheme
from neardup.engine.spark_components import component_labels
from neardup.errors import InputError, MissingExtraError, ParameterError
from neardup.io.results import cluster_line, exact_pair_line, near_pair_line
from neardup.pairs import CandidatePairs
from neardup.params import DedupConfig
from neardup.sketch import make_sketcher
from neardup.sketch.signatures import Signatures, provenance_of
from neardup.text.normalize import normalize_batch
from neardup.verify import exact_similarity

__all__ = ["SparkDedupResult", "dedup_dataframe", "dedup_files_spark", "spark_session"]

SPARK_KINDS = ("oph", "minhash", "minhash-lead", "bbit", "weighted", "bottomk")
"""Sketch kinds the Spark engine runs (the supershingle filter and SimHash are local only)."""

_SKETCH_SCHEMA = (
    "doc long, length long, num_bytes long, num_shingles long, fp_hi long, fp_lo long, "
    "signature binary, keys array<long>"
)


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
        ``doc, id, label, cluster, keep, line``: one row per document; ``label`` is the
        cluster's smallest document key and ``cluster`` its id; ``line`` is the
        ``clusters.jsonl`` line.
    pairs
        ``a_doc, b_doc, a, b, estimate, jaccard, exact, line``: exact duplicates (each linked
        to the first document of its group) and verified near-duplicate pairs; ``line`` is the
        ``pairs.jsonl`` line (without its newline, as for ``clusters``).
    kept
        The input rows (with ``doc``) of the documents kept.
    summary
        Parameters, counts and timings, as in the local ``summary.json``.
    """

    clusters: Any
    pairs: Any
    kept: Any
    summary: dict[str, Any]


def _uint64_as_int64(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.uint64).view(np.int64)


def _sketch_batches(config: DedupConfig, text_column: str) -> Any:
    """The mapInArrow function: (doc, text) batches → signature rows and lookup keys."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        sketcher = make_sketcher(config.sketch)
        scheme = candidate_scheme(config.sketch, config.lsh)
        for batch in batches:
            _maybe_fail_once()
            texts = batch.column(text_column).to_pylist()
            normalized = normalize_batch(texts, config.sketch.normalize)
            signatures = sketcher.sketch(normalized)
            keys = _uint64_as_int64(scheme.keys(signatures.values))
            width = keys.shape[1]
            values = np.ascontiguousarray(signatures.values, dtype=np.uint64)
            fingerprints = _uint64_as_int64(signatures.fingerprints)
            yield pa.RecordBatch.from_pydict(
                {
                    "doc": batch.column("doc"),
                    "length": pa.array([len(t) for t in texts], pa.int64()),
                    "num_bytes": pa.array(np.diff(normalized.offsets), pa.int64()),
                    "num_shingles": pa.array(signatures.num_shingles, pa.int64()),
                    "fp_hi": pa.array(fingerprints[:, 0], pa.int64()),
                    "fp_lo": pa.array(fingerprints[:, 1], pa.int64()),
                    "signature": pa.array([row.tobytes() for row in values], pa.binary()),
                    "keys": pa.ListArray.from_arrays(
                        pa.array(np.arange(len(texts) + 1) * width, pa.int32()),
                        pa.array(keys.reshape(-1), pa.int64()),
                    ),
                }
            )

    return run


FAIL_ONCE_PROPERTY = "neardup.test.failOnce"


def _maybe_fail_once() -> None:
    """Fail one task: the first to run while ``neardup.test.failOnce`` names a missing file.

    The file is created, so the retry succeeds. A test hook (set with
    ``SparkContext.setLocalProperty``): it shows that a retried task yields the same result.
    """
    from pyspark import TaskContext

    context = TaskContext.get()
    marker = context.getLocalProperty(FAIL_ONCE_PROPERTY) if context is not None else None
    if marker:
        try:
            with open(marker, "x"):
                pass
        except FileExistsError:
            return
        raise RuntimeError(f"neardup: injected task failure ({FAIL_ONCE_PROPERTY})")


def _verify_batches(config: DedupConfig) -> Any:
    """The mapInArrow function: candidate pairs with both signatures (and texts) → similarities."""
    mode = config.verify_mode

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        scheme = candidate_scheme(config.sketch, config.lsh)
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
            estimate = scheme.estimate(signatures, local)
            jaccard = np.full(count, np.nan)
            if mode == "exact" and count:
                texts = batch.column("a_text").to_pylist() + batch.column("b_text").to_pylist()
                jaccard = exact_similarity(texts, local, config.sketch)
            yield pa.RecordBatch.from_pydict(
                {
                    "first": batch.column("first"),
                    "second": batch.column("second"),
                    "estimate": pa.array(estimate, pa.float64()),
                    "jaccard": pa.array(jaccard, pa.float64()),
                }
            )

    return run


def _candidates(active: Any, config: DedupConfig) -> tuple[Any, int, int]:
    """Candidate pairs ``(first, second)`` of the active documents, and giant-bucket counts."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F  # noqa: N812

    scheme = candidate_scheme(config.sketch, config.lsh)
    cap = config.lsh.max_bucket_size
    postings = active.select("doc", F.posexplode("keys").alias("band", "key"))
    if scheme.shared_namespace:  # one namespace for all columns; EMPTY is no key
        postings = postings.where(F.col("key") != -1).withColumn("band", F.lit(0))
    bucket = Window.partitionBy("band", "key")
    ranked = postings.withColumn("size", F.count("*").over(bucket)).withColumn(
        "rank", F.row_number().over(bucket.orderBy("doc"))
    )
    ranked = ranked.where(F.col("size") > 1).cache()
    sizes = ranked.groupBy("band", "key").agg(F.max("size").alias("size"))
    giant = sizes.where(F.col("size") > cap).agg(F.count("*"), F.max("size")).first()
    largest = sizes.agg(F.max("size")).first()
    a, b = ranked.alias("a"), ranked.alias("b")
    pairs = (
        a.join(b, (F.col("a.band") == F.col("b.band")) & (F.col("a.key") == F.col("b.key")))
        .where(
            (F.col("a.rank") < F.col("b.rank"))
            & ((F.col("a.size") <= cap) | (F.col("b.rank") - F.col("a.rank") < cap))
        )
        .select(F.col("a.doc").alias("first"), F.col("b.doc").alias("second"))
        .distinct()
    )
    return pairs, int(giant[0] or 0), int(largest[0] or 0)


def dedup_dataframe(
    frame: Any,
    config: DedupConfig | None = None,
    *,
    id_column: str = "id",
    text_column: str = "text",
    order_column: str | None = None,
    reliable_checkpoints: bool = False,
) -> SparkDedupResult:
    """Deduplicate a Spark DataFrame of ``id_column`` and ``text_column``.

    Documents are numbered in the order of ``order_column`` (ascending, unique), or in the
    DataFrame's own order; "first" means first in that order, as in the local engine. The
    result equals :func:`neardup.dedup` on the same texts in the same order. Spark jobs run
    in job groups ``neardup:<stage>``, so the UI and its REST API attribute time and shuffle
    bytes to the stages (``bench/spark.py`` reads them).
    """
    _require_pyspark()
    from pyspark.sql import functions as F  # noqa: N812

    config = config if config is not None else DedupConfig()
    if config.sketch.kind not in SPARK_KINDS:
        raise ParameterError(
            f"the Spark engine runs sketch kinds {', '.join(SPARK_KINDS)}; "
            f"got {config.sketch.kind!r} (use the local engine for it)."
        )
    started = time.perf_counter()
    timings: dict[str, float] = {}
    spark = frame.sparkSession

    def lap(name: str, since: float, following: str) -> float:
        """Close stage ``name`` (timed since ``since``); Spark jobs now belong to ``following``."""
        now = time.perf_counter()
        timings[name] = round(now - since, 4)
        spark.sparkContext.setJobGroup(f"neardup:{following}", following)
        return now

    spark.sparkContext.setJobGroup("neardup:read_sketch", "read_sketch")
    numbered = _numbered(frame, order_column)
    docs = numbered.select(
        "doc", F.col(id_column).cast("string").alias("id"), F.col(text_column).alias("text")
    ).cache()
    num_docs = docs.count()
    if num_docs == 0:
        raise InputError("no usable records in the input")
    sketched = docs.select("doc", "text").mapInArrow(
        _sketch_batches(config, "text"), _SKETCH_SCHEMA
    )
    sketched = sketched.localCheckpoint(eager=True)
    now = lap("read_sketch", started, "exact")

    sketched = _exact_groups(sketched, config).cache()
    exact_links = sketched.where(F.col("doc") != F.col("group_first")).select(
        F.col("group_first").alias("first"), F.col("doc").alias("second")
    )
    now = lap("exact", now, "candidates")

    active = sketched.where((F.col("doc") == F.col("group_first")) & (F.col("num_shingles") > 0))
    candidates, num_giant, largest = _candidates(active, config)
    candidates = candidates.localCheckpoint(eager=True)
    num_candidates = candidates.count()
    now = lap("candidates", now, "verify")

    verified = _verified(candidates, sketched, docs, config)
    verified = verified.localCheckpoint(eager=True)
    now = lap("verify", now, "cluster")

    edges = exact_links.union(verified.select("first", "second")).toDF("src", "dst")
    labels = component_labels(edges, reliable_checkpoints=reliable_checkpoints)
    clusters = _clusters(docs, sketched, labels, config)
    clusters = clusters.localCheckpoint(eager=True)
    now = lap("cluster", now, "write")

    reported = _reported(verified, labels, config)
    pairs = _pairs(docs, exact_links, reported)
    sizes = clusters.groupBy("label", "cluster").count().where("count > 1").cache()
    counts = _counts(clusters, sizes, sketched, exact_links, num_candidates, verified, num_docs)
    counts["pairs_reported"] = reported.count()
    num_bytes = int(sketched.agg(F.sum("num_bytes")).first()[0] or 0)
    counts.update(bytes=num_bytes, giant_buckets=num_giant, largest_bucket=largest)
    kept = numbered.join(clusters.where("keep").select("doc"), "doc")
    total = time.perf_counter() - started
    summary = {
        "neardup_version": __version__,
        "engine": "spark",
        "spark_master": spark.sparkContext.master,
        "config": config.to_dict(),
        "lsh": candidate_scheme(config.sketch, config.lsh).describe(),
        "verify": config.verify_mode,
        "signatures": provenance_of(config.sketch),
        "counts": counts,
        "biggest_clusters": _biggest_clusters(sizes),
        "timings_s": timings,
        "total_s": round(total, 4),
        "throughput_mb_s": round(num_bytes / 1e6 / total, 2) if total > 0 else None,
    }
    return SparkDedupResult(clusters=clusters, pairs=pairs, kept=kept, summary=summary)


def _numbered(frame: Any, order_column: str | None) -> Any:
    """``frame`` with a ``doc`` column: 0, 1, ... in ``order_column`` order (or frame order)."""
    from pyspark.sql.types import LongType, StructField, StructType

    ordered = frame.orderBy(order_column) if order_column else frame
    schema = StructType([StructField("doc", LongType(), False), *ordered.schema.fields])
    return frame.sparkSession.createDataFrame(
        ordered.rdd.zipWithIndex().map(lambda pair: (pair[1], *pair[0])), schema
    )


def _verified(candidates: Any, sketched: Any, docs: Any, config: DedupConfig) -> Any:
    """The candidate pairs that verification accepts, with their estimate and exact similarity."""
    from pyspark.sql import functions as F  # noqa: N812

    signature = sketched.select("doc", "signature")
    joined = candidates.join(signature.toDF("first", "a_signature"), "first").join(
        signature.toDF("second", "b_signature"), "second"
    )
    if config.verify_mode == "exact":
        text = docs.select("doc", "text")
        joined = joined.join(text.toDF("first", "a_text"), "first").join(
            text.toDF("second", "b_text"), "second"
        )
    verified = joined.mapInArrow(_verify_batches(config), _VERIFIED_SCHEMA)
    if config.verify_mode == "exact":
        verified = verified.where(F.col("jaccard") >= config.lsh.threshold)
    elif config.verify_mode == "signature":
        verified = verified.where(F.col("estimate") >= config.lsh.threshold)
    return verified


def _clusters(docs: Any, sketched: Any, labels: Any, config: DedupConfig) -> Any:
    from pyspark.sql import Window
    from pyspark.sql import functions as F  # noqa: N812

    labelled = (
        sketched.select("doc", "length")
        .join(labels.withColumnRenamed("node", "doc"), "doc", "left")
        .withColumn("label", F.coalesce("label", "doc"))
    )
    if config.keep == "first":
        labelled = labelled.withColumn("keep", F.col("doc") == F.col("label"))
    else:
        best = Window.partitionBy("label").orderBy(F.desc("length"), F.asc("doc"))
        labelled = labelled.withColumn("keep", F.row_number().over(best) == 1)
    ids = docs.select("doc", "id")
    named = labelled.join(ids, "doc").join(ids.toDF("label", "cluster"), "label")
    line = F.udf(lambda *fields: cluster_line(*fields)[:-1], "string")
    return named.select(
        "doc", "id", "label", "cluster", "keep", line("id", "cluster", "keep").alias("line")
    )


def _reported(verified: Any, labels: Any, config: DedupConfig) -> Any:
    """The verified pairs ``config.pairs`` reports.

    ``"spanning"``: the pairs that join two clusters when the pairs are merged in
    ``(first, second)`` order, as the local engine's union-find takes them. Clusters are
    disjoint, so that is decided cluster by cluster: each cluster's pairs go to one task,
    sorted, through the same union-find kernel.
    """
    if config.pairs == "all":
        return verified
    if config.pairs == "none":
        return verified.limit(0)
    labelled = verified.join(labels.toDF("first", "label"), "first")
    ordered = labelled.repartition("label").sortWithinPartitions("label", "first", "second")
    return ordered.mapInArrow(_spanning_batches, _VERIFIED_SCHEMA)


def _spanning_batches(batches: Iterator[Any]) -> Iterator[Any]:
    """The mapInArrow function: one partition's pairs, sorted → those that join clusters."""
    import pyarrow as pa

    from neardup.cluster import union_pairs

    table = pa.Table.from_batches(list(batches))
    if table.num_rows == 0:
        return
    first = table.column("first").to_numpy()
    second = table.column("second").to_numpy()
    nodes, local = np.unique(np.concatenate([first, second]), return_inverse=True)
    _, joined = union_pairs(nodes.shape[0], local[: first.shape[0]], local[first.shape[0] :])
    yield from table.select(["first", "second", "estimate", "jaccard"]).filter(joined).to_batches()


_VERIFIED_SCHEMA = "first long, second long, estimate double, jaccard double"


def _pairs(docs: Any, exact_links: Any, verified: Any) -> Any:
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
    exact_line = F.udf(lambda *fields: exact_pair_line(*fields)[:-1], "string")
    near_line = F.udf(lambda *fields: near_pair_line(*fields)[:-1], "string")
    return both.select(
        F.col("first").alias("a_doc"),
        F.col("second").alias("b_doc"),
        "a",
        "b",
        "estimate",
        "jaccard",
        "exact",
        F.when(F.col("exact"), exact_line("a", "b"))
        .otherwise(near_line("a", "b", "estimate", "jaccard"))
        .alias("line"),
    )


def _exact_groups(sketched: Any, config: DedupConfig) -> Any:
    """``sketched`` with each document's exact group: ``group_first`` and ``is_empty``.

    ``group_first`` is the first document of equal fingerprint, but a document without a token
    (``is_empty``) is a group of its own, as in the local engine.
    """
    from pyspark.sql import functions as F  # noqa: N812

    groups = sketched.groupBy("fp_hi", "fp_lo").agg(F.min("doc").alias("group_first"))
    no_token = _uint64_as_int64(make_sketcher(config.sketch).no_token_fingerprint[None, :])[0]
    is_empty = (F.col("fp_hi") == int(no_token[0])) & (F.col("fp_lo") == int(no_token[1]))
    return (
        sketched.join(groups, ["fp_hi", "fp_lo"])
        .withColumn("is_empty", is_empty)
        .withColumn("group_first", F.when(is_empty, F.col("doc")).otherwise(F.col("group_first")))
    )


def _counts(
    clusters: Any,
    sizes: Any,
    sketched: Any,
    exact_links: Any,
    num_candidates: int,
    verified: Any,
    num_docs: int,
) -> dict[str, Any]:
    from pyspark.sql import functions as F  # noqa: N812

    multi = sizes.agg(F.count("*"), F.sum("count")).first()
    kept = clusters.where("keep").count()
    return {
        "documents": num_docs,
        "short_documents": sketched.where("num_shingles = 0").count(),
        "empty_documents": sketched.where("is_empty").count(),
        "exact_duplicates": exact_links.count(),
        "candidate_pairs": num_candidates,
        "verified_pairs": verified.count(),
        "clusters": int(multi[0] or 0),
        "documents_in_clusters": int(multi[1] or 0),
        "removed": num_docs - kept,
        "kept": kept,
    }


def _biggest_clusters(sizes: Any, count: int = 5) -> list[dict[str, Any]]:
    """The largest clusters of ``sizes`` (label, cluster, count), as the local summary lists them.

    Ties go to the smaller label.
    """
    from pyspark.sql import functions as F  # noqa: N812

    top = sizes.orderBy(F.desc("count"), "label").take(count)
    return [{"cluster": row["cluster"], "size": row["count"]} for row in top]


def read_inputs(spark: Any, inputs: Sequence[str], config: DedupConfig) -> Any:
    """JSONL (plain or gzip) or Parquet files as rows ``(input, offset, id, text, order)``.

    ``order`` is ``(input index, byte offset or row index)``, so documents are numbered as the
    local engine numbers them. Every record needs an id (``config.id_field``).
    """
    from pyspark.sql import functions as F  # noqa: N812

    if config.id_field == "":
        raise ParameterError("the Spark engine needs an id field (--id-field), not FILE:LINE ids.")
    id_field = config.id_field or "id"
    kinds = {Path(p).name.split(".", 1)[-1] for p in inputs}
    if kinds <= {"parquet"}:
        frames = [
            spark.read.parquet(p).select(
                F.lit(i).alias("input"),
                F.col("_metadata.row_index").alias("offset"),
                F.col(id_field).cast("string").alias("id"),
                F.col(config.text_field).alias("text"),
            )
            for i, p in enumerate(inputs)
        ]
    elif kinds <= {"jsonl", "jsonl.gz", "json", "json.gz"}:
        frames = [_read_jsonl(spark, i, p, config) for i, p in enumerate(inputs)]
    else:
        raise InputError(
            "the Spark engine reads JSONL (.jsonl, .jsonl.gz) or Parquet inputs, all of one "
            f"format; got {', '.join(sorted(kinds))}."
        )
    frame = frames[0]
    for other in frames[1:]:
        frame = frame.unionByName(other)
    return frame.withColumn("order", F.struct("input", "offset"))


def _read_jsonl(spark: Any, index: int, path: str, config: DedupConfig) -> Any:
    """Lines with their byte offsets (Hadoop's TextInputFormat), parsed as the local reader does."""
    text_field, id_field = config.text_field, config.id_field or "id"
    skip = config.skip_bad_records

    def parse(pair: tuple[int, str]) -> list[tuple[int, int, str, str]]:
        offset, line = pair
        if not line.strip():
            return []
        where = f"{path} at byte {offset}"
        try:
            record = json.loads(line)
            text, doc_id = record[text_field], record[id_field]
            if not isinstance(text, str) or doc_id is None:
                raise TypeError(f"{text_field!r} must be a string and {id_field!r} present")
        except (ValueError, KeyError, TypeError) as exc:
            if skip:
                return []
            raise InputError(f"{where}: bad record ({exc}); or pass --skip-bad-records") from exc
        return [(index, offset, str(doc_id), text)]

    lines = spark.sparkContext.newAPIHadoopFile(
        path,
        "org.apache.hadoop.mapreduce.lib.input.TextInputFormat",
        "org.apache.hadoop.io.LongWritable",
        "org.apache.hadoop.io.Text",
    )
    return lines.flatMap(parse).toDF("input long, offset long, id string, text string")


def dedup_files_spark(
    spark: Any,
    inputs: Sequence[str],
    output: str,
    config: DedupConfig | None = None,
    *,
    overwrite: bool = False,
) -> dict[str, Any]:
    """``neardup dedup --engine spark``: read, deduplicate, write ``output``; return the summary.

    ``output`` may be any Hadoop-compatible path: ``clusters.jsonl``, ``pairs.jsonl`` (text,
    ordered by document) and ``kept.parquet`` are written by Spark as directories of parts;
    on a local path they are then joined into single files, byte-identical to the local
    engine's, and the directory appears only when the run succeeded.
    """
    config = config if config is not None else DedupConfig()
    frame = read_inputs(spark, inputs, config)
    try:
        result = dedup_dataframe(frame, config, order_column="order")
    except Exception as exc:  # a task's InputError reaches the driver wrapped by Spark
        marker = "neardup.errors.InputError: "
        if marker not in str(exc):
            raise
        raise InputError(str(exc).split(marker, 1)[1].splitlines()[0]) from None
    local = "://" not in output or output.startswith("file:")
    target = Path(output.removeprefix("file:")) if local else None
    if target is not None and target.exists() and not overwrite:
        raise InputError(f"{target} exists; pass --overwrite to replace it")
    # A local output is staged beside the target and renamed into place when complete; on a
    # Hadoop path each dataset is committed by Spark itself (its _SUCCESS marker).
    root = f"{output.rstrip('/')}.partial-{os.getpid()}" if target is not None else output
    summary = {
        **result.summary,
        "inputs": list(inputs),
        "outputs": {
            "clusters": "clusters.jsonl",
            **({"pairs": "pairs.jsonl"} if config.pairs != "none" else {}),
            "kept": "kept.parquet",
            "summary": "summary.json",
        },
    }
    try:
        result.clusters.orderBy("doc").select("line").write.mode("overwrite").text(
            f"{root}/clusters.jsonl"
        )
        if config.pairs != "none":
            result.pairs.orderBy(*_pair_order()).select("line").write.mode("overwrite").text(
                f"{root}/pairs.jsonl"
            )
        result.kept.orderBy("doc").select("id", "text").write.mode("overwrite").parquet(
            f"{root}/kept.parquet"
        )
        if target is None:
            text = json.dumps(summary, indent=2)
            spark.sparkContext.parallelize([text], 1).saveAsTextFile(f"{root}/summary.json")
            return summary
        staged = Path(root.removeprefix("file:"))
        for name in ("clusters.jsonl", "pairs.jsonl"):
            if (staged / name).exists():
                _join_parts(staged / name)
        (staged / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        if target.exists():
            shutil.rmtree(target)
        staged.rename(target)
    except BaseException:
        if target is not None:
            shutil.rmtree(Path(root.removeprefix("file:")), ignore_errors=True)
        raise
    return summary


def _pair_order() -> list[Any]:
    """The local ``pairs.jsonl`` order: exact pairs by their second document, then near pairs."""
    from pyspark.sql import functions as F  # noqa: N812

    exact = F.col("exact")
    return [F.when(exact, 0).otherwise(1), F.when(exact, F.col("b_doc")).otherwise(F.col("a_doc")),
            "b_doc"]  # fmt: skip


def _join_parts(directory: Path) -> None:
    """Replace a directory of Spark part files by one file of their contents, in part order."""
    joined = directory.with_name(directory.name + ".joined")
    with joined.open("wb") as out:
        for part in sorted(directory.glob("part-*")):
            with part.open("rb") as f:
                shutil.copyfileobj(f, out)
    shutil.rmtree(directory)
    joined.rename(directory)
