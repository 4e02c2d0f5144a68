"""Item sets and strings for ``neardup join``: the inputs of ``jaccard`` and ``edit``.

The first stage of a join over sets (read → MinHash or exact filters → verification). Two forms
of item sets:

* one record per set, ``{"id": ..., "items": [...]}`` (:func:`read_item_sets`): JSON Lines
  (plain, ``.gz``, ``.zst``) or Parquet with a list column, or CSV with the items in one text
  field, separated by whitespace or ``item_separator``;
* one row per membership, ``(entity, item[, rating])`` (:func:`read_item_rows`), in CSV,
  Parquet or JSON Lines, grouped per entity later by :func:`neardup.join.items.sets_from_rows`
  (with ratings turned into sets or bags, MMDS §3.1.3).

Every item becomes a 64-bit hash (:func:`hash_items`, scheme :data:`ITEM_HASH_SCHEME`), each
set its sorted distinct hashes, as :class:`~neardup.text.shingle.ShingleSets`: the shape the
set sketches and verification already take. The fields are read as Arrow columns
(:mod:`neardup.io.columns`), never a Python object per item on the way. Bad input raises one
:class:`~neardup.errors.InputError` naming the file, the line (JSON Lines, CSV: the header is
line 1 and each row one line) or the record (Parquet, from 1), and what to do.

Ids: with no id field, the record numbers from 0 (the join's item numbers); otherwise the
field's values as given: ``int64`` for integers, :class:`~neardup.io.records.Ids` for strings
(CSV fields are strings). The command line names the id field ``--id-field``, or, left out,
:func:`default_id_field`: ``id`` where the input has it, as ``neardup dedup`` takes ids.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from neardup._kernels.items import scatter_by_owner, sort_unique_segments
from neardup._kernels.sets import compact_sets
from neardup._parallel import in_blocks
from neardup._types import Batch, F64Array, I64Array, U64Array
from neardup.errors import InputError, ParameterError
from neardup.io.columns import CHUNK_BYTES, Field, read_columns
from neardup.io.compression import open_binary
from neardup.io.readers import detect_format, open_sources
from neardup.io.records import Ids
from neardup.io.tabular import arrow_strings
from neardup.io.vectors import ItemIds, check_ids
from neardup.params import ReadSpec
from neardup.text.shingle import ShingleSets
from neardup.text.spans import concat

__all__ = [
    "ITEM_HASH_SCHEME",
    "ItemRows",
    "ItemSets",
    "default_id_field",
    "group_sets",
    "hash_items",
    "read_item_rows",
    "read_item_sets",
    "read_strings",
]

ITEM_HASH_SCHEME = "item64-v1"
"""How an item becomes a 64-bit hash: its text (a string as it is, an integer in decimal, so
``7`` and ``"7"`` are one item) as UTF-8 bytes ``b``; 64-bit FNV-1a over ``b``, xor the byte
length, finalised by MurmurHash3's ``fmix64`` (the first half of
:meth:`neardup.io.records.Ids.hashes`). Deterministic on every machine and run."""


@dataclass(frozen=True, slots=True)
class ItemSets:
    """Sets of items with their ids: the input of a ``jaccard`` join.

    Attributes
    ----------
    ids
        One id per set.
    sets
        The sorted distinct item hashes of each set (an empty set is kept: its Jaccard
        similarity with any set is 0, so it is never paired).
    """

    ids: ItemIds
    sets: ShingleSets

    def __len__(self) -> int:
        return len(self.sets)


@dataclass(frozen=True, slots=True)
class ItemRows:
    """``(entity, item[, rating])`` rows, one per row of the file, entities numbered.

    Attributes
    ----------
    path
        The file, for messages.
    entity_ids
        The distinct entities in the order they first occur in the file.
    entities
        Each row's entity: an index into ``entity_ids``.
    items
        Each row's item hash (:func:`hash_items`).
    ratings
        Each row's rating (finite), or None when the rows have no rating field.
    lines
        Each row's 1-based line (JSON Lines, CSV) or record (Parquet) number.
    """

    path: Path
    entity_ids: ItemIds
    entities: I64Array
    items: U64Array
    ratings: F64Array | None
    lines: I64Array

    def __len__(self) -> int:
        return int(self.items.shape[0])


def hash_items(values: Any) -> U64Array:
    """The :data:`ITEM_HASH_SCHEME` hash of each item of an Arrow array of strings or integers.

    Examples
    --------
    >>> import pyarrow as pa
    >>> a, b = hash_items(pa.array(["7", "rose"])), hash_items(pa.array([7]))
    >>> bool(a[0] == b[0]), hex(a[1])
    (True, '0xa952ff1f9e267ad1')
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_integer(values.type):
        values = pc.cast(values, pa.large_string())
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        raise ParameterError(f"hash_items takes strings or integers; got {values.type}.")
    if values.null_count:
        raise ParameterError("hash_items takes no nulls.")
    hashes: U64Array = Ids(*arrow_strings(values)).hashes()[:, 0].copy()
    return hashes


