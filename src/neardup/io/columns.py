"""Fields of JSON Lines, CSV and Parquet records as Arrow columns, with where each record is.

What :mod:`neardup.io.itemsets` reads item sets and item rows with: the named fields of every
record, each an Arrow array, and each record's 1-based line (JSON Lines; CSV, where the header
is line 1 and each row one line) or record number (Parquet). JSON Lines are parsed by
``pyarrow.json`` on chunks of whole lines, with the field types of the first records (other
fields are ignored); a file Arrow cannot read that way is read line by line with :mod:`json`,
which names the first bad line. CSV is read by ``pyarrow.csv`` (every field as text), Parquet
by ``pyarrow.parquet``. A missing or null field, and a value of a type the field does not
take, raise one :class:`~neardup.errors.InputError` naming the file, the line or record, and
what to do.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from neardup._types import F64Array, I64Array
from neardup.errors import InputError
from neardup.io.compression import is_read_error, open_binary, read_error
from neardup.io.source import json_type

__all__ = ["CHUNK_BYTES", "Columns", "Field", "FieldKind", "read_columns"]

FieldKind = Literal["key", "list", "number"]
"""What a field holds: a string or an integer (ids, entities, items of rows); a list of them
(the items of a set); a finite number (ratings)."""

CHUNK_BYTES = 32 << 20
"""JSON Lines text parsed by Arrow at a time."""

_SAMPLE_LINES = 1000
"""Records looked at, at most, to learn the JSON types of the fields."""

_SAMPLE_BYTES = 1 << 20
"""Text decoded at a time while learning the types."""


@dataclass(frozen=True, slots=True)
class Field:
    """A field to read: its name, what it holds, and the option that names it."""

    name: str
    kind: FieldKind
    flag: str


@dataclass(frozen=True, slots=True)
class Columns:
    """The fields of every record as Arrow arrays, and where each record is."""

    path: Path
    values: dict[str, Any]
    lines: I64Array
    unit: str
    """``"line"`` or ``"record"``: what ``lines`` counts."""

    def error(self, row: int, message: str) -> InputError:
        """An InputError about record ``row`` (counting from 0), naming its line."""
        return InputError(message, path=self.path, line=int(self.lines[row]))

    def keys(self, name: str) -> Any:
        """A field of strings or integers (dictionary-encoded ones decoded)."""
        import pyarrow as pa

        column = self.values[name]
        if pa.types.is_dictionary(column.type):
            column = column.dictionary_decode()
        if not (_is_integer(column) or _is_text(column)):
            raise InputError(
                f"the field {name!r} holds {column.type}, expected strings or integers",
                path=self.path,
            )
        return column

    def list_items(self, name: str) -> tuple[I64Array, Any]:
        """Each item's record (its set) and the items, from a list field."""
        import pyarrow as pa
        import pyarrow.compute as pc

        column = self.values[name]
        is_list = pa.types.is_list(column.type) or pa.types.is_large_list(column.type)
        if not (is_list or pa.types.is_fixed_size_list(column.type)):
            raise InputError(
                f"the field {name!r} holds {column.type}, expected a list of items (strings or "
                "integers); choose the field with --items-field",
                path=self.path,
            )
        owners = pc.list_parent_indices(column).to_numpy(zero_copy_only=False).astype(np.int64)
        values = pc.list_flatten(column)
        if pa.types.is_dictionary(values.type):
            values = values.dictionary_decode()
        if not (_is_integer(values) or _is_text(values)):
            raise InputError(
                f"the field {name!r} holds lists of {values.type}, expected strings or integers",
                path=self.path,
            )
        if values.null_count:
            at = int(np.argmax(values.is_null().to_numpy(zero_copy_only=False)))
            raise self.error(int(owners[at]), _null_item(name))
        return owners, values

    def numbers(self, name: str) -> F64Array:
        """A numeric field as finite float64 (CSV text parsed as decimal numbers)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        column = self.values[name]
        if _is_text(column):
            column = pc.utf8_trim_whitespace(column)
            try:
                column = pc.cast(column, pa.float64())
            except pa.ArrowInvalid:
                for row, value in enumerate(column.to_pylist()):
                    try:
                        pc.cast(pa.array([value]), pa.float64())
                    except pa.ArrowInvalid:
                        raise self.error(
                            row, f"the {name!r} value {value!r} is not a number; {_FIX_RATING}"
                        ) from None
                raise
        elif not (_is_integer(column) or pa.types.is_floating(column.type)):
            raise InputError(
                f"the field {name!r} holds {column.type}, expected numbers", path=self.path
            )
        numbers: F64Array = column.to_numpy(zero_copy_only=False).astype(np.float64)
        finite = np.isfinite(numbers)
        if not finite.all():
            row = int(np.argmax(~finite))
            raise self.error(row, f"the {name!r} value is {numbers[row]}; {_FIX_RATING}")
        return numbers


def read_columns(path: Path, fmt: str, fields: list[Field], separator: str | None) -> Columns:
    """The fields of every record of ``path``, read as ``fmt`` (``jsonl``, ``csv``, ``parquet``).

    ``separator``: CSV only, what separates the items of a ``list`` field (``None``: runs of
    whitespace; empty items are dropped). Raises an InputError for a file with no records, and
    for a record with a field missing or null.
    """
    if fmt == "jsonl":
        columns = _jsonl_columns(path, fields)
    elif fmt == "csv":
        columns = _csv_columns(path, fields, separator)
    elif fmt == "parquet":
        columns = _parquet_columns(path, fields)
    else:
        raise InputError(
            f"cannot read item sets from {fmt} input; give JSON Lines, CSV or Parquet", path=path
        )
    if columns.lines.shape[0] == 0:
        raise InputError("the file holds no records; give at least one", path=path)
    for field in fields:
        column = columns.values[field.name]
        if column.null_count:
            row = int(np.argmax(column.is_null().to_numpy(zero_copy_only=False)))
            raise columns.error(row, _missing(field))
    return columns


def _is_integer(array: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_integer(array.type))


def _is_text(array: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(array.type) or pa.types.is_large_string(array.type))


_FIX_RATING = "ratings must be finite numbers: fix or drop the row"


# --- JSON Lines -----------------------------------------------------------------------------


class _NotColumnarError(Exception):
    """Arrow cannot read the file as sampled: read it line by line."""


def _jsonl_columns(path: Path, fields: list[Field]) -> Columns:
    schema = _sample_schema(path, fields)
    if schema is not None:
        try:
            return _jsonl_by_arrow(path, fields, schema)
        except _NotColumnarError:
            pass
    return _jsonl_by_value(path, fields)


def _line_chunks(path: Path, size: int) -> Iterator[tuple[bytes, int]]:
    """The file's (decompressed) bytes in chunks of whole lines, with each chunk's first line."""
    with open_binary(path) as stream:
        carry = b""
        line = 1
        while True:
            try:
                data = stream.read(size)
            except Exception as exc:
                if is_read_error(exc):
                    raise read_error(path, exc) from None
                raise
            if not data:
                break
            data = carry + data
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                continue
            yield data[:cut], line
            line += data.count(b"\n", 0, cut)
            carry = data[cut:]
        if carry:
            yield carry, line


_SOLID = np.ones(256, dtype=bool)
_SOLID[[ord(" "), ord("\t"), ord("\r"), ord("\n")]] = False


def _record_lines(chunk: bytes, first_line: int) -> tuple[I64Array, int]:
    """The numbers of the chunk's non-blank lines, and its longest line's length.

    Blank lines hold JSON whitespace only (Arrow skips them).
    """
    buf = np.frombuffer(chunk, dtype=np.uint8)
    starts = np.r_[0, np.flatnonzero(buf == ord("\n")) + 1]
    if starts[-1] == buf.shape[0]:
        starts = starts[:-1]
    solid = np.maximum.reduceat(_SOLID[buf], starts)
    longest = int(np.diff(np.r_[starts, buf.shape[0]]).max())
    return first_line + np.flatnonzero(solid).astype(np.int64), longest


def _json_lines(path: Path, chunk_bytes: int) -> Iterator[tuple[int, Any] | InputError]:
    """Each non-blank line decoded with :mod:`json`, or an InputError for a bad one."""
    for chunk, first_line in _line_chunks(path, chunk_bytes):
        text = chunk.removeprefix(b"\xef\xbb\xbf") if first_line == 1 else chunk
        for number, line in enumerate(text.split(b"\n"), first_line):
            if not line.strip(b" \t\r\n"):
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                yield InputError(
                    f"not valid JSON ({exc}); fix or drop the line", path=path, line=number
                )
                return
            yield number, record


def _sample_schema(path: Path, fields: list[Field]) -> Any:
    """The Arrow schema of the fields as the first records have them.

    None where a first value is of a type the fields do not take (the line-by-line reader then
    names it).
    """
    import pyarrow as pa

    types: dict[str, Any] = {f.name: pa.float64() for f in fields if f.kind == "number"}
    looked = 0
    for item in _json_lines(path, _SAMPLE_BYTES):
        if isinstance(item, InputError) or not isinstance(item[1], dict):
            return None
        record = item[1]
        for field in fields:
            if field.name in types or record.get(field.name) is None:
                continue
            value = record[field.name]
            if field.kind == "list":
                if not isinstance(value, list):
                    return None
                if not value:
                    continue
                value = value[0]
            kind = _key_type(value)
            if kind is None:
                return None
            types[field.name] = pa.list_(kind) if field.kind == "list" else kind
        looked += 1
        if len(types) == len(fields) or looked >= _SAMPLE_LINES:
            break
    for field in fields:  # never seen: any type reads nulls and empty lists
        types.setdefault(field.name, pa.list_(pa.string()) if field.kind == "list" else pa.string())
    return pa.schema([(f.name, types[f.name]) for f in fields])


def _key_type(value: Any) -> Any:
    import pyarrow as pa

    if isinstance(value, str):
        return pa.string()
    if isinstance(value, int) and not isinstance(value, bool):
        return pa.int64()
    return None


def _jsonl_by_arrow(path: Path, fields: list[Field], schema: Any) -> Columns:
    import pyarrow as pa
    import pyarrow.json as pj

    parse = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    tables = []
    lines = []
    for chunk, first_line in _line_chunks(path, CHUNK_BYTES):
        numbers, longest = _record_lines(chunk, first_line)
        if numbers.shape[0] == 0:
            continue
        read = pj.ReadOptions(block_size=max(1 << 20, longest + 1))
        try:
            table = pj.read_json(pa.BufferReader(chunk), read_options=read, parse_options=parse)
        except pa.ArrowInvalid:
            raise _NotColumnarError from None
        if table.num_rows != numbers.shape[0]:  # e.g. two objects on one line
            raise _NotColumnarError
        tables.append(table)
        lines.append(numbers)
    if not tables:
        return Columns(path, {}, np.zeros(0, dtype=np.int64), "line")
    table = pa.concat_tables(tables)
    values = {f.name: table.column(f.name).combine_chunks() for f in fields}
    return Columns(path, values, np.concatenate(lines), "line")


def _jsonl_by_value(path: Path, fields: list[Field]) -> Columns:
    """Read record by record with :mod:`json`, raising at the first bad line."""
    import pyarrow as pa

    found: dict[str, list[Any]] = {f.name: [] for f in fields}
    sizes: dict[str, list[int]] = {f.name: [] for f in fields}
    first: dict[str, tuple[type, int]] = {}
    lines: list[int] = []
    for item in _json_lines(path, CHUNK_BYTES):
        if isinstance(item, InputError):
            raise item
        number, record = item
        if not isinstance(record, dict):
            raise InputError(
                f"the line holds {json_type(record)}, expected an object", path=path, line=number
            )
        for field in fields:
            value = record.get(field.name)
            if value is None:
                raise InputError(_missing(field), path=path, line=number)
            values = _json_values(value, field, number, path)
            for v in values if field.kind != "number" else ():
                seen = first.setdefault(field.name, (type(v), number))
                if seen[0] is not type(v):
                    theirs = "strings" if seen[0] is str else "integers"
                    raise InputError(
                        f"{field.name!r} holds {json_type(v)} {v!r}, but line {seen[1]} has "
                        f"{theirs}; write them all alike (as strings, say)",
                        path=path,
                        line=number,
                    )
            found[field.name].extend(values)
            sizes[field.name].append(len(values))
        lines.append(number)
    out: dict[str, Any] = {}
    for field in fields:
        if field.kind == "number":
            out[field.name] = pa.array(found[field.name], type=pa.float64())
            continue
        kind = pa.int64() if first.get(field.name, (str, 0))[0] is int else pa.string()
        values = pa.array(found[field.name], type=kind)
        if field.kind == "list":
            offsets = np.zeros(len(lines) + 1, dtype=np.int64)
            np.cumsum(sizes[field.name], out=offsets[1:])
            values = pa.LargeListArray.from_arrays(pa.array(offsets), values)
        out[field.name] = values
    return Columns(path, out, np.array(lines, dtype=np.int64), "line")


def _null_item(name: str) -> str:
    return f"an item of {name!r} is null; drop it, or write it as a string"


def _missing(field: Field) -> str:
    """The message for a record without a value of ``field``."""
    return (
        f"no {field.name!r} value (the field is missing or null); every record needs one: "
        f"choose the field with {field.flag}"
    )


def _json_values(value: Any, field: Field, number: int, path: Path) -> list[Any]:
    """The decoded value(s) of one field, checked.

    Keys and items must be strings or 64-bit integers, numbers finite.
    """
    if field.kind == "number":
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise InputError(
                f"the {field.name!r} value {value!r} is not a finite number; {_FIX_RATING}",
                path=path,
                line=number,
            )
        return [float(value)]
    if field.kind == "list" and not isinstance(value, list):
        raise InputError(
            f"{field.name!r} is {json_type(value)}, expected an array of items (strings or "
            f"integers); choose the field with {field.flag}",
            path=path,
            line=number,
        )
    values = value if field.kind == "list" else [value]
    for v in values:
        if v is None and field.kind == "list":
            raise InputError(_null_item(field.name), path=path, line=number)
        if _key_type(v) is None:
            raise InputError(
                f"{field.name!r} holds {json_type(v)} {v!r}, expected strings or integers "
                "(write other values as strings)",
                path=path,
                line=number,
            )
        if isinstance(v, int) and not -(2**63) <= v < 2**63:
            raise InputError(
                f"{field.name!r} holds {v}, beyond 64-bit integers; write it as a string",
                path=path,
                line=number,
            )
    return values


# --- CSV and Parquet ------------------------------------------------------------------------


def _csv_columns(path: Path, fields: list[Field], separator: str | None) -> Columns:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    header = _csv_header(path)
    for field in fields:
        if field.name not in header:
            raise InputError(
                f"no column {field.name!r} (columns: {', '.join(map(repr, header))}); choose it "
                f"with {field.flag}",
                path=path,
                line=1,
            )
    names = [f.name for f in fields]
    convert = pacsv.ConvertOptions(
        include_columns=names, column_types=dict.fromkeys(names, pa.string())
    )
    try:
        with open_binary(path) as stream:
            table = pacsv.read_csv(stream, convert_options=convert)
    except pa.ArrowInvalid as exc:
        raise InputError(
            f"malformed CSV ({exc}); fix the row, or check the file is UTF-8 CSV", path=path
        ) from None
    except Exception as exc:
        if is_read_error(exc):
            raise read_error(path, exc) from None
        raise
    values: dict[str, Any] = {}
    for field in fields:
        column = table.column(field.name).combine_chunks()
        if field.kind == "list":
            split = (
                pc.utf8_split_whitespace(column)
                if separator is None
                else pc.split_pattern(column, pattern=separator)
            )
            column = _without_empty(split)
        values[field.name] = column
    return Columns(path, values, np.arange(2, table.num_rows + 2, dtype=np.int64), "line")


def _without_empty(lists: Any) -> Any:
    """A list<string> array without its empty strings."""
    import pyarrow as pa
    import pyarrow.compute as pc

    owners = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    flat = pc.list_flatten(lists)
    keep = pc.not_equal(flat, "").to_numpy(zero_copy_only=False)
    counts = np.bincount(owners[keep], minlength=len(lists))
    offsets = pa.array(np.r_[0, np.cumsum(counts)], type=pa.int64())
    return pa.LargeListArray.from_arrays(offsets, flat.filter(pa.array(keep)))


def _csv_header(path: Path) -> list[str]:
    raw = open_binary(path)
    with io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text:
        try:
            return next(csv.reader(text), [])
        except UnicodeDecodeError as exc:
            raise InputError(
                f"the header is not UTF-8 ({exc.reason}); re-encode the file as UTF-8",
                path=path,
                line=1,
            ) from None


def _parquet_columns(path: Path, fields: list[Field]) -> Columns:
    import pyarrow.parquet as pq

    if not path.exists():
        raise InputError("no such file; check the path", path=path)
    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise InputError(f"not a readable Parquet file: {exc}", path=path) from None
    names = list(parquet.schema_arrow.names)
    for field in fields:
        if field.name not in names:
            raise InputError(
                f"no column {field.name!r} (columns: {', '.join(names)}); choose it with "
                f"{field.flag}",
                path=path,
            )
    wanted = list(dict.fromkeys(f.name for f in fields))
    table = parquet.read(columns=wanted)
    values = {name: table.column(name).combine_chunks() for name in wanted}
    return Columns(path, values, np.arange(1, table.num_rows + 1, dtype=np.int64), "record")
