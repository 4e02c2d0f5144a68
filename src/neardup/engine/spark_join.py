"""``neardup join --engine spark``: the cosine and Jaccard joins on Apache Spark.

::

    number      items 0..n-1 in the Parquet file's row order (as the local reader numbers them)
    plan        the driver collects the rows of the sampled pairs and chooses the bands with
                the local functions (:mod:`neardup.join.banded`): the same bands as locally
    keys        mapInArrow: each Arrow batch's rows through the family's band keys
    candidates  a shuffle on (band, key); each partition's buckets through bucket_pairs (the
                bucket cap included), then the distinct pairs; the count reported is the
                buckets' pairs, a pair once per band it shares, as the local join counts
    verify      mapInArrow over the pairs joined to both rows: the exact value, the threshold

The family, the bucket rule and the exact measure are the local engine's, so ``pairs.jsonl``
equals the local one (``tests/engine/test_spark_join.py``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neardup.engine.spark_session import (
    StageJobs,
    errors_of_tasks,
    released_when_done,
    require_pyspark,
)
from neardup.engine.spark_tasks import BUCKETS_SCHEMA, bucket_batches
from neardup.errors import InputError, ParameterError
from neardup.io.itemsets import default_id_field
from neardup.io.results import utf8_json
from neardup.io.spark import spark_output
from neardup.join.banded import (
    band_info,
    plan_bands,
    sample_pairs,
    sensitivity,
    warn_of_skipped_pairs,
)
from neardup.join.distances import pair_values, within_threshold
from neardup.join.inputs import JoinSource
from neardup.join.summary import join_summary
from neardup.kinds import METRICS, load
from neardup.lsh.amplify import Sensitivity
from neardup.pairs import CandidatePairs
from neardup.params import JoinSpec
from neardup.text.shingle import ShingleSets
from neardup.verify import exact_jaccard

__all__ = ["join_files_spark"]

_KEYS_SCHEMA = "doc long, keys array<long>"
_VERIFIED_SCHEMA = "first long, second long, value double"


def _rows(values: Any, docs: Any, metric: str, dim: int | None, path: Path) -> Any:
    """Items (an Arrow list array; ``docs`` their numbers) as the local join holds them.

    Float32 rows, or item-hash sets. Refused as the local reader refuses them (the record
    numbered from 1): a null, a vector
    of another length, a value that is not finite in float32, an all-zero cosine vector.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from neardup.io.itemsets import group_sets, hash_items

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()

    def refuse(row: int, message: str) -> InputError:
        return InputError(f"record {int(docs[row].as_py()) + 1}: {message}", path=path)

    if values.null_count:
        row = int(np.argmax(values.is_null().to_numpy(zero_copy_only=False)))
        raise refuse(row, "the value is null; give every record one, or drop it")
    if metric == "jaccard":
        owners = values.value_parent_indices().to_numpy()
        hashes = hash_items(values.flatten())
        return group_sets(np.asarray(owners, np.int64), hashes, len(values))
    lengths = pc.list_value_length(values).to_numpy(zero_copy_only=False)
    if (lengths != dim).any():
        row = int(np.argmax(lengths != dim))
        raise refuse(row, f"the vector has {lengths[row]} values, but others have {dim}")
    flat = values.flatten()
    if flat.null_count:
        raise refuse(0, "a value is null; fill it in, or drop the row")
    with np.errstate(over="ignore"):
        rows = np.ascontiguousarray(
            flat.to_numpy(zero_copy_only=False).reshape(len(values), dim or 0), dtype=np.float32
        )
    bad = ~np.isfinite(rows).all(axis=1)
    if bad.any():
        raise refuse(int(np.argmax(bad)), "a value is NaN, infinite or beyond float32's range")
    zero = ~rows.any(axis=1)
    if metric == "cosine" and zero.any():
        raise refuse(int(np.argmax(zero)), "the vector is all zeros (no cosine); drop the row")
    return rows


