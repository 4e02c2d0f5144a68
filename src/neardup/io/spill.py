"""Working data too large to hold whole: key columns and sorted runs of pairs, kept in files.

:class:`KeyColumns`: the first pass appends each batch's key rows (one LSH band key per column,
or the scheme's other keys); candidate generation then reads one column (one band) at a time, so
its memory is one ``uint64`` per document, whatever the number of bands. In a directory each
column is a raw little-endian ``uint64`` file ``keys-<column>.u64``, deleted with the run's
work directory.

:class:`PairRuns`: pairs of items with a ``float64`` value each, gathered in any order and
read back sorted by ``(first, second)`` with repeats dropped, holding at most a budget of them
in memory: beyond it a sorted run is written out, and the runs are merged a block at a time.
In a directory run ``k`` is two raw little-endian files, ``pairs-<k>.i64`` (the pair codes
``first * num_items + second``, ascending, distinct) and ``values-<k>.f64`` (their values);
pairs without values (``with_values=False``: candidate pairs) have the first file only.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

from neardup._kernels import groups
from neardup._types import BoolArray, F64Array, I64Array, U64Array
from neardup.hashing.packed import sort_packed

__all__ = [
    "CODE_BYTES",
    "FAN_IN",
    "MAX_MERGED",
    "MIN_BLOCK",
    "PAIR_BYTES",
    "KeyColumns",
    "PairRuns",
]

PAIR_BYTES = 48
"""Bytes a buffered pair takes while a run is sorted (code, value, the order, the sorted copies)."""

CODE_BYTES = 24
"""Bytes a buffered pair without a value takes while a run is sorted (code, its sorted copy,
the mask of repeats)."""

FAN_IN = 32
"""Runs merged at once; more are first merged in groups of this many."""

MIN_BLOCK = 4096
"""Fewest codes read from a run at a time in a merge, however small the budget."""

MAX_MERGED = 1 << 21
"""Most codes read from all runs together at each step of a merge (16 MiB): a merged block,
with the pairs and sorted copies made from it, stays far below the buffer's budget."""


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
        self._close_writers()
        return np.fromfile(self._path(column), dtype="<u8").astype(np.uint64, copy=False)

    def _close_writers(self) -> None:
        """Close the column files appended to (their rows are complete on disk then)."""
        for f in self._files:
            f.close()
        self._files = []

    def files(self) -> list[Path]:
        """The column files, complete (for a checkpoint: :meth:`of_files` reads them again)."""
        self._close_writers()
        return [self._path(column) for column in range(self.width) if self.num_rows]

    @classmethod
    def of_files(cls, directory: Path, width: int, num_rows: int) -> KeyColumns:
        """The keys in ``directory``'s column files, as :meth:`files` left them."""
        keys = cls(directory)
        keys.width, keys.num_rows = width, num_rows
        return keys

    def release(self) -> None:
        """Forget every key: the column files leave the disk (no column is read after this)."""
        self._close_writers()
        self._blocks = []
        if self.directory is not None:
            for column in range(self.width):
                self._path(column).unlink(missing_ok=True)
        self.num_rows = 0

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


