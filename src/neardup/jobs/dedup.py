"""The batch job on one machine: files in, an output directory out, written atomically.

Streaming passes over the input: one reads every record into columns and sketches it (after
one learning document frequencies, for a TF-IDF SimHash only); the next copies the kept records
(and, with ``add_to_index``, one more adds them to the index). Verification needs the texts of
the candidates only: plain JSONL lines are read again where they are (by byte offset); other
inputs leave a copy of each normalised text in an arena file. Between passes only a few small
arrays per document stay in memory (about 60 bytes a document); the lookup keys (and the arena)
wait in the run's work directory beside the output (:class:`~neardup.io.checkpoints.
WorkDirectory`), which disappears with a successful run. Two stages leave a checkpoint there:
the first pass, and everything before the writing; a failed or killed run keeps them, and
``resume`` continues from the later one, to the outputs an uninterrupted run writes.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from neardup._faults import crash_point
from neardup._kernels.compiling import compiling_notice
from neardup._prefetch import prefetched
from neardup._progress import Progress
from neardup._types import BoolArray, I64Array
from neardup.embed import Encoder
from neardup.engine.ahead import compiling_ahead
from neardup.errors import IdExistsError, InputError, NeardupWarning, ParameterError
from neardup.io.annotate import Annotations, write_annotated
from neardup.io.arena import TextArena
from neardup.io.checkpoints import WorkDirectory, input_identity
from neardup.io.embeddings import EMBEDDINGS_FILE, write_embeddings
from neardup.io.jsonl import JSONLinesSource, JSONLineTexts, line_number
from neardup.io.kept import write_kept
from neardup.io.output import AtomicDirectory, fsync_file
from neardup.io.readers import Source, all_batches, keep_values, open_sources
from neardup.io.results import write_clusters, write_index_matches, write_json, write_pairs
from neardup.io.setstore import SketchedSets
from neardup.io.spill import KeyColumns
from neardup.io.warc import ArchiveStats, WarcSource
from neardup.params import ConfigFile, DedupConfig, OutputSpec, ReadSpec
from neardup.pipeline import (
    DedupResult,
    Sketched,
    TextStore,
    Timings,
    VerifiedPairs,
    duplicate_ids,
    find_duplicates,
    fit_idf,
    keeps_sets,
    sketch_batches,
)
from neardup.semantic import EncodedCorpus
from neardup.sketch import make_sketcher
from neardup.templates import HostTemplates

if TYPE_CHECKING:
    from neardup.index import LSHIndex, Match

__all__ = ["dedup_files"]

INDEX_QUERY_DOCS = 4096
"""Kept documents looked up in an ``--against`` index per batch."""

ARENA_FILE = "texts.utf8"
"""The text arena's file in the work directory (inputs other than plain JSONL)."""

RESULT_NEUTRAL = frozenset({"memory_bytes"})
"""Parameters that change no result: a run resumed with another value continues."""


def _upgraded_identity(earlier: dict[str, Any]) -> dict[str, Any]:
    """The identity of a run's checkpoints in today's layout (:class:`ConfigFile`'s).

    Checkpoints made before the ``read`` and ``output`` tables hold the reading and writing
    settings in ``config`` (and the banding's copy of ``num_perm``): read back through
    :meth:`ConfigFile.from_dict`, which knows both layouts, they compare as today's.
    """
    if "read" in earlier or not isinstance(earlier.get("config"), dict):
        return earlier
    try:
        upgraded = json.loads(json.dumps(ConfigFile.from_dict(earlier["config"]).to_dict()))
    except ParameterError:
        return earlier  # not one this version can read: the comparison says what differs
    return {
        **earlier,
        "config": {
            k: v for k, v in upgraded.items() if k not in {"read", "output", *RESULT_NEUTRAL}
        },
        "read": upgraded["read"],
        "output": upgraded["output"],
    }


COLD_COMPILE_SECONDS = 15
"""About how long a first run compiles the default path's kernels on two busy cores (said once
on stderr when it does: ``neardup warmup`` compiles them ahead)."""


