"""The batch job on one machine: files in, an output directory out, written atomically.

Three streaming passes over the input: sketch every record; re-read the texts of documents in
candidate pairs for exact verification; copy the kept records. Between passes only small
per-document arrays stay in memory; signature rows are spilled to a work file.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
from tqdm import tqdm

from neardup._types import BoolArray, I64Array
from neardup.cluster import Clusters
from neardup.index import LSHIndex, Match
from neardup.io.kept import write_kept
from neardup.io.output import AtomicDirectory
from neardup.io.readers import ReadOptions, Source, open_sources
from neardup.io.results import write_clusters, write_index_matches, write_json, write_pairs
from neardup.io.spill import FileMatrix
from neardup.params import DedupConfig
from neardup.pipeline import DedupResult, Timings, find_duplicates, fit_idf, sketch_records
from neardup.sketch import make_sketcher
from neardup.sketch.signatures import Signatures

__all__ = ["dedup_files"]


def _records(sources: Sequence[Source]) -> Iterator[tuple[str, str]]:
    return itertools.chain.from_iterable(source.records() for source in sources)


def dedup_files(
    inputs: Sequence[Path | str],
    output: Path | str,
    config: DedupConfig | None = None,
    *,
    overwrite: bool = False,
    show_progress: bool = False,
    against: LSHIndex | None = None,
    add_to_index: bool = False,
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
        Every parameter (:class:`~neardup.params.DedupConfig`).
    show_progress
        Draw a progress bar on stderr.
    against
        An index of documents seen before: documents with a near-copy in it are dropped too
        (listed in ``index_matches.jsonl``). ``config.sketch`` must be the index's.
    add_to_index
        Upsert the documents finally kept into ``against``, after the outputs are written.

    Raises
    ------
    InputError
        An unreadable input or a bad record (unless ``config.skip_bad_records``), or an
        existing output directory; the message names the file and line.
    """
    config = config if config is not None else DedupConfig()
    options = ReadOptions(config.text_field, config.id_field, config.skip_bad_records)
    sources = open_sources(inputs, options, config.input_format)
    timings = Timings()
    with AtomicDirectory(output, overwrite=overwrite) as directory:
        with timings.stage("idf"):
            idf = fit_idf(_records(sources), config)
        width = make_sketcher(config.sketch, idf).width
        with (
            tempfile.TemporaryDirectory(prefix=".work-", dir=directory) as work,
            FileMatrix(Path(work) / "signatures.u64", width) as sink,
        ):
            with (
                timings.stage("read_sketch"),
                tqdm(desc="sketch", unit=" docs", disable=not show_progress) as bar,
            ):
                sketched = sketch_records(_records(sources), config, sink, bar.update, idf)

            def load_texts(docs: I64Array) -> list[str]:
                wanted = set(docs.tolist())
                with tqdm(
                    desc="verify", unit=" docs", disable=not show_progress, total=len(sketched.ids)
                ) as bar:
                    texts = []
                    for index, (_, text) in enumerate(_records(sources)):
                        bar.update()
                        if index in wanted:
                            texts.append(text)
                    return texts

            result = find_duplicates(sketched, config, load_texts, timings)
            index_matches: dict[int, list[Match]] = {}
            if against is not None:
                with timings.stage("against_index"):
                    result, index_matches = _drop_indexed(result, sketched.signatures, against)
        with timings.stage("write"):
            clusters = result.clusters
            write_clusters(directory / "clusters.jsonl", result.ids, clusters.labels, clusters.keep)
            pairs = result.pairs
            write_pairs(
                directory / "pairs.jsonl",
                result.ids,
                result.exact_pairs,
                (pairs.first, pairs.second, pairs.estimate, pairs.jaccard),
            )
            kept_path = write_kept(sources, clusters.keep, directory, config.compress)
            if against is not None:
                write_index_matches(directory / "index_matches.jsonl", result.ids, index_matches)
        summary = result.summary
        summary.update(timings.report(summary["counts"]["bytes"]))
        summary["inputs"] = [str(s.path) for s in sources]
        summary["counts"]["bad_records_skipped"] = sum(s.num_bad for s in sources)
        summary["outputs"] = {
            "clusters": "clusters.jsonl",
            "pairs": "pairs.jsonl",
            "kept": kept_path.name,
            "summary": "summary.json",
        }
        if against is not None:
            summary["outputs"]["index_matches"] = "index_matches.jsonl"
        write_json(directory / "summary.json", summary)
        if against is not None and add_to_index:
            _add_kept(sources, clusters.keep, against, config.batch_bytes)
    return result


def _drop_indexed(
    result: DedupResult, signatures: Signatures, index: LSHIndex
) -> tuple[DedupResult, dict[int, list[Match]]]:
    """Unkeep every kept document that has a near-copy in ``index``."""
    kept = np.flatnonzero(result.clusters.keep)
    matches = index.query_signatures(signatures.take(kept))
    found = {int(doc): m for doc, m in zip(kept.tolist(), matches, strict=True) if m}
    keep = result.clusters.keep.copy()
    keep[list(found)] = False
    counts = dict(result.summary["counts"])
    counts["against_index"] = len(found)
    counts["kept"] = int(keep.sum())
    counts["removed"] = int(keep.shape[0] - keep.sum())
    summary = {**result.summary, "counts": counts, "against": index.info()["header"]}
    clusters = Clusters(labels=result.clusters.labels, keep=keep)
    return replace(result, clusters=clusters, summary=summary), found


def _add_kept(
    sources: Sequence[Source], keep: BoolArray, index: LSHIndex, batch_bytes: int
) -> None:
    """Upsert the kept records into ``index``, batch by batch (each batch one transaction).

    Upsert, not add: a kept document whose id is already indexed (with a text that is no
    near-copy of the new one) replaces it.
    """
    flags = iter(keep.tolist())
    batch: list[tuple[str, str]] = []
    size = 0
    for doc_id, text in _records(sources):
        if not next(flags):
            continue
        batch.append((doc_id, text))
        size += len(text)
        if size >= batch_bytes:
            index.upsert([i for i, _ in batch], [t for _, t in batch])
            batch, size = [], 0
    if batch:
        index.upsert([i for i, _ in batch], [t for _, t in batch])