def group_sets(owners: I64Array, hashes: U64Array, num_sets: int) -> ShingleSets:
    """The sorted distinct hashes of each set, from ``(owner, hash)`` pairs in any order.

    A counting sort by owner, then each set sorted on its own (sets in parallel): O(n) plus
    O(m log m) per set of m hashes.

    Examples
    --------
    >>> sets = group_sets(np.array([1, 0, 1, 1]), np.array([5, 3, 2, 5], np.uint64), 3)
    >>> sets.hashes.tolist(), sets.offsets.tolist()
    ([3, 2, 5], [0, 1, 3, 3])
    """
    owners = np.ascontiguousarray(owners, dtype=np.int64)
    room = np.zeros(num_sets + 1, dtype=np.int64)
    np.cumsum(np.bincount(owners, minlength=num_sets), out=room[1:])
    grouped = np.empty(owners.shape[0], dtype=np.uint64)
    scatter_by_owner(
        owners, np.ascontiguousarray(hashes, dtype=np.uint64), room[:-1].copy(), grouped
    )
    sizes = np.empty(num_sets, dtype=np.int64)
    offsets = np.zeros(num_sets + 1, dtype=np.int64)
    no_counts = np.empty(0, dtype=np.int64)
    in_blocks(partial(sort_unique_segments, grouped, room, sizes), num_sets)
    np.cumsum(sizes, out=offsets[1:])
    out = np.empty(int(offsets[-1]), dtype=np.uint64)
    compact_sets(grouped, no_counts, room, offsets, out, no_counts)
    return ShingleSets(hashes=out, offsets=offsets)


def read_item_sets(
    path: Path | str,
    *,
    items_field: str = "items",
    id_field: str | None = None,
    item_separator: str | None = None,
) -> ItemSets:
    r"""Read one item set per record.

    Parameters
    ----------
    path
        JSON Lines (``.jsonl``, ``.ndjson``, ``.json``, optionally ``.gz`` or ``.zst``) or
        Parquet with ``items_field`` a list of strings or of integers; or CSV (optionally
        compressed) with ``items_field`` a text field of items.
    items_field
        The field holding each set's items (duplicates count once; ``[]`` is an empty set).
    id_field
        A field of distinct string or integer ids; ``None``: the record numbers from 0.
    item_separator
        CSV only: what separates the items of a field (``None``: runs of whitespace); empty
        items are dropped.

    Raises
    ------
    InputError
        A record without items (missing or null field), an item that is not a string or an
        integer (or of another type than the items before it), a null or repeated id, a
        malformed line; the message names the file and line or record.
    ParameterError
        ``item_separator`` given for input other than CSV.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "sets.jsonl"
    >>> _ = path.write_text('{"id": "a", "items": [1, 2, 2]}\n{"id": "b", "items": []}\n')
    >>> sets = read_item_sets(path, id_field="id")
    >>> list(sets.ids), sets.sets.sizes().tolist()
    (['a', 'b'], [2, 0])
    """
    path = Path(path)
    fmt = detect_format(path)
    if item_separator is not None and fmt != "csv":
        raise ParameterError(
            f"read_item_sets: item_separator applies to CSV input; {path} is {fmt}."
        )
    fields = [Field(items_field, "list", "--items-field")]
    if id_field is not None:
        fields.append(Field(id_field, "key", "--id-field"))
    columns = read_columns(path, fmt, fields, item_separator)
    num_sets = columns.lines.shape[0]
    owners, values = columns.list_items(items_field)
    sets = group_sets(owners, hash_items(values), num_sets)
    ids: ItemIds = np.arange(num_sets, dtype=np.int64)
    if id_field is not None:
        ids = check_ids(columns.values[id_field], id_field, path, columns.lines, unit=columns.unit)
    return ItemSets(ids=ids, sets=sets)