def _check_unique_ids(
    sketched: Sketched, sources: Sequence[Source], counts: list[int], texts: TextStore
) -> None:
    """Raise an :class:`InputError` naming two records with the same id, if there are any."""
    found = duplicate_ids(sketched.ids)
    if found is None:
        return
    starts = np.cumsum([0, *counts])

    def where(doc: int) -> str:
        source = int(np.searchsorted(starts, doc, side="right")) - 1
        path = sources[source].path
        if isinstance(texts, JSONLineTexts):
            return f"{path}:{line_number(path, int(texts.line_spans()[1][doc, 0]))}"
        return f"record {doc - int(starts[source]) + 1:,} of {path}"

    a, b = found
    raise InputError(
        f"id {sketched.ids[a]!r} is given twice, at {where(a)} and at {where(b)}; ids must be "
        "unique: fix them, or pass --id-field '' to name every record FILE:LINE"
    )


def _archive_counts(sources: Sequence[Source]) -> dict[str, int]:
    """What web archive inputs skipped and resolved (nothing for other inputs)."""
    archives = [s.stats for s in sources if isinstance(s, WarcSource)]
    if not archives:
        return {}
    total = sum(archives, ArchiveStats())
    return {
        "non_html_skipped": total.non_html,
        "not_ok_skipped": total.not_ok,
        "revisits_resolved": total.revisits,
        "unresolved_revisits": total.unresolved_revisits,
        "duplicate_payloads": total.duplicate_payloads,
    }


def _plain_lines(sources: Sequence[Source]) -> list[JSONLinesSource]:
    """The plain (uncompressed) JSONL inputs, whose lines verification reads again in place."""
    return [s for s in sources if isinstance(s, JSONLinesSource) and not s.is_compressed]


def _text_store(sources: Sequence[Source], config: DedupConfig, work: Path) -> TextStore:
    """Plain JSONL lines are read again in place; anything else is copied to an arena file.

    So are the texts of a run that strips them of their hosts' templates (``host_templates``).
    """
    lines = _plain_lines(sources)
    if len(lines) == len(sources) and not config.host_templates:  # stripped texts are kept
        return JSONLineTexts(lines, config.sketch.normalize)
    return TextArena(work / ARENA_FILE)


def dedup_files(
    inputs: Sequence[Path | str],
    output: Path | str,
    config: DedupConfig | None = None,
    *,
    read: ReadSpec | None = None,
    write: OutputSpec | None = None,
    overwrite: bool = False,
    show_progress: bool = False,
    against: LSHIndex | None = None,
    add_to_index: bool = False,
    resume: bool = False,
    encoder: Encoder | None = None,
) -> DedupResult:
    """Deduplicate files into ``output``: clusters, pairs, the kept corpus and a summary.

    Parameters
    ----------
    inputs
        JSONL (optionally .gz/.zst), Parquet or CSV files, or directories of .txt files; all of
        one format.
    output
        A directory that must not exist yet (unless ``overwrite``); it appears only when the
        whole run succeeded.
    config
        The algorithm's parameters (:class:`~neardup.params.DedupConfig`).
    read
        How the inputs are read (:class:`~neardup.params.ReadSpec`: text and id fields,
        format, encoding, bad records, batch size); ``None``: the defaults.
    write
        How the kept corpus is written (:class:`~neardup.params.OutputSpec`: compression,
        or every record annotated); ``None``: the defaults.
    show_progress
        Report progress on stderr (a bar on a terminal, log lines otherwise).
    against
        An index of documents seen before: documents with a near-copy in it are dropped too
        (listed in ``index_matches.jsonl``). ``config.sketch`` must be the index's.
    add_to_index
        Add the documents finally kept to ``against``, after the outputs are written; kept
        ids the index holds already stop the run before anything is written (nothing indexed
        is replaced).
    resume
        Continue from the finished stages an interrupted run of the same inputs and parameters
        left in ``.OUTPUT.work`` beside the output (the reading and sketching pass, or
        everything before the writing); the outputs are those of an uninterrupted run. Without
        it, or without such stages, the run starts from the beginning.
    encoder
        The embedding method's encoder (``config.embedding``), instead of loading
        ``config.embedding.model``: any object with ``encode(list[str]) -> ndarray``.

    Raises
    ------
    InputError
        An unreadable input or a bad record (unless ``read.skip_bad_records``), two records
        with one id, an existing output directory (or, with ``overwrite``, one that is not an
        earlier output), or an output that is, holds or lies inside an input; the message
        names the file and line.
    ParameterError
        ``resume`` where the work directory holds the stages of a run with other inputs or
        parameters (named), or with ``add_to_index``.
    """
    with compiling_notice(COLD_COMPILE_SECONDS, enabled=show_progress), compiling_ahead():
        return _dedup_files(
            inputs,
            output,
            config if config is not None else DedupConfig(),
            read if read is not None else ReadSpec(),
            write if write is not None else OutputSpec(),
            overwrite=overwrite,
            show_progress=show_progress,
            against=against,
            add_to_index=add_to_index,
            resume=resume,
            encoder=encoder,
        )


