"""Benchmark contamination: training documents that share word N-grams with evaluation items.

GPT-3's decontamination removed every training document sharing a 13-gram with a benchmark
item; others ask for a share of an item's N-grams. :func:`contamination_files` reads the
evaluation items whole (they are small) and keeps their distinct N-gram fingerprints, each
with the items holding it, sorted (N-grams held exactly and matched by their 64-bit
fingerprints, as every shingle in neardup: no sampling, no Bloom filter). The training corpus
streams past
a batch at a time: each document is normalised and shingled as ``neardup dedup`` shingles
(word ``N``-shingles, NFKC and case folding), and its fingerprints are looked up in the
evaluation's; only a document with a hit is read again in detail, for the original character
spans of what it shares with each item (:func:`neardup.explain.shingle_spans`). What is held
grows with the evaluation items and one batch of training text, not with the corpus.

Output directory (written atomically): ``contaminated.jsonl``, one line per (evaluation
item, training document) that meet the criterion, in training order then evaluation order,
``{"eval_id", "train_id", "shared_ngrams", "spans": [[start, end], ...]}`` (character offsets
in the training text, overlapping N-grams merged); ``kept.jsonl`` (or the input's format), the
training corpus without the contaminated documents; ``summary.json``, the run record with a
table per evaluation input (``benchmarks``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from neardup._faults import crash_point
from neardup._progress import Progress
from neardup._types import BoolArray, I64Array, U64Array
from neardup.errors import ParameterError
from neardup.explain import merged_spans, shingle_spans
from neardup.io.kept import write_kept
from neardup.io.output import AtomicDirectory
from neardup.io.readers import all_batches, open_sources
from neardup.io.records import RecordBatch
from neardup.io.results import record_line, write_json
from neardup.params import NormalizeSpec, ReadSpec, ShingleSpec, SketchSpec
from neardup.record import RunRecord, stage_timings
from neardup.text.normalize import normalize_bytes
from neardup.text.shingle import Shingler

__all__ = ["EvalGrams", "Overlap", "contamination_files", "document_overlaps"]

DEFAULT_NGRAM = 13
"""Words per N-gram, as GPT-3's decontamination (Brown et al. 2020, appendix C)."""


@dataclass(frozen=True, slots=True)
class EvalGrams:
    """The distinct N-gram fingerprints of the evaluation items, each with the items holding it.

    Attributes
    ----------
    ids
        The items' ids, in input order.
    benchmark
        Per item, the evaluation input it comes from (its index).
    sizes
        Per item, its distinct N-grams (0: fewer than N words, never matched).
    grams
        The distinct fingerprints of all items, ascending.
    bounds
        ``items[bounds[g]:bounds[g + 1]]`` hold gram ``g``.
    items
        The items of each gram, ascending within a gram.
    """

    ids: list[str]
    benchmark: I64Array
    sizes: I64Array
    grams: U64Array
    bounds: I64Array
    items: I64Array

    @classmethod
    def of(cls, ids: list[str], benchmark: I64Array, texts: list[str], ngram: int) -> EvalGrams:
        """The grams of ``texts`` (their ids, and the input each comes from)."""
        sets = Shingler(_shingle(ngram)).shingle_sets(texts)
        owner = np.repeat(np.arange(len(texts), dtype=np.int64), sets.sizes())
        order = np.lexsort((owner, sets.hashes))
        hashes, owner = sets.hashes[order], owner[order]
        first = np.r_[True, hashes[1:] != hashes[:-1]] if hashes.shape[0] else np.empty(0, bool)
        starts = np.flatnonzero(first)
        return cls(
            ids=ids,
            benchmark=benchmark,
            sizes=sets.sizes(),
            grams=hashes[starts],
            bounds=np.r_[starts, hashes.shape[0]].astype(np.int64),
            items=owner,
        )

    def lookup(self, fingerprints: U64Array) -> I64Array:
        """Each fingerprint's gram (its place in :attr:`grams`), or -1 where no item has it."""
        at = np.searchsorted(self.grams, fingerprints)
        found: I64Array = np.full(fingerprints.shape[0], -1, dtype=np.int64)
        inside = np.flatnonzero(at < self.grams.shape[0])
        equal = self.grams[at[inside]] == fingerprints[inside]
        found[inside[equal]] = at[inside[equal]]
        return found

    def items_of(self, gram: int) -> I64Array:
        """The items holding gram ``gram`` (a place in :attr:`grams`)."""
        return self.items[self.bounds[gram] : self.bounds[gram + 1]]


