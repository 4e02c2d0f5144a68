"""A DataFrame through ``neardup.dedup_frame`` against the same records through the CLI.

Each pipeline runs as its own process on one JSONL file (e.g. the dense 1M corpus of
``bench/scale_corpus.py``), timed as a whole with its peak RSS (``os.wait4``):

* ``frame``: read the file into a pandas DataFrame (``pyarrow.json``, then ``to_pandas``),
  then ``dedup_frame(frame, id_column="id")``: the kept rows as a DataFrame; the two steps'
  seconds are printed apart, and the kept rows counted;
* ``cli``: ``neardup dedup FILE -o OUT -q``.

Printed: median wall time over ``--repeat`` runs, peak RSS, the kept rows of each (equal, or
the run says so).

Run: ``.venv/bin/python bench/frame.py d1000000.jsonl``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FRAME = """
import sys, time
import pyarrow.json as pj
import neardup
start = time.perf_counter()
frame = pj.read_json(sys.argv[1]).to_pandas()
read = time.perf_counter() - start
kept, result = neardup.dedup_frame(frame, id_column="id")
print(f"{read:.2f} {time.perf_counter() - start - read:.2f} {len(kept)}")
"""


def _timed(argv: list[str]) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (MB) and stdout of one process."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    out = process.stdout.read() if process.stdout is not None else ""
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv[:3]} failed")
    return time.perf_counter() - start, usage.ru_maxrss // 1024, out.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    neardup = str(Path(sys.executable).with_name("neardup"))
    runs: dict[str, list[tuple[float, int, str]]] = {"frame": [], "cli": []}
    for _ in range(args.repeat):
        runs["frame"].append(_timed([sys.executable, "-c", FRAME, str(args.path)]))
        out = Path(tempfile.mkdtemp()) / "out"
        runs["cli"].append(_timed([neardup, "dedup", str(args.path), "-o", str(out), "-q"]))
        kept = sum(1 for _ in (out / "kept.jsonl").open("rb"))
        runs["cli"][-1] = (*runs["cli"][-1][:2], str(kept))
        shutil.rmtree(out.parent)
    for name, results in runs.items():
        wall = statistics.median(r[0] for r in results)
        peak = max(r[1] for r in results)
        print(f"{name:6} {wall:7.2f} s (min {min(r[0] for r in results):.2f}), peak {peak} MB, "
              f"output {results[-1][2]}")  # fmt: skip
    ratio = statistics.median(r[0] for r in runs["frame"]) / statistics.median(
        r[0] for r in runs["cli"]
    )
    print(f"frame / cli: {ratio:.2f}x")


if __name__ == "__main__":
    main()
