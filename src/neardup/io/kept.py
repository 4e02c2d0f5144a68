r"""Writing the deduplicated corpus: the kept records, unchanged, in the input's format.

JSONL records are copied byte for byte (a kernel copies the kept lines of each chunk); CSV rows
keep the header; Parquet and Arrow keep the schema and every column (Arrow batches filtered by
a mask); .txt inputs and web archives become JSONL records ``{"id", "text"}``. A source that
wraps another (``inner``: the HTML field reader) writes the wrapped source's records, as they
were read. With :class:`Edits` (passage-level dedup) the records named there get a new text (or
are left out); every other field of theirs, and every other record, is written as it was.

Every JSONL line written is UTF-8, as JSON must be (RFC 8259 §8.1): a lone surrogate (a JSONL
input's ``"\ud800"``, a file name's or URL's byte that is not UTF-8) is written as its JSON
escape, which reads back as the same string; every other character as it is.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO, cast

import numpy as np
from numpy.typing import NDArray

from neardup._types import BoolArray, I64Array, U8Array
from neardup.errors import InputError
from neardup.io.compression import open_binary_write
from neardup.io.output import start_writeback
from neardup.io.readers import CSVSource, JSONLinesSource, Source
from neardup.io.results import record_line
from neardup.io.tabular import TableSource, table_writer
from neardup.params import Compression
from neardup.text.spans import gather

__all__ = ["Edits", "corpus_path", "one_header", "one_schema", "write_kept"]

_EXTENSIONS = {"none": "", "gzip": ".gz", "zstd": ".zst"}


def corpus_path(directory: Path, stem: str, fmt: str, compress: Compression) -> Path:
    """Where an output corpus of inputs of format ``fmt`` goes.

    ``STEM.parquet``, ``STEM.arrow``, or ``STEM.csv`` / ``STEM.jsonl`` with ``.gz`` or ``.zst``
    when compressed.
    """
    if fmt in ("parquet", "arrow"):
        return directory / f"{stem}.{fmt}"
    return directory / f"{stem}{'.csv' if fmt == 'csv' else '.jsonl'}{_EXTENSIONS[compress]}"


@dataclass(frozen=True, slots=True)
class Edits:
    """New texts for some records, made as the kept corpus is written.

    ``rewrite(record, text)`` is called for each record whose ``changed`` entry is true (one
    entry per usable record, in order) with the text as read; it returns the record's new
    text, or None to leave the record out.
    """

    changed: BoolArray
    rewrite: Callable[[int, str], str | None]

    @classmethod
    def of_marks(
        cls, marks: BoolArray, bounds: I64Array, rewrite: Callable[[int, str], str | None]
    ) -> Edits:
        """The edits of the records whose ``marks[bounds[r]:bounds[r + 1]]`` hold a mark.

        Examples
        --------
        >>> marks = np.array([False, True, False, False])
        >>> Edits.of_marks(marks, np.array([0, 2, 2, 4]), str.upper).changed.tolist()
        [True, False, False]
        """
        starts = bounds[:-1]
        has_entries = bounds[1:] > starts
        changed = np.zeros(starts.shape[0], dtype=bool)
        if marks.shape[0]:
            changed[has_entries] = np.logical_or.reduceat(marks, starts[has_entries])
        return cls(changed, rewrite)

    def text_of(self, record: int, text: str) -> str | None:
        """The text ``record`` is written with (None: left out)."""
        return self.rewrite(record, text) if self.changed[record] else text


def write_kept(
    sources: Sequence[Source],
    keep: BoolArray,
    directory: Path,
    compress: Compression = "none",
    batch_bytes: int = 32 << 20,
    line_spans: tuple[NDArray[np.int32], I64Array] | None = None,
    edits: Edits | None = None,
) -> Path:
    """Write the records whose ``keep`` entry is true (one entry per usable record, in order).

    Call after a full reading pass over ``sources`` (which records are bad is known then).
    ``line_spans`` (plain JSONL: each record's input and line, see
    :meth:`~neardup.io.jsonl.JSONLineTexts.line_spans`) lets uncompressed output be copied
    file to file by the kernel (``copy_file_range``), runs of kept lines at a time.
    Returns the path written: ``kept.jsonl``, ``kept.csv``, ``kept.parquet`` or ``kept.arrow``
    in ``directory`` (JSONL and CSV with ``.gz`` or ``.zst`` appended when compressed).
    ``edits``: texts to change (the records read through :mod:`json` or :mod:`csv` then, not
    copied by the kernel).
    """
    sources = [getattr(source, "inner", source) for source in sources]
    fmt = sources[0].format
    path = corpus_path(directory, "kept", fmt, compress)
    if isinstance(sources[0], TableSource):
        _write_table([s for s in sources if isinstance(s, TableSource)], keep, path, edits)
        return path
    with open_binary_write(path, compress) as out:
        if fmt == "csv":
            csv_sources = [s for s in sources if isinstance(s, CSVSource)]
            _write_csv(csv_sources, iter(keep.tolist()), out, edits)
        elif fmt == "jsonl" and edits is not None:
            lines = [s for s in sources if isinstance(s, JSONLinesSource)]
            _write_edited_lines(lines, keep, edits, out)
        elif fmt == "jsonl" and line_spans is not None and compress == "none":
            _copy_lines([s.path for s in sources], keep, *line_spans, out)
        elif fmt == "jsonl":
            position = 0
            for source in sources:
                assert isinstance(source, JSONLinesSource)
                position += source.copy_kept(keep[position:], out, batch_bytes)
            if position != keep.shape[0]:
                raise _changed_input()
        else:
            flags = iter(keep.tolist())
            record = 0
            for source in sources:
                for doc_id, text in source.raw_records():
                    if next(flags):
                        new = text if edits is None else edits.text_of(record, text)
                        if new is not None:
                            out.write(_text_record(doc_id, new))
                    record += 1
    return path


COPY_RUN = 1 << 20
"""Runs of kept lines at least this long are copied file to file by the kernel
(``copy_file_range``); shorter ones are read a window at a time and written from memory (at
a million short documents, a system call per run cost five times as much)."""

WINDOW = 32 << 20
"""Bytes of input a window of short runs spans (its first start to its last stop, about)."""

RUN_BLOCK = 1 << 20
"""Records whose runs are found at a time."""

WRITEBACK = 64 << 20
"""Bytes of kept output sent on to the disk at a time."""


def _copy_lines(
    paths: Sequence[Path],
    keep: BoolArray,
    source: NDArray[np.int32],
    lines: I64Array,
    out: IO[bytes],
) -> None:
    """Copy the kept records' lines from the input files, in order, adjacent lines as one run.

    The output goes to the disk as it is written (:func:`start_writeback`).
    """
    out.flush()
    target = out.fileno()
    sizes = [path.stat().st_size for path in paths]
    handles = [path.open("rb", buffering=0) for path in paths]
    window = np.empty(0, dtype=np.uint8)
    room = np.empty(0, dtype=np.uint8)
    written = synced = 0
    try:
        for inputs, starts, stops in _kept_runs(keep, source, lines):
            for lo, hi in _groups(inputs, starts, stops):
                handle = handles[int(inputs[lo])]
                first, last = int(starts[lo]), int(stops[hi - 1])
                if hi - lo == 1 and last - first >= COPY_RUN:
                    written += _copy_range(handle, first, last, target)
                else:
                    if window.shape[0] < last - first:
                        window = np.empty(last - first, dtype=np.uint8)
                        room = np.empty(last - first, dtype=np.uint8)
                    _read_exactly(handle, window[: last - first], first)
                    piece_sizes = stops[lo:hi] - starts[lo:hi]
                    packed = gather(
                        window, window, np.zeros(hi - lo, dtype=bool),
                        starts[lo:hi] - first, piece_sizes, room,
                    )  # fmt: skip
                    written += _write_all(target, packed.data.data)
                if last == sizes[int(inputs[lo])] and _last_byte(handle, last) != b"\n":
                    written += _write_all(target, b"\n")  # the file's last line lacks one
                if written - synced >= WRITEBACK:
                    start_writeback(target, synced, written - synced)
                    synced = written
    finally:
        for handle in handles:
            handle.close()


def _groups(
    inputs: NDArray[np.int32], starts: I64Array, stops: I64Array
) -> Iterator[tuple[int, int]]:
    """Runs ``lo:hi`` written together: a long run alone, or short runs of one input window."""
    long = stops - starts >= COPY_RUN
    new_group = np.ones(starts.shape[0], dtype=bool)
    window = starts // WINDOW
    new_group[1:] = long[1:] | long[:-1] | (inputs[1:] != inputs[:-1]) | (window[1:] != window[:-1])
    bounds = np.r_[np.flatnonzero(new_group), starts.shape[0]].tolist()
    return itertools.pairwise(bounds)


def _kept_runs(
    keep: BoolArray, source: NDArray[np.int32], lines: I64Array
) -> Iterator[tuple[NDArray[np.int32], I64Array, I64Array]]:
    """``(inputs, starts, stops)`` of the kept lines, adjacent ones merged into one run.

    Records are taken :data:`RUN_BLOCK` at a time, so the arrays stay small whatever the
    corpus; a run that continues into the next block is held back and joined to it.
    """
    held: tuple[NDArray[np.int32], I64Array, I64Array] | None = None
    for lo in range(0, keep.shape[0], RUN_BLOCK):
        kept = np.flatnonzero(keep[lo : lo + RUN_BLOCK]) + lo
        if held is not None:
            inputs = np.r_[held[0], source[kept]].astype(np.int32)
            starts = np.r_[held[1], lines[kept, 0]]
            stops = np.r_[held[2], lines[kept, 0] + lines[kept, 1]]
        else:
            inputs, starts, stops = source[kept], lines[kept, 0], lines[kept, 0] + lines[kept, 1]
        if starts.shape[0] == 0:
            continue
        new_run = np.ones(starts.shape[0], dtype=bool)
        new_run[1:] = (starts[1:] != stops[:-1]) | (inputs[1:] != inputs[:-1])
        first = np.flatnonzero(new_run)
        last = np.r_[first[1:] - 1, starts.shape[0] - 1]
        inputs, starts, stops = inputs[first], starts[first], stops[last]
        held = (inputs[-1:], starts[-1:], stops[-1:])
        if first.shape[0] > 1:
            yield inputs[:-1], starts[:-1], stops[:-1]
    if held is not None:
        yield held


def _read_exactly(handle: BinaryIO, into: U8Array, at: int) -> None:
    """Fill ``into`` from ``handle`` at offset ``at``."""
    done = 0
    while done < into.shape[0]:
        got = os.preadv(handle.fileno(), [into[done:].data], at + done)
        if got == 0:
            raise InputError("file changed while it was read; run again", path=handle.name)
        done += got


def _last_byte(handle: BinaryIO, size: int) -> bytes:
    return os.pread(handle.fileno(), 1, size - 1)


def _copy_range(source: BinaryIO, start: int, stop: int, target: int) -> int:
    """Append ``source[start:stop]`` to ``target``, in the kernel when it can; bytes written.

    Pieces of :data:`WRITEBACK` bytes, each sent on to the disk as soon as it is copied.
    """
    size = stop - start
    while start < stop:
        at = os.lseek(target, 0, os.SEEK_CUR)
        piece = min(stop - start, WRITEBACK)
        try:
            done = os.copy_file_range(source.fileno(), target, piece, start)
        except OSError:  # another file system, or no copy_file_range: copy through memory
            done = _write_all(target, os.pread(source.fileno(), piece, start))
        if done == 0:
            raise InputError("file changed while it was read; run again", path=source.name)
        start_writeback(target, at, done)
        start += done
    return size


def _write_all(target: int, data: bytes | memoryview) -> int:
    """Write all of ``data`` to ``target``; its size."""
    view = memoryview(data)
    while view:
        view = view[os.write(target, view) :]
    return len(data)


def _changed_input() -> InputError:
    return InputError(
        "the input has fewer records than when it was first read "
        "(a file changed during the run); run again"
    )


def _text_record(doc_id: str, text: str) -> bytes:
    return record_line({"id": doc_id, "text": text}).encode("utf-8")


def _json_line(record: dict[str, object]) -> bytes:
    """One JSONL line in UTF-8 (:func:`~neardup.io.results.record_line`)."""
    return record_line(record).encode("utf-8")


def _write_edited_lines(
    sources: Sequence[JSONLinesSource], keep: BoolArray, edits: Edits, out: IO[bytes]
) -> None:
    """Copy the kept JSONL records, the changed ones parsed and written with their new text."""
    record = 0
    for source in sources:
        field = source.options.text_field
        for line in source.record_lines():
            if keep[record] and not edits.changed[record]:
                out.write(line)
            elif keep[record]:
                parsed = json.loads(line)
                new = edits.rewrite(record, parsed[field])
                if new is not None:
                    parsed[field] = new
                    out.write(_json_line(parsed))
            record += 1
    if record != edits.changed.shape[0]:
        raise _changed_input()


def one_header(sources: Sequence[CSVSource]) -> list[str]:
    """The header every CSV input has (a corpus written from them has one header)."""
    header = sources[0].header()
    for source in sources[1:]:
        if source.header() != header:
            raise InputError(
                f"CSV header differs from {sources[0].path}'s; merge files with one header",
                path=source.path,
            )
    return header


def one_schema(sources: Sequence[TableSource]) -> Any:
    """The Arrow schema every Parquet or Arrow input has (a corpus written from them has one)."""
    schema = sources[0].schema()
    for source in sources[1:]:
        if not source.schema().equals(schema):
            raise InputError(
                f"schema differs from {sources[0].path}'s; write one schema per run",
                path=source.path,
            )
    return schema


def _write_csv(
    sources: Sequence[CSVSource], flags: Iterator[bool], out: IO[bytes], edits: Edits | None
) -> None:
    header = one_header(sources)
    text = io.TextIOWrapper(cast(BinaryIO, out), encoding="utf-8", newline="", write_through=True)
    writer = csv.writer(text)
    writer.writerow(header)
    column = header.index(sources[0].options.text_field)
    record = 0
    for source in sources:
        for row in source.raw_records():
            if next(flags):
                new = row[column] if edits is None else edits.text_of(record, row[column])
                if new is not None:
                    row[column] = new
                    writer.writerow(row)
            record += 1
    text.flush()
    text.detach()


def _write_table(
    sources: Sequence[TableSource], keep: BoolArray, path: Path, edits: Edits | None
) -> None:
    schema = one_schema(sources)
    position = 0
    with table_writer(path, schema) as writer:
        for source in sources:
            mask = source.usable_rows()
            usable = int(mask.sum())
            records = np.cumsum(mask) - 1 + position  # each row's record (where usable)
            mask[mask] = keep[position : position + usable]
            position += usable
            start = 0
            for batch in source.record_batches(4096):
                chunk = mask[start : start + batch.num_rows]
                rows = batch
                if edits is not None:
                    rows, chunk = _edited(batch, chunk, records[start:], edits, source)
                start += batch.num_rows
                if chunk.any():
                    writer.write_batch(rows.filter(chunk))


def _edited(
    batch: Any, chunk: BoolArray, records: I64Array, edits: Edits, source: TableSource
) -> tuple[Any, BoolArray]:
    """An Arrow batch with the changed records' new texts, and its rows still written."""
    import pyarrow as pa

    rows = np.flatnonzero(chunk)
    changed = rows[edits.changed[records[rows]]]
    if changed.shape[0] == 0:
        return batch, chunk
    name = source.options.text_field
    column = batch.schema.get_field_index(name)
    texts = batch.column(column).to_pylist()
    chunk = chunk.copy()
    for row in changed.tolist():
        new = edits.rewrite(int(records[row]), texts[row])
        if new is None:
            chunk[row] = False
        else:
            texts[row] = new
    array = pa.array(texts, type=batch.schema.field(column).type)
    return batch.set_column(column, batch.schema.field(column), array), chunk
