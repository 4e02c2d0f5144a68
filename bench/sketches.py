"""Every sketch side by side: speed from raw text, bytes per document, accuracy at equal storage.

1. Throughput on the RFC corpus (9,823 documents, 537 MB) from raw text, word 5-shingles:
   neardup's MinHash, OPH, b-bit OPH, bottom-k and weighted MinHash (ICWS, term counts), and
   datasketch's MinHash (Python tokenisation + ``update_batch``) on the first ``--peer-docs``
   RFCs (it is ~50x slower), in documents/s and MB/s.
2. Accuracy at equal storage (128 bytes per document): RMSE of the Jaccard estimate against the
   exact Jaccard over the RFC obsoletes/updates pairs of ``../shared/data/rfc`` (exact values
   computed here from the shingle sets), over ``--seeds`` seeds; datasketch's MinHash (4-byte
   values as its ``LeanMinHash`` stores them) and ``bBitMinHash`` alongside. neardup's weighted
   MinHash is measured against the exact weighted Jaccard (datasketch's
   ``WeightedMinHashGenerator`` needs dense vectors over the whole vocabulary and is not run).

Run: ``.venv/bin/python bench/sketches.py``.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpora import RFC_ARCHIVE, load_rfcs  # noqa: E402
from neardup import CandidatePairs, Shingler, SketchSpec, exact_jaccard, make_sketcher  # noqa: E402
from neardup.sketch.bbit import bbit_estimate, pack_bbit  # noqa: E402
from neardup.sketch.bottomk import BottomKSketcher, resemblance  # noqa: E402
from neardup.sketch.weighted import (  # noqa: E402
    WeightedMinHasher,
    estimate_weighted_jaccard,
    term_counts,
    weighted_jaccard,
)

K = 5
BUDGET = 128  # bytes per document for the accuracy table


def python_shingles(text: str) -> list[bytes]:
    words = text.lower().split()
    return list({" ".join(words[i : i + K]).encode() for i in range(len(words) - K + 1)})


def median_time(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def throughput(texts: list[str], peer_docs: int, repeat: int) -> None:
    megabytes = sum(len(t.encode()) for t in texts) / 1e6
    spec = SketchSpec()
    batches = [texts[i : i + 2000] for i in range(0, len(texts), 2000)]

    def ours(make: Callable[[list[str]], object]) -> float:
        make(texts[:10])
        return median_time(lambda: [make(b) for b in batches], repeat)

    oph = make_sketcher(spec)
    rows: list[tuple[str, float, float, int]] = [
        (
            "neardup MinHash, 128 x 64-bit",
            ours(make_sketcher(SketchSpec(kind="minhash")).sketch),
            megabytes,
            1024,
        ),
        ("neardup OPH, 128 x 64-bit", ours(oph.sketch), megabytes, 1024),
        (
            "neardup b-bit OPH, b=1, 1024 slots",
            ours(lambda b: pack_bbit(make_sketcher(SketchSpec(num_perm=1024)).sketch(b), 1)),
            megabytes,
            128,
        ),
        ("neardup bottom-k, k=128", ours(BottomKSketcher(spec).sketch), megabytes, 1024),
        (
            "neardup weighted (ICWS, counts), 128",
            ours(lambda b: WeightedMinHasher(spec).sketch(term_counts(b))),
            megabytes,
            1024,
        ),
    ]
    from datasketch import MinHash

    subset = texts[:peer_docs]
    sub_mb = sum(len(t.encode()) for t in subset) / 1e6

    def datasketch_minhash() -> None:
        for text in subset:
            m = MinHash(num_perm=128, seed=1)
            m.update_batch(python_shingles(text))

    rows.append(
        (
            f"datasketch MinHash, 128 (first {len(subset)} docs)",
            median_time(datasketch_minhash, 1),
            sub_mb,
            512,
        )
    )
    print(
        f"\n| sketch (RFC corpus, {len(texts):,} docs, {megabytes:,.0f} MB) "
        "| docs/s | MB/s | bytes/doc |"
    )
    print("|---|---:|---:|---:|")
    for name, seconds, mb, size in rows:
        docs = len(subset) if name.startswith("datasketch") else len(texts)
        print(f"| {name} | {docs / seconds:,.0f} | {mb / seconds:,.1f} | {size:,} |")


def accuracy(seeds: int) -> None:
    table = RFC_ARCHIVE.parent / "rfc_pair_similarity.tsv"
    with table.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    ids, texts = load_rfcs()
    by_number = {int(i[3:]): t for i, t in zip(ids, texts, strict=True)}
    pairs_text = [
        (by_number[int(r["rfc_new"])], by_number[int(r["rfc_old"])])
        for r in rows
        if int(r["rfc_new"]) in by_number and int(r["rfc_old"]) in by_number
    ]
    flat = [t for pair in pairs_text for t in pair]
    first = np.arange(0, len(flat), 2, dtype=np.int64)
    pairs = CandidatePairs(first=first, second=first + 1)
    exact = exact_jaccard(Shingler().shingle_sets(flat), pairs)
    print(
        f"\naccuracy: {len(pairs_text):,} RFC obsoletes/updates pairs, "
        f"exact J mean {exact.mean():.3f}, "
        f"{seeds} seeds, {BUDGET} bytes per document"
    )

    def rmse(estimate: Callable[[int], np.ndarray], truth: np.ndarray = exact) -> float:
        return float(np.sqrt(np.mean([(estimate(s) - truth) ** 2 for s in range(seeds)])))

    def sig(kind: str, k: int) -> Callable[[int], np.ndarray]:
        from neardup import estimate_jaccard

        return lambda s: estimate_jaccard(
            make_sketcher(SketchSpec(kind=kind, num_perm=k, seed=s)).sketch(flat), pairs
        )  # type: ignore[arg-type]

    def bbit(b: int) -> Callable[[int], np.ndarray]:
        k = BUDGET * 8 // b
        return lambda s: bbit_estimate(
            pack_bbit(make_sketcher(SketchSpec(num_perm=k, seed=s)).sketch(flat), b), pairs
        )

    def bottomk(s: int) -> np.ndarray:
        return resemblance(
            BottomKSketcher(SketchSpec(num_perm=BUDGET // 8, seed=s)).sketch(flat), pairs
        )

    from datasketch import MinHash, bBitMinHash

    shingles = [python_shingles(t) for t in flat]

    def ds_minhash(s: int, k: int = BUDGET // 4) -> list[MinHash]:
        out = []
        for sh in shingles:
            m = MinHash(num_perm=k, seed=s)
            m.update_batch(sh)
            out.append(m)
        return out

    def ds_plain(s: int) -> np.ndarray:
        ms = ds_minhash(s)
        return np.array([ms[i].jaccard(ms[i + 1]) for i in range(0, len(ms), 2)])

    def ds_bbit(s: int) -> np.ndarray:
        ms = [bBitMinHash(m, b=1) for m in ds_minhash(s, k=BUDGET * 8)]
        return np.array([ms[i].jaccard(ms[i + 1]) for i in range(0, len(ms), 2)])

    results = [
        ("neardup MinHash, 16 x 64-bit", rmse(sig("minhash", BUDGET // 8))),
        ("neardup OPH, 16 x 64-bit", rmse(sig("oph", BUDGET // 8))),
        ("neardup bottom-k, k=16", rmse(bottomk)),
        *[
            (f"neardup b-bit OPH, b={b}, {BUDGET * 8 // b} slots", rmse(bbit(b)))
            for b in (8, 4, 2, 1)
        ],
        ("datasketch MinHash, 32 x 32-bit", rmse(ds_plain)),
        ("datasketch bBitMinHash, b=1, 1024 slots", rmse(ds_bbit)),
    ]
    print(f"\n| sketch at {BUDGET} bytes/document | RMSE vs exact Jaccard |")
    print("|---|---:|")
    for name, value in results:
        print(f"| {name} | {value:.4f} |")

    weighted_sets = term_counts(flat)
    exact_w = weighted_jaccard(weighted_sets, pairs)
    ours_w = rmse(
        lambda s: estimate_weighted_jaccard(
            WeightedMinHasher(SketchSpec(num_perm=128, seed=s)).sketch(weighted_sets), pairs
        ),
        exact_w,
    )
    print(f"\nweighted Jaccard (term counts), 128 samples: neardup ICWS RMSE {ours_w:.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--peer-docs", type=int, default=1000)
    parser.add_argument("--limit", type=int, help="only the first N RFCs for the throughput part")
    args = parser.parse_args()
    _, texts = load_rfcs(limit=args.limit)
    throughput(texts, args.peer_docs, args.repeat)
    accuracy(args.seeds)


if __name__ == "__main__":
    main()
