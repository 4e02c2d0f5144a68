"""Vectors and bit strings for ``neardup join``: ``.npy`` matrices and Parquet list columns.

The first stage of a join under ``cosine``, ``l2``, ``l1`` or ``hamming`` (read → LSH keys →
candidates → exact verification): one matrix with a row per item, in the form the metric's
family and verification take (:data:`~neardup.kinds.METRICS` says which input each metric
compares):

========== ======================== ==============================================================
input      metrics                  :attr:`VectorInput.data`
========== ======================== ==============================================================
vectors    ``cosine``, ``l2``       ``float32[n, dim]``, finite (``cosine``: no all-zero row)
counts     ``l1``                   ``int32[n, dim]`` in ``[0, 2^31 - 1]`` (the unary code's
                                    ``C`` is at most ``JoinSpec.max_value``'s bound)
bits       ``hamming``              ``uint64[n, ceil(dim / 64)]`` packed by :func:`pack_bits`
========== ======================== ==============================================================

A ``.npy`` file is memory-mapped and checked a block of rows at a time (:data:`BLOCK_BYTES`),
so memory beyond the output matrix stays bounded; a Parquet column is read in record batches
and flattened by Arrow, never a Python object per row. Bad input raises one
:class:`~neardup.errors.InputError` naming the file, the row (``.npy``: the NumPy row index,
from 0) or record (Parquet: from 1, as the other readers count) and what to do.

Item ids: row numbers from 0 (``int64``) for ``.npy`` and when no id field is named;
otherwise the id column as given, ``int64`` for an integer column or
:class:`~neardup.io.records.Ids` (UTF-8 strings) for a string column, so ids come back out
of the join as they went in.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from neardup._types import I64Array, U8Array, U64Array
from neardup.errors import InputError, ParameterError
from neardup.io.compression import strip_compression
from neardup.io.records import Ids
from neardup.io.tabular import arrow_strings
from neardup.kinds import METRICS

__all__ = [
    "BLOCK_BYTES",
    "ItemIds",
    "VectorInput",
    "check_ids",
    "pack_bits",
    "read_vectors",
    "unpack_bits",
]

BLOCK_BYTES = 16 << 20
"""Bytes of input rows checked and converted at a time."""

MAX_COUNT = 2**31 - 1
"""The largest ``l1`` coordinate: the unary code's range ``[0, C]`` has ``C`` at most this
(``JoinSpec.max_value``'s bound), and the counts are stored as ``int32``."""

ItemIds = I64Array | Ids
"""Item ids: ``int64`` (row numbers, or an integer id column) or UTF-8 strings."""

_VECTOR_INPUTS = ("vectors", "counts", "bits")
_WHAT = {
    "vectors": "real vectors",
    "counts": "vectors of non-negative integers (counts)",
    "bits": "bit strings (0 or 1 in each column)",
}


@dataclass(frozen=True, slots=True)
class VectorInput:
    """The items of a vector join: ids and one row of data per item.

    Attributes
    ----------
    ids
        One id per row (see the module docstring).
    data
        ``float32[n, dim]`` (cosine, l2), ``int32[n, dim]`` (l1) or packed bits
        ``uint64[n, ceil(dim / 64)]`` (hamming), C-contiguous.
    dim
        Coordinates per vector, or bits per bit string.
    """

    ids: ItemIds
    data: NDArray[Any]
    dim: int

    def __len__(self) -> int:
        return int(self.data.shape[0])


def pack_bits(bits: Any) -> U64Array:
    """Bit strings ``(n, N)`` of 0 and 1 (bool or integers) packed into ``uint64[n, ceil(N/64)]``.

    Bit ``j`` of a row becomes bit ``j % 64`` of word ``j // 64``, least significant first;
    the unused high bits of the last word are 0.

    Examples
    --------
    >>> pack_bits(np.array([[1, 0, 1, 1], [0, 0, 0, 1]], dtype=np.uint8)).tolist()
    [[13], [8]]
    >>> pack_bits(np.eye(1, 65, 64, dtype=bool)).tolist()
    [[0, 1]]
    """
    array = np.asarray(bits)
    if array.ndim != 2:
        raise ParameterError(f"pack_bits needs a 2-D array (n, N); got shape {array.shape}.")
    if array.dtype != np.bool_:
        if not np.issubdtype(array.dtype, np.integer):
            raise ParameterError(f"pack_bits needs bool or 0/1 integers; got dtype {array.dtype}.")
        if array.size and (array.min() < 0 or array.max() > 1):
            bad = array[(array < 0) | (array > 1)][0]
            raise ParameterError(f"pack_bits needs bits of 0 and 1; got the value {bad}.")
    n, num_bits = array.shape
    num_words = (num_bits + 63) // 64
    octets = np.zeros((n, 8 * num_words), dtype=np.uint8)
    octets[:, : (num_bits + 7) // 8] = np.packbits(array.astype(bool), axis=1, bitorder="little")
    packed: U64Array = octets.view("<u8").astype(np.uint64)
    return packed


def unpack_bits(packed: Any, num_bits: int) -> U8Array:
    """The ``uint8[n, num_bits]`` bits of packed strings: the inverse of :func:`pack_bits`.

    Examples
    --------
    >>> unpack_bits(np.array([[13], [8]], dtype=np.uint64), 4).tolist()
    [[1, 0, 1, 1], [0, 0, 0, 1]]
    """
    array = np.asarray(packed)
    num_words = (num_bits + 63) // 64
    if array.ndim != 2 or array.shape[1] != num_words or array.dtype != np.uint64:
        raise ParameterError(
            f"unpack_bits needs uint64[n, {num_words}] for {num_bits} bits; got "
            f"{array.dtype}{list(array.shape)}."
        )
    octets = np.ascontiguousarray(array, dtype="<u8").view(np.uint8)
    bits: U8Array = np.unpackbits(octets, axis=1, bitorder="little")[:, :num_bits]
    return bits


def read_vectors(
    path: Path | str,
    metric: str,
    *,
    vector_field: str | None = None,
    id_field: str | None = None,
) -> VectorInput:
    """Read the items of a join under ``metric`` from a ``.npy`` or Parquet file.

    Parameters
    ----------
    path
        A ``.npy`` file of one 2-D array (row ``i`` has id ``i``), or a Parquet file (``.parquet``,
        ``.pq``) with a list column of numbers (``list``, ``large_list`` or ``fixed_size_list``).
    metric
        ``cosine`` or ``l2`` (any real numbers), ``l1`` (integers >= 0) or ``hamming``
        (``bool``, or integers 0 and 1).
    vector_field
        Parquet only: the list column (``None``: ``"vector"``).
    id_field
        Parquet only: a column of distinct string or integer ids (``None``: row numbers from 0).

    Returns
    -------
    VectorInput

    Raises
    ------
    InputError
        The file is unreadable or holds no rows, a vector of another length, NaN or infinity,
        a value the metric does not take, a null, or a repeated id; the message names the file,
        the row or record, and what to do.
    ParameterError
        ``metric`` does not compare vectors or bit strings, or a field is named for a ``.npy``.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "v.npy"
    >>> np.save(path, np.array([[1, 0, 1], [0, 1, 1]], dtype=np.uint8))
    >>> items = read_vectors(path, "hamming")
    >>> items.ids.tolist(), items.data.tolist(), items.dim
    ([0, 1], [[5], [6]], 3)
    """
    kind = _input_kind(metric)
    path = Path(path)
    suffix, compression = strip_compression(path)
    if suffix == ".npy" and compression is None:
        if vector_field is not None or id_field is not None:
            raise ParameterError(
                "read_vectors: vector_field and id_field apply to Parquet input; a .npy file "
                f"holds one matrix whose row i has id i; got vector_field={vector_field!r}, "
                f"id_field={id_field!r}."
            )
        return _read_npy(path, metric, kind)
    if suffix in (".parquet", ".pq") and compression is None:
        return _read_parquet(path, metric, kind, vector_field or "vector", id_field)
    raise InputError(
        f"cannot read {metric} vectors from a {''.join(path.suffixes) or 'file without extension'}"
        " file; give a .npy file (numpy.save of an (items x dim) array) or a Parquet file with a "
        "list column (--vector-field)",
        path=path,
    )


def _input_kind(metric: str) -> str:
    if metric not in METRICS:
        raise ParameterError(f"metric must be one of {', '.join(METRICS)}; got {metric!r}.")
    kind = METRICS[metric].input
    if kind not in _VECTOR_INPUTS:
        takes = [m.name for m in METRICS.values() if m.input in _VECTOR_INPUTS]
        raise ParameterError(
            f"read_vectors reads the inputs of {', '.join(takes)}; metric {metric!r} compares "
            f"{kind} (see neardup.io.itemsets)."
        )
    return kind


@dataclass(frozen=True, slots=True)
class _Place:
    """Where rows are, for error messages: ``.npy`` rows from 0, Parquet records from 1."""

    path: Path
    is_npy: bool

    def error(self, row: int, message: str, column: int | None = None) -> InputError:
        if self.is_npy:
            at = f"row {row}" + ("" if column is None else f", column {column}")
            return InputError(f"{at} (counting from 0): {message}", path=self.path)
        at = f"record {row + 1}" + ("" if column is None else f", coordinate {column}")
        return InputError(f"{at}: {message}", path=self.path, line=row + 1)


def _check_dtype(dtype: np.dtype[Any], metric: str, kind: str, path: Path) -> None:
    """The element type suits the metric, or an InputError saying what to do."""
    ok = {
        "vectors": dtype.kind in "iuf",
        "counts": dtype.kind in "iu",
        "bits": dtype.kind in "biu",
    }[kind]
    if ok:
        return
    hint = {
        "vectors": "convert the array to float32",
        "counts": "quantise the values to non-negative integers first (e.g. "
        "np.rint(x * scale).astype(np.int32)), or use l2 for real vectors",
        "bits": "store the bits as bool or uint8 0/1 (np.packbits is not read: one bit a column)",
    }[kind]
    raise InputError(
        f"{metric} compares {_WHAT[kind]}, but the values are {dtype}; {hint}", path=path
    )


def _first(mask: NDArray[np.bool_]) -> tuple[int, int]:
    """Row and column of the first True of a 2-D mask that has one."""
    row, col = divmod(int(np.argmax(mask.ravel())), int(mask.shape[1]))
    return row, col


def _convert_block(
    block: NDArray[Any], first_row: int, metric: str, kind: str, place: _Place
) -> NDArray[Any]:
    """Check one block of rows and convert it to the output's element type (bits unpacked)."""
    if kind == "vectors":
        finite = np.isfinite(block)
        if not finite.all():
            row, col = _first(~finite)
            raise place.error(
                first_row + row,
                f"the value is {block[row, col]}; {metric} needs finite numbers: drop or repair "
                "the row",
                col,
            )
        with np.errstate(over="ignore"):  # overflow becomes inf, reported below
            converted = block.astype(np.float32)
        finite = np.isfinite(converted)
        if not finite.all():
            row, col = _first(~finite)
            raise place.error(
                first_row + row,
                f"the value {block[row, col]} is beyond float32's range; scale the vectors down",
                col,
            )
        if metric == "cosine":
            zero = ~converted.any(axis=1)
            if zero.any():
                row = int(np.argmax(zero))
                raise place.error(
                    first_row + row,
                    "the vector is all zeros, so its cosine with any vector is undefined; drop "
                    "the row (or use l2)",
                )
        return converted
    if kind == "counts":
        bad = (block < 0) | (block > MAX_COUNT)
        if bad.any():
            row, col = _first(bad)
            raise place.error(
                first_row + row,
                f"the value {block[row, col]} is outside [0, {MAX_COUNT}]; l1 compares counts "
                "(non-negative integers): shift or clip the values",
                col,
            )
        return block.astype(np.int32)
    bad = (block != 0) & (block != 1)
    if bad.any():
        row, col = _first(bad)
        raise place.error(
            first_row + row,
            f"the value is {block[row, col]}; hamming compares bit strings of 0 and 1 (one bit "
            "a column)",
            col,
        )
    return block


def _output(kind: str, num_rows: int, dim: int) -> NDArray[Any]:
    if kind == "bits":
        return np.empty((num_rows, -(-dim // 64)), dtype=np.uint64)
    return np.empty((num_rows, dim), dtype=np.float32 if kind == "vectors" else np.int32)


def _store(out: NDArray[Any], start: int, block: NDArray[Any], kind: str) -> None:
    out[start : start + block.shape[0]] = pack_bits(block) if kind == "bits" else block


def _read_npy(path: Path, metric: str, kind: str) -> VectorInput:
    try:
        matrix = np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError:
        raise InputError("no such file; check the path", path=path) from None
    except (ValueError, OSError) as exc:
        raise InputError(
            f"not a readable .npy file ({exc}); save the matrix with numpy.save", path=path
        ) from None
    if not isinstance(matrix, np.ndarray):  # np.load gives an NpzFile for an .npz archive
        raise InputError(
            "not a .npy file (an .npz archive?); save one matrix with numpy.save", path=path
        )
    if matrix.ndim != 2:
        raise InputError(
            f"the array has shape {matrix.shape}; give a 2-D array, one row per item "
            "(e.g. x.reshape(-1, 1) for numbers, or x.reshape(len(x), -1))",
            path=path,
        )
    num_rows, dim = matrix.shape
    _check_size(num_rows, dim, path)
    _check_dtype(matrix.dtype, metric, kind, path)
    place = _Place(path, is_npy=True)
    out = _output(kind, num_rows, dim)
    step = max(1, BLOCK_BYTES // (dim * matrix.dtype.itemsize))
    for start in range(0, num_rows, step):
        block = np.asarray(matrix[start : start + step])
        _store(out, start, _convert_block(block, start, metric, kind, place), kind)
    return VectorInput(ids=np.arange(num_rows, dtype=np.int64), data=out, dim=dim)


def _check_size(num_rows: int, dim: int, path: Path) -> None:
    if num_rows == 0:
        raise InputError("the file holds no rows; give at least one item", path=path)
    if dim == 0:
        raise InputError("the vectors have no coordinates (dim 0); give at least one", path=path)


def _parquet_file(path: Path) -> Any:
    import pyarrow.parquet as pq

    if not path.exists():
        raise InputError("no such file; check the path", path=path)
    try:
        return pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise InputError(f"not a readable Parquet file: {exc}", path=path) from None


def _column_missing(path: Path, name: str, names: list[str], flag: str) -> InputError:
    return InputError(
        f"no column {name!r} (columns: {', '.join(names)}); choose it with {flag}", path=path
    )


def _read_parquet(
    path: Path, metric: str, kind: str, vector_field: str, id_field: str | None
) -> VectorInput:
    import pyarrow as pa

    parquet = _parquet_file(path)
    schema = parquet.schema_arrow
    names = list(schema.names)
    if vector_field not in names:
        raise _column_missing(path, vector_field, names, "--vector-field")
    if id_field is not None and id_field not in names:
        raise _column_missing(path, id_field, names, "--id-field")
    list_type = schema.field(vector_field).type
    if not (
        pa.types.is_list(list_type)
        or pa.types.is_large_list(list_type)
        or pa.types.is_fixed_size_list(list_type)
    ):
        raise InputError(
            f"column {vector_field!r} is {list_type}, expected a list of numbers (one vector "
            "a row); choose the vector column with --vector-field",
            path=path,
        )
    value_type = list_type.value_type
    if not (
        pa.types.is_integer(value_type)
        or pa.types.is_floating(value_type)
        or pa.types.is_boolean(value_type)
    ):
        raise InputError(
            f"column {vector_field!r} holds lists of {value_type}, expected numbers", path=path
        )
    _check_dtype(np.dtype(value_type.to_pandas_dtype()), metric, kind, path)
    num_rows = parquet.metadata.num_rows
    place = _Place(path, is_npy=False)
    columns = [vector_field] + ([id_field] if id_field not in (None, vector_field) else [])
    out: NDArray[Any] | None = None
    dim = 0
    id_parts = []
    start = 0
    for batch in _batches(parquet, columns):
        if batch.num_rows == 0:
            continue
        block, dim = _list_block(batch.column(vector_field), start, dim, vector_field, place)
        if out is None:
            _check_size(num_rows, dim, path)
            out = _output(kind, num_rows, dim)
        _store(out, start, _convert_block(block, start, metric, kind, place), kind)
        if id_field is not None:
            id_parts.append(batch.column(id_field))
        start += batch.num_rows
    if out is None:
        raise InputError("the file holds no rows; give at least one item", path=path)
    if id_field is None:
        ids: ItemIds = np.arange(num_rows, dtype=np.int64)
    else:
        column = pa.chunked_array(id_parts, type=schema.field(id_field).type).combine_chunks()
        ids = check_ids(column, id_field, path, np.arange(1, num_rows + 1, dtype=np.int64))
    return VectorInput(ids=ids, data=out, dim=dim)


def _batches(parquet: Any, columns: list[str]) -> Iterator[Any]:
    """Record batches of about :data:`BLOCK_BYTES` of the columns."""
    metadata = parquet.metadata
    if metadata.num_row_groups == 0:
        return
    row_bytes = max(1, metadata.row_group(0).total_byte_size // max(1, metadata.num_rows))
    rows = max(1, min(1 << 20, BLOCK_BYTES // row_bytes))
    yield from parquet.iter_batches(batch_size=rows, columns=columns)


def _list_block(
    column: Any, first_row: int, dim: int, name: str, place: _Place
) -> tuple[NDArray[Any], int]:
    """The rows of one batch's list column as a 2-D array, and the width (set by the first row).

    Nulls and rows of another length raise, naming the first such record.
    """
    import pyarrow.compute as pc

    if column.null_count:
        row = int(np.argmax(column.is_null().to_numpy(zero_copy_only=False)))
        raise place.error(
            first_row + row, f"the {name!r} value is null; give every row a vector, or drop it"
        )
    lengths = pc.list_value_length(column).to_numpy(zero_copy_only=False)
    if first_row == 0 and lengths.shape[0]:
        dim = int(lengths[0])
    ragged = lengths != dim
    if ragged.any():
        row = int(np.argmax(ragged))
        raise place.error(
            first_row + row,
            f"the vector has {lengths[row]} values, but record 1 has {dim}; every vector needs "
            "the same length",
        )
    values = column.flatten()
    if values.null_count:
        at = int(np.argmax(values.is_null().to_numpy(zero_copy_only=False)))
        row, col = divmod(at, dim)
        raise place.error(first_row + row, "the value is null; fill it in, or drop the row", col)
    flat = values.to_numpy(zero_copy_only=False)
    return flat.reshape(lengths.shape[0], dim), dim


def check_ids(
    column: Any, name: str, path: Path, lines: I64Array, *, unit: str = "record"
) -> ItemIds:
    """An Arrow column of ids, checked (no nulls, no repeats), as ``int64`` or :class:`Ids`.

    Parameters
    ----------
    column
        A ``pyarrow.Array`` of integers or strings (dictionary-encoded ones are decoded).
    name
        The field's name, for messages.
    path
        The file, for messages.
    lines
        The 1-based line (JSON Lines, CSV) or record (Parquet) number of each id.
    unit
        What ``lines`` counts: ``"line"`` or ``"record"``.

    Raises
    ------
    InputError
        A null, a type other than string or integer, or an id given twice (naming both places).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    if column.null_count:
        row = int(np.argmax(column.is_null().to_numpy(zero_copy_only=False)))
        raise InputError(
            f"the id ({name!r}) is null; give every item an id, or name no id field to number "
            "the items from 0",
            path=path,
            line=int(lines[row]),
        )
    integer = pa.types.is_integer(column.type)
    if not (integer or pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        raise InputError(
            f"the id field {name!r} holds {column.type}, expected strings or integers; choose "
            "the id field with --id-field",
            path=path,
        )
    codes = pc.dictionary_encode(column).indices.to_numpy(zero_copy_only=False)
    order = np.argsort(codes, kind="stable")
    repeats = codes[order[1:]] == codes[order[:-1]]
    if repeats.any():
        later = int(order[1:][repeats].min())
        earlier = int(np.argmax(codes == codes[later]))
        raise InputError(
            f"the id {column[later].as_py()!r} ({name!r}) was given before, at {unit} "
            f"{lines[earlier]}; give each item its own id",
            path=path,
            line=int(lines[later]),
        )
    if integer:
        if pa.types.is_uint64(column.type) and pc.max(column).as_py() > np.iinfo(np.int64).max:
            raise InputError(
                f"the id field {name!r} holds integers beyond 2^63 - 1; store the ids as strings",
                path=path,
            )
        numbers: I64Array = column.to_numpy(zero_copy_only=False).astype(np.int64)
        return numbers
    return Ids(*arrow_strings(column))
