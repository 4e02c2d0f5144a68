"""Passage-level dedup on one machine: repeated lines, paragraphs or sentences removed.

``neardup dedup --unit line|paragraph|sentences:K`` cuts every document into units
(:mod:`neardup.text.units`) and runs the units, not the documents, through the dedup stages
(:func:`~neardup.pipeline.sketch_batches`, :func:`~neardup.pipeline.find_duplicates`): exact
duplicates by the fingerprint of the normalised unit, near duplicates by the configured sketch,
LSH and verification at ``--threshold``, clusters by ``--cluster``. Copies whose texts surely
normalise alike (equal up to ASCII case and whitespace) are numbered as one text first, and
only a text's first copy goes through the stages; the other copies follow its cluster. Each
cluster of units keeps one occurrence: the first in input order, or with ``keep="longest"``
the first in the longest document holding one. Every other occurrence is removed, in the same
document as the kept one too (a page header repeated on every page of one RFC is kept once).

Two passes over the input, as ``dedup``: the first cuts and sketches the units (their texts wait
in an arena file in the work directory for verification); the second writes the kept corpus,
every record with its repeated units cut out of its text field and every other field as it was,
and ``removed.jsonl``: one line per document that lost something, ``{"id", "spans": [[start,
end, "id_of_the_kept_copy"], ...]}``, character offsets into the text as read (adjacent spans
kept in one document merged). Documents left with fewer than ``min_doc_chars`` characters are
left out of the kept corpus and listed in ``dropped.jsonl``.

Held in memory besides the dedup stages' own (60 to 130 bytes a distinct text): 24 bytes a
piece (its document and tile), 24 a unit (its first piece, count and text), at most 24 a
distinct text in the numbering table, and the documents' ids and lengths.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from neardup._faults import crash_point
from neardup._progress import Progress
from neardup._types import I64Array
from neardup.errors import InputError, ParameterError
from neardup.explain import without_spans
from neardup.hashing.numbering import KeyNumbers
from neardup.io.arena import TextArena
from neardup.io.kept import Edits, write_kept
from neardup.io.output import AtomicDirectory
from neardup.io.readers import Source, all_batches, open_sources
from neardup.io.records import Ids, RecordBatch
from neardup.io.results import record_line, write_json
from neardup.io.spill import KeyColumns
from neardup.params import DedupConfig, KeepRule, OutputSpec, ReadSpec, UnitSpec
from neardup.pipeline import DedupResult, Timings, find_duplicates, sketch_batches
from neardup.summary import Summary
from neardup.text.normalize import text_statistics
from neardup.text.spans import take
from neardup.text.units import cut_pieces, units_of

__all__ = ["dedup_units_files"]

REPEATED_SHOWN = 10
"""The most repeated units ``summary.json`` shows (``repeated_units``)."""

SHOWN_CHARS = 200
"""Characters of a repeated unit's text shown in ``summary.json``."""


