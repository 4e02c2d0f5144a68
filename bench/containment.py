"""Containment: neardup's exact join against datasketch's MinHashLSHEnsemble, on planted pairs.

The corpus (:func:`tests.planted.plant_containment`): real licence texts (the ScanCode
database of ``../shared/data`` when present, else the bundled sample), each planted inside a
host 1.5 to 8 times as long made of other licences' words, with 1% of its words replaced, plus
bystander texts. Recall is over the planted pairs whose exact containment (word 5-shingles)
reaches the threshold. In one process, each pipeline from raw text to verified pairs:

* neardup, containment: ``neardup.dedup`` with the ``containment`` family (``--measure
  containment``): normalise, shingle, the exact containment join, clusters;
* neardup, Jaccard: ``neardup.dedup`` at the same threshold, the default OPH + LSH: what a
  Jaccard criterion finds of the same pairs;
* datasketch: ``MinHash`` (128 permutations) of each document's Python word 5-shingles,
  ``MinHashLSHEnsemble`` (16 partitions) indexed with every document and queried with each,
  then every candidate's containment computed exactly from the Python sets; with its default
  weights of false positives and negatives (0.5, 0.5), and weighted for recall (0.05, 0.95,
  neardup's LSH default).

Printed: median wall time, peak RSS growth, ratio of times to neardup's containment run and
recall of the planted pairs; then how many candidates datasketch verified.

With ``--index``: instead, what containment queries cost in the persistent index on the 2,310
bundled licence texts (an SQLite file): bytes per document, the time to add them all, and the
median and 99th-percentile query time of every tenth text, without a containment sample
(Jaccard queries), with ``--containment-sample 8`` and with 1 (exact).

Run: ``.venv/bin/python bench/containment.py`` (``--pairs 300 --others 600`` for a quick look;
``--index`` for the index).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.planted import plant_containment  # noqa: E402

import neardup  # noqa: E402
from bench.dedup_vs_peers import NUM_PERM, measure, python_shingles  # noqa: E402
from neardup import DedupConfig, LSHSpec  # noqa: E402

Pairs = set[tuple[int, int]]
SAMPLE = ROOT / "data" / "sample" / "licenses.jsonl.gz"
SCANCODE = ROOT.parent / "shared/data/scancode_licenses/scancode_licensedb_32.1.0.jsonl.gz"


def licence_texts() -> tuple[str, list[str]]:
    path = SCANCODE if SCANCODE.exists() else SAMPLE
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return path.name, [str(json.loads(line)["text"]) for line in f]


def neardup_runner(family: str | None, threshold: float) -> Callable[[list[str]], Pairs]:
    keep = "longest" if family == "containment" else "first"
    config = DedupConfig(lsh=LSHSpec(family=family, threshold=threshold), keep=keep, pairs="all")

    def run(texts: list[str]) -> Pairs:
        result = neardup.dedup(texts, config=config)
        pairs = set(zip(result.pairs.first.tolist(), result.pairs.second.tolist(), strict=True))
        return pairs | {(b, a) for a, b in pairs}

    return run


def datasketch_runner(
    threshold: float, weights: tuple[float, float], found: dict[str, Pairs]
) -> Callable[[list[str]], Pairs]:
    def run(texts: list[str]) -> Pairs:
        from datasketch import MinHash, MinHashLSHEnsemble

        sets = [set(python_shingles(text)) for text in texts]
        sketches = []
        for shingles in sets:
            m = MinHash(num_perm=NUM_PERM, seed=42)
            m.update_batch([s.encode("utf-8") for s in shingles])
            sketches.append(m)
        ensemble = MinHashLSHEnsemble(
            threshold=threshold, num_perm=NUM_PERM, num_part=16, weights=weights
        )
        ensemble.index(
            (i, m, len(s)) for i, (m, s) in enumerate(zip(sketches, sets, strict=True)) if s
        )
        candidates = {
            (i, j)
            for i, (m, s) in enumerate(zip(sketches, sets, strict=True))
            if s
            for j in ensemble.query(m, len(s))
            if j != i
        }
        found["candidates"] = candidates
        return {(i, j) for i, j in candidates if len(sets[i] & sets[j]) / len(sets[i]) >= threshold}

    return run


def index_costs() -> None:
    from neardup.index import LSHIndex

    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        texts = [str(json.loads(line)["text"]) for line in f]
    ids = [str(i) for i in range(len(texts))]
    print(f"index of the {len(texts):,} bundled licence texts (SQLite)\n")
    print("| --containment-sample | bytes per document | add all s | query p50 ms | query p99 ms |")
    print("|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for sample in (None, 8, 1):
            path = Path(folder) / f"{sample}.ndx"
            with LSHIndex.open(path, containment_sample=sample) as index:
                start = time.perf_counter()
                index.add(ids, texts)
                added = time.perf_counter() - start
                measure = "jaccard" if sample is None else "containment"
                index.query(texts[:2], measure=measure)  # warm the caches and kernels
                times = []
                for text in texts[::10]:
                    start = time.perf_counter()
                    index.query([text], measure=measure)
                    times.append(time.perf_counter() - start)
                times.sort()
                print(
                    f"| {sample or 'none'} | {index.info()['bytes_per_document']:,.0f} "
                    f"| {added:.2f} | {statistics.median(times) * 1e3:.2f} "
                    f"| {times[int(0.99 * len(times))] * 1e3:.2f} |"
                )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=1000, help="planted pairs")
    parser.add_argument("--others", type=int, default=3000, help="bystander texts")
    parser.add_argument("--threshold", type=float, default=0.8)
    parser.add_argument("--repeat", type=int, default=3, help="runs per neardup pipeline")
    parser.add_argument("--peer-repeat", type=int, default=1, help="runs of datasketch")
    parser.add_argument("--index", action="store_true", help="measure the index instead")
    args = parser.parse_args()
    if args.index:
        index_costs()
        return

    name, pool = licence_texts()
    planted = plant_containment(pool, args.pairs, num_others=args.others, seed=1)
    truth = planted.pairs_at(args.threshold)
    texts = planted.texts
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(
        f"corpus: {len(texts):,} texts from {name}, {megabytes:.1f} MB; {args.pairs} planted "
        f"pairs, {len(truth)} at containment >= {args.threshold}"
    )
    neardup.dedup(texts[:50], config=DedupConfig(lsh=LSHSpec(family="containment"), keep="longest"))
    neardup.dedup(texts[:50])  # compile the kernels outside the timing
    peer: dict[str, Pairs] = {}
    t, peers = args.threshold, args.peer_repeat
    pipelines = [
        ("neardup, containment (exact)", neardup_runner("containment", t), args.repeat),
        ("neardup, Jaccard (OPH + LSH)", neardup_runner(None, t), args.repeat),
        ("datasketch MinHashLSHEnsemble", datasketch_runner(t, (0.5, 0.5), peer), peers),
        ("datasketch, weighted for recall", datasketch_runner(t, (0.05, 0.95), {}), peers),
    ]
    rows = []
    for label, run, repeat in pipelines:
        seconds, peak, pairs = measure(run, texts, repeat)
        rows.append((label, seconds, peak, len(pairs & truth) / len(truth)))
        print(f"  ran {label}: {seconds:.1f} s", flush=True)
    base = rows[0][1]
    print()
    print(
        "| pipeline | wall s (median) | peak RSS growth MB | time vs neardup containment | recall |"
    )
    print("|---|---:|---:|---:|---:|")
    for label, seconds, peak, recall in rows:
        print(f"| {label} | {seconds:.2f} | {peak:,.0f} | {seconds / base:.1f}x | {recall:.3f} |")
    candidates = peer.get("candidates", set())
    print(
        f"\ndatasketch: {len(candidates):,} candidates verified; the planted pairs among them "
        f"(recall before verification): {len(candidates & truth) / len(truth):.3f}"
    )


if __name__ == "__main__":
    main()
