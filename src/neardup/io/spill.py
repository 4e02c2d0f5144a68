"""Growing ``uint64`` matrices kept in memory or spilled to a file, for signature rows.

The batch job appends each batch's signature rows and reads them back (memory-mapped) only for
the candidate pairs it verifies, so its memory is bounded by the batch rather than the corpus.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

from neardup._types import U64Array

__all__ = ["FileMatrix", "MatrixSink", "MemoryMatrix"]


class MatrixSink(Protocol):
    """Rows of a fixed width appended batch by batch, then read as one matrix."""

    def append(self, rows: U64Array) -> None:
        """Append a ``(n, width)`` block of rows."""

    def finish(self) -> U64Array:
        """All rows appended so far, as one ``(num_rows, width)`` array."""


class MemoryMatrix:
    """A :class:`MatrixSink` in RAM."""

    def __init__(self, width: int) -> None:
        self.width = width
        self._parts: list[U64Array] = []

    def append(self, rows: U64Array) -> None:
        """Append a block of rows."""
        self._parts.append(rows)

    def finish(self) -> U64Array:
        """The rows as one array."""
        if not self._parts:
            return np.empty((0, self.width), dtype=np.uint64)
        return np.concatenate(self._parts)


class FileMatrix:
    """A :class:`MatrixSink` in a raw little-endian ``uint64`` file, read back memory-mapped.

    A context manager: leaving it closes the file, also when the job failed.
    """

    def __init__(self, path: Path, width: int) -> None:
        self.path = path
        self.width = width
        self._num_rows = 0
        self._file = path.open("wb")

    def __enter__(self) -> FileMatrix:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._file.close()

    def append(self, rows: U64Array) -> None:
        """Append a block of rows to the file."""
        self._file.write(np.ascontiguousarray(rows, dtype="<u8").tobytes())
        self._num_rows += rows.shape[0]

    def finish(self) -> U64Array:
        """The rows, memory-mapped (an empty array when there are none)."""
        self._file.close()
        if self._num_rows == 0:
            return np.empty((0, self.width), dtype=np.uint64)
        return np.memmap(self.path, dtype="<u8", mode="r", shape=(self._num_rows, self.width))
