"""Readers: documents streamed from JSONL, Parquet, Arrow, CSV, .txt or web archives.

One :class:`~neardup.io.source.Source` per input, chosen by the file's extension (or
``--format``); all inputs of a run share one format, which is also the kept corpus's. A
Hugging Face ``save_to_disk`` folder stands for its Arrow files, in order.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from neardup.errors import InputError, advice, remedy
from neardup.io.compression import strip_compression
from neardup.io.html_field import with_html_field
from neardup.io.jsonl import JSONLinesSource
from neardup.io.records import RecordBatch
from neardup.io.source import Source
from neardup.io.tabular import ArrowSource, CSVSource, ParquetSource
from neardup.io.textfiles import TextFilesSource
from neardup.io.warc import PayloadCache, WarcSource
from neardup.keep import KeepValues, joined_column
from neardup.params import DedupConfig, ReadSpec

__all__ = [
    "FORMAT_SUFFIXES",
    "ArrowSource",
    "CSVSource",
    "JSONLinesSource",
    "ParquetSource",
    "Source",
    "TextFilesSource",
    "WarcSource",
    "all_batches",
    "keep_values",
    "open_sources",
]

FORMAT_SUFFIXES: dict[str, str] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".arrow": "arrow",
    ".csv": "csv",
    ".txt": "txt",
    ".warc": "warc",
    ".arc": "warc",
}
"""Format by extension (before ``.gz``/``.zst``). Web archives are decompressed by their reader
(per-record gzip), not by :mod:`neardup.io.compression`."""

SOURCES: dict[str, type[Source]] = {
    "jsonl": JSONLinesSource,
    "csv": CSVSource,
    "parquet": ParquetSource,
    "arrow": ArrowSource,
    "txt": TextFilesSource,
    "warc": WarcSource,
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
            "(optionally followed by .gz or .zst), or a directory of .txt files"
            + remedy(advice("--format", "name the format with --format")),
            path=path,
        ) from None


def dataset_files(path: Path) -> list[Path]:
    """The Arrow files of a Hugging Face ``save_to_disk`` folder, in order; else ``[path]``.

    A folder with a ``state.json`` naming its ``_data_files`` is such a folder (a
    ``DatasetDict``'s folder holds one per split: give the split's folder).
    """
    state = path / "state.json"
    if not (path.is_dir() and state.is_file()):
        return [path]
    try:
        names = [entry["filename"] for entry in json.loads(state.read_text())["_data_files"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(
            f"state.json does not name the dataset's files ({exc!r}); save it again with "
            "Dataset.save_to_disk",
            path=state,
        ) from None
    return [path / name for name in names]


def is_web_archive(path: Path) -> bool:
    """Whether ``path`` is named as a web archive (``.warc``, ``.arc``, optionally compressed)."""
    try:
        return detect_format(path) == "warc"
    except InputError:
        return False


def input_labels(paths: Sequence[Path]) -> list[str]:
    """The ``FILE`` of each input's default ids: its name, or more of its path where names repeat.

    Examples
    --------
    >>> input_labels([Path("d1/x.jsonl"), Path("d2/x.jsonl"), Path("y.jsonl")])
    ['d1/x.jsonl', 'd2/x.jsonl', 'y.jsonl']
    """
    parts = [path.resolve().parts for path in paths]
    depth = [1] * len(paths)
    while True:
        labels = ["/".join(p[-d:]) for p, d in zip(parts, depth, strict=True)]
        clashes = {label for label in labels if labels.count(label) > 1}
        if not clashes:
            return labels
        depth = [d + (label in clashes) for d, label in zip(depth, labels, strict=True)]


def all_batches(
    sources: Sequence[Source], batch_bytes: int, counts: list[int] | None = None
) -> Iterator[RecordBatch]:
    """Every source's batches in turn; positions count the bytes of all the inputs.

    ``counts``, when given, gets the number of records read from each source.
    """
    done = 0
    for index, source in enumerate(sources):
        for batch in source.batches(batch_bytes):
            if counts is not None:
                counts[index] += batch.num_docs
            yield dataclasses.replace(batch, position=done + batch.position, source=index)
        done += source.size


def open_sources(paths: Sequence[Path | str], options: ReadSpec) -> list[Source]:
    """One :class:`Source` per path, in ``options.input_format`` (``"auto"``: by extension).

    All must share one format (the kept output's format).
    """
    if not paths:
        raise InputError("no input given")
    given = [file for raw in paths for file in dataset_files(Path(raw))]
    seen: dict[Path, Path] = {}
    for path in given:
        if not path.exists():
            raise InputError("no such file or directory; check the path", path=path)
        same = seen.setdefault(path.resolve(), path)
        if same is not path:
            also = "" if same == path else f" (as {same} too)"
            raise InputError(f"input given twice{also}; give each input once", path=path)
    sources: list[Source] = []
    for path, label in zip(given, input_labels(given), strict=True):
        fmt = detect_format(path) if options.input_format == "auto" else options.input_format
        sources.append(with_html_field(SOURCES[fmt](path, options, label)))
    archives = [s for s in sources if isinstance(s, WarcSource)]
    cache = PayloadCache()  # one for the run: revisits may refer to an earlier file
    for number, archive in enumerate(archives):
        archive.cache, archive.first = cache, number == 0
    formats = {s.format for s in sources}
    if len(formats) > 1:
        raise InputError(
            f"inputs mix formats ({', '.join(sorted(formats))}); deduplicate one format per run"
        )
    return sources


def keep_values(sources: Sequence[Source], config: DedupConfig, num_docs: int) -> KeepValues:
    """The ``keep_by`` values of the ``num_docs`` usable records of ``sources``, in order.

    After the reading pass: each source reads its fields again (:meth:`Source.field_values`);
    an input that changed since is an error.
    """
    names = [name for name, _ in config.keep_fields]
    per_source = [source.field_values(names, source.options.batch_bytes) for source in sources]
    where = [str(source.path) for source in sources]
    columns = [
        joined_column([values[i] for values in per_source], name, where)
        for i, name in enumerate(names)
    ]
    if any(len(column) != num_docs for column in columns):
        raise InputError("an input changed while it was read; run again")
    return KeepValues.of(config, columns)
