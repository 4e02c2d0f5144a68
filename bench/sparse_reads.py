"""Scattered reads of a file larger than memory, as verification makes them, three ways.

``python bench/sparse_reads.py FILE [PIECES] [ROUNDS]`` reads PIECES (default 50,000) random
330-byte pieces of FILE with :func:`neardup.io.mapped.read_spans`, the kernel's read-ahead left
on (``readahead``), with random access only (``random``) and with random access and the pieces'
pages asked for at once (``ahead``, what ``read_spans`` does for sparse windows), each round a
new random draw, and prints the seconds and the bytes read from the disk (Linux
``/proc/self/io``). The file should be larger than the page cache, or the pieces are already in
memory and every way costs the same.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

from neardup.io import mapped

PIECE = 330


def _disk_reads() -> int:
    with open("/proc/self/io") as stats:
        return next(int(line.split()[1]) for line in stats if line.startswith("read_bytes"))


def _read(path: Path, starts: np.ndarray, way: str) -> tuple[float, int]:
    gap, ask_ahead = mapped.SPARSE_GAP, mapped._ask_ahead
    if way == "readahead":
        mapped.SPARSE_GAP = 1 << 62
    if way == "random":
        mapped._ask_ahead = lambda *args: None
    lengths = np.full(starts.shape[0], PIECE, dtype=np.int64)
    out = np.zeros(starts.shape[0] * PIECE, dtype=np.uint8)
    before, started = _disk_reads(), time.perf_counter()
    try:
        with path.open("rb") as f:
            mapped.read_spans(f, starts, lengths, out, np.arange(starts.shape[0]) * PIECE)
    finally:
        mapped.SPARSE_GAP, mapped._ask_ahead = gap, ask_ahead
    return time.perf_counter() - started, _disk_reads() - before


def main(argv: list[str]) -> None:
    path = Path(argv[0])
    pieces = int(float(argv[1])) if len(argv) > 1 else 50_000
    rounds = int(argv[2]) if len(argv) > 2 else 2
    size = os.path.getsize(path)
    rng = np.random.default_rng(0)
    for _ in range(rounds):
        for way in ("readahead", "random", "ahead"):
            starts = np.sort(rng.integers(0, size - PIECE, pieces)).astype(np.int64)
            seconds, read = _read(path, starts, way)
            print(f"{way:9s} {seconds:6.2f} s {read / 2**20:9,.0f} MiB read from disk", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
