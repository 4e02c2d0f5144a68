"""Hamming search on real near copies: PSM (seed 004) against BPHS, online and batch, and faiss.

Data (seed 004's setting on RFC text): every RFC that obsoletes another is a *new revision*; the
collection ``H`` is the distinct paragraphs (``--min-words`` words or more) of all the other RFCs
(the previous revisions among them), the queries are the paragraphs of the new revisions that
are not exact copies of a stored one (exact copies are found by hashing the bytes; the seed
removed them too). Fingerprints: 64-bit SimHash of the words, stop words removed and stemmed,
TF-IDF weighted (IDF from ``H``), Gaussian hyperplanes; ``h = 3``. Truth: BPHS (equal to brute
force by the tests). PSM's flip model is fitted from ``H`` (:meth:`FlipModel.fit`: the weight
changes of ``H``'s own pairs within ``h``), and each query's flip probabilities are computed
from its SimHash weights inside the timed call. Budgets ``k`` are the smallest powers of two
reaching 95% of BPHS's matches on the tuning queries (the first ``--tune`` share); every row
is then measured on the other queries. Relative recall as the seed defines it: PSMA, pairs found
over BPHS's pairs; PSMF, queries with a match found over queries BPHS finds one for.

Every search runs on all cores (numba); queries/s are medians of ``--repeat`` runs.
Run: ``.venv/bin/python bench/hamming.py [--min-words 10] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from collections.abc import Callable
from math import comb
from pathlib import Path
from typing import Any

import numba
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpora import RFC_ARCHIVE, load_rfcs, paragraphs  # noqa: E402
from neardup import NormalizeSpec, ShingleSpec, SketchSpec  # noqa: E402
from neardup.hamming import (  # noqa: E402
    BlockPermutedIndex,
    FlipModel,
    PSMIndex,
    SortedRuns,
    bphs_batch_query,
    psm_batch_query,
    vosh_masks,
)
from neardup.sketch.simhash import SimHasher  # noqa: E402
from neardup.sketch.weighted import IDFWeights  # noqa: E402

H = 3
RELATIONS = RFC_ARCHIVE.parent / "rfc_relations.tsv"
SPEC = SketchSpec(
    kind="simhash",
    shingle=ShingleSpec(k=1),
    weighting="tfidf",
    normalize=NormalizeSpec(stopwords="english", stem="english"),
)


def revisions(min_words: int) -> tuple[list[str], list[str]]:
    """``(stored, queries)``: paragraphs of the other RFCs, and new ones of the new revisions."""
    with open(RELATIONS, newline="") as file:
        newer = {
            f"rfc{r['rfc']}"
            for r in csv.DictReader(file, delimiter="\t")
            if r["relation"] == "obsoletes" and r["target_series"] == "RFC"
        }
    ids, texts = load_rfcs()
    stored: dict[str, None] = {}
    asked: dict[str, None] = {}
    for rfc, text in zip(ids, texts, strict=True):
        (asked if rfc in newer else stored).update(
            dict.fromkeys(paragraphs([text], min_words=min_words))
        )
    return list(stored), [p for p in asked if p not in stored]


def median_time(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The median wall time of ``repeat`` runs, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), result


def hash_all(hasher: SimHasher, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Fingerprints and bit weights, 200,000 texts at a time."""
    values, weights = [], []
    for start in range(0, len(texts), 200_000):
        signatures, w = hasher.sketch_with_bit_weights(texts[start : start + 200_000])
        values.append(signatures.values[:, 0])
        weights.append(w)
    return np.concatenate(values), np.concatenate(weights)


