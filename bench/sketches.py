"""Every sketch side by side: speed from raw text, bytes per document, accuracy at equal storage.

1. Throughput on the RFC corpus (9,823 documents, 537 MB) from raw text, word 5-shingles: every
   neardup sketch kind (MinHash and OPH also with Rabin fingerprints; MinHash also by lead
   bytes, the left-to-right-minima trick), and datasketch's MinHash (Python tokenisation +
   ``update_batch``); the slow ones (datasketch, ICWS) on the first ``--peer-docs`` RFCs.
2. Accuracy at equal storage (128 bytes per document): RMSE of the Jaccard estimate against the
   exact Jaccard over the RFC obsoletes/updates pairs of ``../shared/data/rfc`` (exact values
   computed here from the shingle sets), over ``--seeds`` seeds; datasketch's MinHash (4-byte
   values as its ``LeanMinHash`` stores them) and ``bBitMinHash`` alongside.
3. Weighted MinHash (ICWS) against the exact weighted Jaccard of term counts, beside
   datasketch's ``WeightedMinHash`` on the same pairs (dense vectors per pair).
4. ``neardup.dedup`` of the bundled licence sample with every sketch kind: candidates,
   verified pairs and time.

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
from neardup import (  # noqa: E402
    CandidatePairs,
    Shingler,
    ShingleSpec,
    SketchSpec,
    exact_jaccard,
    make_sketcher,
)
from neardup.sketch.bbit import bbit_estimate, pack_bbit  # noqa: E402
from neardup.sketch.bottomk import BottomKSketcher, resemblance  # noqa: E402
from neardup.sketch.weighted import (  # noqa: E402
    IDFWeights,
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
    batches = [texts[i : i + 2000] for i in range(0, len(texts), 2000)]
    subset = texts[:peer_docs]
    sub_mb = sum(len(t.encode()) for t in subset) / 1e6

    def ours(
        name: str, spec: SketchSpec, on_subset: bool = False, kept: int | None = None
    ) -> tuple[str, float, int, int]:
        idf = IDFWeights(spec).fit(subset) if spec.weighting == "tfidf" else None
        sketcher = make_sketcher(spec, idf)
        sketcher.sketch(texts[:10])
        work = [subset] if on_subset else batches
        seconds = median_time(lambda: [sketcher.sketch(b) for b in work], repeat)
        size = kept if kept is not None else sketcher.width * 8
        return name, seconds, len(subset) if on_subset else len(texts), size

    rabin = ShingleSpec(fingerprint="rabin")
    rows = [
        ours("neardup OPH, 128 x 64-bit", SketchSpec()),
        ours("neardup OPH, Rabin fingerprints", SketchSpec(shingle=rabin)),
        ours("neardup MinHash, 128 x 64-bit", SketchSpec(kind="minhash")),
        ours("neardup MinHash, Rabin fingerprints", SketchSpec(kind="minhash", shingle=rabin)),
        ours("neardup MinHash by lead bytes, 128", SketchSpec(kind="minhash-lead")),
        ours("neardup bottom-k, k=128", SketchSpec(kind="bottomk")),
        ours("neardup b-bit OPH, b=2, 128 slots", SketchSpec(kind="bbit", bbits=2)),
        ours("neardup b-bit OPH, b=1, 1024 slots", SketchSpec(kind="bbit", bbits=1, num_perm=1024)),
        ours("neardup supershingle, altavista", SketchSpec(kind="supershingle"), kept=6 * 8),
        ours("neardup SimHash 64, Gaussian, word 5-shingles, TF", SketchSpec(kind="simhash")),
        ours("neardup SimHash 64, sign hyperplanes", SketchSpec(kind="simhash", projection="sign")),
        ours("neardup SimHash 128, Gaussian", SketchSpec(kind="simhash", simhash_bits=128)),
        ours(
            "neardup SimHash 64, Gaussian, words, TF-IDF",
            SketchSpec(kind="simhash", weighting="tfidf", shingle=ShingleSpec(k=1)),
        ),
        ours(
            f"neardup weighted (ICWS, counts), 128 (first {len(subset)} docs)",
            SketchSpec(kind="weighted"),
            on_subset=True,
        ),
    ]
    from datasketch import MinHash

    def datasketch_minhash() -> None:
        for text in subset:
            m = MinHash(num_perm=128, seed=1)
            m.update_batch(python_shingles(text))

    rows.append(
        (
            f"datasketch MinHash, 128 (first {len(subset)} docs)",
            median_time(datasketch_minhash, 1),
            len(subset),
            512,
        )
    )
    print(
        f"\n| sketch (RFC corpus, {len(texts):,} docs, {megabytes:,.0f} MB) "
        "| docs/s | MB/s | bytes/doc |"
    )
    print("|---|---:|---:|---:|")
    for name, seconds, docs, size in rows:
        mb = sub_mb if docs == len(subset) and docs != len(texts) else megabytes
        print(f"| {name} | {docs / seconds:,.0f} | {mb / seconds:,.1f} | {size:,} |")


def rmse_of(estimate: Callable[[int], np.ndarray], truth: np.ndarray, seeds: int) -> float:
    """Root mean squared error of ``estimate(seed)`` over seeds 0 .. seeds-1."""
    return float(np.sqrt(np.mean([(estimate(s) - truth) ** 2 for s in range(seeds)])))


def accuracy(seeds: int, max_pairs: int) -> None:
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
    # Evenly spaced over the table (datasketch's 1,024-permutation MinHash is slow).
    step = max(1, len(pairs_text) // max_pairs)
    pairs_text = pairs_text[::step][:max_pairs]
    flat = [t for pair in pairs_text for t in pair]
    first = np.arange(0, len(flat), 2, dtype=np.int64)
    pairs = CandidatePairs(first=first, second=first + 1)
    exact = exact_jaccard(Shingler().shingle_sets(flat), pairs)
    print(
        f"\naccuracy: {len(pairs_text):,} RFC obsoletes/updates pairs (every {step}), "
        f"exact J mean {exact.mean():.3f}, "
        f"{seeds} seeds, {BUDGET} bytes per document"
    )

    def rmse(estimate: Callable[[int], np.ndarray]) -> float:
        return rmse_of(estimate, exact, seeds)

    def sig(kind: str, k: int) -> Callable[[int], np.ndarray]:
        from neardup import estimate_jaccard

        return lambda s: estimate_jaccard(
            make_sketcher(SketchSpec(kind=kind, num_perm=k, seed=s)).sketch(flat), pairs
        )  # type: ignore[arg-type]

    def bbit(b: int) -> Callable[[int], np.ndarray]:
        k = BUDGET * 8 // b
        return lambda s: bbit_estimate(  # the unbiased estimator the RMSE table measured
            pack_bbit(make_sketcher(SketchSpec(num_perm=k, seed=s)).sketch(flat), b),
            pairs,
            unbiased=True,
        )

    def bottomk(s: int) -> np.ndarray:
        spec = SketchSpec(kind="bottomk", num_perm=BUDGET // 8, seed=s)
        return resemblance(BottomKSketcher(spec).sketch(flat), pairs)

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

    weighted_pairs(flat, pairs, seeds)


def weighted_pairs(flat: list[str], pairs: CandidatePairs, seeds: int, limit: int = 300) -> None:
    """ICWS against datasketch's WeightedMinHash on the first ``limit`` pairs (term counts).

    datasketch's generator needs dense vectors over a fixed vocabulary, so each pair gets its
    own vocabulary (the union of its two shingle sets); its cost grows with that size.
    """
    flat = flat[: 2 * limit]
    pairs = CandidatePairs(first=pairs.first[:limit], second=pairs.second[:limit])
    weighted_sets = term_counts(flat)
    exact_w = weighted_jaccard(weighted_sets, pairs)
    ours_w = rmse_of(
        lambda s: estimate_weighted_jaccard(
            WeightedMinHasher(SketchSpec(kind="weighted", num_perm=128, seed=s)).sketch_weighted(
                weighted_sets
            ),
            pairs,
        ),
        exact_w,
        seeds,
    )
    ours_s = median_time(
        lambda: WeightedMinHasher(SketchSpec(kind="weighted", seed=0)).sketch_weighted(
            weighted_sets
        ),
        1,
    )
    from datasketch import WeightedMinHashGenerator

    def datasketch_weighted(s: int) -> np.ndarray:
        out = []
        for p in range(limit):
            a, wa = weighted_sets.of(2 * p)
            b, wb = weighted_sets.of(2 * p + 1)
            vocabulary = np.union1d(a, b)
            dense = np.zeros((2, vocabulary.shape[0]))
            dense[0, np.searchsorted(vocabulary, a)] = wa
            dense[1, np.searchsorted(vocabulary, b)] = wb
            generator = WeightedMinHashGenerator(vocabulary.shape[0], sample_size=128, seed=s)
            out.append(generator.minhash(dense[0]).jaccard(generator.minhash(dense[1])))
        return np.array(out)

    start = time.perf_counter()
    ds_w = rmse_of(datasketch_weighted, exact_w, seeds)
    ds_s = (time.perf_counter() - start) / seeds
    print(
        f"\n| weighted Jaccard of term counts, {limit} RFC pairs, 128 samples | RMSE "
        "| seconds per run |\n|---|---:|---:|"
    )
    print(f"| neardup ICWS | {ours_w:.4f} | {ours_s:.2f} |")
    print(f"| datasketch WeightedMinHash (per-pair vocabulary) | {ds_w:.4f} | {ds_s:.2f} |")


def dedup_by_kind(repeat: int) -> None:
    """``neardup.dedup`` of the bundled licence sample with every sketch kind (threshold 0.8;
    SimHash: cosine 0.8 within the default ``h``)."""
    import gzip
    import json

    from neardup import DedupConfig, LSHSpec, dedup
    from neardup.sketch import SKETCHERS

    sample = ROOT / "data" / "sample" / "licenses.jsonl.gz"
    with gzip.open(sample, "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    texts, ids = [r["text"] for r in records], [r["id"] for r in records]
    print(f"\n| `--sketch` ({len(texts):,} licences, t=0.8) | candidates | verified pairs "
          "| seconds (median) |\n|---|---:|---:|---:|")  # fmt: skip
    for kind in SKETCHERS:
        config = DedupConfig(sketch=SketchSpec(kind=kind), lsh=LSHSpec(threshold=0.8))
        dedup(texts[:50], ids[:50], config)  # compile
        result = dedup(texts, ids, config)
        seconds = median_time(lambda c=config: dedup(texts, ids, c), repeat)
        counts = result.summary.counts
        print(f"| {kind} | {counts.candidate_pairs:,} | {counts.verified_pairs:,} "
              f"| {seconds:.2f} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--peer-docs", type=int, default=1000)
    parser.add_argument("--limit", type=int, help="only the first N RFCs for the throughput part")
    parser.add_argument("--pairs", type=int, default=1000, help="RFC pairs for the accuracy part")
    parser.add_argument("--part", choices=["all", "throughput", "accuracy", "dedup"], default="all")
    args = parser.parse_args()
    if args.part in ("all", "throughput"):
        _, texts = load_rfcs(limit=args.limit)
        throughput(texts, args.peer_docs, args.repeat)
    if args.part in ("all", "accuracy"):
        accuracy(args.seeds, args.pairs)
    if args.part in ("all", "dedup"):
        dedup_by_kind(args.repeat)


if __name__ == "__main__":
    main()
