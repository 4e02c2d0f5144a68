"""The text arena: every document's normalised text, kept once, read back by document number.

The first pass appends each batch's normalised UTF-8 texts; verification (and the index pass of
``--against``) later takes the texts of just the documents it needs, so the input is never parsed
twice. The arena costs disk, not memory: it is read through a memory map whose pages are
released after each :meth:`TextArena.take`, so the resident memory is bounded by one take. Only
the offsets (8 bytes per document) stay in memory.

File layout: the texts back to back, no header; the offsets live in memory only (the file is
work data, deleted with the run's work directory).
"""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import BinaryIO

import numpy as np

from neardup._types import Batch, I64Array
from neardup.io.records import RecordBatch
from neardup.text.spans import take

__all__ = ["TextArena"]


class TextArena:
    """Normalised texts appended batch by batch to ``path``, then taken by document number.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> arena = TextArena(pathlib.Path(tempfile.mkdtemp()) / "texts.utf8")
    >>> arena.append(None, Batch(np.frombuffer(b"abcde", np.uint8), np.array([0, 2, 5])))
    >>> arena.finish()
    >>> bytes(arena.take(np.array([1])).data)
    b'cde'
    >>> arena.close()
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._sizes: list[I64Array] = []
        self._file: BinaryIO | None = path.open("wb")
        self._map: mmap.mmap | None = None
        self.offsets: I64Array = np.zeros(1, dtype=np.int64)

    def append(self, records: RecordBatch | None, batch: Batch) -> None:
        """Add a batch's normalised texts after those already held (``records`` unused)."""
        assert self._file is not None, "append after finish"
        self._sizes.append(np.diff(batch.offsets))
        self._file.write(batch.data[batch.offsets[0] : batch.offsets[-1]].data)

    def finish(self) -> None:
        """End appending; from now on :meth:`take` works."""
        sizes = np.concatenate(self._sizes) if self._sizes else np.empty(0, dtype=np.int64)
        self._sizes = []
        self.offsets = np.zeros(sizes.shape[0] + 1, dtype=np.int64)
        np.cumsum(sizes, out=self.offsets[1:])
        if self._file is not None:
            self._file.close()
            self._file = None
        self._map_file()

    @classmethod
    def of_file(cls, path: Path, offsets: I64Array) -> TextArena:
        """The finished arena a run left in ``path`` (its :attr:`offsets` given): a checkpoint's."""
        arena = cls.__new__(cls)
        arena.path, arena.offsets = path, offsets
        arena._sizes, arena._file, arena._map = [], None, None
        arena._map_file()
        return arena

    def _map_file(self) -> None:
        if self.offsets[-1] > 0:
            with self.path.open("rb") as f:
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)

    @property
    def num_docs(self) -> int:
        """Documents held."""
        return int(self.offsets.shape[0]) - 1

    def sizes(self) -> I64Array:
        """Bytes of each document's text."""
        return np.diff(self.offsets)

    def take(self, docs: I64Array) -> Batch:
        """The texts of ``docs`` (any order, repeats allowed), packed into one batch."""
        if self._map is None:  # every text is empty
            return take(Batch(np.empty(0, dtype=np.uint8), self.offsets), docs)
        data = np.frombuffer(self._map, dtype=np.uint8)
        try:
            return take(Batch(data, self.offsets), docs)
        finally:
            del data
            self._map.madvise(mmap.MADV_DONTNEED)

    def close(self) -> None:
        """Release the file and the map (the file itself stays; its directory owns it)."""
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._map is not None:
            self._map.close()
            self._map = None