@dataclass
class _Cut:
    """What the first pass keeps of the pieces and units of every document, in input order.

    Units whose texts surely normalise alike (:attr:`~neardup.text.units.Units.keys`) are
    numbered as one text (:class:`~neardup.hashing.numbering.KeyNumbers`, in order of first
    sight); only a text's first copy goes on to the dedup stages, so dedup item ``t`` is text
    number ``t + 1``.
    """

    spec: UnitSpec
    texts: KeyNumbers = field(default_factory=KeyNumbers)
    piece_doc: list[I64Array] = field(default_factory=list)
    tile_start: list[I64Array] = field(default_factory=list)
    tile_end: list[I64Array] = field(default_factory=list)
    unit_first: list[I64Array] = field(default_factory=list)
    unit_count: list[I64Array] = field(default_factory=list)
    unit_text: list[NDArray[np.uint32]] = field(default_factory=list)
    ids: list[Ids] = field(default_factory=list)
    lengths: list[I64Array] = field(default_factory=list)
    num_docs: int = 0
    num_pieces: int = 0

    def unit_batches(self, batches: Any) -> Any:
        """Each document batch's new unit texts, as record batches the dedup stages read."""
        for batch in batches:
            pieces = cut_pieces(batch.texts, self.spec)
            units = units_of(batch.texts, pieces, self.spec)
            seen = self.texts.num_keys
            numbers = self.texts.number(units.keys)
            running = np.maximum.accumulate(np.r_[np.uint32(seen), numbers])[:-1]
            is_new = numbers > running  # new texts are numbered 1 up at their first sight
            self.piece_doc.append(pieces.doc + self.num_docs)
            self.tile_start.append(pieces.tile_start)
            self.tile_end.append(pieces.tile_end)
            self.unit_first.append(units.first + self.num_pieces)
            self.unit_count.append(units.count)
            self.unit_text.append(numbers)
            self.ids.append(batch.ids)
            stats = batch.stats if batch.stats is not None else text_statistics(batch.texts)
            self.lengths.append(stats.chars)
            self.num_docs += batch.num_docs
            self.num_pieces += pieces.num_pieces
            new = np.flatnonzero(is_new)
            no_ids = Ids(np.empty(0, dtype=np.uint8), np.zeros(new.shape[0] + 1, np.int64))
            yield RecordBatch(
                texts=take(units.texts, new), ids=no_ids, position=batch.position,
                source=batch.source,
            )  # fmt: skip

    def finish(self) -> _Layout:
        """The arrays of the whole input; the parts are emptied as each array is joined."""

        def joined(parts: list[Any], dtype: Any = np.int64) -> Any:
            whole = np.concatenate(parts) if parts else np.empty(0, dtype=dtype)
            parts.clear()
            return whole

        return _Layout(
            piece_doc=joined(self.piece_doc),
            tile_start=joined(self.tile_start),
            tile_end=joined(self.tile_end),
            unit_first=joined(self.unit_first),
            unit_count=joined(self.unit_count),
            unit_text=joined(self.unit_text, np.uint32).astype(np.int64) - 1,
            doc_lengths=joined(self.lengths),
            ids=Ids.concat(self.ids) if self.ids else Ids.of([]),
        )


@dataclass(frozen=True, slots=True)
class _Layout:
    """Pieces (document, tile in characters), units (first piece, count, text), documents."""

    piece_doc: I64Array
    tile_start: I64Array
    tile_end: I64Array
    unit_first: I64Array
    unit_count: I64Array
    unit_text: I64Array
    """The dedup item of each unit's text."""
    doc_lengths: I64Array
    ids: Ids

    def unit_docs(self) -> I64Array:
        """The document of each unit."""
        return self.piece_doc[self.unit_first]

    def kept_copies(self, keep: KeepRule) -> I64Array:
        """Per text, the unit that keeps it.

        Its first copy, or with ``"longest"`` its first copy in the longest document holding
        one.
        """
        units = np.arange(self.unit_text.shape[0], dtype=np.int64)
        if keep == "first":
            order = units
        else:
            order = np.lexsort((units, -self.doc_lengths[self.unit_docs()], self.unit_text))
        texts, first = np.unique(self.unit_text[order], return_index=True)
        best = np.empty(texts.shape[0], dtype=np.int64)
        best[texts] = order[first]
        return best


@dataclass(frozen=True, slots=True)
class _Removal:
    """Which pieces go: ``keeper[p]`` is the document whose copy is kept, -1 if ``p`` stays."""

    keeper: I64Array
    piece_bounds: I64Array
    """``piece_bounds[d]:piece_bounds[d + 1]``: the pieces of document ``d``."""


def _kept_units(layout: _Layout, result: DedupResult, copies: I64Array) -> I64Array:
    """Per unit, the unit that keeps its cluster: the kept copy of the cluster's kept text."""
    labels, keep = result.clusters.labels, result.clusters.keep
    kept_text = np.empty(labels.shape[0], dtype=np.int64)
    kept_text[labels[keep]] = np.flatnonzero(keep)
    return np.asarray(copies[kept_text[labels[layout.unit_text]]])


