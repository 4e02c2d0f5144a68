"""What a Spark run does on the executors: each stage's mapInArrow function over one partition.

Each function is the local engine's stage function (:mod:`neardup.pipeline`,
:mod:`neardup.cluster`, :func:`neardup.lsh.banding.bucket_pairs`) over the Arrow batches of one
partition, sorted and renumbered 0, 1, ... in document order first, so that what it decides
depends on document keys only, never on partitioning or task order. The driver's side, which
shuffles and joins the frames these functions read and write, is :mod:`neardup.engine.spark`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from neardup._faults import fail_task_once
from neardup._types import Batch
from neardup.candidates import estimate as estimate_similarity
from neardup.cluster import (
    Clusters,
    UnionFind,
    center_clusters,
    preference_order,
    representatives,
    union_pairs,
)
from neardup.keep import KeepValues, comparable
from neardup.lsh.banding import bucket_pairs
from neardup.pairs import CandidatePairs
from neardup.params import DedupConfig
from neardup.pipeline import BatchSketcher, accepted, exact_groups, measured, size_floor
from neardup.sketch import make_sketcher
from neardup.sketch.signatures import Signatures
from neardup.text.spans import pack_strings
from neardup.verify import exact_similarity

SKETCH_SCHEMA = (
    "doc long, length long, num_bytes long, is_short boolean, is_empty boolean, fp_hi long, "
    "fp_lo long, signature binary, keys array<long>"
)
BUCKETS_SCHEMA = "first long, second long, giant_buckets long, largest_bucket long"
VERIFIED_SCHEMA = "first long, second long, estimate double, jaccard double"
SCORED_SCHEMA = (
    "first long, second long, estimate double, jaccard double, similarity double, accepted boolean"
)
SCORED_COLUMNS = ("first", "second", "estimate", "jaccard", "similarity", "accepted")
DECIDED_SCHEMA = SCORED_SCHEMA + ", measured boolean, joined boolean"
CENTER_SCHEMA = "doc long, label long, keep boolean, similarity double"


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


def sketch_batches(config: DedupConfig, text_column: str) -> Callable[[Iterator[Any]], Any]:
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


def exact_batches(batches: Iterator[Any]) -> Iterator[Any]:
    """The mapInArrow function: whole exact groups → each document's :func:`exact_groups` first."""
    import pyarrow as pa

    table = _partition(batches, "doc")
    if table is None:
        return
    docs = _column(table, "doc")
    fingerprints = np.stack([_column(table, "fp_hi"), _column(table, "fp_lo")], axis=1)
    first, _ = exact_groups(fingerprints.view(np.uint64), _column(table, "is_empty"))
    yield pa.RecordBatch.from_pydict({"doc": docs, "group_first": docs[first]})


def bucket_batches(max_bucket_size: int) -> Callable[[Iterator[Any]], Any]:
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


def score_batches(config: DedupConfig, *, candidates: bool) -> Callable[[Iterator[Any]], Any]:
    """The mapInArrow function: pairs with both signatures (and texts) → their similarities.

    Each pair's estimate, exact similarity (``verify="exact"``), the similarity verification
    goes by (:func:`~neardup.pipeline.measured`) and whether :func:`~neardup.pipeline.accepted`
    passes it. ``candidates``: the pairs are the candidates verification decides, and those
    that :func:`~neardup.pipeline.size_floor` rejects by their sets' sizes are not measured
    (both similarities NaN), as the local engine leaves them.
    """
    floor = size_floor(config) if candidates else None

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
                jaccard = exact_similarity(texts, local, config.sketch, floor=floor)
                estimate[np.isnan(jaccard)] = np.nan
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


def keep_batches(config: DedupConfig) -> Callable[[Iterator[Any]], Any]:
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


def center_batches(config: DedupConfig) -> Callable[[Iterator[Any]], Any]:
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


def decided_batches(batches: Iterator[Any]) -> Iterator[Any]:
    """The mapInArrow function: whole clusters' candidates, in order → measured, joined."""
    import pyarrow as pa

    table = _partition(batches, "first", "second")
    if table is None:
        return
    num_nodes, first, second = _numbered_pairs(table)
    measured, joined = UnionFind(num_nodes).join(
        first, second, table.column("accepted").to_numpy(zero_copy_only=False), skip_joined=True
    )
    columns = {name: table.column(name) for name in SCORED_COLUMNS}
    yield from pa.table(
        {**columns, "measured": pa.array(measured), "joined": pa.array(joined)}
    ).to_batches()


def spanning_batches(batches: Iterator[Any]) -> Iterator[Any]:
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
