"""Lookup keys kept column by column, in memory or spilled to files, read one column at a time.

The first pass appends each batch's key rows (one LSH band key per column, or the scheme's
other keys); candidate generation then reads one column (one band) at a time, so its memory is
one ``uint64`` per document, whatever the number of bands. In a directory each column is a raw
little-endian ``uint64`` file ``keys-<column>.u64``, deleted with the run's work directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import numpy as np

from neardup._types import U64Array

__all__ = ["KeyColumns"]


class KeyColumns:
    """``uint64`` rows of a fixed width, appended in blocks, read by column.

    Parameters
    ----------
    directory
        Where the column files go; ``None`` keeps the blocks in memory.

    The width (keys per row) is set by the first block appended.

    Examples
    --------
    >>> keys = KeyColumns()
    >>> keys.append(np.array([[1, 2], [3, 4]], dtype=np.uint64))
    >>> keys.append(np.array([[5, 6]], dtype=np.uint64))
    >>> keys.column(1).tolist(), keys.num_rows
    ([2, 4, 6], 3)
    """

    def __init__(self, directory: Path | None = None) -> None:
        self.width = 0
        self.directory = directory
        self.num_rows = 0
        self._blocks: list[U64Array] = []
        self._files: list[BinaryIO] = []
        """The column files while rows are appended (closed when a column is read)."""

    def _path(self, column: int) -> Path:
        assert self.directory is not None
        return self.directory / f"keys-{column}.u64"

    def append(self, rows: U64Array) -> None:
        """Append a ``(n, width)`` block of rows."""
        if self.width == 0:
            self.width = rows.shape[1]
        if rows.shape[1] != self.width:
            raise ValueError(f"KeyColumns holds rows of {self.width} keys; got {rows.shape[1]}.")
        self.num_rows += rows.shape[0]
        if self.directory is None:
            self._blocks.append(rows)
            return
        if not self._files:
            self._files = [self._path(column).open("ab") for column in range(self.width)]
        for column, f in enumerate(self._files):
            f.write(np.ascontiguousarray(rows[:, column], dtype="<u8").data)

    def column(self, column: int) -> U64Array:
        """All keys of one column, in row order."""
        if self.directory is None:
            if not self._blocks:
                return np.empty(0, dtype=np.uint64)
            return np.concatenate([block[:, column] for block in self._blocks])
        if self.num_rows == 0:
            return np.empty(0, dtype=np.uint64)
        for f in self._files:
            f.close()
        self._files = []
        return np.fromfile(self._path(column), dtype="<u8").astype(np.uint64, copy=False)

    def matrix(self) -> U64Array:
        """All rows as one ``(num_rows, width)`` matrix (for schemes that need every column)."""
        if self.directory is None:
            if not self._blocks:
                return np.empty((0, self.width), dtype=np.uint64)
            return np.concatenate(self._blocks)
        out = np.empty((self.num_rows, self.width), dtype=np.uint64)
        for column in range(self.width):
            out[:, column] = self.column(column)
        return out