def _removal(layout: _Layout, kept_unit: I64Array) -> _Removal:
    """Every unit but its cluster's kept one, as pieces; the earliest removal names its keeper."""
    removed = np.flatnonzero(kept_unit != np.arange(kept_unit.shape[0]))
    keeper_doc = layout.piece_doc[layout.unit_first[kept_unit[removed]]]
    counts = layout.unit_count[removed]
    ends = np.cumsum(counts)
    step = np.arange(int(ends[-1]) if ends.shape[0] else 0, dtype=np.int64)
    pieces = np.repeat(layout.unit_first[removed], counts) + step - np.repeat(ends - counts, counts)
    distinct, first_seen = np.unique(pieces, return_index=True)
    keeper = np.full(layout.piece_doc.shape[0], -1, dtype=np.int64)
    keeper[distinct] = np.repeat(keeper_doc, counts)[first_seen]
    num_docs = layout.doc_lengths.shape[0]
    bounds = np.searchsorted(layout.piece_doc, np.arange(num_docs + 1))
    return _Removal(keeper=keeper, piece_bounds=bounds.astype(np.int64))


@dataclass
class _Rewriter:
    """Cuts a changed document's removed spans; writes ``removed.jsonl`` and ``dropped.jsonl``."""

    layout: _Layout
    removal: _Removal
    min_doc_chars: int
    removed_out: Any
    dropped_out: Any | None
    chars_removed: int = 0
    documents_changed: int = 0
    dropped: int = 0

    def __call__(self, doc: int, text: str) -> str | None:
        lo, hi = int(self.removal.piece_bounds[doc]), int(self.removal.piece_bounds[doc + 1])
        keeper = self.removal.keeper[lo:hi]
        gone = np.flatnonzero(keeper >= 0) + lo
        self.documents_changed += 1
        if len(text) != int(self.layout.doc_lengths[doc]):
            raise InputError(
                f"record {self.layout.ids[doc]!r} changed since it was first read; run again"
            )
        spans = _merged(
            self.layout.tile_start[gone].tolist(),
            self.layout.tile_end[gone].tolist(),
            self.removal.keeper[gone].tolist(),
        )
        ids = self.layout.ids
        record = {"id": ids[doc], "spans": [[a, b, ids[k]] for a, b, k in spans]}
        self.removed_out.write(record_line(record))
        self.chars_removed += sum(end - start for start, end, _ in spans)
        new = without_spans(text, spans)
        if not self.min_doc_chars:
            return new
        left = len("".join(new.split()))
        if left >= self.min_doc_chars:
            return new
        self.dropped += 1
        if self.dropped_out is not None:
            line = {"id": ids[doc], "chars_left": left}
            self.dropped_out.write(record_line(line))
        return None


def _merged(starts: list[int], ends: list[int], keepers: list[int]) -> list[tuple[int, int, int]]:
    """Spans in order, those that touch and name the same kept copy as one."""
    out: list[tuple[int, int, int]] = []
    for start, end, keeper in zip(starts, ends, keepers, strict=True):
        if out and out[-1][1] == start and out[-1][2] == keeper:
            out[-1] = (out[-1][0], end, keeper)
        else:
            out.append((start, end, keeper))
    return out


