"""Exact repeated substrings: every run of at least N tokens seen earlier, found by suffix arrays.

Lee et al. (2022) remove from a training corpus every substring of at least 50 tokens that
occurs more than once, keeping its first occurrence ("ExactSubstr"); :func:`substrings_files`
does that over raw word tokens (:mod:`neardup._kernels.substrings`: exact, case and all).
A token ``t`` is removed when it lies in a window ``[q, q + N)`` of ``N`` tokens of one document
whose tokens occurred, in that order, somewhere before ``q`` (an earlier document, or earlier
in the same one). That is exactly the union of the later occurrences of every repeated
substring of ``N`` or more tokens.

Three passes. The first reads the corpus in batches, numbers each distinct token (a hash table
of 64-bit token keys, at most 24 bytes a distinct token) and writes the token numbers to the
work directory in shards of whole documents, each document followed by a separator. The
second builds, for each pair of shards, the suffix array of their concatenation with
``pydivsufsort`` (libdivsufsort) and its LCP array (Kasai's algorithm): suffixes sharing their
first ``N`` tokens are adjacent, and every one but the earliest starts a later window. Two shards
hold at most the working memory's worth of tokens (:data:`BYTES_PER_TOKEN` each), so a corpus of
``k`` shards builds ``k (k - 1) / 2`` suffix arrays, one shard's ``1``: each later window is
found in the pair of its shard and its earlier occurrence's. The third writes the corpus
without the removed tokens and ``repeats.jsonl``.

With ``against`` corpora, their tokens come first and only the windows of the corpus that occur
in them are removed (repeats within the corpus itself stay).

Output directory (written atomically): ``repeats.jsonl``, one line per document that lost
something, ``{"id", "spans": [[start, end], ...]}`` (character offsets into the text field as
read: each removed run of tokens with the whitespace after it, or, for a run that ends the
text, before it); the kept corpus (every record, its text without the spans, other fields
unchanged); ``summary.json``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from neardup._faults import crash_point
from neardup._kernels import substrings as kernels
from neardup._progress import Progress
from neardup._types import Batch, BoolArray, I64Array, U64Array
from neardup.errors import InputError, MissingExtraError, ParameterError
from neardup.explain import without_spans
from neardup.hashing.numbering import KeyNumbers
from neardup.io.kept import Edits, write_kept
from neardup.io.output import AtomicDirectory
from neardup.io.readers import Source, all_batches, open_sources
from neardup.io.records import Ids
from neardup.io.results import record_line, write_json
from neardup.params import ReadSpec
from neardup.record import RunRecord, stage_timings
from neardup.text.normalize import codepoint_classes
from neardup.text.spans import pack_strings

__all__ = ["DEFAULT_MIN_TOKENS", "raw_token_spans", "substrings_files"]

DEFAULT_MIN_TOKENS = 50
"""Tokens a repeated substring needs at least, as Lee et al. (2022) chose."""

BYTES_PER_TOKEN = 32
"""Memory a token of a shard pair takes while its suffix array is built: its number (4 bytes),
libdivsufsort's big-endian copy and byte-level suffix array (4 + 16: libdivsufsort sorts
bytes), then the suffix, rank, LCP and tokens-left arrays (4 each) and a mark."""


def _default_memory() -> int:
    """A quarter of the machine's memory, at most 4 GiB."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return int(min(total // 4, 4 << 30))


def raw_token_spans(text: str) -> tuple[I64Array, I64Array]:
    """The character offsets ``(starts, ends)`` of the raw word tokens of ``text``.

    Examples
    --------
    >>> starts, ends = raw_token_spans("Hi, 漢字 ok")
    >>> [(int(a), int(b)) for a, b in zip(starts, ends)]
    [(0, 3), (4, 5), (5, 6), (7, 9)]
    """
    _, _, starts, ends = _raw_tokens(Batch(*pack_strings([text])), with_places=True)
    return starts, ends


