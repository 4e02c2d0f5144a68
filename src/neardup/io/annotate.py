"""The annotated corpus (``--annotate``): every input record, unchanged but for one added field.

The field holds what ``clusters.jsonl`` says of the record: ``{"cluster": the id of its
cluster's first document, "keep": whether the run keeps it, "similarity": to the cluster's
representative}``, so a later step filters or weighs the corpus without a join. JSONL lines
are copied byte for byte with the field inserted before their closing brace (kernels, no
parsing); Parquet and Arrow get a struct column, CSV three columns (``FIELD.cluster``,
``FIELD.keep``, ``FIELD.similarity``); ``.txt`` and web-archive inputs become
``{"id", "text", FIELD}`` records. A record that holds the field already is an error naming
it: nothing of the input is overwritten.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, BinaryIO, cast

import numpy as np

from neardup._kernels import jsonl as kernels
from neardup._types import BoolArray, F64Array, I64Array
from neardup.errors import InputError, advice, remedy
from neardup.io.compression import open_binary_write
from neardup.io.kept import corpus_path, one_header, one_schema
from neardup.io.readers import CSVSource, JSONLinesSource, Source
from neardup.io.records import Ids
from neardup.io.results import annotation_notes, record_line
from neardup.io.tabular import TableSource, table_writer
from neardup.params import Compression

__all__ = ["Annotations", "write_annotated"]


@dataclass(frozen=True, slots=True)
class Annotations:
    """What ``--annotate`` adds to each record (one entry per usable record, in order)."""

    field: str
    ids: Sequence[str]
    labels: I64Array
    keep: BoolArray
    similarity: F64Array

    def values(self, lo: int, hi: int) -> Iterator[tuple[str, bool, float | None]]:
        """``(cluster id, keep, similarity)`` of records ``lo .. hi - 1``, value by value.

        The similarity rounded as ``clusters.jsonl`` writes it (None where not measured).
        """
        for label, keep, similarity in zip(
            self.labels[lo:hi].tolist(), self.keep[lo:hi].tolist(), self.similarity[lo:hi].tolist(),
            strict=True,
        ):  # fmt: skip
            rounded = None if math.isnan(similarity) else round(similarity, 6)
            yield self.ids[label], keep, rounded


def write_annotated(
    sources: Sequence[Source],
    annotations: Annotations,
    directory: Path,
    compress: Compression = "none",
    batch_bytes: int = 32 << 20,
) -> Path:
    """Write every usable record with its annotation; return the path written.

    ``annotated.jsonl``, ``annotated.csv`` (with ``.gz``/``.zst`` when compressed),
    ``annotated.parquet`` or ``annotated.arrow`` in ``directory``. Call after a full reading pass
    over ``sources``.
    """
    sources = [getattr(source, "inner", source) for source in sources]
    if not isinstance(annotations.ids, Ids):
        annotations = replace(annotations, ids=Ids.of(list(annotations.ids)))
    fmt = sources[0].format
    path = corpus_path(directory, "annotated", fmt, compress)
    if isinstance(sources[0], TableSource):
        _write_table([s for s in sources if isinstance(s, TableSource)], annotations, path)
        return path
    with open_binary_write(path, compress) as out:
        if fmt == "csv":
            _write_csv([s for s in sources if isinstance(s, CSVSource)], annotations, out)
        elif fmt == "jsonl":
            position = 0
            for source in sources:
                assert isinstance(source, JSONLinesSource)
                position = _write_lines(source, annotations, position, out, batch_bytes)
            _check_count(position, annotations)
        else:
            records = (r for source in sources for r in source.raw_records())
            for (doc_id, text), (cluster, keep, similarity) in zip(
                records, annotations.values(0, annotations.labels.shape[0]), strict=False
            ):
                note = {"cluster": cluster, "keep": keep, "similarity": similarity}
                record = {"id": doc_id, "text": text, annotations.field: note}
                out.write(record_line(record).encode("utf-8"))
    return path


def _write_lines(
    source: JSONLinesSource,
    annotations: Annotations,
    position: int,
    out: IO[bytes],
    batch_bytes: int,
) -> int:
    """The records of one JSONL file, each line with its annotation; the next record's number."""
    room = np.empty(0, dtype=np.uint8)
    for (read,) in source.field_chunks([annotations.field], batch_bytes):
        held = read.kind != kernels.FIELD_MISSING
        for i in np.flatnonzero(held).tolist():
            if read.kind[i] != kernels.FIELD_UNSURE or annotations.field in read.record(i):
                raise _taken(annotations.field, source.path, int(read.numbers[i]))
        stop = position + read.num_records
        if stop > annotations.labels.shape[0]:
            raise _changed()
        at = slice(position, stop)
        notes = annotation_notes(
            cast(Ids, annotations.ids), annotations.labels[at], annotations.keep[at],
            annotations.similarity[at], annotations.field,
        )  # fmt: skip
        size = read.chunk.shape[0] + notes.data.shape[0] + read.num_records
        if room.shape[0] < size:
            room = np.empty(size, dtype=np.uint8)
        written = kernels.annotated_lines(
            read.chunk, read.starts, read.lines, notes.data, notes.offsets, room
        )
        out.write(room[:written].data)
        position = stop
    return position