def _hasher(spec: JoinSpec, dim: int | None, num_bands: int, num_rows: int) -> Any:
    family = METRICS[spec.metric].family
    assert family is not None
    return load(family)(spec, dim or 0, num_bands=num_bands, num_rows=num_rows)


def _measure(spec: JoinSpec, left: Any, right: Any) -> Any:
    """Exact values of pairs ``(left[i], right[i])``."""
    count = len(left) if spec.metric == "jaccard" else left.shape[0]
    if spec.metric == "jaccard":
        both = ShingleSets(
            hashes=np.concatenate([left.hashes, right.hashes]),
            offsets=np.concatenate([left.offsets, right.offsets[1:] + left.offsets[-1]]),
        )
        first = np.arange(count, dtype=np.int64)
        return exact_jaccard(both, CandidatePairs(first=first, second=first + count))
    same = np.arange(count, dtype=np.int64)
    return pair_values(spec.metric, left, same, same, right=right)


def _key_batches(
    spec: JoinSpec, dim: int | None, num_bands: int, num_rows: int, path: Path
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        hasher = _hasher(spec, dim, num_bands, num_rows)
        for batch in batches:
            if not batch.num_rows:
                continue
            rows = _rows(batch.column("item"), batch.column("doc"), spec.metric, dim, path)
            if spec.metric == "cosine":
                keys = hasher.keys(rows.astype(np.float64))
                usable = np.ones(len(rows), bool)
            else:
                keys = hasher.keys(rows)
                usable = rows.sizes() > 0
            docs = batch.column("doc").to_numpy()[usable]
            keys = np.ascontiguousarray(keys[usable]).view(np.int64)
            yield pa.RecordBatch.from_pydict(
                {
                    "doc": pa.array(docs, pa.int64()),
                    "keys": pa.FixedSizeListArray.from_arrays(
                        pa.array(keys.reshape(-1), pa.int64()), num_bands
                    ).cast(pa.list_(pa.int64())),
                }
            )

    return run


def _verify_batches(
    spec: JoinSpec, dim: int | None, path: Path
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        for batch in batches:
            if not batch.num_rows:
                continue
            first, second = batch.column("first"), batch.column("second")
            left = _rows(batch.column("a_item"), first, spec.metric, dim, path)
            right = _rows(batch.column("b_item"), second, spec.metric, dim, path)
            value = _measure(spec, left, right)
            close = within_threshold(spec.metric, value, spec.threshold)
            yield pa.RecordBatch.from_pydict(
                {
                    "first": pa.array(first.to_numpy()[close], pa.int64()),
                    "second": pa.array(second.to_numpy()[close], pa.int64()),
                    "value": pa.array(value[close], pa.float64()),
                }
            )

    return run


def _items(spark: Any, path: Path, field: str, id_field: str | None) -> Any:
    """The Parquet file's rows as ``doc, id, item``, ``doc`` the row number (from 0)."""
    from pyspark.sql import functions as F  # noqa: N812

    frame = spark.read.parquet(str(path))
    for name, flag in ((field, "--vector-field / --items-field"), (id_field, "--id-field")):
        if name is not None and name not in frame.columns:
            raise InputError(f"no column {name!r} ({flag}); columns: {frame.columns}", path=path)
    ids = F.col(id_field) if id_field else F.col("_metadata.row_index")
    items = frame.select(
        F.col("_metadata.row_index").alias("doc"), ids.alias("id"), F.col(field).alias("item")
    )
    if id_field:
        null = items.where(F.col("id").isNull()).select("doc").limit(1).collect()
        if null:
            raise InputError(f"record {null[0].doc + 1}: the id is null", path=path)
        repeated = items.groupBy("id").count().where("count > 1").limit(1).collect()
        if repeated:
            raise InputError(f"id {repeated[0].id!r} is given twice; ids must be unique", path=path)
    return items


@dataclass(frozen=True, slots=True)
class _Plan:
    """The bands, chosen on the driver exactly as the local join chooses them."""

    dim: int | None
    num_bands: int
    num_rows: int
    p_near: float
    sampled: int
    family: Sensitivity | None


def _plan(items: Any, spec: JoinSpec, num_items: int, path: Path) -> _Plan:
    """Collect the sampled pairs' rows, measure them and choose the bands."""
    import pyarrow as pa
    from pyspark.sql import functions as F  # noqa: N812

    first, second = sample_pairs(num_items, spec.seed)
    wanted = np.unique(np.concatenate([first, second]))
    probe = (
        items.limit(1) if not wanted.shape[0] else items.where(F.col("doc").isin(wanted.tolist()))
    )
    collected = probe.orderBy("doc").select("doc", "item").collect()
    table = pa.table(
        {"doc": [row.doc for row in collected], "item": [row.item for row in collected]}
    )
    dim = None
    if spec.metric == "cosine":  # the width of the first vector; _rows refuses any other
        dim = next((len(v) for v in table.column("item").to_pylist() if v is not None), 0)
    family = load(METRICS[spec.metric].family or "")
    p_near = float(family.collision_probability(spec.threshold, spec, dim or 0))
    rows = _rows(table.column("item"), table.column("doc"), spec.metric, dim, path)
    where = np.full(num_items, -1, dtype=np.int64)
    where[wanted] = np.arange(wanted.shape[0])
    if spec.metric == "jaccard":
        values = exact_jaccard(rows, CandidatePairs(first=where[first], second=where[second]))
    else:
        values = pair_values(spec.metric, rows, where[first], where[second])
    sample = np.asarray(family.collision_probability(values, spec, dim or 0), np.float64)
    num_bands, num_rows = plan_bands(spec, p_near, sample, num_items)
    return _Plan(
        dim, num_bands, num_rows, p_near, int(sample.shape[0]),
        sensitivity(spec, p_near, values, sample),
    )  # fmt: skip


def join_files_spark(
    spark: Any,
    path: Path,
    output: str,
    spec: JoinSpec,
    source: JoinSource | None = None,
    *,
    overwrite: bool = False,
    show_progress: bool = False,
) -> dict[str, Any]:
    """``neardup join --engine spark``: read a Parquet file, join, write ``output``.

    ``cosine`` reads ``source.vector_field`` (a list of numbers), ``jaccard``
    ``source.items_field`` (a list of strings or integers); ``pairs.jsonl`` and the counts
    equal the local engine's. ``show_progress``: each stage's tasks on stderr
    (:class:`~neardup.engine.spark_session.StageJobs`).
    """
    require_pyspark()
    from pyspark.sql import functions as F  # noqa: N812

    source = source or JoinSource()
    if not path.is_file() or path.suffix not in (".parquet", ".pq"):
        raise InputError(
            "the Spark engine joins one Parquet file (a list column per item); convert the "
            "input, or use the local engine",
            path=path,
        )
    if not METRICS[spec.metric].spark:
        raise ParameterError(f"the Spark engine joins cosine and jaccard; got {spec.metric!r}.")
    if spec.exact:
        raise ParameterError("the Spark engine joins by LSH; --exact runs on the local engine.")
    field = source.vector_field if spec.metric == "cosine" else source.items_field or "items"
    if field is None:
        raise ParameterError("the Spark engine needs --vector-field naming the list column.")
    started = time.perf_counter()
    with (
        spark_output(spark, output, kind="join", overwrite=overwrite, inputs=[str(path)]) as out,
        errors_of_tasks(),
        released_when_done(spark),
        StageJobs(spark, show_progress=show_progress) as stages,
    ):
        stages.enter("read")
        id_field = default_id_field(path) if source.id_field is None else source.id_field
        items = _items(spark, path, field, id_field or None).cache()
        num_items = items.count()
        if num_items == 0:
            raise InputError("no items in the input", path=path)
        plan = _plan(items, spec, num_items, path)
        dim = plan.dim
        read = time.perf_counter()
        stages.enter("join")
        keys = items.select("doc", "item").mapInArrow(
            _key_batches(spec, dim, plan.num_bands, plan.num_rows, path), _KEYS_SCHEMA
        )
        postings = keys.select("doc", F.posexplode("keys").alias("band", "key"))
        found = postings.repartition("band", "key").mapInArrow(
            bucket_batches(spec.max_bucket_size), BUCKETS_SCHEMA
        )
        found = found.localCheckpoint(eager=True)
        counts = found.where(F.col("first").isNull())
        giant, largest = counts.agg(F.sum("giant_buckets"), F.max("largest_bucket")).first()
        candidates = found.where(F.col("first").isNotNull()).select("first", "second").distinct()
        num_candidates, num_skipped = _bucket_pair_counts(postings, spec.max_bucket_size)
        rows = items.select("doc", "item")
        joined = candidates.join(rows.toDF("first", "a_item"), "first").join(
            rows.toDF("second", "b_item"), "second"
        )
        verified = joined.select("first", "second", "a_item", "b_item").mapInArrow(
            _verify_batches(spec, dim, path), _VERIFIED_SCHEMA
        )
        verified = verified.localCheckpoint(eager=True)
        num_pairs = verified.count()
        ids = items.select("doc", "id")
        lines = (
            verified.join(ids.toDF("first", "a"), "first")
            .join(ids.toDF("second", "b"), "second")
            .orderBy("first", "second")
        )
        key = METRICS[spec.metric].measure
        out.write_lines("pairs.jsonl", lines.select(_pair_line(key)("a", "b", "value")))
        joined_at = time.perf_counter()
        info = {
            "family": "minhash" if spec.metric == "jaccard" else "HyperplaneHasher",
            "sampled_pairs": plan.sampled,
            **band_info(plan.num_bands, plan.num_rows, plan.p_near, plan.family),
            "num_candidates": num_candidates,
            "num_giant_buckets": int(giant or 0),
            "largest_bucket": int(largest or 0),
            "bucket_pairs_skipped": num_skipped,
        }
        warn_of_skipped_pairs(
            num_skipped,
            info["num_giant_buckets"],
            info["largest_bucket"],
            spec.max_bucket_size,
            info["predicted_recall"],
        )
        times = {"read": read - started, "join": joined_at - read, "total": joined_at - started}
        summary = join_summary(
            info,
            spec,
            num_pairs=num_pairs,
            num_items=num_items,
            inputs=[str(path)],
            times=times,
            engine="spark",
        )
        out.write_json("summary.json", summary)
    return summary


def _bucket_pair_counts(postings: Any, cap: int) -> tuple[int, int]:
    """The pairs every ``(band, key)`` bucket yields and leaves out, summed: the local counts.

    A bucket of ``L <= cap`` members yields ``L (L - 1) / 2`` pairs, a larger one
    ``cap (cap - 1) / 2 + (L - cap)(cap - 1)`` (:func:`neardup.lsh.banding.bucket_pairs`) and
    leaves out the rest of its ``L (L - 1) / 2``; a pair sharing keys in several bands counts
    once in each, as the local join measures it.
    """
    from pyspark.sql import functions as F  # noqa: N812

    size = F.col("count").cast("long")
    every = size * (size - 1) / 2
    pairs = F.when(size <= cap, every).otherwise(cap * (cap - 1) / 2 + (size - cap) * (cap - 1))
    counted = (
        postings.groupBy("band", "key")
        .count()
        .select(F.sum(pairs.cast("long")), F.sum((every - pairs).cast("long")))
        .first()
    )
    return int(counted[0] or 0), int(counted[1] or 0)


def _pair_line(key: str) -> Any:
    """A column function: the ``pairs.jsonl`` line of ``(a, b, value)``, as the local writer."""
    from pyspark.sql import functions as F  # noqa: N812

    @F.udf("string")
    def line(a: Any, b: Any, value: float) -> str:
        return utf8_json(json.dumps({"a": a, "b": b, key: round(value, 6)}, ensure_ascii=False))

    return lambda *columns: line(*columns).alias("line")