@dataclass(frozen=True, slots=True)
class Overlap:
    """What one training document shares with one evaluation item."""

    item: int
    shared_ngrams: int
    spans: list[tuple[int, int]]


@dataclass(slots=True)
class ContaminationCounts:
    """What a scan counted, per evaluation item and in all."""

    items: int = 0
    bad_records_skipped: int = 0
    pairs: int = 0
    removed: int = 0
    contaminated_items: set[int] = field(default_factory=set)


def document_overlaps(
    text: str, grams: EvalGrams, ngram: int, min_share: float | None
) -> list[Overlap]:
    """What ``text`` (a training document as written) shares with each item it contaminates.

    An item is contaminated by one shared N-gram, or with ``min_share`` by that share of its
    distinct N-grams at least. Spans are the original characters of the shared N-grams,
    overlapping ones merged; items in evaluation order.
    """
    keys, starts, ends = shingle_spans(text, SketchSpec(shingle=_shingle(ngram)))
    shared: dict[int, set[int]] = {}
    spans: dict[int, list[tuple[int, int]]] = {}
    found_grams = grams.lookup(keys)
    for position in np.flatnonzero(found_grams >= 0).tolist():
        key = int(keys[position])
        for item in grams.items_of(int(found_grams[position])).tolist():
            shared.setdefault(item, set()).add(key)
            spans.setdefault(item, []).append((int(starts[position]), int(ends[position])))
    found = []
    for item in sorted(shared):
        count = len(shared[item])
        if min_share is not None and count < min_share * int(grams.sizes[item]):
            continue
        found.append(Overlap(item, count, merged_spans(spans[item])))
    return found


def _shingle(ngram: int) -> ShingleSpec:
    if not isinstance(ngram, int) or isinstance(ngram, bool) or not 1 <= ngram <= 64:
        raise ParameterError(f"--ngram must be an int in [1, 64]; got {ngram!r}.")
    return ShingleSpec(unit="word", k=ngram)


def contamination_files(
    train: Sequence[Path | str],
    against: Sequence[Path | str],
    output: Path | str,
    *,
    ngram: int = DEFAULT_NGRAM,
    min_share: float | None = None,
    read: ReadSpec | None = None,
    overwrite: bool = False,
    show_progress: bool = False,
) -> dict[str, Any]:
    """``neardup contamination``: the training documents sharing N-grams with ``against``.

    Writes ``contaminated.jsonl``, the kept training corpus and ``summary.json`` in
    ``output`` (see the module); returns the summary. ``read`` says how both sides are read
    (the text and id fields, bad records).
    """
    shingle = _shingle(ngram)
    if min_share is not None and not 0.0 < min_share <= 1.0:
        raise ParameterError(f"--min-share must be a float in (0, 1]; got {min_share!r}.")
    if not against:
        raise ParameterError("--against: give the evaluation set(s) to look for")
    read = read if read is not None else ReadSpec()
    started = time.perf_counter()
    inputs = [*map(Path, train), *map(Path, against)]
    with AtomicDirectory(
        output, kind="contamination", overwrite=overwrite, inputs=inputs
    ) as directory:
        grams, eval_bad = _read_eval(against, ngram, read)
        eval_read = time.perf_counter()
        sources = open_sources(train, read)
        counts = ContaminationCounts()
        keep: list[BoolArray] = []
        total = sum(source.size for source in sources)
        with (
            (directory / "contaminated.jsonl").open("w", encoding="utf-8") as out,
            Progress("scan", total, enabled=show_progress) as bar,
        ):
            for batch in all_batches(sources, read.batch_bytes):
                keep.append(_scan(batch, grams, shingle, min_share, out, counts))
                bar(batch.position)
                crash_point("scanned-batch")
        counts.bad_records_skipped = sum(source.num_bad for source in sources)
        scanned = time.perf_counter()
        kept = np.concatenate(keep) if keep else np.empty(0, dtype=bool)
        kept_path = write_kept(sources, kept, directory, batch_bytes=read.batch_bytes)
        done = time.perf_counter()
        summary = RunRecord(
            command="contamination",
            inputs=tuple(map(str, inputs)),
            outputs={
                "contaminated": "contaminated.jsonl",
                "kept": kept_path.name,
                "summary": "summary.json",
            },
            params={
                "ngram": ngram,
                "min_share": min_share,
                "against": [str(p) for p in against],
                "shingle": shingle.to_dict(),
                "normalize": NormalizeSpec().to_dict(),
                "read": read.to_dict(),
            },
            counts={
                "items": counts.items,
                "bad_records_skipped": counts.bad_records_skipped,
                "eval_items": len(grams.ids),
                "eval_bad_records_skipped": eval_bad,
                "eval_items_too_short": int(np.count_nonzero(grams.sizes == 0)),
                "contaminated_pairs": counts.pairs,
                "contaminated_items": len(counts.contaminated_items),
                "removed": counts.removed,
                "kept": counts.items - counts.removed,
            },
            timings_s=stage_timings(
                {
                    "read_eval": eval_read - started,
                    "scan": scanned - eval_read,
                    "write": done - scanned,
                }
            ),
            details={"benchmarks": _benchmarks(against, grams, counts)},
        ).to_dict()
        write_json(directory / "summary.json", summary)
    return summary