class PairRuns:
    """Pairs ``first < second`` of ``num_items`` items with a ``float64`` value, read back sorted.

    Pairs are added in any order, repeats allowed (a repeated pair must carry the same value:
    the first kept is returned). They are buffered; once the buffer holds ``memory_bytes``
    (:data:`PAIR_BYTES` a pair, :data:`CODE_BYTES` without values) it is sorted, its repeats
    dropped, and kept as a *run*: written
    to ``directory`` (two files a run, see the module docstring), or kept in memory when
    ``directory`` is ``None``. :meth:`chunks` merges the runs a block at a time.

    Parameters
    ----------
    num_items
        The items paired (pairs are coded ``first * num_items + second``; at most about
        ``3 * 10^9`` items).
    directory
        Where runs go; ``None`` keeps them in memory (sorted and distinct all the same).
    memory_bytes
        The buffer, and the blocks of the merge, together.
    with_values
        Whether pairs carry a value; without, :meth:`pairs` reads them back.

    Examples
    --------
    >>> runs = PairRuns(10, memory_bytes=PAIR_BYTES * 2)
    >>> runs.add(np.array([3, 0]), np.array([4, 9]), np.array([0.5, 0.25]))
    >>> runs.add(np.array([0, 1]), np.array([9, 2]), np.array([0.25, 0.75]))
    >>> [p for f, s, v in runs.chunks() for p in zip(f.tolist(), s.tolist(), v.tolist())]
    [(0, 9, 0.25), (1, 2, 0.75), (3, 4, 0.5)]
    >>> runs.num_runs
    2
    """

    def __init__(
        self,
        num_items: int,
        directory: Path | None = None,
        *,
        memory_bytes: int = 1 << 28,
        with_values: bool = True,
    ) -> None:
        if num_items > 3_037_000_499:
            raise ValueError(f"PairRuns codes pairs of at most 3037000499 items; got {num_items}.")
        self.num_items = max(int(num_items), 1)
        self.directory = directory
        self.with_values = with_values
        self.capacity = max(1, int(memory_bytes) // (PAIR_BYTES if with_values else CODE_BYTES))
        """Pairs buffered before a run is made."""
        self.num_added = 0
        self._codes: list[I64Array] = []
        self._values: list[F64Array] = []
        self._buffered = 0
        self._runs: list[tuple[_Column, _Column | None]] = []
        self._paths: list[Path] = []
        self._files_made = 0

    def num_stored(self) -> int:
        """Pairs held, about: each run's distinct pairs, a pair in two runs counted twice."""
        self._flush()
        return sum(len(codes) for codes, _ in self._runs)

    @property
    def num_runs(self) -> int:
        """The runs made so far (the buffer makes one more when read)."""
        return len(self._runs)

    def add(self, first: I64Array, second: I64Array, values: F64Array | None = None) -> None:
        """Add pairs (``first[i] < second[i]``) and their values (None without values)."""
        count = int(first.shape[0])
        if not count:
            return
        if (values is not None) != self.with_values:
            raise ValueError(f"PairRuns(with_values={self.with_values}) got values={values!r:.20}")
        codes = first.astype(np.int64) * self.num_items + second.astype(np.int64)
        self._codes.append(codes)
        if values is not None:
            self._values.append(np.asarray(values, dtype=np.float64))
        self._buffered += count
        self.num_added += count
        if self._buffered >= self.capacity:
            self._flush()

    def _flush(self) -> None:
        if not self._buffered:
            return
        codes = np.concatenate(_emptied(self._codes))
        values = np.concatenate(_emptied(self._values)) if self.with_values else None
        self._buffered = 0
        codes, values = _sorted_distinct(codes, values)
        if self.directory is None:
            self._runs.append((_Column(codes), None if values is None else _Column(values)))
        else:
            self._runs.append(self._store(iter([(codes, values)])))

    def codes(self) -> Iterator[tuple[I64Array, F64Array | None]]:
        """Pair codes ascending, each once, with their values: a block at a time.

        More than :data:`FAN_IN` runs are first merged :data:`FAN_IN` at a time into longer
        runs, so each block of the final merge stays large.
        """
        self._flush()
        runs = [run for run in self._runs if len(run[0])]
        while len(runs) > FAN_IN:
            group, runs = runs[:FAN_IN], runs[FAN_IN:]
            runs.append(self._store(_merge(group, self._block(FAN_IN))))
        if runs:
            yield from _merge(runs, self._block(len(runs)))

    def _block(self, num_runs: int) -> int:
        """Codes read from each of ``num_runs`` runs at a time."""
        return max(MIN_BLOCK, min(self.capacity, MAX_MERGED) // num_runs)

    def _store(
        self, blocks: Iterator[tuple[I64Array, F64Array | None]]
    ) -> tuple[_Column, _Column | None]:
        """A new run of merged blocks (written out, or kept in memory)."""
        if self.directory is None:
            parts = list(blocks)
            column = _Column(np.concatenate([p[0] for p in parts]))
            if not self.with_values:
                return column, None
            return column, _Column(np.concatenate([p[1] for p in parts]))
        k = self._files_made
        self._files_made += 1
        code_path = self.directory / f"pairs-{k}.i64"
        value_path = self.directory / f"values-{k}.f64"
        size = 0
        with code_path.open("wb") as codes_file:
            self._paths.append(code_path)
            values_file = value_path.open("wb") if self.with_values else None
            try:
                for codes, values in blocks:
                    codes_file.write(np.ascontiguousarray(codes, dtype="<i8").data)
                    if values_file is not None and values is not None:
                        values_file.write(np.ascontiguousarray(values, dtype="<f8").data)
                    size += int(codes.shape[0])
            finally:
                if values_file is not None:
                    values_file.close()
                    self._paths.append(value_path)
        if not self.with_values:
            return _Stored(code_path, "<i8", size), None
        return _Stored(code_path, "<i8", size), _Stored(value_path, "<f8", size)

    def chunks(self) -> Iterator[tuple[I64Array, I64Array, F64Array]]:
        """``(first, second, values)`` sorted by ``(first, second)``, each pair once."""
        if not self.with_values:
            raise ValueError("PairRuns(with_values=False) holds no values: read pairs()")
        for codes, values in self.codes():
            assert values is not None
            yield codes // self.num_items, codes % self.num_items, values

    def members(self) -> BoolArray:
        """Which items are in some pair: one flag per item (each run read once, not merged)."""
        self._flush()
        found = np.zeros(self.num_items, dtype=bool)
        for codes, _ in self._runs:
            for lo in range(0, len(codes), MAX_MERGED):
                block = codes.read(lo, lo + MAX_MERGED)
                found[block // self.num_items] = True
                found[block % self.num_items] = True
        return found

    def pairs(self) -> Iterator[tuple[I64Array, I64Array]]:
        """``(first, second)`` sorted by ``(first, second)``, each pair once, a block at a time."""
        for codes, _ in self.codes():
            yield codes // self.num_items, codes % self.num_items

    def close(self) -> None:
        """Drop the runs and delete their files."""
        self._runs = []
        self._codes, self._values, self._buffered = [], [], 0
        for path in self._paths:
            path.unlink(missing_ok=True)
        self._paths = []


def _merge(
    runs: list[tuple[_Column, _Column | None]], block: int
) -> Iterator[tuple[I64Array, F64Array | None]]:
    """The runs' codes merged ascending, each once, with their values: a block at a time.

    Each step reads up to ``block`` more codes of every run; every code up to the least of
    the windows' last codes is then in the windows (runs ascend and hold each code once), so
    those are merged and emitted. Each step emits one run's window whole, or more.
    """
    if len(runs) == 1:
        codes, values = runs[0]
        for lo in range(0, len(codes), block):
            hi = min(lo + block, len(codes))
            yield codes.read(lo, hi), None if values is None else values.read(lo, hi)
        return
    at = [0] * len(runs)
    window = [np.empty(0, dtype=np.int64) for _ in runs]  # run i's codes from at[i] on
    while True:
        live = []
        for i, (codes, _) in enumerate(runs):
            have = at[i] + window[i].shape[0]
            if window[i].shape[0] < block and have < len(codes):
                more = codes.read(have, min(at[i] + block, len(codes)))
                window[i] = np.concatenate([window[i], more])
            if window[i].shape[0]:
                live.append(i)
        if not live:
            return
        bound = min(int(window[i][-1]) for i in live)
        parts_codes: list[I64Array] = []
        parts_values: list[F64Array] = []
        for i in live:
            taken = int(np.searchsorted(window[i], bound, side="right"))
            parts_codes.append(window[i][:taken])
            values = runs[i][1]
            if values is not None:
                parts_values.append(values.read(at[i], at[i] + taken))
            window[i] = window[i][taken:]
            at[i] += taken
        yield _sorted_distinct(
            np.concatenate(parts_codes),
            np.concatenate(parts_values) if parts_values else None,
            in_runs=True,
        )


def _emptied(parts: list[np.ndarray]) -> list[np.ndarray]:
    """The parts, the list emptied (so that the parts go as soon as they are joined)."""
    taken = list(parts)
    parts.clear()
    return taken


def _sorted_distinct(
    codes: I64Array, values: F64Array | None, *, in_runs: bool = False
) -> tuple[I64Array, F64Array | None]:
    """``codes`` ascending with repeats dropped (the first kept), and their values.

    ``in_runs``: the codes are a few ascending runs one after another (a merge's windows),
    which the stable sort (timsort) merges several times faster than a quicksort sorts them.
    """
    if values is None:
        if in_runs:
            codes.sort(kind="stable")  # in place, no order array
        else:
            codes = _radix_sorted(codes)
        return codes[: groups.drop_repeats(codes)], None
    order = np.argsort(codes, kind="stable")
    codes = codes[order]
    keep = np.ones(codes.shape[0], dtype=bool)
    keep[1:] = codes[1:] != codes[:-1]
    if keep.all():
        return codes, values[order]
    return codes[keep], values[order[keep]]


def _radix_sorted(codes: I64Array) -> I64Array:
    """``codes`` (non-negative) sorted by the bucket radix kernel; ``codes`` is overwritten.

    The kernel buckets by the top bits, so the codes are first shifted up until their highest
    bit is the word's (which keeps their order): pair codes ``first * n + second`` then spread
    over the buckets as the first documents do. Several times faster than numpy's quicksort
    on the 22M codes of a run of the default budget.
    """
    if codes.shape[0] == 0:
        return codes
    keys = codes.view(np.uint64)
    shift = np.uint64(64 - (int(keys.max()).bit_length() or 1))
    keys <<= shift
    ordered = sort_packed(keys, 0)
    ordered >>= shift
    return ordered.view(np.int64)


class _Column:
    """One column of a run: ``read(lo, hi)`` gives its entries ``lo:hi`` as an array."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def __len__(self) -> int:
        return int(self.values.shape[0])

    def read(self, lo: int, hi: int) -> np.ndarray:
        return self.values[lo:hi]


class _Stored(_Column):
    """A column in a raw file, read a block at a time (not mapped: its pages stay out of RSS)."""

    def __init__(self, path: Path, dtype: str, size: int) -> None:
        super().__init__(np.empty(0, dtype=dtype))
        self.path = path
        self.dtype = np.dtype(dtype)
        self.size = size

    def __len__(self) -> int:
        return self.size

    def read(self, lo: int, hi: int) -> np.ndarray:
        count = max(0, min(hi, self.size) - lo)
        if not count:
            return np.empty(0, dtype=self.dtype.newbyteorder("="))
        with self.path.open("rb") as f:
            data = np.fromfile(f, dtype=self.dtype, count=count, offset=lo * self.dtype.itemsize)
        return data.astype(self.dtype.newbyteorder("="), copy=False)
