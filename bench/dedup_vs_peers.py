"""neardup against datasketch and rensa, end to end on the RFC corpus, in one process.

Every pipeline goes from raw text to clusters with the same shingling (lower-cased word
5-shingles), 128 permutations and threshold 0.8:

* datasketch: Python tokenisation, ``MinHash.update_batch`` per document, ``MinHashLSH``
  insert + query, union-find over the candidate pairs;
* rensa: Python tokenisation, ``RMinHash.update`` per document, ``RMinHashLSH`` (16 bands: it
  needs num_perm divisible by the bands) insert + query, union-find over the candidate pairs;
* neardup: ``neardup.dedup`` (normalise, shingle and sketch in numba kernels, exact-duplicate
  grouping, LSH by sorting, verification, union-find), with exact and with signature
  verification.

Printed per pipeline: median wall time, MB/s, peak RSS growth, the ratio to neardup, the pairs
reported and their agreement with exact Jaccard (all pairs >= 0.8, computed exactly through a
prefix-filtered inverted index). Then neardup's signature throughput from raw text.

Run: ``make bench`` (or ``.venv/bin/python bench/dedup_vs_peers.py --limit 2000`` for a quick look).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.reference_allpairs import all_pairs_above  # noqa: E402

import neardup  # noqa: E402
from bench.corpora import load_rfcs  # noqa: E402
from neardup import DedupConfig, Shingler, SketchSpec  # noqa: E402
from neardup.text import normalize_batch  # noqa: E402

THRESHOLD = 0.8
NUM_PERM = 128
K = 5
Pairs = set[tuple[int, int]]


def python_shingles(text: str) -> list[str]:
    """What a peer pipeline does in Python: lower-case, split on whitespace, join 5-grams."""
    words = text.lower().split()
    return list({" ".join(words[i : i + K]) for i in range(len(words) - K + 1)})


def cluster_candidates(num_docs: int, pairs: Pairs) -> np.ndarray:
    first = np.array([a for a, _ in pairs], dtype=np.int64)
    second = np.array([b for _, b in pairs], dtype=np.int64)
    return neardup.connected_components(num_docs, first, second).labels


def run_datasketch(texts: list[str]) -> Pairs:
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM)
    sketches = []
    for i, text in enumerate(texts):
        m = MinHash(num_perm=NUM_PERM, seed=42)
        m.update_batch([s.encode("utf-8") for s in python_shingles(text)])
        sketches.append(m)
        lsh.insert(i, m)
    pairs = {(min(i, j), max(i, j)) for i, m in enumerate(sketches) for j in lsh.query(m) if j != i}
    cluster_candidates(len(texts), pairs)
    return pairs


def run_rensa(texts: list[str]) -> Pairs:
    from rensa import RMinHash, RMinHashLSH

    # RMinHashLSH needs num_perm divisible by num_bands, so neardup's and datasketch's choice
    # (9 bands of 13 rows) is not possible; 16 bands of 8 rows is the closest with more recall.
    lsh = RMinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM, num_bands=16)
    sketches = []
    for i, text in enumerate(texts):
        m = RMinHash(num_perm=NUM_PERM, seed=42)
        m.update(python_shingles(text))
        sketches.append(m)
        lsh.insert(i, m)
    pairs = {(min(i, j), max(i, j)) for i, m in enumerate(sketches) for j in lsh.query(m) if j != i}
    cluster_candidates(len(texts), pairs)
    return pairs


def neardup_runner(verify: str) -> Callable[[list[str]], Pairs]:
    def run(texts: list[str]) -> Pairs:
        config = DedupConfig(verify=verify, pairs="all")  # type: ignore[arg-type]
        result = neardup.dedup(texts, config=config)
        # Report pairs at document level: near pairs join exact-group representatives.
        rep = np.arange(len(texts))
        rep[result.exact_pairs[1]] = result.exact_pairs[0]
        members: dict[int, list[int]] = {}
        for doc, r in enumerate(rep.tolist()):
            members.setdefault(r, []).append(doc)
        pairs: Pairs = set()
        for group in members.values():
            pairs.update((a, b) for i, a in enumerate(group) for b in group[i + 1 :])
        for a, b in zip(result.pairs.first.tolist(), result.pairs.second.tolist(), strict=True):
            pairs.update((min(x, y), max(x, y)) for x in members[a] for y in members[b])
        return pairs

    return run


class PeakRSS:
    """Samples this process's RSS every 20 ms; reports the peak growth over the start."""

    def __enter__(self) -> PeakRSS:
        self._process = psutil.Process()
        self.start = self.peak = self._process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self._process.memory_info().rss)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._process.memory_info().rss)

    @property
    def growth_mb(self) -> float:
        return (self.peak - self.start) / 2**20