def dedup_units_files(
    inputs: Sequence[Path | str],
    output: Path | str,
    config: DedupConfig,
    units: UnitSpec,
    *,
    read: ReadSpec | None = None,
    write: OutputSpec | None = None,
    overwrite: bool = False,
    show_progress: bool = False,
) -> dict[str, Any]:
    """Remove repeated units (lines, paragraphs, sentences) from every document; the summary.

    Writes into ``output`` (atomically): the kept corpus (``kept.jsonl``, ``kept.csv`` or
    ``kept.parquet``: every record, its text field without its repeated units),
    ``removed.jsonl``, ``dropped.jsonl`` (with ``units.min_doc_chars``) and ``summary.json``.
    ``config`` matches the units as it matches documents in ``dedup`` (shingles, sketch,
    threshold, verification, cluster mode, keep rule); ``read`` and ``write`` read the inputs
    and write the kept corpus as :func:`~neardup.jobs.dedup.dedup_files` does.

    Raises
    ------
    ParameterError
        A setting that has no meaning for units (``pairs="all"``, ``explain``, an HTML field,
        ``write.annotate``).
    InputError
        As :func:`~neardup.jobs.dedup.dedup_files`.
    """
    if config.explain or config.pairs == "all":
        raise ParameterError(
            "--unit writes removed.jsonl, not pairs.jsonl: drop --explain and --pairs"
        )
    if config.embedding is not None:
        raise ParameterError(
            f"--unit removes repeated passages by their exact text; {config.embedding_method} "
            "compares whole documents by meaning: drop one of them"
        )
    if config.host_templates:
        raise ParameterError(
            "--unit removes repeated passages by their exact text, a host's template with "
            "them: drop --host-templates"
        )
    read = read if read is not None else ReadSpec()
    write = write if write is not None else OutputSpec()
    if read.html_field is not None:
        raise ParameterError(
            "--unit cuts the text field as it is; it cannot cut text taken from HTML "
            "(--html-field): extract the text into a field first"
        )
    if write.annotate is not None:
        raise ParameterError(
            "--unit rewrites the records' texts (removed passages are cut out); --annotate "
            "marks whole records: drop one of them"
        )
    if config.keep_by:
        raise ParameterError(
            "--unit keeps the first copy of a passage (or, with --keep longest, its copy in "
            "the longest document); --keep-by chooses among whole documents: drop it"
        )
    if config.measure == "containment":
        raise ParameterError(
            "--unit matches passages by their similarity; containment (--measure containment, "
            "the containment family) is between whole documents: drop one of them"
        )
    config = dataclasses.replace(config, pairs="none")
    sources = open_sources(inputs, read)
    timings = Timings()
    cut = _Cut(units)
    with AtomicDirectory(
        output, kind="dedup", overwrite=overwrite, inputs=[s.path for s in sources]
    ) as directory:
        work = Path(tempfile.mkdtemp(prefix=".work-", dir=directory))
        arena = TextArena(work / "texts.utf8")
        try:
            with (
                timings.stage("read_sketch"),
                Progress("units", sum(s.size for s in sources), enabled=show_progress) as bar,
            ):
                batches = cut.unit_batches(all_batches(sources, read.batch_bytes))
                sketched = sketch_batches(batches, config, KeyColumns(work), arena, progress=bar)
                layout = cut.finish()
            crash_point("units-sketched")
            del cut, batches  # and the numbering table with them
            copies = layout.kept_copies(config.keep)
            # the keep rule compares the documents of the texts' kept copies, not the units
            lengths = layout.doc_lengths[layout.unit_docs()[copies]]
            sketched = dataclasses.replace(sketched, lengths=lengths)
            result = find_duplicates(
                sketched, config, timings, show_progress=show_progress, work_dir=work
            )
            kept_unit = _kept_units(layout, result, copies)
            summary = result.summary
            del sketched, result, copies, lengths  # the write holds the layout only
            repeated = _repeated_units(layout, kept_unit, arena)
        finally:
            arena.close()
            shutil.rmtree(work, ignore_errors=True)
        with timings.stage("write"):
            removal = _removal(layout, kept_unit)
            rewriter, kept_path = _write(directory, sources, read, write, units, layout, removal)
        summary = dataclasses.replace(summary, read=read, write=write)
        record = _record(
            summary, timings, sources, layout, kept_unit, removal, rewriter, units, kept_path,
            repeated,
        )  # fmt: skip
        write_json(directory / "summary.json", record)
    return record