def flip_order(
    values: np.ndarray,
    queries: np.ndarray,
    p: np.ndarray,
    q_truth: np.ndarray,
    r_truth: np.ndarray,
    t: int,
    rng: np.random.Generator,
) -> None:
    """Seed 004's Figure 3 on the header: VOSH rank of each true match's header flip set."""
    shift = np.uint64(64 - t)
    diff = (queries[q_truth] ^ values[r_truth]) >> shift
    moved = diff != 0
    total = sum(comb(t, i) for i in range(1, H + 1))
    ranks = []
    sample = rng.permutation(np.flatnonzero(moved))[:2000]
    for q, d in zip(q_truth[sample].tolist(), diff[sample].tolist(), strict=True):
        masks = vosh_masks(p[q, 64 - t :], H, total + 1)  # VOSH over the header bits only
        ranks.append(int(np.flatnonzero(masks == d)[0]))
    vosh = np.array(ranks)
    uniform = rng.integers(1, total + 1, size=vosh.shape[0])
    print(
        f"\nheader flip sets tried until a match with a flipped header bit comes up "
        f"({vosh.shape[0]:,} sampled of {moved.sum():,} such matches, of {q_truth.shape[0]:,}; "
        f"{total:,} sets of 1-{H} of {t} bits):\n"
    )
    print("| share of those matches | VOSH | random order | ratio |\n|---:|---:|---:|---:|")
    for share in (0.5, 0.8, 0.95, 1.0):
        a, b = np.quantile(vosh, share), np.quantile(uniform, share)
        print(f"| {share:.0%} | {a:,.0f} | {b:,.0f} | {b / a:,.0f}x |")


def budget_for(
    psm: PSMIndex,
    queries: np.ndarray,
    p: np.ndarray,
    first_only: bool,
    reached: Callable[[np.ndarray], float],
) -> int:
    """The smallest power of two reaching 95% relative recall on the tuning queries."""
    k = 1
    while k < sum(comb(psm.header_bits, i) for i in range(H + 1)):
        found = psm.query(queries, p, max_distance=H, budget=k, first_only=first_only)
        if reached(found.found_per_query()) >= 0.95:
            break
        k *= 2
    return k