def _raw_tokens(
    texts: Batch, *, with_places: bool = False
) -> tuple[U64Array, I64Array, I64Array, I64Array]:
    """The keys of every raw token of a batch and each text's number of tokens.

    With ``with_places``, each token's character offsets from its text's start too (else two
    empty arrays).
    """
    counts = np.empty(texts.num_docs, dtype=np.int64)
    args = (texts.data, texts.offsets, codepoint_classes(), counts)
    empty = np.empty(0, dtype=np.int64)
    num = kernels.raw_tokens(*args, np.empty(0, dtype=np.uint64), empty, empty)
    keys = np.empty(num, dtype=np.uint64)
    starts = np.empty(num if with_places else 0, dtype=np.int64)
    ends = np.empty_like(starts)
    kernels.raw_tokens(*args, keys, starts, ends)
    return keys, counts, starts, ends


@dataclass
class _Shard:
    """Whole documents' token numbers in a work file, each document followed by a separator."""

    path: Path
    counts: I64Array
    """Tokens per document."""
    is_against: bool

    @property
    def size(self) -> int:
        """Entries in the file: tokens and separators."""
        return int(self.counts.sum()) + int(self.counts.shape[0])

    def read(self) -> NDArray[np.uint32]:
        return np.fromfile(self.path, dtype=np.uint32)


@dataclass
class _ShardWriter:
    """Cuts the token stream into shards of at most ``limit`` entries (whole documents)."""

    work: Path
    limit: int
    shards: list[_Shard] = field(default_factory=list)
    pending: list[NDArray[np.uint32]] = field(default_factory=list)
    pending_counts: list[I64Array] = field(default_factory=list)
    pending_size: int = 0

    def add(self, numbers: NDArray[np.uint32], counts: I64Array, is_against: bool) -> None:
        """Append a batch's documents (their token numbers, and tokens per document)."""
        ends = np.cumsum(counts)
        done = 0
        while done < counts.shape[0]:
            room = self.limit - self.pending_size
            sizes = np.cumsum(counts[done:] + 1)
            take = int(np.searchsorted(sizes, room, side="right"))
            if take == 0 and self.pending_size:
                self.flush(is_against)
                continue
            take = max(take, 1)  # a document longer than a shard is a shard of its own
            lo = int(ends[done - 1]) if done else 0
            hi = int(ends[done + take - 1])
            part = counts[done : done + take]
            with_separators = np.zeros(hi - lo + take, dtype=np.uint32)
            places = np.arange(hi - lo) + np.repeat(np.arange(take), part)
            with_separators[places] = numbers[lo:hi]
            self.pending.append(with_separators)
            self.pending_counts.append(part)
            self.pending_size += with_separators.shape[0]
            done += take
            if self.pending_size >= self.limit:
                self.flush(is_against)

    def flush(self, is_against: bool) -> None:
        """Write the pending documents as one shard."""
        if not self.pending:
            return
        path = self.work / f"shard-{len(self.shards):05d}.u32"
        np.concatenate(self.pending).tofile(path)
        self.shards.append(_Shard(path, np.concatenate(self.pending_counts), is_against))
        self.pending, self.pending_counts, self.pending_size = [], [], 0


def _check_suffix_sorter() -> None:
    """Refuse to start without pydivsufsort, before any input is read."""
    try:
        import pydivsufsort  # noqa: F401 - imported to see that it is there
    except ImportError as exc:
        raise MissingExtraError(
            "neardup substrings needs pydivsufsort: pip install 'neardup[substrings]'"
        ) from exc


def _later_windows(
    first: _Shard, second: _Shard | None, size: int, across_only: bool
) -> tuple[BoolArray, BoolArray]:
    """The window starts of ``first`` (and ``second``) that occurred earlier, per shard."""
    from pydivsufsort import divsufsort  # present: substrings_files checked it first

    parts = [first] if second is None else [first, second]
    seq = np.concatenate([p.read() for p in parts])
    counts = np.concatenate([p.counts for p in parts])
    big_endian = seq.astype(">u4")
    byte_sa = divsufsort(big_endian.view(np.uint8))  # libdivsufsort sorts bytes
    del big_endian
    num = kernels.aligned_suffixes(byte_sa, 4)
    suffixes = byte_sa[:num].copy()
    del byte_sa
    left = np.empty(num, dtype=np.int32)
    kernels.tokens_left(counts, left)
    lcp = np.empty(num, dtype=suffixes.dtype)  # int64 where libdivsufsort needed it
    kernels.lcp_array(seq, suffixes, np.empty(num, dtype=suffixes.dtype), lcp)
    later = np.zeros(seq.shape[0], dtype=bool)
    kernels.later_windows(suffixes, lcp, left, size, first.size, across_only, later)
    return later[: first.size], later[first.size :]


