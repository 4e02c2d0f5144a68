"""CSV, Parquet and Arrow input: CSV rows through Python's csv module, the others as Arrow columns.

Parquet and Arrow texts and ids go from Arrow's string buffers straight into a
:class:`~neardup.io.records.RecordBatch`; a batch with null texts or columns of another type is
read value by value to report its bad rows as the other formats do.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import io
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from neardup._types import Batch, Offsets, U8Array
from neardup.errors import InputError, advice, remedy
from neardup.io.compression import open_binary
from neardup.io.records import Ids, RecordBatch
from neardup.io.source import (
    BadRecordError,
    Source,
    encoding_hint,
    id_field_advice,
    skip_advice,
)
from neardup.keep import comparable

__all__ = [
    "ArrowSource",
    "CSVSource",
    "ParquetSource",
    "TableSource",
    "arrow_strings",
    "table_writer",
]


class CSVSource(Source):
    """CSV with a header row; ids default to FILE:LINE."""

    format = "csv"

    def header(self) -> list[str]:
        """The column names."""
        with self._text() as f:
            try:
                return next(csv.reader(f), [])
            except UnicodeDecodeError as exc:
                raise _not_encoded(self, 1, exc) from None

    def _text(self) -> io.TextIOWrapper:
        encoding = self.options.encoding
        if codecs.lookup(encoding).name == "utf-8":
            encoding = "utf-8-sig"  # a byte-order mark first, as spreadsheet programs write
        return io.TextIOWrapper(open_binary(self.path), encoding=encoding, newline="")

    def _scan(self) -> Iterator[tuple[str, str, Any] | InputError]:
        csv.field_size_limit(sys.maxsize)
        with self._text() as f:
            reader = csv.reader(f)
            try:
                header = next(reader, None)
                if header is None:
                    raise InputError("file has no records (it is empty)", path=self.path)
                self._check_header(header)
                for row in reader:
                    yield self._parse(header, row, reader.line_num)
            except UnicodeDecodeError as exc:
                raise _not_encoded(self, reader.line_num + 1, exc) from None
            except csv.Error as exc:
                raise InputError(
                    f"malformed CSV: {exc}", path=self.path, line=reader.line_num
                ) from None

    def field_values(self, names: Sequence[str], batch_bytes: int) -> list[Any]:
        """Each usable row's cells of columns ``names``, for ``keep_by``.

        A column whose every non-empty cell is a number holds numbers, any other strings; an
        empty cell is no value.
        """
        import pyarrow as pa
        import pyarrow.compute as pc

        header = self.header()
        _check_keep_columns(names, header, self)
        places = [header.index(name) for name in names]
        rows = list(self.raw_records())
        columns = []
        for name, place in zip(names, places, strict=True):
            cells = pa.array([row[place] for row in rows], pa.large_string())
            cells = pc.if_else(pc.equal(cells, ""), pa.scalar(None, pa.large_string()), cells)
            with contextlib.suppress(pa.ArrowInvalid):  # else not all numbers: strings
                cells = cells.cast(pa.float64())
            columns.append(comparable(cells, name, str(self.path)))
        return columns

    def _check_header(self, header: list[str]) -> None:
        """The named columns are there (a misspelt --id-field is not a silent fallback)."""
        wanted = [self.options.text_field]
        if self.options.id_required:
            wanted.append(str(self.options.id_name))
        fixes = (advice("--text-field", "choose it with --text-field"), id_field_advice("ROW"))
        for name, fix in zip(wanted, fixes, strict=False):
            if name not in header:
                raise InputError(
                    f"no column {name!r} (columns: {', '.join(map(repr, header))})" + remedy(fix),
                    path=self.path,
                    line=1,
                )

    def _parse(
        self, header: list[str], row: list[str], number: int
    ) -> tuple[str, str, list[str]] | InputError:
        if len(row) != len(header):
            return InputError(
                f"row has {len(row)} fields, the header has {len(header)}" + remedy(skip_advice()),
                path=self.path,
                line=number,
            )
        try:
            doc_id, text = self._field_text_and_id(
                dict(zip(header, row, strict=True)), f"{self.label}:{number}"
            )
        except BadRecordError as exc:
            return InputError(str(exc), path=self.path, line=number)
        return doc_id, text, row


def _check_keep_columns(names: Sequence[str], columns: Sequence[str], source: Source) -> None:
    """Every ``--keep-by`` field is one of the file's ``columns``."""
    missing = [name for name in names if name not in columns]
    if missing:
        raise InputError(
            f"no column {missing[0]!r} to keep by (columns: {', '.join(map(repr, columns))})"
            + remedy("name a column with --keep-by"),
            path=source.path,
        )


