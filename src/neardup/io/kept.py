"""Writing the deduplicated corpus: the kept records, unchanged, in the input's format.

JSONL records are copied byte for byte (a kernel copies the kept lines of each chunk); CSV rows
keep the header; Parquet keeps the schema and every column (Arrow batches filtered by a mask);
.txt inputs become JSONL records ``{"id", "text"}``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, BinaryIO, cast

from neardup._types import BoolArray
from neardup.errors import InputError
from neardup.io.compression import open_binary_write
from neardup.io.readers import CSVSource, JSONLinesSource, ParquetSource, Source
from neardup.params import Compression

__all__ = ["write_kept"]

_EXTENSIONS = {"none": "", "gzip": ".gz", "zstd": ".zst"}


def write_kept(
    sources: Sequence[Source],
    keep: BoolArray,
    directory: Path,
    compress: Compression = "none",
    batch_bytes: int = 32 << 20,
) -> Path:
    """Write the records whose ``keep`` entry is true (one entry per usable record, in order).

    Call after a full reading pass over ``sources`` (which records are bad is known then).
    Returns the path written: ``kept.jsonl``, ``kept.csv`` or ``kept.parquet`` in ``directory``
    (JSONL and CSV with ``.gz`` or ``.zst`` appended when compressed).
    """
    fmt = sources[0].format
    if fmt == "parquet":
        path = directory / "kept.parquet"
        _write_parquet([s for s in sources if isinstance(s, ParquetSource)], keep, path)
        return path
    suffix = ".csv" if fmt == "csv" else ".jsonl"
    path = directory / f"kept{suffix}{_EXTENSIONS[compress]}"
    with open_binary_write(path, compress) as out:
        if fmt == "csv":
            _write_csv([s for s in sources if isinstance(s, CSVSource)], iter(keep.tolist()), out)
        elif fmt == "jsonl":
            position = 0
            for source in sources:
                assert isinstance(source, JSONLinesSource)
                position += source.copy_kept(keep[position:], out, batch_bytes)
        else:
            flags = iter(keep.tolist())
            for source in sources:
                for raw in source.raw_records():
                    if next(flags):
                        out.write(_text_record(raw))
    return path


def _text_record(raw: tuple[str, str]) -> bytes:
    doc_id, text = raw
    line = json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n"
    return line.encode("utf-8", "surrogatepass")


def _write_csv(sources: Sequence[CSVSource], flags: Iterator[bool], out: IO[bytes]) -> None:
    header = sources[0].header()
    text = io.TextIOWrapper(cast(BinaryIO, out), encoding="utf-8", newline="", write_through=True)
    writer = csv.writer(text)
    writer.writerow(header)
    for source in sources:
        if source.header() != header:
            raise InputError(
                f"CSV header differs from {sources[0].path}'s; merge files with one header",
                path=source.path,
            )
        for row in source.raw_records():
            if next(flags):
                writer.writerow(row)
    text.flush()
    text.detach()


def _write_parquet(sources: Sequence[ParquetSource], keep: BoolArray, path: Path) -> None:
    import pyarrow.parquet as pq

    schema = sources[0].schema()
    position = 0
    with pq.ParquetWriter(path, schema) as writer:
        for source in sources:
            if not source.schema().equals(schema):
                raise InputError(
                    f"Parquet schema differs from {sources[0].path}'s; write one schema per run",
                    path=source.path,
                )
            mask = source.usable_rows()
            usable = int(mask.sum())
            mask[mask] = keep[position : position + usable]
            position += usable
            parquet = pq.ParquetFile(source.path)
            start = 0
            for batch in parquet.iter_batches(batch_size=4096):
                chunk = mask[start : start + batch.num_rows]
                start += batch.num_rows
                if chunk.any():
                    writer.write_batch(batch.filter(chunk))