def _dedup_files(
    inputs: Sequence[Path | str],
    output: Path | str,
    config: DedupConfig,
    read: ReadSpec,
    write: OutputSpec,
    *,
    overwrite: bool,
    show_progress: bool,
    against: LSHIndex | None,
    add_to_index: bool,
    resume: bool,
    encoder: Encoder | None,
) -> DedupResult:
    """:func:`dedup_files`, its settings given."""
    if against is not None and config.embedding is not None:
        raise ParameterError(
            f"an index (--against) holds shingle sketches; {config.embedding_method} compares "
            "the texts' embeddings: drop one of them"
        )
    if against is not None and config.host_templates:
        raise ParameterError(
            "an index (--against) holds sketches of whole pages; --host-templates compares "
            "pages without their hosts' templates: drop one of them"
        )
    if against is not None and config.measure == "containment":
        raise ParameterError(
            "containment (--measure containment, the containment family) is measured between "
            "the run's own documents; --against matches them with an index by Jaccard: drop "
            "one of them (an index created with --containment-sample answers `neardup index "
            "query --measure containment`)"
        )
    corpus = EncodedCorpus.of_run(config, encoder)
    sources = open_sources(inputs, read)
    table_format = {"parquet": "Parquet", "arrow": "Arrow"}.get(sources[0].format)
    if table_format is not None and write.compress != "none":
        raise ParameterError(
            f"compress={write.compress!r} applies to JSONL and CSV inputs; the kept corpus of "
            f"{table_format} inputs is {table_format}, compressed by its own format or not at "
            "all: drop --compress"
        )
    if resume and add_to_index:
        raise ParameterError(
            "a run that adds to an index (--add-to-index) cannot be resumed: its adds are not "
            "checkpointed; drop --resume, or add the kept corpus later with neardup index add"
        )
    identity = {
        "config": {k: v for k, v in config.to_dict().items() if k not in RESULT_NEUTRAL},
        "read": read.to_dict(),
        "output": write.to_dict(),
        "inputs": input_identity(source.path for source in sources),
        "against": against.info() if against is not None else None,
    }
    inputs_given = [source.path for source in sources]
    atomic = AtomicDirectory(output, kind="dedup", overwrite=overwrite, inputs=inputs_given)
    # the checkpoints go once the output is in place, not before
    with (
        WorkDirectory(Path(output), identity, resume=resume, upgrade=_upgraded_identity) as work,
        atomic as directory,
    ):
        found: _Found | None = work.load("find")
        if found is None:
            found = _find(sources, config, read, work, show_progress, against, add_to_index, corpus)
            work.save("find", found)
            work.drop("sketch")
        else:
            _say_resumed("everything but the writing", show_progress)
            _restore_passes(sources, found.passes)
        crash_point("found")
        result, timings = found.result, found.timings
        with timings.stage("write"):
            written = _write_outputs(
                directory, result, sources, found.line_spans, config, write,
                found.index_matches,
            )  # fmt: skip
            if corpus is not None and corpus.spec.save and result.vectors is not None:
                write_embeddings(
                    directory / EMBEDDINGS_FILE,
                    result.vectors,
                    corpus.describe(result.ids, config, result.vectors.shape[1]),
                )
                written["embeddings"] = EMBEDDINGS_FILE
        crash_point("written")
        counted = result.summary.counts
        summary = dataclasses.replace(
            result.summary,
            counts=dataclasses.replace(
                counted,
                bad_records_skipped=sum(s.num_bad for s in sources),
                **_archive_counts(sources),
            ),
            times=timings.report(counted.bytes),
            inputs=tuple(str(s.path) for s in sources),
            outputs={**written, "summary": "summary.json"},
            resumed_after=work.resumed_after,
            read=read,
            write=write,
        )
        write_json(directory / "summary.json", summary.to_dict())
        if against is not None and add_to_index:
            _add_kept(sources, result.clusters.keep, against, read.batch_bytes)
    return dataclasses.replace(result, summary=summary)


