"""Shingle sets made once per run: the first time a document is verified, then read back.

Verification takes candidate pairs in ``(first, second)`` order, a memory-bounded chunk at a
time; on dense corpora a document is in many pairs spread over many chunks, and making its
shingle set again in each (reading, parsing, normalising and shingling its text) was most of
the cost. :class:`ShingleSetStore` makes each document's set once and appends it to a file;
later chunks read it back (:func:`~neardup.io.mapped.read_spans`). Only the place of each set
stays in memory (12 bytes a document).

File layout: the sets' fingerprints as raw little-endian ``uint64``, one document after
another in the order they were first asked for, no header (work data, deleted when the store
closes; an anonymous temporary file when no directory is given).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

import numpy as np
from numpy.typing import NDArray

from neardup._types import I64Array
from neardup.io.mapped import read_spans
from neardup.text.shingle import ShingleSets

__all__ = ["ShingleSetStore"]


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
    ) -> None:
        self._make = make
        self._start = np.full(num_docs, -1, dtype=np.int64)
        self._size = np.full(num_docs, -1, dtype=np.int32)
        self._end = 0
        self._path = directory / "shingle-sets.u64" if directory is not None else None
        self._file: BinaryIO
        if self._path is not None:
            self._file = self._path.open("w+b")
        else:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())

    def make(self, docs: I64Array) -> None:
        """Make and keep the sets of those of ``docs`` (distinct) not made yet; read none back."""
        new = docs[self._start[docs] < 0]
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
        order = np.argsort(start)  # the sets in the order they lie in the file
        read_spans(
            self._file,
            start[order] * 8,
            sizes[order] * 8,
            hashes.view(np.uint8),
            offsets[:-1][order] * 8,
        )
        return ShingleSets(hashes=hashes, offsets=offsets)

    def _append(self, docs: I64Array, made: ShingleSets) -> None:
        """Write the sets just made for ``docs`` after those kept, and note where they are."""
        first = int(made.offsets[0])
        hashes = np.ascontiguousarray(made.hashes[first : made.offsets[-1]], dtype=np.uint64)
        self._file.seek(self._end * 8)
        self._file.write(hashes.data)
        self._file.flush()
        self._start[docs] = self._end + made.offsets[:-1] - first
        self._size[docs] = made.sizes()
        self._end += hashes.shape[0]

    def close(self) -> None:
        """Release the file, and remove it from its directory: verification is over."""
        self._file.close()
        if self._path is not None:
            self._path.unlink(missing_ok=True)

    def __enter__(self) -> ShingleSetStore:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