def scaling(
    values: np.ndarray,
    queries: np.ndarray,
    p: np.ndarray,
    tune: np.ndarray,
    sizes: list[int],
    repeat: int,
) -> None:
    """Seed 004's Figure 7: the same queries as the collection grows (random fingerprints
    added; none is within h of a query), BPHS with 4 tables against PSM with t = log2 n."""
    rng = np.random.default_rng(1)
    test = ~tune
    print(
        "\n| fingerprints | BPHSA-4 q/s | PSMA q/s (k) | x | BPHSF-4 q/s | PSMF q/s (k) | x | "
        "RAM PSM / BPHS |\n|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    for n in sizes:
        padded = np.concatenate(
            [values, rng.integers(0, 2**64, size=max(0, n - values.shape[0]), dtype=np.uint64)]
        )
        bphs = BlockPermutedIndex(padded, max_distance=H, num_blocks=4)
        q_truth, _ = bphs.query(queries)
        found_by = np.bincount(q_truth, minlength=queries.shape[0])
        psm = PSMIndex(padded)
        cells = []
        for first_only in (False, True):

            def reached(
                found: np.ndarray, f: bool = first_only, found_by: np.ndarray = found_by
            ) -> float:
                if f:  # PSM never reports a pair BPHS does not
                    return float((found > 0).sum() / (found_by[tune] > 0).sum())
                return float(found.sum() / found_by[tune].sum())

            k = budget_for(psm, queries[tune], p[tune], first_only, reached)
            base, _ = median_time(
                lambda f=first_only, b=bphs: b.query(queries[test], first_only=f), repeat
            )
            seconds, _ = median_time(
                lambda k=k, f=first_only, s=psm: s.query(
                    queries[test], p[test], max_distance=H, budget=k, first_only=f
                ),
                repeat,
            )
            m = test.sum()
            cells.append(f"{m / base:,.0f} | {m / seconds:,.0f} ({k}) | {base / seconds:.2f}")
        ram = psm.memory_bytes() / bphs.memory_bytes()
        print(f"| {n:,} | {' | '.join(cells)} | {ram:.2f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--min-words", type=int, default=10)
    parser.add_argument("--tune", type=float, default=0.2, help="share of queries for tuning k")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--scale",
        default="8000000,32000000",
        help="collection sizes (commas) for the scaling table; empty: none",
    )
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    stored, asked = revisions(args.min_words)
    idf = IDFWeights(SPEC).fit_batches(
        stored[i : i + 200_000] for i in range(0, len(stored), 200_000)
    )
    hasher = SimHasher(SPEC, idf)
    values, weights = hash_all(hasher, stored)
    queries, query_weights = hash_all(hasher, asked)
    n, m = values.shape[0], queries.shape[0]
    print(
        f"{n:,} stored paragraphs ({np.unique(values).shape[0]:,} distinct fingerprints), "
        f"{m:,} query paragraphs, h = {H}, {numba.get_num_threads()} threads; data "
        f"{time.perf_counter() - start:.0f} s",
        flush=True,
    )
    fit_s, model = median_time(lambda: FlipModel.fit(values, weights, max_distance=H), 1)
    print(f"flip model: {model.source}, {model.pairs:,} pairs, fitted in {fit_s:.1f} s", flush=True)

    tune = np.arange(m) < int(args.tune * m)
    test = ~tune
    bphs = {
        g: BlockPermutedIndex(values, max_distance=H, num_blocks=g + H, leading_blocks=g)
        for g in (1, 2)
    }
    q_truth, r_truth = bphs[1].query(queries)
    found_by = np.bincount(q_truth, minlength=m)
    has = found_by > 0
    distances = np.bincount(np.bitwise_count(queries[q_truth] ^ values[r_truth])).tolist()
    print(
        f"BPHS: {q_truth.shape[0]:,} pairs within {H}; {has.sum():,} queries "
        f"({has.mean():.1%}) have one; pairs at distance 0..{H}: {distances}",
        flush=True,
    )

    def recall(found: np.ndarray, first_only: bool, part: np.ndarray) -> float:
        if first_only:
            return float(((found > 0) & has & part).sum() / (has & part).sum())
        return float(found[part].sum() / found_by[part].sum())

    rows: list[tuple[str, float, int, float]] = []

    def row(name: str, seconds: float, ram: int, rec: float) -> None:
        rows.append((name, seconds, ram, rec))
        print(f"  {name}: {test.sum() / seconds:,.0f} queries/s, recall {rec:.3f}", flush=True)

    q_test, w_test = queries[test], query_weights[test]
    for g, index in bphs.items():
        tables = f"BPHS{{}}, {index.num_tables} tables (G = {g + H}, g = {g})"
        seconds, _ = median_time(lambda i=index: i.query(q_test), args.repeat)
        row(tables.format("A"), seconds, index.memory_bytes(), 1.0)
        seconds, _ = median_time(lambda i=index: i.query(q_test, first_only=True), args.repeat)
        row(tables.format("F"), seconds, index.memory_bytes(), 1.0)

    psm = PSMIndex(values)
    t = psm.header_bits
    p_all = model.probabilities(query_weights)
    budgets = {}
    for name, first_only in (("PSMF", True), ("PSMA", False)):
        k = budget_for(
            psm,
            queries[tune],
            p_all[tune],
            first_only,
            lambda found, f=first_only: recall(_spread(found, tune), f, tune),
        )
        budgets[name] = k

        def search(k: int = k, first_only: bool = first_only, recall: float = 1.0) -> Any:
            p = model.probabilities(w_test)
            return psm.query(
                q_test, p, max_distance=H, budget=k, first_only=first_only, recall=recall
            )

        knobs: tuple[tuple[str, dict[str, Any], str], ...] = (
            (f"k = {k}", {}, f", t = {t}"),
            ("recall knob 0.95", {"k": 2**20, "recall": 0.95}, ""),
        )
        for knob, options, suffix in knobs:
            seconds, found = median_time(lambda s=search, o=options: s(**o), args.repeat)
            row(
                f"{name}, {knob} (mean {found.attempts.mean():.1f} buckets){suffix}",
                seconds,
                psm.memory_bytes(),
                recall(_spread(found.found_per_query(), test), first_only, test),
            )

    chunk = 1 << 20
    with tempfile.TemporaryDirectory(dir=ROOT) as work:
        runs = SortedRuns.create(Path(work) / "h", values)
        for name, first_only in (("PSMF", True), ("PSMA", False)):
            k = budgets[name]
            seconds, found = median_time(
                lambda k=k, f=first_only: psm_batch_query(
                    runs,
                    q_test,
                    model.probabilities(w_test),
                    max_distance=H,
                    budget=k,
                    first_only=f,
                    chunk_rows=chunk,
                ),
                args.repeat,
            )
            row(
                f"{name} batch, k = {k}, {chunk:,}-row chunks from disk",
                seconds,
                q_test.shape[0] * (8 + 8 * 64) + 16 * chunk + 4 * 2**20,  # Q with its p, a chunk
                recall(_spread(found.found_per_query(), test), first_only, test),
            )
        seconds, (q, _) = median_time(
            lambda: bphs_batch_query(
                runs.chunks(chunk), q_test, max_distance=H, num_blocks=4, leading_blocks=1
            ),
            args.repeat,
        )
        row(
            f"BPHS batch, 4 tables over the queries, {chunk:,}-row chunks",
            seconds,
            4 * 16 * q_test.shape[0] + 16 * chunk,
            float(q.shape[0] / found_by[test].sum()),
        )

    import faiss

    as_bytes = values.view(np.uint8).reshape(-1, 8)
    multi = faiss.IndexBinaryMultiHash(64, 4, 16)
    multi.nflip = 0
    multi.add(as_bytes)
    seconds, (lims, _, _) = median_time(
        lambda: multi.range_search(q_test.view(np.uint8).reshape(-1, 8), H + 1), args.repeat
    )
    # RAM: the codes (8 B) plus, per hash table, a map entry per code (~12 B).
    row(
        "faiss IndexBinaryMultiHash (4 x 16 bits)",
        seconds,
        values.nbytes + 48 * n,
        float(np.diff(lims).sum() / found_by[test].sum()),
    )

    buckets = np.diff(psm.header)
    print(
        f"\nPSM header: t = {t}, {buckets.shape[0]:,} buckets, {(buckets > 0).mean():.1%} "
        f"non-empty, mean {buckets[buckets > 0].mean():.2f} and max {buckets.max():,} "
        "fingerprints in a non-empty one"
    )
    flip_order(values, queries, p_all, q_truth, r_truth, t, rng)
    if args.scale:
        order = np.concatenate([np.flatnonzero(tune), np.flatnonzero(test)])
        scaling(
            values,
            queries[order],
            p_all[order],
            np.arange(m) < tune.sum(),
            [n] + [int(size) for size in args.scale.split(",")],
            args.repeat,
        )
    base = rows[0]
    print(f"\n{test.sum():,} timed queries; ratios against {base[0]}\n")
    print(
        "| method | queries/s | x BPHSA-4 | RAM bytes per fingerprint | x BPHS-4 | recall vs BPHS |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, secs, ram, rec in rows:
        print(
            f"| {name} | {test.sum() / secs:,.0f} | {base[1] / secs:.2f} | {ram / n:.1f} | "
            f"{ram / base[2]:.2f} | {rec:.3f} |"
        )


def _spread(found_in_test: np.ndarray, test: np.ndarray) -> np.ndarray:
    """Counts of the timed queries placed back among all queries (zeros elsewhere)."""
    out = np.zeros(test.shape[0], dtype=np.int64)
    out[test] = found_in_test
    return out


if __name__ == "__main__":
    main()