@dataclass(frozen=True)
class _Sketch:
    """The checkpoint of the first pass: :class:`Sketched` but its files, and the passes."""

    arrays: dict[str, Any]
    """The fields of :class:`Sketched` but ``keys`` and ``texts``."""
    key_shape: tuple[int, int]
    """The lookup keys' width and rows (their column files are kept with the checkpoint)."""
    text_offsets: I64Array | None
    """Where each text starts in the arena (kept with the checkpoint), if there is one."""
    line_spans: tuple[NDArray[np.int32], I64Array] | None
    """Where each text's JSONL line is, if the texts are read again from the inputs."""
    passes: list[_Pass]
    timings: Timings


@dataclass(frozen=True)
class _Found:
    """The checkpoint of everything before writing: the result, and what the writing needs."""

    result: DedupResult
    index_matches: dict[int, list[Match]] | None
    line_spans: tuple[NDArray[np.int32], I64Array] | None
    passes: list[_Pass]
    timings: Timings


_Pass = tuple[int, list[int], ArchiveStats | None]
"""What a source learnt reading its records: bad records counted, their lines, archive stats."""


def _say_resumed(done: str, show_progress: bool) -> None:
    if show_progress:
        print(f"neardup: resuming: {done} done by an interrupted run", file=sys.stderr)


def _passes(sources: Sequence[Source]) -> list[_Pass]:
    return [(s.num_bad, s.bad_lines, getattr(s, "stats", None)) for s in sources]


def _restore_passes(sources: Sequence[Source], passes: list[_Pass]) -> None:
    """Tell each source what its reading found, in the run a checkpoint was made of."""
    for source, (num_bad, bad_lines, stats) in zip(sources, passes, strict=True):
        source.num_bad, source.bad_lines = num_bad, bad_lines
        if isinstance(source, WarcSource) and stats is not None:
            source.stats = stats


def _find(
    sources: Sequence[Source],
    config: DedupConfig,
    read: ReadSpec,
    work: WorkDirectory,
    show_progress: bool,
    against: LSHIndex | None,
    add_to_index: bool,
    corpus: EncodedCorpus | None,
) -> _Found:
    """Read and sketch the inputs (or take a checkpoint of that), then find the duplicates."""
    sketched, timings = _sketch(sources, config, read.batch_bytes, work, show_progress)
    try:
        crash_point("sketched")
        result = find_duplicates(
            sketched,
            config,
            timings,
            show_progress=show_progress,
            work_dir=work.scratch,
            corpus=corpus,
        )
        index_matches: dict[int, list[Match]] | None = None
        if against is not None:
            with timings.stage("against_index"):
                result, index_matches = _drop_indexed(result, sketched, against, config)
                if add_to_index:  # before any output: refused, the run writes nothing
                    _check_new_to(against, result)
    finally:
        if isinstance(sketched.texts, TextArena):
            sketched.texts.close()
        if sketched.kept_sets is not None:
            sketched.kept_sets.close()
    texts = sketched.texts
    line_spans = texts.line_spans() if isinstance(texts, JSONLineTexts) else None
    return _Found(result, index_matches, line_spans, _passes(sources), timings)


def _sketch(
    sources: Sequence[Source],
    config: DedupConfig,
    batch_bytes: int,
    work: WorkDirectory,
    show_progress: bool,
) -> tuple[Sketched, Timings]:
    """The first pass over the inputs, checkpointed; a resumed run takes its checkpoint."""
    saved: _Sketch | None = work.load("sketch")
    if saved is not None:
        _say_resumed("reading and sketching", show_progress)
        return _resumed_sketch(saved, sources, config, work.scratch), saved.timings
    timings = Timings()
    texts: TextStore = _text_store(sources, config, work.scratch)
    keys = KeyColumns(work.scratch)
    kept = SketchedSets(work.scratch) if keeps_sets(config) else None
    try:
        templates = None
        if config.host_templates:
            with timings.stage("templates"):
                pages = all_batches(sources, batch_bytes)
                templates = HostTemplates.learn(pages, config.sketch.normalize)
        with timings.stage("idf"):
            idf = fit_idf(all_batches(sources, batch_bytes), config, templates)
        total_bytes = sum(source.size for source in sources)
        with (
            timings.stage("read_sketch"),
            Progress("sketch", total_bytes, enabled=show_progress) as bar,
        ):
            counts = [0] * len(sources)
            batches = prefetched(all_batches(sources, batch_bytes, counts))
            sketched = sketch_batches(
                batches, config, keys, texts, idf=idf, progress=bar, kept=kept, templates=templates
            )
            if templates is not None:
                sketched = dataclasses.replace(sketched, host_templates=templates.describe())
            _check_unique_ids(sketched, sources, counts, texts)
            if config.keep_by:
                values = keep_values(sources, config, sketched.num_docs)
                sketched = dataclasses.replace(sketched, keep_values=values)
    except BaseException:
        keys.release()
        if isinstance(texts, TextArena):
            texts.close()
        if kept is not None:
            kept.close()
        raise
    files = keys.files()
    arena = texts if isinstance(texts, TextArena) else None
    if arena is not None:
        files.append(arena.path)
    arrays = {
        f.name: getattr(sketched, f.name)
        for f in dataclasses.fields(Sketched)
        if f.name not in ("keys", "texts", "kept_sets")
    }
    state = _Sketch(
        arrays,
        (keys.width, keys.num_rows),
        arena.offsets if arena is not None else None,
        texts.line_spans() if isinstance(texts, JSONLineTexts) else None,
        _passes(sources),
        timings,
    )
    work.save("sketch", state, files)  # not the kept sets: a resumed run makes them again
    return sketched, timings


