"""Deduplicating a DataFrame or a dataset in memory: Arrow in, Arrow out, no object per row.

:func:`dedup_frame` takes a pandas or polars DataFrame, or a pyarrow Table (anything with
``to_arrow()`` too). Its text column's Arrow buffers are sketched as they are (batches are
views of them), ids are the id column's strings or the row numbers, ``config.keep_by`` names
columns; the frame comes back of its own kind, filtered to the kept rows or, with
``annotate``, whole with a struct column ``{cluster, keep, similarity}`` added, as
``neardup dedup --annotate`` writes it. :func:`dedup_dataset` does the same for a
``datasets.Dataset``, returning a dataset.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neardup._types import Batch, I64Array
from neardup.errors import InputError
from neardup.io.records import Ids, RecordBatch
from neardup.io.tabular import arrow_strings
from neardup.keep import KeepValues, comparable
from neardup.params import DEFAULT_BATCH_BYTES, DedupConfig
from neardup.pipeline import DedupResult, dedup_batches, duplicate_ids
from neardup.templates import HostTemplates
from neardup.text.normalize import normalize_bytes
from neardup.text.spans import take

__all__ = ["dedup_dataset", "dedup_frame"]


def dedup_frame(
    frame: Any,
    config: DedupConfig | None = None,
    *,
    text_column: str = "text",
    id_column: str | None = None,
    annotate: str | None = None,
) -> tuple[Any, DedupResult]:
    """Deduplicate the rows of a DataFrame; return the kept (or annotated) frame and the result.

    Parameters
    ----------
    frame
        A pandas or polars DataFrame or a pyarrow Table; rows in order are the documents.
    config
        Every parameter, as for :func:`neardup.dedup`; ``keep_by`` names columns.
    text_column
        The column of texts (strings; a null is an error naming its row).
    id_column
        The column of ids (unique; strings or integers); default: the row numbers.
    annotate
        A column name: every row is returned with this struct column added
        (``cluster``, ``keep``, ``similarity``) instead of the kept rows only.

    Examples
    --------
    >>> import pyarrow as pa
    >>> base = "the quick brown fox jumps over the lazy dog and runs far away into the woods"
    >>> table = pa.table({"text": [base, base + " today", "a different text about cats"],
    ...                   "score": [0.1, 0.9, 0.5]})
    >>> kept, result = dedup_frame(table, DedupConfig(keep_by=("score",)))
    >>> kept.column("score").to_pylist(), result.clusters.labels.tolist()
    ([0.9, 0.5], [0, 0, 2])
    """
    import pyarrow as pa

    table, back = _as_table(frame)
    result, ids = _dedup_table(table, config, text_column, id_column)
    if annotate is None:
        return back(table.filter(pa.array(result.clusters.keep))), result
    return back(table.append_column(annotate, _notes(table, annotate, ids, result))), result


def dedup_dataset(
    dataset: Any,
    config: DedupConfig | None = None,
    *,
    text_column: str = "text",
    id_column: str | None = None,
    annotate: bool | str = False,
) -> tuple[Any, DedupResult]:
    """Deduplicate a Hugging Face ``datasets.Dataset``; return the kept (or annotated) dataset.

    The dataset's Arrow table (memory-mapped when it was loaded from disk) is read as
    :func:`dedup_frame` reads a table, without a Python object per row. The kept dataset is
    ``dataset.select(kept rows)`` (an indices mapping over the same table, no copy); with
    ``annotate`` (True for the field ``neardup``, or a name) every row comes back with that
    struct column (``cluster``, ``keep``, ``similarity``) added.

    Examples
    --------
    >>> import datasets
    >>> base = "the quick brown fox jumps over the lazy dog and runs far away into the woods"
    >>> rows = datasets.Dataset.from_dict({"text": [base, base + " today", "cats purr"]})
    >>> kept, result = dedup_dataset(rows)
    >>> kept["text"][1], result.clusters.labels.tolist()
    ('cats purr', [0, 0, 2])
    """
    table = dataset.with_format("arrow")[:]  # views of the dataset's table, in its row order
    result, ids = _dedup_table(table, config, text_column, id_column)
    if not annotate:
        return dataset.select(np.flatnonzero(result.clusters.keep)), result
    name = "neardup" if annotate is True else str(annotate)
    return dataset.add_column(name, _notes(table, name, ids, result)), result


def _dedup_table(
    table: Any, config: DedupConfig | None, text_column: str, id_column: str | None
) -> tuple[DedupResult, Ids]:
    """The run over an Arrow table's rows, and the ids it gave them."""
    config = config if config is not None else DedupConfig()
    texts = _strings(table, text_column)
    ids = _ids(table, id_column)
    values = None
    if config.keep_by:
        columns = []
        for name, _ in config.keep_fields:
            if name not in table.column_names:
                raise InputError(f"the frame has no column {name!r} to keep by")
            column = table.column(name).combine_chunks()
            columns.append(comparable(column, name, f"column {name!r}"))
        values = KeepValues.of(config, columns)
    templates = None
    if config.host_templates:
        templates = HostTemplates.learn(
            _batches(texts, ids, DEFAULT_BATCH_BYTES), config.sketch.normalize
        )
    result = dedup_batches(
        lambda: _batches(texts, ids, DEFAULT_BATCH_BYTES),
        _ArrowTexts(texts, config, ids, templates),
        config,
        values,
        templates=templates,
    )
    return result, ids


