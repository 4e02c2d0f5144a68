"""Shingle sets made once per run, kept in a file of the work directory and read back.

Verification takes candidate pairs in ``(first, second)`` order, a memory-bounded chunk at a
time; on dense corpora a document is in many pairs spread over many chunks, and making its
shingle set again in each (reading, parsing, normalising and shingling its text) was most of
the cost. :class:`ShingleSetStore` makes each document's set once and appends it to a file;
later chunks read it back (:func:`~neardup.io.mapped.read_spans`). Only the place of each set
stays in memory (12 bytes a document).

Where near copies are dense (the batch before showed it:
``neardup.pipeline.sketching.DENSE_SHARE``), short documents' sets are kept earlier still, as
the first pass sketches them
(:class:`SketchedSets`): the sketch has hashed their shingles already, so a set costs a sort
and 8 bytes a shingle on disk, where making it later costs a scattered read of the line,
parsing, normalising and shingling it again (dense 10M: verification 61.5 s to 37.7 s, the
first pass 19.0 s to 26.4 s). Where near copies are rare, most of those sets would never be
read, and none is kept. Long documents are left to verification: their sets cost as much disk
as their text, and few of them are verified.

File layout: the sets' fingerprints as raw little-endian ``uint64``, one document after
another (those kept while sketching, in document order, then those made in the order they were
first asked for), no header (work data, deleted when the store closes; an anonymous temporary
file when no directory is given).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

import numpy as np
from numpy.typing import NDArray

from neardup._types import BoolArray, I64Array
from neardup.hashing.packed import order_of
from neardup.io.mapped import read_spans
from neardup.text.shingle import ShingleSets

__all__ = ["KEPT_SETS_BYTES", "KEPT_TEXT_BYTES", "ShingleSetStore", "SketchedSets"]

SET_FILE = "shingle-sets.u64"
"""The sets' file in the work directory."""

KEPT_TEXT_BYTES = 4096
"""Normalised texts of at most this many bytes have their sets kept as they are sketched."""

KEPT_SETS_BYTES = 8 << 30
"""Sets kept while sketching, at most (about 22M documents of 45 words): beyond, the sets are
made when verification needs them, so that a sparse corpus of 100M short documents does not
write every document's set."""


class SketchedSets:
    """The sets kept as the documents are sketched, in document order (see the module).

    :meth:`chosen` says which of the next documents to keep, :meth:`append` takes them;
    :class:`ShingleSetStore` then carries on in the same file.

    Examples
    --------
    >>> from neardup.params import ShingleSpec
    >>> from neardup.text.shingle import Shingler
    >>> shingler = Shingler(ShingleSpec(unit="word", k=2))
    >>> kept = SketchedSets()
    >>> texts = ["a rose is a rose", "a long text " * 2000]
    >>> chosen = kept.chosen(np.array([len(t) for t in texts]))
    >>> kept.append(shingler.shingle_sets([t if c else "" for t, c in zip(texts, chosen)]), chosen)
    >>> chosen.tolist(), kept.sizes().tolist()
    ([True, False], [3, -1])
    >>> kept.close()
    """

    def __init__(self, directory: Path | None = None) -> None:
        self.path = directory / SET_FILE if directory is not None else None
        self.file: BinaryIO = (
            self.path.open("w+b") if self.path is not None else tempfile.TemporaryFile()  # noqa: SIM115
        )
        self.end = 0
        """Fingerprints written (the file's length in ``uint64``)."""
        self.keeping = True
        """Whether sets are kept at all now (the run decides as it learns the corpus)."""
        self._sizes: list[NDArray[np.int32]] = []

    def chosen(self, lengths: I64Array) -> BoolArray:
        """Which of the next documents, of normalised ``lengths`` in bytes, to keep the sets of.

        Those of at most :data:`KEPT_TEXT_BYTES` while :attr:`keeping`, until
        :data:`KEPT_SETS_BYTES` are kept.
        """
        if not self.keeping or self.end * 8 >= KEPT_SETS_BYTES:
            return np.zeros(lengths.shape[0], dtype=bool)
        return np.asarray(lengths <= KEPT_TEXT_BYTES)

    def append(self, sets: ShingleSets, kept: BoolArray) -> None:
        """Keep the sets of the next documents: ``sets`` of each, those not ``kept`` empty."""
        self.write(sets)
        self._sizes.append(np.where(kept, sets.sizes(), -1).astype(np.int32))

    def skip(self, count: int) -> None:
        """Keep no set of the next ``count`` documents."""
        self._sizes.append(np.full(count, -1, dtype=np.int32))

    def write(self, sets: ShingleSets) -> I64Array:
        """Write ``sets`` at the end of the file; where each one starts there."""
        first = int(sets.offsets[0])
        hashes = np.ascontiguousarray(sets.hashes[first : sets.offsets[-1]], dtype=np.uint64)
        self.file.seek(self.end * 8)
        self.file.write(hashes.data)
        starts = self.end + sets.offsets[:-1] - first
        self.end += hashes.shape[0]
        return starts

    def sizes(self) -> NDArray[np.int32]:
        """The size of each document's set, -1 where it was not kept.

        The sets lie one after another from the file's start, in document order.
        """
        self.file.flush()
        sizes = np.concatenate(self._sizes) if self._sizes else np.empty(0, dtype=np.int32)
        self._sizes = [sizes]
        return sizes

    def take_sizes(self) -> NDArray[np.int32]:
        """:meth:`sizes`, no longer held here (a store takes them over)."""
        sizes = self.sizes()
        self._sizes = []
        return sizes

    def close(self) -> None:
        """Release the file, and remove it (a store that carried on in it does both)."""
        self.file.close()
        if self.path is not None:
            self.path.unlink(missing_ok=True)