def read_item_rows(
    path: Path | str,
    *,
    entity_field: str,
    item_field: str,
    rating_field: str | None = None,
) -> ItemRows:
    r"""Read ``(entity, item[, rating])`` rows: who has (or rated) which item.

    Parameters
    ----------
    path
        CSV, Parquet or JSON Lines (optionally compressed, but for Parquet).
    entity_field, item_field
        Fields of strings or integers (CSV fields are strings).
    rating_field
        A numeric field (finite numbers; CSV: decimal text), or None.

    Raises
    ------
    InputError
        A missing or null field, an entity or item that is not a string or an integer, a
        rating that is not a finite number; the message names the file and line or record.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "ratings.csv"
    >>> _ = path.write_text("user,movie,stars\nu2,m1,4\nu1,m1,5\nu2,m3,1\n")
    >>> rows = read_item_rows(path, entity_field="user", item_field="movie", rating_field="stars")
    >>> list(rows.entity_ids), rows.entities.tolist(), rows.ratings.tolist(), rows.lines.tolist()
    (['u2', 'u1'], [0, 1, 0], [4.0, 5.0, 1.0], [2, 3, 4])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    path = Path(path)
    fields = [
        Field(entity_field, "key", "--entity-field"),
        Field(item_field, "key", "--item-field"),
    ]
    if rating_field is not None:
        fields.append(Field(rating_field, "number", "--rating-field"))
    columns = read_columns(path, detect_format(path), fields, None)
    entity = columns.keys(entity_field)
    items = columns.keys(item_field)
    encoded = pc.dictionary_encode(entity)
    dictionary = encoded.dictionary
    entity_ids: ItemIds = (
        dictionary.to_numpy(zero_copy_only=False).astype(np.int64)
        if pa.types.is_integer(dictionary.type)
        else Ids(*arrow_strings(dictionary))
    )
    ratings = None if rating_field is None else columns.numbers(rating_field)
    return ItemRows(
        path=path,
        entity_ids=entity_ids,
        entities=encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64),
        items=hash_items(items),
        ratings=ratings,
        lines=columns.lines,
    )


def read_strings(
    path: Path | str, *, text_field: str = "text", id_field: str | None = None
) -> tuple[ItemIds, Batch]:
    r"""Read one string per record (the input of an ``edit`` join), as the text readers do.

    JSON Lines, CSV, Parquet or a directory of ``.txt`` files, read by
    :func:`neardup.io.readers.open_sources`; the strings are the raw UTF-8 texts (not
    normalised).

    Parameters
    ----------
    path
        The input.
    text_field
        The field of the strings.
    id_field
        A field of distinct ids (strings, or integers written as their decimal text, as the
        text readers give them); ``None``: the record numbers from 0.

    Raises
    ------
    InputError
        As the text readers raise for a bad record, or for an id given twice (naming both
        records, counted from 1).

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "names.csv"
    >>> _ = path.write_text("name\nkitten\nsitting\n")
    >>> ids, batch = read_strings(path, text_field="name")
    >>> ids.tolist(), bytes(batch.data).decode()
    ([0, 1], 'kittensitting')
    """
    import pyarrow as pa

    path = Path(path)
    options = ReadSpec(text_field=text_field, id_field=id_field or "")
    (source,) = open_sources([path], options)
    batches = list(source.batches(CHUNK_BYTES))
    if not batches:
        raise InputError("the file holds no records; give at least one string", path=path)
    texts = concat([b.texts for b in batches])
    if id_field is None:
        return np.arange(texts.num_docs, dtype=np.int64), texts
    ids = Ids.concat([b.ids for b in batches])
    column = pa.Array.from_buffers(
        pa.large_string(),
        len(ids),
        [None, pa.py_buffer(ids.offsets), pa.py_buffer(ids.data)],
    )
    records = np.arange(1, len(ids) + 1, dtype=np.int64)
    return check_ids(column, id_field, path, records, unit="record"), texts


ID_FIELD = "id"
"""The id field taken when none is named (``neardup dedup``'s rule)."""


def default_id_field(path: Path | str) -> str | None:
    r"""``"id"`` when the input's records carry an ``id`` field, else ``None`` (record numbers).

    Parquet and CSV: a column ``id``; JSON Lines: the first record has the key ``id``
    (then every record must have it); anything else (``.npy``, ``.txt`` directories, web
    archives): ``None``. Unreadable inputs answer ``None``, and the reader then says why.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "sets.jsonl"
    >>> _ = path.write_text('\n{"id": "a", "items": [1]}\n')
    >>> default_id_field(path), default_id_field(path.with_suffix(".npy"))
    ('id', None)
    """
    path = Path(path)
    try:
        fmt = detect_format(path)
    except InputError:
        return None
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            names = pq.read_schema(path).names
        elif fmt == "csv":
            import csv

            with open_binary(path) as f:
                header = f.readline().decode("utf-8-sig", errors="replace")
            names = next(csv.reader([header]), [])
        elif fmt == "jsonl":
            names = []
            with open_binary(path) as f:
                for line in f:
                    if line.strip():
                        record = json.loads(line)
                        names = list(record) if isinstance(record, dict) else []
                        break
        else:
            return None
    except Exception:  # any fault is the reader's to report, with its line
        return None
    return ID_FIELD if ID_FIELD in names else None