def _notes(table: Any, name: str, ids: Ids, result: DedupResult) -> Any:
    """The annotation column ``name``: each row's cluster, keep flag and similarity.

    The cluster is its representative's id, as in ``clusters.jsonl``.
    """
    import pyarrow as pa

    if name in table.column_names:
        raise InputError(f"the frame has a column {name!r} already; name another annotate")
    clusters = result.clusters
    id_strings = pa.LargeStringArray.from_buffers(
        len(ids), pa.py_buffer(ids.offsets), pa.py_buffer(np.ascontiguousarray(ids.data))
    )
    return pa.StructArray.from_arrays(
        [
            id_strings.take(pa.array(clusters.labels)).cast(pa.string()),
            pa.array(clusters.keep),
            pa.array(clusters.similarity),
        ],
        names=["cluster", "keep", "similarity"],
    )


def _as_table(frame: Any) -> tuple[Any, Any]:
    """``frame`` as a pyarrow Table, and the function that turns a Table back into its kind."""
    import pyarrow as pa

    if isinstance(frame, pa.Table):
        return frame, lambda table: table
    if hasattr(frame, "to_arrow"):  # polars: its DataFrame takes an Arrow table back
        kind = type(frame)
        return frame.to_arrow(), kind
    if type(frame).__module__.startswith("pandas") and hasattr(frame, "columns"):
        table = pa.Table.from_pandas(frame, preserve_index=False)
        return table, lambda t: t.to_pandas()
    raise InputError(
        f"dedup_frame takes a pandas or polars DataFrame or a pyarrow Table; got "
        f"{type(frame).__name__}"
    )


def _strings(table: Any, name: str) -> Any:
    """Column ``name`` as one ``large_string`` array without nulls."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if name not in table.column_names:
        raise InputError(
            f"the frame has no column {name!r} (columns: {', '.join(table.column_names)}); "
            "name the texts with text_column"
        )
    column = table.column(name).combine_chunks()
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        raise InputError(f"column {name!r} is {column.type}, expected strings")
    if column.null_count:
        row = int(pc.index(pc.is_null(column), True).as_py())
        raise InputError(f"column {name!r} is null at row {row}")
    return column.cast(pa.large_string())


def _ids(table: Any, name: str | None) -> Ids:
    """The documents' ids: column ``name`` as strings (unique), or the row numbers."""
    import pyarrow as pa

    if name is None:
        column = pa.array(np.arange(table.num_rows)).cast(pa.large_string())
    else:
        if name not in table.column_names:
            raise InputError(f"the frame has no column {name!r} for ids")
        column = table.column(name).combine_chunks()
        kind = column.type
        if not (
            pa.types.is_integer(kind) or pa.types.is_string(kind) or pa.types.is_large_string(kind)
        ):
            raise InputError(f"column {name!r} is {kind}, expected strings or integers for ids")
        column = _strings(pa.table({name: column.cast(pa.large_string())}), name)
    ids = Ids(*arrow_strings(column))
    duplicate = duplicate_ids(ids)
    if duplicate is not None:
        a, b = duplicate
        raise InputError(f"rows {a} and {b} have the same id {ids[a]!r}; ids must be unique")
    return ids


def _batches(texts: Any, ids: Ids, batch_bytes: int) -> Any:
    """The texts as record batches of about ``batch_bytes``: views of the Arrow buffers.

    Read-only views: normalisation, which may write over a batch it owns, copies these.
    """
    data, offsets = arrow_strings(texts)
    data = data.view()
    data.flags.writeable = False
    bounds = np.searchsorted(offsets, np.arange(0, int(offsets[-1]), max(1, batch_bytes)))
    cuts = np.unique(np.r_[bounds, offsets.shape[0] - 1])
    for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
        if hi > lo:
            yield RecordBatch(
                texts=Batch(*_slice(data, offsets, lo, hi)),
                ids=Ids(*_slice(ids.data, ids.offsets, lo, hi)),
                position=int(offsets[hi]),
            )


def _slice(data: Any, offsets: I64Array, lo: int, hi: int) -> tuple[Any, I64Array]:
    """Items ``lo .. hi - 1`` of packed strings, as a view."""
    return data[offsets[lo] : offsets[hi]], offsets[lo : hi + 1] - offsets[lo]


class _ArrowTexts:
    """The frame's texts as a :class:`~neardup.pipeline.TextStore`.

    Taken from the frame's buffers, and normalised again (and stripped of their hosts'
    ``templates``), when verification asks for them.
    """

    def __init__(
        self, texts: Any, config: DedupConfig, ids: Ids, templates: HostTemplates | None = None
    ) -> None:
        self._texts = Batch(*arrow_strings(texts))
        self._spec = config.sketch.normalize
        self._ids, self._templates = ids, templates

    def append(self, records: RecordBatch, normalized: Batch) -> None:
        """Nothing to keep: the texts stay in the frame."""

    def finish(self) -> None:
        """Nothing to finish."""

    def sizes(self) -> I64Array:
        """Bytes of each text."""
        return np.diff(self._texts.offsets)

    def take(self, docs: I64Array) -> Batch:
        """The normalised texts of ``docs``, in that order."""
        normalized = normalize_bytes(take(self._texts, docs), self._spec)
        if self._templates is None:
            return normalized
        return self._templates.strip([self._ids[d] for d in docs.tolist()], normalized)