def _removed_tokens(later: BoolArray, size: int, counts: I64Array) -> BoolArray:
    """Token marks (separators left out) of the windows ``[q, q + size)`` started in ``later``."""
    marks = np.empty(int(counts.sum()), dtype=bool)
    kernels.removed_tokens(later, size, counts, marks)
    return marks


@dataclass
class _Removal:
    """Which tokens of the corpus's documents go, and the output's bookkeeping."""

    marks: BoolArray
    bounds: I64Array
    """``marks[bounds[d]:bounds[d + 1]]``: document ``d``'s tokens."""
    ids: Ids
    out: Any
    chars_removed: int = 0
    documents_changed: int = 0

    def __call__(self, doc: int, text: str) -> str:
        marks = self.marks[self.bounds[doc] : self.bounds[doc + 1]]
        starts, ends = raw_token_spans(text)
        if starts.shape[0] != marks.shape[0]:
            raise InputError(f"record {self.ids[doc]!r} changed since it was first read; run again")
        spans = _spans(marks, starts, ends, len(text))
        self.documents_changed += 1
        self.out.write(record_line({"id": self.ids[doc], "spans": spans}))
        self.chars_removed += sum(end - start for start, end in spans)
        return without_spans(text, spans)


def _spans(marks: BoolArray, starts: I64Array, ends: I64Array, length: int) -> list[list[int]]:
    """The character spans of the runs of marked tokens.

    Each run takes the whitespace after it; a run that ends the text takes the whitespace
    before it instead (from the end of the token before, if any).
    """
    edges = np.flatnonzero(np.diff(np.r_[False, marks, False].astype(np.int8)))
    spans = []
    for a, b in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
        if b < starts.shape[0]:
            spans.append([int(starts[a]), int(starts[b])])
        else:
            spans.append([int(ends[a - 1]) if a else int(starts[a]), length])
    return spans


def substrings_files(
    inputs: Sequence[Path | str],
    output: Path | str,
    *,
    min_tokens: int = DEFAULT_MIN_TOKENS,
    against: Sequence[Path | str] = (),
    read: ReadSpec | None = None,
    memory_bytes: int | None = None,
    overwrite: bool = False,
    show_progress: bool = False,
) -> dict[str, Any]:
    """``neardup substrings``: remove every run of ``min_tokens`` tokens seen earlier.

    Writes ``repeats.jsonl``, the kept corpus and ``summary.json`` in ``output`` (see the
    module); returns the summary. ``against``: corpora whose substrings are looked for instead
    (read first, never written). ``memory_bytes``: the working memory two shards' suffix arrays
    may take (default a quarter of the machine, at most 4 GiB).
    """
    if isinstance(min_tokens, bool) or not isinstance(min_tokens, int) or min_tokens < 1:
        raise ParameterError(f"--min-tokens must be an int >= 1; got {min_tokens!r}.")
    _check_suffix_sorter()
    read = read if read is not None else ReadSpec()
    memory = memory_bytes if memory_bytes is not None else _default_memory()
    if memory < 1 << 10:
        raise ParameterError(f"memory_bytes must be at least 1,024 (1 KiB); got {memory:,}.")
    started = time.perf_counter()
    sources = open_sources(inputs, read)
    other = open_sources(against, read) if against else []
    paths = [*(s.path for s in sources), *(s.path for s in other)]
    with AtomicDirectory(output, kind="substrings", overwrite=overwrite, inputs=paths) as directory:
        work = Path(tempfile.mkdtemp(prefix=".work-", dir=directory))
        try:
            shards, ids = _tokenize(sources, other, work, memory, read.batch_bytes, show_progress)
            tokenized = time.perf_counter()
            crash_point("tokenized")
            marks, arrays = _find(shards, min_tokens, bool(other), show_progress)
            found = time.perf_counter()
        finally:
            shutil.rmtree(work, ignore_errors=True)
        counts = np.concatenate([s.counts for s in shards if not s.is_against])
        bounds = np.r_[0, np.cumsum(counts)].astype(np.int64)
        with (directory / "repeats.jsonl").open("w", encoding="utf-8") as out:
            removal = _Removal(marks, bounds, ids, out)
            kept_path = write_kept(
                sources, np.ones(counts.shape[0], dtype=bool), directory,
                batch_bytes=read.batch_bytes, edits=Edits.of_marks(marks, bounds, removal),
            )  # fmt: skip
        done = time.perf_counter()
        summary = RunRecord(
            command="substrings",
            inputs=tuple(map(str, paths)),
            outputs={"repeats": "repeats.jsonl", "kept": kept_path.name, "summary": "summary.json"},
            params={
                "min_tokens": min_tokens,
                "against": [str(p) for p in against],
                "tokens": "raw words (whitespace-separated, punctuation kept, CJK characters "
                "one by one; exact, no normalisation)",
                "memory_bytes": memory,
                "read": read.to_dict(),
            },
            counts={
                "items": int(counts.shape[0]),
                "bad_records_skipped": sum(s.num_bad for s in [*sources, *other]),
                "against_items": int(sum(s.counts.shape[0] for s in shards if s.is_against)),
                "tokens": int(marks.shape[0]),
                "tokens_removed": int(np.count_nonzero(marks)),
                "documents_changed": removal.documents_changed,
                "chars_removed": removal.chars_removed,
                "shards": len(shards),
                "suffix_arrays": arrays,
            },
            timings_s=stage_timings(
                {
                    "tokenize": tokenized - started,
                    "suffix_arrays": found - tokenized,
                    "write": done - found,
                }
            ),
        ).to_dict()
        write_json(directory / "summary.json", summary)
    return summary