def _resumed_sketch(
    saved: _Sketch, sources: Sequence[Source], config: DedupConfig, scratch: Path
) -> Sketched:
    """The first pass as its checkpoint (linked back into ``scratch``) left it."""
    _restore_passes(sources, saved.passes)
    texts: TextStore
    if saved.text_offsets is not None:
        texts = TextArena.of_file(scratch / ARENA_FILE, saved.text_offsets)
    else:
        assert saved.line_spans is not None
        normalize = config.sketch.normalize
        texts = JSONLineTexts.of_spans(_plain_lines(sources), normalize, saved.line_spans)
    keys = KeyColumns.of_files(scratch, *saved.key_shape)
    return Sketched(**saved.arrays, keys=keys, texts=texts)


def _write_outputs(
    directory: Path,
    result: DedupResult,
    sources: Sequence[Source],
    line_spans: tuple[NDArray[np.int32], I64Array] | None,
    config: DedupConfig,
    write: OutputSpec,
    index_matches: dict[int, list[Match]] | None,
) -> dict[str, str]:
    """Write clusters, pairs, the kept corpus and the index matches; the files, by role.

    The kept corpus (mostly the kernel copying file ranges, or decompression) is written and
    synced in a second thread, beside the kernels that format clusters and pairs.
    """
    clusters = result.clusters
    with ThreadPoolExecutor(max_workers=1) as writer:
        kept = writer.submit(
            _write_kept_durably,
            sources,
            result,
            directory,
            write,
            line_spans,
        )
        written = {"clusters": "clusters.jsonl"}
        write_clusters(
            directory / "clusters.jsonl", result.ids, clusters.labels, clusters.keep,
            clusters.similarity, clusters.min_similarity(), clusters.cosine,
        )  # fmt: skip
        if config.pairs != "none":
            pairs = result.pairs
            write_pairs(
                directory / "pairs.jsonl",
                result.ids,
                result.exact_pairs,
                (pairs.first, pairs.second, pairs.estimate, pairs.jaccard),
                _explained(sources, pairs, config) if config.explain else None,
                cosine=None if pairs.cosine is None else (pairs.cosine, pairs.found_by(config)),
            )
            written["pairs"] = "pairs.jsonl"
        written["annotated" if write.annotate is not None else "kept"] = kept.result().name
    if index_matches is not None:
        write_index_matches(directory / "index_matches.jsonl", result.ids, index_matches)
        written["index_matches"] = "index_matches.jsonl"
    return written


def _explained(
    sources: Sequence[Source], pairs: VerifiedPairs, config: DedupConfig
) -> list[list[list[int]]]:
    """Each pair's shared passages (``--explain``), as ``pairs.jsonl`` writes them.

    The texts of the pairs' documents, as read (before normalisation), come from one more
    pass over the inputs.
    """
    from neardup.explain import shared_passages

    wanted = np.unique(np.concatenate([pairs.first, pairs.second]))
    texts: dict[int, str] = {}
    start = 0
    for batch in all_batches(sources, sources[0].options.batch_bytes):
        stop = start + batch.num_docs
        inside = set(wanted[(wanted >= start) & (wanted < stop)].tolist())
        if inside:
            for doc, (_, text) in enumerate(batch.records(), start):
                if doc in inside:
                    texts[doc] = text
        start = stop
    return [
        [
            [p.a_start, p.a_end, p.b_start, p.b_end, p.num_shingles]
            for p in shared_passages(texts[a], texts[b], config.sketch)
        ]
        for a, b in zip(pairs.first.tolist(), pairs.second.tolist(), strict=True)
    ]