def _read_eval(paths: Sequence[Path | str], ngram: int, read: ReadSpec) -> tuple[EvalGrams, int]:
    """The evaluation items of ``paths`` with their N-grams, and the bad records skipped.

    Each file is read in its own format: evaluation sets write no corpus that must share one.
    """
    ids: list[str] = []
    texts: list[str] = []
    benchmark: list[int] = []
    bad = 0
    for number, path in enumerate(paths):
        (source,) = open_sources([path], read)
        for batch in source.batches(32 << 20):
            for item_id, text in batch.records():
                ids.append(item_id)
                texts.append(text)
            benchmark.extend([number] * batch.num_docs)
        bad += source.num_bad
    return EvalGrams.of(ids, np.array(benchmark, dtype=np.int64), texts, ngram), bad


def _scan(
    batch: RecordBatch,
    grams: EvalGrams,
    shingle: ShingleSpec,
    min_share: float | None,
    out: Any,
    counts: ContaminationCounts,
) -> BoolArray:
    """Look one batch of training documents up; write its contaminated pairs; what is kept."""
    normalized = normalize_bytes(batch.texts, NormalizeSpec())
    sets = Shingler(shingle).shingle_sets(normalized)
    hit = grams.lookup(sets.hashes) >= 0
    owner = np.repeat(np.arange(batch.num_docs), sets.sizes())
    suspects = np.unique(owner[hit])
    keep = np.ones(batch.num_docs, dtype=bool)
    for doc in suspects.tolist():
        text = bytes(batch.texts.data[batch.texts.offsets[doc] : batch.texts.offsets[doc + 1]])
        found = document_overlaps(
            text.decode("utf-8", "surrogatepass"), grams, shingle.k, min_share
        )
        for overlap in found:
            record = {
                "eval_id": grams.ids[overlap.item],
                "train_id": batch.ids[doc],
                "shared_ngrams": overlap.shared_ngrams,
                "spans": [list(span) for span in overlap.spans],
            }
            out.write(record_line(record))
            counts.contaminated_items.add(overlap.item)
        if found:
            keep[doc] = False
            counts.pairs += len(found)
            counts.removed += 1
    counts.items += batch.num_docs
    return keep


def _benchmarks(
    against: Sequence[Path | str], grams: EvalGrams, counts: ContaminationCounts
) -> list[dict[str, Any]]:
    """Per evaluation input: its items, those too short to match, those contaminated."""
    hit = np.zeros(len(grams.ids), dtype=bool)
    hit[list(counts.contaminated_items)] = True
    return [
        {
            "input": str(path),
            "items": int(np.count_nonzero(grams.benchmark == number)),
            "too_short": int(np.count_nonzero((grams.benchmark == number) & (grams.sizes == 0))),
            "contaminated_items": int(np.count_nonzero((grams.benchmark == number) & hit)),
        }
        for number, path in enumerate(against)
    ]
