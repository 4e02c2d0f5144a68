"""Readers: documents streamed from JSONL (plain, .gz, .zst), Parquet, CSV or .txt files.

A :class:`Source` yields ``(id, text)`` in input order, one record at a time, so memory is bounded
by the batch the caller collects, never by the corpus. The same iteration decides which records
are bad in every pass (reading, verifying, copying the kept records), so passes agree on record
numbering. A bad record raises an :class:`~neardup.errors.InputError` naming the file and line,
or, with ``skip_bad_records``, is counted in :attr:`Source.num_bad` and skipped.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from neardup.errors import InputError
from neardup.io.compression import open_binary, strip_compression
from neardup.params import InputFormat

__all__ = ["FORMAT_SUFFIXES", "ReadOptions", "Source", "open_sources"]

FORMAT_SUFFIXES: dict[str, str] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".txt": "txt",
}

_SKIP_HINT = "or pass --skip-bad-records to skip such records"


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How records are read: field names and what to do with bad records."""

    text_field: str = "text"
    id_field: str | None = "id"
    skip_bad_records: bool = False


class _BadRecordError(Exception):
    """A record that cannot be used; carries the reason for the InputError."""


class Source(ABC):
    """One input file (or directory of .txt files) read as ``(id, text)`` records."""

    format: ClassVar[str]

    def __init__(self, path: Path, options: ReadOptions) -> None:
        self.path = path
        self.options = options
        self.num_bad = 0

    def records(self) -> Iterator[tuple[str, str]]:
        """The usable records ``(id, text)`` in input order; bad ones raise or are counted."""
        self.num_bad = 0
        for item in self._scan():
            if isinstance(item, InputError):
                self._reject(item)
            else:
                yield item[0], item[1]

    def _reject(self, error: InputError) -> None:
        if not self.options.skip_bad_records:
            raise error
        self.num_bad += 1

    @abstractmethod
    def _scan(self) -> Iterator[tuple[str, str, Any] | InputError]:
        """Every record as ``(id, text, raw)``, or an InputError for a bad one."""

    def raw_records(self) -> Iterator[Any]:
        """The raw form (as :meth:`records` yields them, bad ones skipped) for copying out."""
        for item in self._scan():
            if not isinstance(item, InputError):
                yield item[2]

    def _field_text_and_id(self, record: dict[str, Any], default_id: str) -> tuple[str, str]:
        name = self.options.text_field
        if name not in record:
            fields = ", ".join(map(repr, list(record)[:10])) or "none"
            raise _BadRecordError(
                f"record has no {name!r} field (fields: {fields}); choose the text field with "
                f"--text-field, {_SKIP_HINT}"
            )
        text = record[name]
        if not isinstance(text, str):
            raise _BadRecordError(
                f"field {name!r} is {type(text).__name__}, expected a string; {_SKIP_HINT}"
            )
        id_field = self.options.id_field
        if id_field is None or record.get(id_field) is None:
            return default_id, text
        value = record[id_field]
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise _BadRecordError(
                f"field {id_field!r} is {type(value).__name__}, expected a string or an integer; "
                f"choose the id field with --id-field, {_SKIP_HINT}"
            )
        return str(value), text


class JSONLinesSource(Source):
    """JSON Lines: one JSON object per line; blank lines are ignored; ids default to FILE:LINE."""

    format = "jsonl"

    def _scan(self) -> Iterator[tuple[str, str, Any] | InputError]:
        seen_line = False
        with open_binary(self.path) as f:
            try:
                for number, line in enumerate(f, start=1):
                    if not line.strip():
                        continue
                    seen_line = True
                    yield self._parse(line, number)
            except (OSError, EOFError) as exc:
                raise InputError(
                    f"cannot read: {exc}; is the file truncated?", path=self.path
                ) from None
        if not seen_line:
            raise InputError("file has no records (it is empty)", path=self.path)

    def _parse(self, line: bytes, number: int) -> tuple[str, str, bytes] | InputError:
        try:
            decoded = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return InputError(
                f"line is not valid UTF-8 (byte 0x{line[exc.start]:02x} at column "
                f"{exc.start + 1}); re-encode the file as UTF-8, {_SKIP_HINT}",
                path=self.path,
                line=number,
            )
        try:
            record = json.loads(decoded)
        except json.JSONDecodeError as exc:
            return InputError(
                f"malformed JSON ({exc.msg} at column {exc.colno}); {_SKIP_HINT}",
                path=self.path,
                line=number,
            )
        if not isinstance(record, dict):
            return InputError(
                f"record is a JSON {type(record).__name__}, expected an object; {_SKIP_HINT}",
                path=self.path,
                line=number,
            )
        try:
            doc_id, text = self._field_text_and_id(record, f"{self.path.name}:{number}")
        except _BadRecordError as exc:
            return InputError(str(exc), path=self.path, line=number)
        return doc_id, text, line if line.endswith(b"\n") else line + b"\n"


