"""``neardup join`` on one machine: an input file in, ``pairs.jsonl`` and ``summary.json`` out.

The input is read whole into the arrays the metric compares (:class:`JoinSource` says how; 4
bytes a coordinate, 8 bytes an item or 64 bits), the join runs
(:func:`neardup.join.similarity.similarity_stream`) within its working memory
(``memory_bytes``, ``--memory-gb``): band keys spilled one file per band to a work directory
inside the output's hidden sibling (read back one band at a time), candidate pairs generated
and measured a bounded chunk at a time, close pairs buffered and spilled there in sorted runs,
then merged into ``pairs.jsonl`` as a stream; the output directory appears atomically.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from neardup._faults import crash_point
from neardup._progress import Progress
from neardup._types import Batch
from neardup.errors import InputError, ParameterError
from neardup.io.itemsets import default_id_field
from neardup.io.output import AtomicDirectory
from neardup.io.readers import is_web_archive, open_sources
from neardup.io.results import write_json, write_value_pair_chunks
from neardup.join.similarity import similarity_stream
from neardup.kinds import METRICS
from neardup.params import DedupConfig, HtmlExtract, JoinSpec, ReadSpec
from neardup.record import RunRecord, stage_timings
from neardup.text import Shingler
from neardup.text.spans import pack_strings

__all__ = [
    "JoinData",
    "JoinSource",
    "join_files",
    "join_memory",
    "join_summary",
    "read_join_input",
]


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


def join_summary(
    info: Mapping[str, Any],
    spec: JoinSpec,
    *,
    num_pairs: int,
    num_items: int,
    inputs: list[str],
    times: dict[str, float],
    engine: str = "local",
) -> dict[str, Any]:
    """``summary.json`` of a join: what was asked, how pairs were found, the counts and times.

    A :class:`~neardup.record.RunRecord`; ``times`` per stage, and ``total``.
    """
    metric = METRICS[spec.metric]
    info = dict(info)
    counts = {
        "items": num_items,
        "candidate_pairs": int(info.pop("num_candidates", 0)),
        "pairs": num_pairs,
    }
    info.pop("num_pairs", None)
    stages = {name: value for name, value in times.items() if name != "total"}
    return RunRecord(
        command="join",
        engine=engine,
        inputs=tuple(inputs),
        outputs={"pairs": "pairs.jsonl", "summary": "summary.json"},
        params=spec.to_dict(),
        counts=counts,
        timings_s=stage_timings(stages, times.get("total")),
        details={
            "metric": spec.metric,
            "measure": metric.measure,
            "threshold": spec.threshold,
            "family": info.pop("family", None),
            "num_bands": info.pop("num_bands", None),
            "num_rows": info.pop("num_rows", None),
            "predicted_recall": info.pop("predicted_recall", None),
            **info,
        },
    ).to_dict()


def join_memory(memory_bytes: int | None = None) -> int:
    """A join's working memory: ``memory_bytes``, or ``neardup dedup``'s default.

    That is an eighth of the machine's memory, at most 1 GiB
    (:attr:`~neardup.params.DedupConfig.working_memory`).
    """
    if memory_bytes is not None:
        if memory_bytes < 1:
            raise ParameterError(f"memory_bytes must be an int >= 1; got {memory_bytes!r}.")
        return int(memory_bytes)
    return DedupConfig().working_memory


def join_files(
    path: Path,
    output: Path,
    spec: JoinSpec,
    source: JoinSource | None = None,
    *,
    overwrite: bool = False,
    memory_bytes: int | None = None,
    show_progress: bool = False,
) -> dict[str, Any]:
    """``neardup join``: read ``path``, join, write ``output``; return the summary.

    ``memory_bytes`` (:func:`join_memory`) bounds the candidate chunks and the close pairs
    held at once; beyond it they are spilled to the work directory. The output never depends
    on it. ``show_progress``: the bands of an LSH join on stderr as they are done.
    """
    memory = join_memory(memory_bytes)
    started = time.perf_counter()
    with AtomicDirectory(output, kind="join", overwrite=overwrite, inputs=[path]) as directory:
        items = read_join_input(path, spec.metric, source or JoinSource())
        read = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix=".work-", dir=directory) as work:
            try:
                with Progress("join", 0, unit="bands", enabled=show_progress) as bar:
                    stream = similarity_stream(
                        items.data,
                        spec,
                        dim=items.dim,
                        work_dir=Path(work),
                        memory_bytes=memory,
                        progress=bar,
                    )
            except InputError as exc:  # the items' own faults: name the file they came from
                if exc.path is not None:
                    raise
                raise InputError(exc.reason, path=path) from None
            joined = time.perf_counter()
            crash_point("joined")
            num_pairs = write_value_pair_chunks(
                directory / "pairs.jsonl",
                items.ids,
                stream.chunks(),
                key=METRICS[spec.metric].measure,
                integral=METRICS[spec.metric].integral,
            )
        done = time.perf_counter()
        times = {
            "read": read - started,
            "join": joined - read,
            "write": done - joined,
            "total": done - started,
        }
        info = {**stream.info, "memory_bytes": memory}
        for name in ("num_zero_vectors", "first_zero_vector"):  # the reader refuses them
            info.pop(name, None)
        summary = join_summary(
            info,
            spec,
            num_pairs=num_pairs,
            num_items=len(items.ids),
            inputs=[str(path)],
            times=times,
        )
        write_json(directory / "summary.json", summary)
    return summary
