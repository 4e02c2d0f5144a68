"""Hamming search side by side: BPHS (4 and 10 tables), PSM (first and all match), faiss.

Data: 64-bit weighted SimHashes (word 3-shingles, TF-IDF learned from the paragraphs) of real
RFC text: the distinct paragraphs of 20+ words, then (for ``--n`` beyond them) distinct windows
of 4 consecutive lines, then random fingerprints if still short. Queries: ``--queries`` stored
paragraphs with one random word deleted (a real near copy: its bits flip as real edits flip
them; some 13% of them stay within h = 3 of their original), hashed with their per-bit
weights. Truth: every stored fingerprint within h = 3 (BPHS, which the tests prove equal to
brute force). PSM's flip probabilities come from the weight changes of 10,000 other edited
paragraphs. Printed: queries/s, RAM per stored fingerprint, and recall relative to the exact
answer; PSM's budget is the smallest power of two reaching 95% relative recall (PSMF: queries
with a neighbour that find one; PSMA: pairs), then the recall knob (``recall=0.95`` of the
model's probability) and batch mode (the collection on disk, read in chunks). Then seed 004's
Figure 3: attempts until the nearest neighbour's flip set comes up, VOSH against random order.

Run: ``.venv/bin/python bench/hamming.py [--n 1000000] [--queries 100000]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from math import comb
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpora import line_windows, load_rfcs, paragraphs  # noqa: E402
from neardup import ShingleSpec, SketchSpec  # noqa: E402
from neardup.hamming import (  # noqa: E402
    BlockPermutedIndex,
    PSMIndex,
    flip_probabilities,
    psm_batch_query,
    save_sorted,
    vosh_masks,
)
from neardup.sketch.simhash import SimHasher  # noqa: E402
from neardup.sketch.weighted import IDFWeights  # noqa: E402

H = 3


def _edit(texts: list[str], rng: np.random.Generator) -> list[str]:
    out = []
    for text in texts:
        words = text.split()
        drop = int(rng.integers(0, len(words)))
        out.append(" ".join(words[:drop] + words[drop + 1 :]))
    return out


def _chunks(items: list[str], size: int):  # type: ignore[no-untyped-def]
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _timed(run, repeat: int = 3):  # type: ignore[no-untyped-def]
    best, result = None, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return best, result


def vosh_versus_random(
    values: np.ndarray, queries: np.ndarray, probabilities: np.ndarray, rng: np.random.Generator
) -> None:
    """Attempts until the nearest neighbour's flip set comes up: VOSH order vs random order.

    Seed 004's Figure 3: for queries whose nearest stored fingerprint is 1..h bits away, the
    rank of the flip set leading to it among the non-empty sets of at most h bits, in VOSH
    order and in a random order; the attempts needed for 50/80/95/100% of the queries.
    """
    total = sum(comb(64, i) for i in range(1, H + 1))
    index = BlockPermutedIndex(values, max_distance=H, num_blocks=4)
    query, row = index.query(queries)
    distance = np.bitwise_count(queries[query] ^ values[row])
    nearest = {}
    for q, r, d in zip(query.tolist(), row.tolist(), distance.tolist(), strict=True):
        if q not in nearest or d < nearest[q][1]:
            nearest[q] = (r, d)
    ranks = []
    for q, (r, d) in nearest.items():
        if d == 0:
            continue
        masks = vosh_masks(probabilities[q], H, total + 1)[1:]  # without the empty set
        ranks.append(int(np.flatnonzero(masks == (queries[q] ^ values[r]))[0]) + 1)
    vosh = np.array(ranks)
    shuffled = rng.integers(1, total + 1, size=vosh.shape[0])  # uniform rank among all sets
    print(f"\nflips until the nearest neighbour ({vosh.shape[0]:,} queries with one 1-{H} bits "
          "away):\n")  # fmt: skip
    print("| share of queries | VOSH | random order | ratio |\n|---:|---:|---:|---:|")
    for share in (0.5, 0.8, 0.95, 1.0):
        a, b = np.quantile(vosh, share), np.quantile(shuffled, share)
        print(f"| {share:.0%} | {a:,.0f} | {b:,.0f} | {b / a:,.0f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--header-bits", type=int, default=20, help="PSM header table: 2^t")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    _, texts = load_rfcs()
    paras = list(dict.fromkeys(paragraphs(texts, min_words=20)))
    docs = paras[: args.n]
    if len(docs) < args.n:
        seen = set(docs)
        docs += [w for w in dict.fromkeys(line_windows(texts)) if w not in seen][
            : args.n - len(docs)
        ]
    spec = SketchSpec(kind="simhash", weighting="tfidf", shingle=ShingleSpec(k=3))
    hasher = SimHasher(spec, IDFWeights(spec).fit_batches(_chunks(paras, 200_000)))
    real = np.concatenate([hasher.sketch(chunk).values[:, 0] for chunk in _chunks(docs, 500_000)])
    real = np.unique(real)  # distinct fingerprints: boilerplate would otherwise swamp PSMA's recall
    padding = rng.integers(0, 2**64, size=max(0, args.n - real.shape[0]), dtype=np.uint64)
    values = np.concatenate([real, padding])
    stored = min(len(paras), args.n)
    print(f"{stored:,} paragraphs + {len(docs) - stored:,} line windows -> {real.shape[0]:,} "
          f"distinct SimHashes + {padding.shape[0]:,} random = {values.shape[0]:,} "
          f"fingerprints; {args.queries:,} queries, h = {H}")  # fmt: skip
    del docs

    picks = rng.choice(stored, size=args.queries + 10_000, replace=False)
    chosen = [paras[i] for i in picks]
    edited = _edit(chosen, rng)
    query_hashes, query_weights = hasher.sketch_with_bit_weights(edited[: args.queries])
    queries = query_hashes.values[:, 0]
    _, sample_before = hasher.sketch_with_bit_weights(chosen[args.queries :])
    _, sample_after = hasher.sketch_with_bit_weights(edited[args.queries :])
    probabilities = flip_probabilities(query_weights, sample_after - sample_before)

    rows = []
    build_s, bphs4 = _timed(lambda: BlockPermutedIndex(values, max_distance=H, num_blocks=4), 1)
    seconds, (q_truth, _) = _timed(lambda: bphs4.query(queries))
    truth = np.bincount(q_truth, minlength=args.queries)
    has = truth > 0
    rows.append(("BPHS, 4 tables", seconds, bphs4.memory_bytes(), 1.0))
    print(f"  done: BPHS, 4 tables: {args.queries / seconds:,.0f} queries/s", flush=True)
    bphs10 = BlockPermutedIndex(values, max_distance=H, num_blocks=5)
    seconds, _ = _timed(lambda: bphs10.query(queries))
    rows.append(("BPHS, 10 tables", seconds, bphs10.memory_bytes(), 1.0))

    def recall_of(found: np.ndarray, first_only: bool, part: slice = slice(None)) -> float:
        if first_only:
            return float(((found > 0) & has[part]).sum() / has[part].sum())
        return float(np.minimum(found, truth[part]).sum() / truth[part].sum())

    def report(row: tuple[str, float, float, float]) -> None:
        rows.append(row)
        print(f"  done: {row[0]}: {args.queries / row[1]:,.0f} queries/s, recall {row[3]:.3f}",
              flush=True)  # fmt: skip

    # Budgets are tuned on the first 10,000 queries, then timed once on all of them.
    tune = slice(0, min(10_000, args.queries))
    psm = PSMIndex(values, header_bits=args.header_bits)
    budgets = {}
    for first_only, name in ((True, "PSMF"), (False, "PSMA")):
        budget = 1
        while budget < 43745:
            matches = psm.query(queries[tune], probabilities[tune], max_distance=H,
                                budget=budget, first_only=first_only)  # fmt: skip
            if recall_of(matches.found_per_query(), first_only, tune) >= 0.95:
                break
            budget *= 2
        budgets[name] = budget
        seconds, matches = _timed(
            lambda b=budget, f=first_only: psm.query(
                queries, probabilities, max_distance=H, budget=b, first_only=f
            ),
            1,
        )
        label = f"{name}, budget {budget} (mean {matches.attempts.mean():,.0f} lookups)"
        report((label, seconds, psm.memory_bytes(),
                recall_of(matches.found_per_query(), first_only)))  # fmt: skip
        seconds, knob = _timed(
            lambda f=first_only: psm.query(
                queries, probabilities, max_distance=H, budget=43745, recall=0.95, first_only=f
            ),
            1,
        )
        label = f"{name}, recall knob 0.95 (mean {knob.attempts.mean():,.0f} lookups)"
        report((label, seconds, psm.memory_bytes(),
                recall_of(knob.found_per_query(), first_only)))  # fmt: skip
    with tempfile.TemporaryDirectory(dir=ROOT) as work:
        on_disk = Path(work) / "sorted"
        save_sorted(values, on_disk)
        options = {"max_distance": H, "budget": budgets["PSMA"], "chunk_rows": 1 << 20}
        seconds, batch = _timed(
            lambda: psm_batch_query(on_disk, queries[tune], probabilities[tune], **options), 1
        )
        share = args.queries / queries[tune].shape[0]
        label = (f"PSMA batch mode, budget {budgets['PSMA']}, 1M-row chunks from disk "
                 f"({queries[tune].shape[0]:,} queries; RAM: a chunk)")  # fmt: skip
        report((label, seconds * share, 16 * min(1 << 20, values.shape[0]),
                recall_of(batch.found_per_query(), False, tune)))  # fmt: skip

    import faiss

    as_bytes = values.view(np.uint8).reshape(-1, 8)
    multi = faiss.IndexBinaryMultiHash(64, 4, 16)
    multi.nflip = 0
    multi.add(as_bytes)
    query_bytes = queries.view(np.uint8).reshape(-1, 8)
    seconds, (lims, _, _) = _timed(lambda: multi.range_search(query_bytes, H + 1), 1)
    faiss_found = np.diff(lims)
    faiss_recall = float(np.minimum(faiss_found, truth).sum() / truth.sum())
    # RAM: faiss keeps the codes (8 B) plus, per hash table, a map entry per code (~12 B).
    rows.append(("faiss IndexBinaryMultiHash (4 x 16 bits)", seconds,
                 values.nbytes + 4 * 12 * values.shape[0], faiss_recall))  # fmt: skip
    flat = faiss.IndexBinaryFlat(64)
    flat.add(as_bytes)
    few = min(args.queries, 2000)
    seconds, (lims, _, _) = _timed(lambda: flat.range_search(query_bytes[:few], H + 1), 1)
    flat_recall = float(np.minimum(np.diff(lims), truth[:few]).sum() / truth[:few].sum())
    rows.append((f"brute force (faiss IndexBinaryFlat, {few:,} queries)",
                 seconds * args.queries / few, values.nbytes, flat_recall))  # fmt: skip

    vosh_versus_random(values, queries[:5000], probabilities[:5000], rng)
    print(f"\nBPHS build (4 tables): {build_s:.1f} s; queries with a neighbour within {H}: "
          f"{has.mean():.1%}\n")  # fmt: skip
    print("| method | queries/s | RAM bytes per fingerprint | recall (vs exact) |")
    print("|---|---:|---:|---:|")
    for name, secs, ram, recall in rows:
        print(f"| {name} | {args.queries / secs:,.0f} | {ram / values.shape[0]:.1f} "
              f"| {recall:.3f} |")  # fmt: skip


if __name__ == "__main__":
    main()