def _tokenize(
    sources: Sequence[Source],
    other: Sequence[Source],
    work: Path,
    memory: int,
    batch_bytes: int,
    show_progress: bool,
) -> tuple[list[_Shard], Ids]:
    """Number every token into shards (the ``against`` corpora first); the corpus's ids."""
    writer = _ShardWriter(work, max(memory // (2 * BYTES_PER_TOKEN), 1))
    vocabulary = KeyNumbers()
    ids: list[Ids] = []
    total = sum(s.size for s in [*sources, *other])
    with Progress("tokens", total, enabled=show_progress) as bar:
        done = 0
        for group, is_against in ((other, True), (sources, False)):
            for batch in all_batches(group, batch_bytes):
                keys, counts, _, _ = _raw_tokens(batch.texts)
                writer.add(vocabulary.number(keys), counts, is_against)
                if not is_against:
                    ids.append(batch.ids)
                bar(done + batch.position)
            writer.flush(is_against)
            done += sum(s.size for s in group)
    if not ids:
        raise ParameterError("no usable records in the input")
    return writer.shards, Ids.concat(ids)


def _find(
    shards: list[_Shard], size: int, across_only: bool, show_progress: bool
) -> tuple[BoolArray, int]:
    """The corpus's token marks, and the suffix arrays built."""
    later = [np.zeros(s.size, dtype=bool) for s in shards]
    pairs = _pairs(shards, across_only)
    with Progress("suffix arrays", len(pairs), unit="arrays", enabled=show_progress) as bar:
        for done, (i, j) in enumerate(pairs, start=1):
            first, second = _later_windows(
                shards[i], None if i == j else shards[j], size, across_only
            )
            later[i] |= first
            if i != j:
                later[j] |= second
            bar(done)
    marks = [
        _removed_tokens(windows, size, shard.counts)
        for windows, shard in zip(later, shards, strict=True)
        if not shard.is_against
    ]
    return (np.concatenate(marks) if marks else np.empty(0, dtype=bool)), len(pairs)


def _pairs(shards: list[_Shard], across_only: bool) -> list[tuple[int, int]]:
    """The shard pairs whose suffix arrays find every later window (``(i, i)``: one alone)."""
    if across_only:
        return [
            (i, j)
            for j, b in enumerate(shards)
            if not b.is_against
            for i, a in enumerate(shards)
            if a.is_against
        ]
    if len(shards) == 1:
        return [(0, 0)]
    return [(i, j) for j in range(len(shards)) for i in range(j)]