def _write_kept_durably(
    sources: Sequence[Source],
    result: DedupResult,
    directory: Path,
    write: OutputSpec,
    line_spans: tuple[NDArray[np.int32], I64Array] | None,
) -> Path:
    """The output corpus, then the file synced to disk (the output's commit needs it).

    :func:`write_kept`, or with ``write.annotate`` :func:`write_annotated`; the records are
    read again in the batches they were read in first.
    """
    clusters = result.clusters
    batch_bytes = sources[0].options.batch_bytes
    if write.annotate is not None:
        annotations = Annotations(
            write.annotate, result.ids, clusters.labels, clusters.keep, clusters.similarity
        )
        path = write_annotated(sources, annotations, directory, write.compress, batch_bytes)
    else:
        keep, compress = clusters.keep, write.compress
        path = write_kept(sources, keep, directory, compress, batch_bytes, line_spans)
    fsync_file(path)
    return path


def _drop_indexed(
    result: DedupResult, sketched: Sketched, index: LSHIndex, config: DedupConfig
) -> tuple[DedupResult, dict[int, list[Match]]]:
    """Unkeep every kept document that has a near-copy in ``index``, at the run's threshold.

    The kept documents' texts come from the text store and are sketched again, a block at a
    time. Below the threshold the index was built for, its bands miss pairs: a warning says
    how many. (A SimHash index searches the run's own ``h`` bits: it misses nothing the run's
    own search would find.)
    """
    from neardup.index import threshold_warning

    warning = None
    if index.postings is None:
        warning = threshold_warning(index.header, config.lsh.threshold)
    if warning is not None:
        warnings.warn(f"--against {warning}", NeardupWarning, stacklevel=2)
    sketcher = make_sketcher(config.sketch, sketched.idf)
    kept = np.flatnonzero(result.clusters.keep)
    found: dict[int, list[Match]] = {}
    for start in range(0, kept.shape[0], INDEX_QUERY_DOCS):
        docs: I64Array = kept[start : start + INDEX_QUERY_DOCS]
        matches = index.query_signatures(
            sketcher.sketch(sketched.texts.take(docs)), threshold=config.lsh.threshold
        )
        found.update((int(doc), m) for doc, m in zip(docs.tolist(), matches, strict=True) if m)
    keep = result.clusters.keep.copy()
    keep[list(found)] = False
    num_kept = int(keep.sum())
    counts = dataclasses.replace(
        result.summary.counts,
        against_index=len(found),
        kept=num_kept,
        removed=keep.shape[0] - num_kept,
    )
    summary = dataclasses.replace(result.summary, counts=counts, against=index.info()["header"])
    clusters = dataclasses.replace(result.clusters, keep=keep)
    return dataclasses.replace(result, clusters=clusters, summary=summary), found


def _check_new_to(index: LSHIndex, result: DedupResult) -> None:
    """Refuse to add kept documents whose ids the index holds already (as ``index add`` does)."""
    kept = np.flatnonzero(result.clusters.keep)
    for start in range(0, kept.shape[0], INDEX_QUERY_DOCS):
        ids = [result.ids[d] for d in kept[start : start + INDEX_QUERY_DOCS].tolist()]
        present = index.existing_ids(ids)
        if present:
            shown = ", ".join(map(repr, present[:5])) + (", ..." if len(present) > 5 else "")
            raise IdExistsError(
                f"kept documents have ids already in the index ({shown}); --add-to-index adds "
                "and never replaces: give them other ids, or add them with neardup index add "
                "--upsert (replace) or --skip-existing (keep the indexed ones); nothing was "
                "written",
                ids=present,
            )


def _add_kept(
    sources: Sequence[Source], keep: BoolArray, index: LSHIndex, batch_bytes: int
) -> None:
    """Add the kept records to ``index``, batch by batch (each batch one transaction).

    Their ids were found new to the index before the outputs were written
    (:func:`_check_new_to`): nothing indexed is ever replaced.
    """
    position = 0
    for batch in all_batches(sources, batch_bytes):
        flags = keep[position : position + batch.num_docs].tolist()
        position += batch.num_docs
        records = [record for record, kept in zip(batch.records(), flags, strict=True) if kept]
        if records:
            index.add([i for i, _ in records], [t for _, t in records])