class ShingleSetStore:
    """The shingle sets of ``num_docs`` documents, each made by ``make`` once, then kept on disk.

    ``make(docs)`` returns the sets of ``docs`` (distinct document numbers) in that order.

    Examples
    --------
    >>> from neardup.params import ShingleSpec
    >>> from neardup.text.shingle import Shingler
    >>> texts = ["a rose is a rose", "a rose", "is a rose"]
    >>> shingler = Shingler(ShingleSpec(unit="word", k=2))
    >>> made = []
    >>> def make(docs):
    ...     made.extend(docs.tolist())
    ...     return shingler.shingle_sets([texts[d] for d in docs])
    >>> with ShingleSetStore(len(texts), make) as store:
    ...     sizes = store.sets(np.array([0, 2])).sizes().tolist()
    ...     again = store.sets(np.array([2, 1])).sizes().tolist()
    >>> sizes, again, made
    ([3, 2], [2, 1], [0, 2, 1])
    """

    def __init__(
        self,
        num_docs: int,
        make: Callable[[I64Array], ShingleSets],
        directory: Path | None = None,
        kept: SketchedSets | None = None,
    ) -> None:
        self._make = make
        self._start = np.full(num_docs, -1, dtype=np.int64)
        self._size = np.full(num_docs, -1, dtype=np.int32)
        if kept is None:
            kept = SketchedSets(directory)
        sizes = kept.take_sizes()
        self._size[: sizes.shape[0]] = sizes
        lengths = np.maximum(sizes, 0)
        np.cumsum(lengths, out=self._start[: sizes.shape[0]])
        self._start[: sizes.shape[0]] -= lengths
        self._kept = kept  # carried on in its file, closed with the store

    def make(self, docs: I64Array) -> None:
        """Make and keep the sets of those of ``docs`` (distinct) not made yet; read none back."""
        new = docs[self._size[docs] < 0]
        if new.shape[0]:
            self._append(new, self._make(new))

    @property
    def set_sizes(self) -> NDArray[np.int32]:
        """Shingles in each document's set, -1 where it is not made yet.

        The store's own array: read it, do not write it.
        """
        return self._size

    def sets(self, docs: I64Array) -> ShingleSets:
        """The shingle sets of ``docs`` (distinct), in their order; new ones made and kept."""
        self.make(docs)
        start = self._start[docs]
        sizes = self._size[docs].astype(np.int64)
        offsets = np.zeros(docs.shape[0] + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        hashes = np.empty(int(offsets[-1]), dtype=np.uint64)
        order = order_of(start)  # the sets in the order they lie in the file
        read_spans(
            self._kept.file,
            start[order] * 8,
            sizes[order] * 8,
            hashes.view(np.uint8),
            offsets[:-1][order] * 8,
        )
        return ShingleSets(hashes=hashes, offsets=offsets)

    def _append(self, docs: I64Array, made: ShingleSets) -> None:
        """Write the sets just made for ``docs`` after those kept, and note where they are."""
        self._start[docs] = self._kept.write(made)
        self._size[docs] = made.sizes()
        self._kept.file.flush()

    def close(self) -> None:
        """Release the file, and remove it from its directory: verification is over."""
        self._kept.close()

    def __enter__(self) -> ShingleSetStore:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
