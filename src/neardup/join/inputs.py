"""A join's input file read into the arrays its metric compares, on either engine.

:class:`JoinSource` says where the items are in the file; :func:`read_join_input` reads them
whole: 4 bytes a coordinate, 8 bytes an item or 64 bits, the ids beside them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from neardup._types import Batch
from neardup.errors import InputError, ParameterError
from neardup.io.itemsets import default_id_field
from neardup.io.readers import is_web_archive, open_sources
from neardup.kinds import METRICS
from neardup.params import HtmlExtract, ReadSpec
from neardup.text import Shingler
from neardup.text.spans import pack_strings

__all__ = ["JoinData", "JoinSource", "read_join_input"]


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinSource:
    """Where a join's items are in its input file, by the metric's input kind.

    Attributes
    ----------
    id_field
        The field or column of the ids; ``None``: the ``id`` field where the input has one
        (:func:`~neardup.io.itemsets.default_id_field`, as ``neardup dedup`` takes ids), else
        the row or record numbers from 0; ``""``: always the row or record numbers.
    vector_field
        Parquet: the list column of the vectors (``.npy`` files need none).
    items_field
        Item sets given whole: the list field of each record's items.
    entity_field, item_field, rating_field
        Item sets given as ``(entity, item[, rating])`` rows, grouped per entity.
    ratings
        With ``rating_field``: ``"set:N"`` keeps the items rated at least ``N``; ``"bag"``
        counts an item as often as its (whole-number) rating.
    text_field
        The field of the strings an edit-distance join compares.
    html_extract
        Web archives (WARC/ARC): what is taken of each HTML page. A ``jaccard`` or
        ``containment`` join compares the pages' word 5-shingle sets, an ``edit`` join their
        texts; ids are the target URIs.
    """

    id_field: str | None = None
    vector_field: str | None = None
    items_field: str | None = None
    entity_field: str | None = None
    item_field: str | None = None
    rating_field: str | None = None
    ratings: str | None = None
    text_field: str | None = None
    html_extract: HtmlExtract = "text"


@dataclass(frozen=True, slots=True)
class JoinData:
    """A join's items: their ids, the arrays the metric compares, and the vectors' width."""

    ids: np.ndarray
    data: Any
    dim: int | None


def read_join_input(path: Path, metric: str, source: JoinSource) -> JoinData:
    """Read ``path`` into what ``metric`` compares (:data:`neardup.kinds.METRICS` input kind)."""
    kind = METRICS[metric].input
    if is_web_archive(path):
        return _read_pages(path, metric, source)
    rows_given = source.entity_field is not None or source.item_field is not None
    if source.id_field is None and not rows_given:
        source = replace(source, id_field=default_id_field(path))
    elif source.id_field == "":
        source = replace(source, id_field=None)
    if kind == "sets":
        return _read_sets(path, source)
    if kind == "strings":
        from neardup.io.itemsets import read_strings

        ids, strings = read_strings(
            path, text_field=source.text_field or "text", id_field=source.id_field
        )
        return JoinData(_id_array(ids), strings, None)
    from neardup.io.vectors import read_vectors

    vectors = read_vectors(path, metric, vector_field=source.vector_field, id_field=source.id_field)
    return JoinData(_id_array(vectors.ids), vectors.data, vectors.dim)


def _read_pages(path: Path, metric: str, source: JoinSource) -> JoinData:
    """A web archive's HTML pages: word shingle sets (``jaccard``, ``containment``) or texts."""
    kind = METRICS[metric].input
    if kind not in ("sets", "strings"):
        raise ParameterError(
            f"a web archive holds pages, which a {metric} join cannot compare; join them with "
            "--metric jaccard or containment (their word shingles) or --metric edit (their texts)"
        )
    (pages,) = open_sources([path], ReadSpec(html_extract=source.html_extract))
    ids, texts = [], []
    for doc_id, text in pages.records():
        ids.append(doc_id)
        texts.append(text)
    if not ids:
        raise InputError("no HTML page in the archive; nothing to join", path=path)
    data: Any = Shingler().shingle_sets(texts) if kind == "sets" else Batch(*pack_strings(texts))
    return JoinData(np.array(ids, dtype=object), data, None)


def _read_sets(path: Path, source: JoinSource) -> JoinData:
    """Item sets given whole (``items_field``), or grouped from ``(entity, item)`` rows."""
    from neardup.io.itemsets import read_item_rows, read_item_sets
    from neardup.join.items import sets_from_rows

    rows_given = source.entity_field is not None or source.item_field is not None
    if rows_given and source.items_field is not None:
        raise ParameterError(
            "give item sets either whole (--items-field) or as rows (--entity-field and "
            "--item-field), not both."
        )
    if rows_given:
        if source.entity_field is None or source.item_field is None:
            raise ParameterError("item rows need both --entity-field and --item-field.")
        if (source.ratings is None) != (source.rating_field is None):
            raise ParameterError("--ratings and --rating-field go together.")
        rows = read_item_rows(
            path,
            entity_field=source.entity_field,
            item_field=source.item_field,
            rating_field=source.rating_field,
        )
        grouped = sets_from_rows(rows, source.ratings or "set")
    else:
        if source.ratings is not None or source.rating_field is not None:
            raise ParameterError("--ratings and --rating-field apply to item rows.")
        grouped = read_item_sets(
            path, items_field=source.items_field or "items", id_field=source.id_field
        )
    return JoinData(_id_array(grouped.ids), grouped.sets, None)


def _id_array(ids: Any) -> np.ndarray:
    """Ids as a NumPy array the pairs writer indexes: ``int64``, or Python strings."""
    if isinstance(ids, np.ndarray):
        return ids
    return np.array(list(ids), dtype=object)