def _write(
    directory: Path,
    sources: Sequence[Source],
    read: ReadSpec,
    write: OutputSpec,
    units: UnitSpec,
    layout: _Layout,
    removal: _Removal,
) -> tuple[_Rewriter, Path]:
    """The kept corpus, removed.jsonl and dropped.jsonl."""
    dropped_path = directory / "dropped.jsonl"
    with (
        (directory / "removed.jsonl").open("w", encoding="utf-8") as out,
        dropped_path.open("w", encoding="utf-8") if units.min_doc_chars else _Nothing() as dropped,
    ):
        rewriter = _Rewriter(layout, removal, units.min_doc_chars, out, dropped)
        keep = np.ones(layout.doc_lengths.shape[0], dtype=bool)
        kept_path = write_kept(
            sources, keep, directory, write.compress, read.batch_bytes,
            edits=Edits.of_marks(removal.keeper >= 0, removal.piece_bounds, rewriter),
        )  # fmt: skip
    return rewriter, kept_path


class _Nothing:
    """A context that opens no file (``dropped.jsonl`` is written only when asked for)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _repeated_units(layout: _Layout, kept_unit: I64Array, texts: TextArena) -> list[dict[str, Any]]:
    """The largest clusters of units: the kept unit's text (as matched), copies, its document."""
    sizes = np.bincount(kept_unit, minlength=kept_unit.shape[0])
    largest = np.argsort(-sizes, kind="stable")[:REPEATED_SHOWN]
    shown = []
    for unit in largest[sizes[largest] > 1].tolist():
        item = np.array([layout.unit_text[unit]], dtype=np.int64)
        text = bytes(texts.take(item).data).decode("utf-8", "replace")
        doc = int(layout.piece_doc[layout.unit_first[unit]])
        shown.append(
            {"text": text[:SHOWN_CHARS], "copies": int(sizes[unit]), "kept_in": layout.ids[doc]}
        )
    return shown


def _record(
    summary: Summary,
    timings: Timings,
    sources: Sequence[Source],
    layout: _Layout,
    kept_unit: I64Array,
    removal: _Removal,
    rewriter: _Rewriter,
    units: UnitSpec,
    kept_path: Path,
    repeated: list[dict[str, Any]],
) -> dict[str, Any]:
    """``summary.json``: the dedup record of the units, with the documents' counts."""
    record = dataclasses.replace(
        summary,
        times=timings.report(summary.counts.bytes),
        inputs=tuple(str(s.path) for s in sources),
        outputs={
            "kept": kept_path.name,
            "removed": "removed.jsonl",
            **({"dropped": "dropped.jsonl"} if units.min_doc_chars else {}),
            "summary": "summary.json",
        },
    ).to_record()
    text_counts = summary.counts
    num_docs = int(layout.doc_lengths.shape[0])
    num_units = int(kept_unit.shape[0])
    sizes = np.bincount(kept_unit, minlength=num_units)
    removed_units = int(np.count_nonzero(kept_unit != np.arange(num_units)))
    counts = {
        "items": num_docs,
        "bad_records_skipped": sum(s.num_bad for s in sources),
        "pieces": int(layout.piece_doc.shape[0]),
        "units": num_units,
        "unit_texts": text_counts.items,
        "short_unit_texts": text_counts.short_documents,
        "exact_duplicates": num_units - text_counts.items + text_counts.exact_duplicates,
        "candidate_pairs": text_counts.candidate_pairs,
        "already_joined": text_counts.already_joined,
        "verified_pairs": text_counts.verified_pairs,
        "clusters": int(np.count_nonzero(sizes > 1)),
        "units_in_clusters": int(sizes[sizes > 1].sum()),
        "units_removed": removed_units,
        "pieces_removed": int(np.count_nonzero(removal.keeper >= 0)),
        "documents_changed": rewriter.documents_changed,
        "chars_removed": rewriter.chars_removed,
        "removed": rewriter.dropped,
        "kept": num_docs - rewriter.dropped,
        "giant_buckets": text_counts.giant_buckets,
        "largest_bucket": text_counts.largest_bucket,
    }
    if text_counts.size_rejected is not None:
        counts["size_rejected"] = text_counts.size_rejected
    details = {
        **record.details,
        "biggest_clusters": [
            {"cluster": entry["kept_in"], "size": entry["copies"]} for entry in repeated[:5]
        ],
        "repeated_units": repeated,
    }
    params = {**record.params, "unit": units.to_dict()}
    return dataclasses.replace(record, params=params, counts=counts, details=details).to_dict()