def _not_encoded(source: Source, line: int, exc: UnicodeDecodeError) -> InputError:
    encoding = source.options.encoding
    return InputError(
        f"not valid {encoding} near line {line}: {exc.reason}"
        + remedy(encoding_hint(encoding), "re-encode the file as UTF-8"),
        path=source.path,
    )


_STRING_TYPES = ("string", "large_string")


class TableSource(Source):
    """A file of Arrow columns (Parquet, Arrow IPC); ids default to FILE:ROW (1-based).

    A subclass says how to open its file (:meth:`schema`, :meth:`num_rows`, :meth:`row_bytes`,
    :meth:`record_batches`, :meth:`read`); reading, checking and ``keep_by`` are shared.
    """

    def schema(self) -> Any:
        """The file's Arrow schema."""
        raise NotImplementedError

    def num_rows(self) -> int:
        """The number of rows in the file."""
        raise NotImplementedError

    def row_bytes(self) -> int:
        """About how many bytes a row holds (to size batches)."""
        raise NotImplementedError

    def record_batches(self, rows: int, columns: Sequence[str] | None = None) -> Iterator[Any]:
        """The file's rows (of ``columns``, default all) in Arrow record batches of ``rows``."""
        raise NotImplementedError

    def read(self, columns: Sequence[str]) -> Any:
        """Columns ``columns`` of the whole file, as an Arrow table."""
        raise NotImplementedError

    def batches(self, batch_bytes: int) -> Iterator[RecordBatch]:
        """The usable rows, in Arrow record batches of about ``batch_bytes`` of data."""
        self._start_pass()
        names = self.schema().names
        text_field = self.options.text_field
        if text_field not in names:
            raise InputError(
                f"no column {text_field!r} (columns: {', '.join(names)})"
                + remedy(advice("--text-field", "choose the text column with --text-field")),
                path=self.path,
            )
        columns = [text_field]
        id_field = self.options.id_name
        if self.options.id_required and id_field not in names:
            raise InputError(
                f"no column {id_field!r} (columns: {', '.join(names)})"
                + remedy(id_field_advice("ROW")),
                path=self.path,
            )
        if id_field is not None and id_field in names and id_field != text_field:
            columns.append(id_field)
        num_rows = self.num_rows()
        if num_rows == 0:
            return
        rows = max(1, min(1 << 20, batch_bytes // self.row_bytes()))
        row = 0
        for record_batch in self.record_batches(rows, columns):
            batch = self._columnar(record_batch, row) or self._by_value(record_batch, row)
            row += record_batch.num_rows
            self.consumed = int(self.size * row / num_rows)
            if batch.num_docs:
                yield RecordBatch(texts=batch.texts, ids=batch.ids, position=self.consumed)

    def _columnar(self, record_batch: Any, first_row: int) -> RecordBatch | None:
        """The batch from Arrow buffers, or None when it needs reading value by value."""
        import pyarrow as pa
        import pyarrow.compute as pc

        texts = record_batch.column(self.options.text_field)
        if str(texts.type) not in _STRING_TYPES or texts.null_count:
            return None
        id_field = self.options.id_name
        if id_field is None or id_field not in record_batch.schema.names:
            numbers = range(first_row + 1, first_row + record_batch.num_rows + 1)
            ids = Ids.of([f"{self.label}:{n}" for n in numbers])
        else:
            column = record_batch.column(id_field)
            if pa.types.is_integer(column.type):
                column = pc.cast(column, pa.string())
            elif str(column.type) not in _STRING_TYPES:
                return None
            if column.null_count:
                return None
            ids = Ids(*arrow_strings(column))
        return RecordBatch(texts=Batch(*arrow_strings(texts)), ids=ids)

    def _by_value(self, record_batch: Any, first_row: int) -> RecordBatch:
        """The batch value by value, with the same checks and messages as JSONL records."""
        table = record_batch.to_pydict()
        texts = table[self.options.text_field]
        id_field = self.options.id_name
        ids = table.get(id_field) if id_field is not None else None
        good_ids: list[str] = []
        good_texts: list[str] = []
        for i, text in enumerate(texts):
            row = first_row + i + 1
            record = {self.options.text_field: text}
            if ids is not None and id_field is not None:
                record[id_field] = ids[i]
            try:
                doc_id, value = self._field_text_and_id(record, f"{self.label}:{row}")
            except BadRecordError as exc:
                self._reject(InputError(str(exc), path=self.path, line=row))
                continue
            good_ids.append(doc_id)
            good_texts.append(value)
        return RecordBatch.of(good_ids, good_texts)

    def _scan(self) -> Iterator[tuple[str, str, Any] | InputError]:
        """Rows as ``(id, text, row index)``; bad rows are counted by :meth:`batches`."""
        for batch in self.batches(1 << 24):
            yield from ((doc_id, text, None) for doc_id, text in batch.records())

    def field_values(self, names: Sequence[str], batch_bytes: int) -> list[Any]:
        """Each usable row's value of columns ``names`` (:func:`neardup.keep.comparable`)."""
        import pyarrow as pa

        _check_keep_columns(names, self.schema().names, self)
        table = self.read(names)
        usable = pa.array(self.usable_rows())
        return [
            comparable(table.column(name).combine_chunks().filter(usable), name, str(self.path))
            for name in names
        ]

    def usable_rows(self) -> np.ndarray:
        """A mask of the rows :meth:`batches` yielded (after a pass): all but the bad ones."""
        mask = np.ones(self.num_rows(), dtype=bool)
        mask[np.asarray(self.bad_lines, dtype=np.int64) - 1] = False
        return mask


class ParquetSource(TableSource):
    """Parquet, read a row group's worth at a time."""

    format = "parquet"

    def _file(self) -> Any:
        import pyarrow.parquet as pq

        if not self.path.exists():
            raise InputError("no such file; check the path", path=self.path)
        try:
            return pq.ParquetFile(self.path)
        except Exception as exc:  # pyarrow raises several unrelated types for a bad file
            raise InputError(f"not a readable Parquet file: {exc}", path=self.path) from None

    def schema(self) -> Any:
        """The file's Arrow schema."""
        return self._file().schema_arrow

    def num_rows(self) -> int:
        """The number of rows in the file."""
        return int(self._file().metadata.num_rows)

    def row_bytes(self) -> int:
        """The first row group's bytes per row."""
        metadata = self._file().metadata
        if metadata.num_row_groups == 0:
            return 1
        return int(max(1, metadata.row_group(0).total_byte_size // max(1, metadata.num_rows)))

    def record_batches(self, rows: int, columns: Sequence[str] | None = None) -> Iterator[Any]:
        """The file's rows, decoded ``rows`` at a time."""
        yield from self._file().iter_batches(
            batch_size=rows, columns=None if columns is None else list(columns)
        )

    def read(self, columns: Sequence[str]) -> Any:
        """Columns ``columns`` of the whole file."""
        return self._file().read(columns=list(columns))


class ArrowSource(TableSource):
    """An Arrow IPC file (``.arrow``), memory-mapped: its batches are views of the file.

    The stream format (as Hugging Face ``datasets`` writes it) or the file format.
    """

    format = "arrow"

    def _table(self) -> Any:
        import pyarrow as pa

        if not self.path.exists():
            raise InputError("no such file; check the path", path=self.path)
        try:
            mapped = pa.memory_map(str(self.path))  # open while the table's buffers live
            try:
                return pa.ipc.open_file(mapped).read_all()
            except pa.ArrowInvalid:  # not the file format: the stream format
                mapped.seek(0)
                return pa.ipc.open_stream(mapped).read_all()
        except Exception as exc:  # pyarrow raises several unrelated types for a bad file
            raise InputError(
                f"not a readable Arrow IPC file: {exc}"
                + remedy("give a .arrow file written by pyarrow or Hugging Face datasets"),
                path=self.path,
            ) from None

    def schema(self) -> Any:
        """The file's Arrow schema."""
        return self._table().schema

    def num_rows(self) -> int:
        """The number of rows in the file."""
        return int(self._table().num_rows)

    def row_bytes(self) -> int:
        """The file's bytes per row."""
        return max(1, self.size // max(1, self.num_rows()))

    def record_batches(self, rows: int, columns: Sequence[str] | None = None) -> Iterator[Any]:
        """The file's rows, ``rows`` at a time, as views of the mapped file."""
        table = self._table()
        if columns is not None:
            table = table.select(list(columns))
        return iter(table.to_batches(max_chunksize=rows))

    def read(self, columns: Sequence[str]) -> Any:
        """Columns ``columns`` of the whole file."""
        return self._table().select(list(columns))


def table_writer(path: Path, schema: Any) -> Any:
    """A writer of Arrow record batches to ``path``: Parquet, or Arrow IPC for ``.arrow``.

    Arrow as a stream, which ``datasets.Dataset.from_file`` reads.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path.suffix == ".arrow":
        return pa.ipc.new_stream(str(path), schema)
    return pq.ParquetWriter(path, schema)


def arrow_strings(array: Any) -> tuple[U8Array, Offsets]:
    """An Arrow string array (no nulls) as bytes and offsets, without copying the text."""
    _, offsets_buffer, data_buffer = array.buffers()
    width = np.int64 if str(array.type) == "large_string" else np.int32
    raw = np.frombuffer(offsets_buffer, dtype=width)[array.offset : array.offset + len(array) + 1]
    offsets = raw.astype(np.int64)
    data = (
        np.frombuffer(data_buffer, dtype=np.uint8)
        if data_buffer is not None
        else np.empty(0, dtype=np.uint8)
    )
    start = int(offsets[0])
    return data[start : int(offsets[-1])], offsets - start