def _write_csv(sources: Sequence[CSVSource], annotations: Annotations, out: IO[bytes]) -> None:
    header = one_header(sources)
    added = [f"{annotations.field}.{name}" for name in ("cluster", "keep", "similarity")]
    for name in added:
        if name in header:
            raise _taken(name, sources[0].path, 1)
    text = io.TextIOWrapper(cast(BinaryIO, out), encoding="utf-8", newline="", write_through=True)
    writer = csv.writer(text)
    writer.writerow(header + added)
    position = 0
    for source in sources:
        rows = list(source.raw_records())
        values = annotations.values(position, position + len(rows))
        for row, (cluster, keep, similarity) in zip(rows, values, strict=True):
            writer.writerow([*row, cluster, "true" if keep else "false", _number(similarity)])
        position += len(rows)
    _check_count(position, annotations)
    text.flush()
    text.detach()


def _number(value: float | None) -> str:
    return "" if value is None else json.dumps(value)


def _write_table(sources: Sequence[TableSource], annotations: Annotations, path: Path) -> None:
    import pyarrow as pa

    schema = one_schema(sources)
    if annotations.field in schema.names:
        raise _taken(annotations.field, sources[0].path, None)
    note = pa.struct([("cluster", pa.string()), ("keep", pa.bool_()), ("similarity", pa.float64())])
    written = schema.remove_metadata().append(pa.field(annotations.field, note))  # stale now
    position = 0
    with table_writer(path, written) as writer:
        for source in sources:
            usable = source.usable_rows()
            start = 0
            for batch in source.record_batches(4096):
                rows = batch.filter(pa.array(usable[start : start + batch.num_rows]))
                start += batch.num_rows
                stop = position + rows.num_rows
                if stop > annotations.labels.shape[0]:
                    raise _changed()
                notes = _struct(annotations, position, stop, note)
                writer.write_batch(
                    pa.RecordBatch.from_arrays([*rows.columns, notes], schema=written)
                )
                position = stop
    _check_count(position, annotations)


def _struct(annotations: Annotations, lo: int, hi: int, kind: Any) -> Any:
    """The annotations of records ``lo .. hi - 1`` as an Arrow struct array."""
    import pyarrow as pa

    labels = annotations.labels[lo:hi]
    clusters = pa.array([annotations.ids[int(label)] for label in labels], pa.string())
    return pa.StructArray.from_arrays(
        [clusters, pa.array(annotations.keep[lo:hi]), pa.array(annotations.similarity[lo:hi])],
        fields=list(kind),
    )


def _taken(name: str, path: Path, line: int | None) -> InputError:
    return InputError(
        f"records have a field {name!r} already"
        + remedy(advice("--annotate", "name another field with --annotate FIELD")),
        path=path,
        line=line,
    )


def _check_count(count: int, annotations: Annotations) -> None:
    if count != annotations.labels.shape[0]:
        raise _changed()


def _changed() -> InputError:
    return InputError("the inputs changed during the run (their records differ); run again")
