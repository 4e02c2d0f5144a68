"""A collection of fingerprints on disk as sorted runs: the file of seed 004's batch mode.

Batch PSM keeps the collection ``H`` on disk and new fingerprints in a batch ``Q``; once ``Q``
has been matched, it is sorted and appended to the file as one more run, so every run (and any
slice of one) can be searched as loaded, without sorting it again. A directory holds
``fingerprints.u64`` and ``rows.i64`` (little-endian, one entry per fingerprint: the value and
the row number it was given) and ``runs.json`` (the format, its version and each run's length).
``runs.json`` is replaced atomically after the data are written and synced, so an append cut
short leaves the file as it was: bytes beyond the recorded runs are ignored and overwritten by
the next append.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from neardup._types import I64Array, U64Array
from neardup.errors import ParameterError, StoreError
from neardup.io.output import AtomicDirectory

__all__ = ["SortedRuns"]

FORMAT = "neardup-sorted-runs"
VERSION = 1
VALUES = "fingerprints.u64"
ROWS = "rows.i64"
RUNS = "runs.json"


class SortedRuns:
    """Fingerprints on disk, in runs each sorted, read chunk by chunk.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "h"
    >>> runs = SortedRuns.create(path, np.array([9, 3, 5], np.uint64))
    >>> runs.append(np.array([4, 1], np.uint64))
    >>> [(v.tolist(), r.tolist()) for v, r in SortedRuns(path).chunks(2)]
    [([3, 5], [1, 2]), ([9], [0]), ([1, 4], [4, 3])]
    """

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        try:
            meta = json.loads((self.directory / RUNS).read_text())
        except FileNotFoundError:
            raise StoreError(
                f"no sorted fingerprint runs at {self.directory}; write them with SortedRuns.create"
            ) from None
        except (OSError, ValueError) as exc:
            raise StoreError(f"{self.directory / RUNS}: cannot read it ({exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise StoreError(f"{self.directory}: not a directory of sorted fingerprint runs")
        if meta.get("version") != VERSION:
            raise StoreError(
                f"{self.directory}: sorted runs of version {meta.get('version')!r}; this neardup "
                f"reads version {VERSION}"
            )
        self.runs: list[int] = [int(n) for n in meta["runs"]]
        for name in (VALUES, ROWS):
            size = (self.directory / name).stat().st_size if (self.directory / name).exists() else 0
            if size < 8 * len(self):
                raise StoreError(
                    f"{self.directory / name}: {size} bytes where the runs need {8 * len(self)}; "
                    "the file is damaged: write the runs again"
                )

    @classmethod
    def create(cls, directory: Path | str, values: U64Array) -> SortedRuns:
        """Write ``values`` (rows ``0..n-1``) as one sorted run; ``directory`` must not exist."""
        values = np.asarray(values, dtype=np.uint64)
        rows = np.argsort(values, kind="stable")
        with AtomicDirectory(directory, kind="runs") as tmp:
            values[rows].astype("<u8").tofile(tmp / VALUES)
            rows.astype("<i8").tofile(tmp / ROWS)
            _write_runs(tmp, [int(values.shape[0])])
        return cls(directory)

    def __len__(self) -> int:
        return sum(self.runs)

    def append(self, values: U64Array) -> None:
        """Sort ``values`` and add them as one run, numbered from ``len(self)`` on."""
        values = np.asarray(values, dtype=np.uint64)
        if values.ndim != 1:
            raise ParameterError(
                f"fingerprints to append must be one uint64 array; got shape {values.shape}."
            )
        order = np.argsort(values, kind="stable")
        start = len(self)
        for name, data in ((VALUES, values[order].astype("<u8")),
                           (ROWS, (order + start).astype("<i8"))):  # fmt: skip
            with open(self.directory / name, "r+b") as file:
                file.truncate(8 * start)  # drop what an earlier append left unrecorded
                file.seek(8 * start)
                data.tofile(file)
                file.flush()
                os.fsync(file.fileno())
        _write_runs(self.directory, [*self.runs, int(values.shape[0])])
        self.runs.append(int(values.shape[0]))

    def chunks(self, max_rows: int) -> Iterator[tuple[U64Array, I64Array]]:
        """Each run in slices of at most ``max_rows``: ``(sorted values, their row numbers)``."""
        if max_rows < 1:
            raise ParameterError(f"max_rows must be positive; got {max_rows}.")
        n = len(self)
        if n == 0:
            return
        values = np.memmap(self.directory / VALUES, dtype="<u8", mode="r", shape=(n,))
        rows = np.memmap(self.directory / ROWS, dtype="<i8", mode="r", shape=(n,))
        begin = 0
        for length in self.runs:
            for start in range(begin, begin + length, max_rows):
                stop = min(start + max_rows, begin + length)
                yield (np.array(values[start:stop], dtype=np.uint64),
                       np.array(rows[start:stop], dtype=np.int64))  # fmt: skip
            begin += length


def _write_runs(directory: Path, runs: list[int]) -> None:
    """Replace ``runs.json`` atomically."""
    tmp = directory / f".{RUNS}.tmp"
    with open(tmp, "w") as file:
        json.dump({"format": FORMAT, "version": VERSION, "runs": runs}, file)
        file.flush()
        os.fsync(file.fileno())
    os.replace(tmp, directory / RUNS)