class CSVSource(Source):
    """CSV with a header row; ids default to FILE:LINE."""

    format = "csv"

    def header(self) -> list[str]:
        """The column names."""
        with self._text() as f:
            return next(csv.reader(f), [])

    def _text(self) -> io.TextIOWrapper:
        return io.TextIOWrapper(open_binary(self.path), encoding="utf-8", newline="")

    def _scan(self) -> Iterator[tuple[str, str, Any] | InputError]:
        csv.field_size_limit(sys.maxsize)
        with self._text() as f:
            reader = csv.reader(f)
            try:
                header = next(reader, None)
                if header is None:
                    raise InputError("file has no records (it is empty)", path=self.path)
                for row in reader:
                    yield self._parse(header, row, reader.line_num)
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"not valid UTF-8 near line {reader.line_num + 1}: {exc.reason}; re-encode "
                    "the file as UTF-8",
                    path=self.path,
                ) from None
            except csv.Error as exc:
                raise InputError(
                    f"malformed CSV: {exc}", path=self.path, line=reader.line_num
                ) from None

    def _parse(
        self, header: list[str], row: list[str], number: int
    ) -> tuple[str, str, list[str]] | InputError:
        if len(row) != len(header):
            return InputError(
                f"row has {len(row)} fields, the header has {len(header)}; {_SKIP_HINT}",
                path=self.path,
                line=number,
            )
        try:
            doc_id, text = self._field_text_and_id(
                dict(zip(header, row, strict=True)), f"{self.path.name}:{number}"
            )
        except _BadRecordError as exc:
            return InputError(str(exc), path=self.path, line=number)
        return doc_id, text, row


class ParquetSource(Source):
    """Parquet, read in record batches; ids default to FILE:ROW (1-based)."""

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

    def _scan(self) -> Iterator[tuple[str, str, Any] | InputError]:
        parquet = self._file()
        names = parquet.schema_arrow.names
        if self.options.text_field not in names:
            raise InputError(
                f"no column {self.options.text_field!r} (columns: {', '.join(names)}); "
                "choose the text column with --text-field",
                path=self.path,
            )
        columns = [self.options.text_field]
        id_field = self.options.id_field
        if id_field is not None and id_field in names and id_field != self.options.text_field:
            columns.append(id_field)
        row = 0
        for batch in parquet.iter_batches(batch_size=4096, columns=columns):
            table = batch.to_pydict()
            texts = table[self.options.text_field]
            ids = table.get(id_field) if id_field is not None else None
            for i, text in enumerate(texts):
                row += 1
                record = {self.options.text_field: text}
                if ids is not None and id_field is not None:
                    record[id_field] = ids[i]
                try:
                    doc_id, value = self._field_text_and_id(record, f"{self.path.name}:{row}")
                except _BadRecordError as exc:
                    yield InputError(str(exc), path=self.path, line=row)
                    continue
                yield doc_id, value, row - 1


class TextFilesSource(Source):
    """One .txt file, or a directory of them (searched recursively, sorted by relative path)."""

    format = "txt"

    def files(self) -> list[Path]:
        """The .txt files, in the order they are read."""
        if self.path.is_dir():
            found = sorted(p for p in self.path.rglob("*") if p.suffix.lower() == ".txt")
            if not found:
                raise InputError("directory contains no .txt files", path=self.path)
            return found
        if not self.path.exists():
            raise InputError("no such file or directory; check the path", path=self.path)
        return [self.path]

    def _scan(self) -> Iterator[tuple[str, str, Any] | InputError]:
        root = self.path if self.path.is_dir() else self.path.parent
        for file in self.files():
            doc_id = file.relative_to(root).as_posix()
            try:
                data = file.read_bytes()
            except OSError as exc:
                yield InputError(f"cannot read: {exc.strerror}", path=file)
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield InputError(
                    f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                    f"re-encode it as UTF-8, {_SKIP_HINT}",
                    path=file,
                )
                continue
            yield doc_id, text, (doc_id, text)


SOURCES: dict[str, type[Source]] = {
    "jsonl": JSONLinesSource,
    "csv": CSVSource,
    "parquet": ParquetSource,
    "txt": TextFilesSource,
}


def detect_format(path: Path) -> str:
    """The input format of ``path`` from its extension (a directory holds .txt files)."""
    if path.is_dir():
        return "txt"
    suffix, _ = strip_compression(path)
    try:
        return FORMAT_SUFFIXES[suffix]
    except KeyError:
        known = ", ".join(sorted(FORMAT_SUFFIXES))
        raise InputError(
            f"unknown input format {suffix or '(no extension)'!r}; known extensions: {known} "
            "(optionally followed by .gz or .zst), or a directory of .txt files; or name the "
            "format with --format",
            path=path,
        ) from None


def open_sources(
    paths: Sequence[Path | str], options: ReadOptions, input_format: InputFormat = "auto"
) -> list[Source]:
    """One :class:`Source` per path; all must share one format (the kept output's format)."""
    if not paths:
        raise InputError("no input given")
    sources: list[Source] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise InputError("no such file or directory; check the path", path=path)
        fmt = detect_format(path) if input_format == "auto" else input_format
        sources.append(SOURCES[fmt](path, options))
    formats = {s.format for s in sources}
    if len(formats) > 1:
        raise InputError(
            f"inputs mix formats ({', '.join(sorted(formats))}); deduplicate one format per run"
        )
    return sources
