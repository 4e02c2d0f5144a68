"""``neardup join`` at a low threshold: wall time, peak RSS and recall, as a user runs it.

Random 32-dimensional float32 vectors (standard normal, seeded) joined at cosine 0.6: random
vectors in 32 dimensions have cosines of about N(0, 1/32), so few pairs are close (a few in ten
thousand) while the amplified family (about 98 bands of 10 hyperplanes at recall 0.95) makes
about a seventh of all pairs candidates: hundreds of millions at 50,000 vectors, billions at
200,000. The join once gathered them all in memory (6.4 GB peak at 50,000; killed at 24 GB at
200,000); it now measures them a bounded chunk at a time within ``--memory-gb``.

Each size runs the CLI as a separate process (``neardup join ... --metric cosine --threshold
0.6``), its peak RSS read by a wrapper process (``getrusage(RUSAGE_CHILDREN)``), and the pairs
are compared with an exact brute force computed in the same run: NumPy blocked products of the
normalised vectors in float64 (or FAISS ``IndexFlatIP.range_search`` where faiss-cpu is
installed, also timed as the peer). Medians of ``--repeat`` runs.

Run: ``.venv/bin/python bench/join_memory.py [--sizes 50000 200000] [--repeat 1]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

THRESHOLD = 0.6
DIM = 32

_PEAK = (
    "import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)"
)


def vectors(n: int, seed: int = 0) -> np.ndarray:
    """``n`` standard normal float32 vectors of :data:`DIM` coordinates."""
    return np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)


def brute_force(rows: np.ndarray, threshold: float, block: int = 2048) -> set[tuple[int, int]]:
    """Every pair ``i < j`` with cosine >= ``threshold``, by blocked float64 products."""
    unit = rows.astype(np.float64)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    found: set[tuple[int, int]] = set()
    n = unit.shape[0]
    for lo in range(0, n, block):
        for start in range(lo, n, block):
            products = unit[lo : lo + block] @ unit[start : start + block].T
            first, second = np.nonzero(products >= threshold)
            first += lo
            second += start
            keep = first < second
            found.update(zip(first[keep].tolist(), second[keep].tolist(), strict=True))
    return found


def faiss_pairs(rows: np.ndarray, threshold: float) -> tuple[set[tuple[int, int]], float] | None:
    """FAISS's exact range search (inner product of normalised float32 rows), and its seconds."""
    try:
        import faiss
    except ImportError:
        return None
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    started = time.perf_counter()
    index = faiss.IndexFlatIP(unit.shape[1])
    index.add(unit)
    limits, _, labels = index.range_search(unit, threshold)
    seconds = time.perf_counter() - started
    owner = np.repeat(np.arange(unit.shape[0]), np.diff(limits))
    keep = owner < labels
    return set(zip(owner[keep].tolist(), labels[keep].tolist(), strict=True)), seconds


def run_cli(path: Path, out: Path, extra: list[str]) -> tuple[float, float, int, str]:
    """Wall seconds, peak RSS (MiB), exit code and stderr of one ``neardup join``."""
    neardup = Path(sys.executable).parent / "neardup"
    command = [str(neardup), "join", str(path), "--metric", "cosine", "--threshold"]
    command += [str(THRESHOLD), "-o", str(out), "-q", *extra]
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *command], capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    peak = int(done.stdout.strip().splitlines()[-1]) / 1024 if done.stdout.strip() else 0.0
    return wall, peak, done.returncode, done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50_000, 200_000])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--memory-gb", type=float, default=None)
    args = parser.parse_args()
    extra = [] if args.memory_gb is None else ["--memory-gb", str(args.memory_gb)]
    with tempfile.TemporaryDirectory(prefix="join-memory-") as work:
        root = Path(work)
        for n in args.sizes:
            rows = vectors(n)
            path = root / f"v{n}.npy"
            np.save(path, rows)
            walls, peaks = [], []
            summary: dict[str, object] = {}
            stderr = ""
            for attempt in range(args.repeat):
                out = root / f"out-{n}-{attempt}"
                wall, peak, code, stderr = run_cli(path, out, extra)
                if code != 0:
                    print(f"n={n:,}: exit {code}\n{stderr}")
                    break
                walls.append(wall)
                peaks.append(peak)
                summary = json.loads((out / "summary.json").read_text())
            if not walls:
                continue
            found = set()
            with (out / "pairs.jsonl").open() as f:
                for line in f:
                    pair = json.loads(line)
                    found.add((pair["a"], pair["b"]))
            started = time.perf_counter()
            truth = brute_force(rows, THRESHOLD)
            numpy_s = time.perf_counter() - started
            peer = faiss_pairs(rows, THRESHOLD)
            counts = summary["counts"]
            assert isinstance(counts, dict)
            prediction = summary.get("prediction", {})
            recall = len(found & truth) / max(len(truth), 1)
            print(
                f"n={n:,} ({path.stat().st_size / 2**20:.1f} MiB .npy), cosine >= {THRESHOLD}: "
                f"{summary['num_bands']} bands of {summary['num_rows']}"
            )
            print(
                f"  neardup join: {statistics.median(walls):.2f} s wall, "
                f"{statistics.median(peaks):.0f} MiB peak RSS (median of {len(walls)})"
            )
            print(
                f"  candidates measured {counts['candidate_pairs']:,} (predicted "
                f"{prediction.get('measured_pairs', 0):,}); pairs {counts['pairs']:,} of "
                f"{len(truth):,} true: recall {recall:.4f}, precision "
                f"{len(found & truth) / max(len(found), 1):.4f}"
            )
            print(f"  brute force, NumPy blocked float64 products: {numpy_s:.2f} s")
            if peer is not None:
                peer_pairs, peer_s = peer
                print(
                    f"  FAISS IndexFlatIP.range_search: {peer_s:.2f} s, {len(peer_pairs):,} pairs "
                    f"(float32; {len(peer_pairs ^ truth)} differ from float64 at the boundary)"
                )
            warned = [line for line in stderr.splitlines() if line.startswith("warning")]
            for line in warned:
                print(f"  {line}")


if __name__ == "__main__":
    main()