def measure(
    run: Callable[[list[str]], Pairs], texts: list[str], repeat: int
) -> tuple[float, float, Pairs]:
    times, peaks, pairs = [], [], set()
    for _ in range(repeat):
        with PeakRSS() as rss:
            start = time.perf_counter()
            pairs = run(texts)
            times.append(time.perf_counter() - start)
        peaks.append(rss.growth_mb)
    return statistics.median(times), max(peaks), pairs


def signature_throughput(texts: list[str], kind: str, repeat: int) -> float:
    sketcher = neardup.make_sketcher(SketchSpec(kind=kind))  # type: ignore[arg-type]
    batches, batch, size = [], [], 0
    for text in texts:
        batch.append(text)
        size += len(text)
        if size >= 32 * 2**20:
            batches.append(batch)
            batch, size = [], 0
    batches.append(batch)
    sketcher.sketch(texts[:10])  # compile outside the timing
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for b in batches:
            sketcher.sketch(normalize_batch(b, sketcher.spec.normalize))
        times.append(time.perf_counter() - start)
    return megabytes / statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rfc", type=Path, default=ROOT.parent / "shared/data/rfc/rfc_txt.tar.xz")
    parser.add_argument("--limit", type=int, help="use only the first N RFCs")
    parser.add_argument("--repeat", type=int, default=3, help="runs per neardup pipeline (median)")
    parser.add_argument(
        "--peer-repeat", type=int, default=1, help="runs per peer pipeline (median)"
    )
    args = parser.parse_args()
    if not args.rfc.exists():
        sys.exit(f"RFC corpus not found at {args.rfc}")

    _, texts = load_rfcs(args.rfc, args.limit)
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(
        f"corpus: {len(texts):,} RFCs, {megabytes:,.1f} MB; word {K}-shingles, "
        f"{NUM_PERM} permutations, threshold {THRESHOLD}"
    )

    truth = set(all_pairs_above(Shingler().shingle_sets(texts), THRESHOLD))
    print(f"exact Jaccard >= {THRESHOLD}: {len(truth):,} pairs")
    neardup.dedup(texts[:50])  # compile the kernels outside the timing

    pipelines: list[tuple[str, Callable[[list[str]], Pairs], int]] = [
        ("neardup (verify exact)", neardup_runner("exact"), args.repeat),
        ("neardup (verify signature)", neardup_runner("signature"), args.repeat),
        ("rensa", run_rensa, args.peer_repeat),
        ("datasketch", run_datasketch, args.peer_repeat),
    ]
    rows = []
    for name, run, repeat in pipelines:
        seconds, peak, pairs = measure(run, texts, repeat)
        found = len(pairs & truth)
        rows.append(
            (
                name,
                seconds,
                peak,
                len(pairs),
                found / len(truth) if truth else 1.0,
                found / len(pairs) if pairs else 1.0,
            )
        )
        print(f"  ran {name}: {seconds:.1f} s", flush=True)

    base = rows[0][1]
    print()
    print(
        "| pipeline | wall s (median) | MB/s | peak RSS growth MB | time vs neardup | pairs "
        "| recall vs exact | precision vs exact |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, seconds, peak, num_pairs, recall, precision in rows:
        print(
            f"| {name} | {seconds:.2f} | {megabytes / seconds:.1f} | {peak:,.0f} "
            f"| {seconds / base:.1f}x "
            f"| {num_pairs:,} | {recall:.3f} | {precision:.3f} |"
        )
    print()
    for kind in ("oph", "minhash"):
        rate = signature_throughput(texts, kind, args.repeat)
        print(
            f"neardup signatures from raw text, {kind}: {rate:.0f} MB/s (median of {args.repeat})"
        )


if __name__ == "__main__":
    main()
