"""SimHash precision and recall at h = 0..10 against TF-IDF cosine >= 0.9 (seed 004, Fig. 6a).

Seed 004 samples 100M random page pairs, calls a pair similar when the cosine of its TF-IDF
word vectors is at least 0.9, and plots, per Hamming distance h, the precision of "within h
bits" (similar pairs among those within h) and its recall (pairs within h among similar ones);
where the curves cross it takes h = 3. Here every pair of documents is counted, not a sample:
exact cosine for all pairs (sparse products, chunked) and every pair within 10 bits (the
block-permuted self-join, exact). Documents: one per exact-duplicate group; the ScanCode
licences and the RFCs. Features: words (TF-IDF, as the seed; sign and Gaussian hyperplanes)
and word 3-shingles (TF-IDF and TF); 64-bit SimHash, three seeds, figures averaged.

Run: ``.venv/bin/python bench/simhash_accuracy.py [--corpus licences|rfc|both]``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import sparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpora import load_rfcs  # noqa: E402
from neardup import IDFWeights, ShingleSpec, SimHasher, SketchSpec  # noqa: E402
from neardup.hamming import FingerprintTables  # noqa: E402
from neardup.sketch.weighted import term_counts  # noqa: E402

LICENCES = ROOT / "data" / "sample" / "licenses.jsonl.gz"
COSINE = 0.9
MAX_H = 10
SEEDS = (1, 2, 3)


def load_licences() -> list[str]:
    """The 2,310 ScanCode licence texts: every licence record of LicenseDB 32.1.0, bundled."""
    with gzip.open(LICENCES, "rt") as f:
        return [json.loads(line)["text"] for line in f]


def similar_pairs(texts: list[str], spec: SketchSpec, idf: IDFWeights | None) -> set[int]:
    """Codes ``i * n + j`` (i < j) of every pair with cosine >= COSINE."""
    weighted = idf.transform(texts) if idf is not None else term_counts(texts, spec)
    sets = weighted.sets
    _, columns = np.unique(sets.hashes, return_inverse=True)
    matrix = sparse.csr_matrix((weighted.weights, columns.reshape(-1), sets.offsets))
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    matrix = sparse.diags(1.0 / norms) @ matrix
    transposed = matrix.T.tocsr()
    n = len(texts)
    codes: list[np.ndarray] = []
    for start in range(0, n, 500):
        block = (matrix[start : start + 500] @ transposed).tocoo()
        i, j = block.row + start, block.col
        keep = (block.data >= COSINE - 1e-12) & (i < j)
        codes.append(i[keep].astype(np.int64) * n + j[keep])
    return set(np.concatenate(codes).tolist())


def distances(values: np.ndarray) -> dict[int, int]:
    """Codes ``i * n + j`` (i < j) of every pair within MAX_H bits, with their distance."""
    query, row = FingerprintTables(values, MAX_H).query(values)
    keep = query < row
    query, row = query[keep], row[keep]
    d = np.bitwise_count(values[query] ^ values[row]).sum(axis=1)
    return dict(zip((query * values.shape[0] + row).tolist(), d.tolist(), strict=True))


def study(name: str, texts: list[str]) -> None:
    # One document per exact-duplicate group (the seed removed exact duplicates too).
    fingerprints = SimHasher(SketchSpec(kind="simhash")).sketch(texts).fingerprints
    _, first = np.unique(fingerprints, axis=0, return_index=True)
    texts = [texts[i] for i in sorted(first.tolist()) if texts[i].split()]
    print(f"\n## {name}: {len(texts):,} distinct documents, {len(texts) * (len(texts) - 1) // 2:,} "
          f"pairs; similar = cosine >= {COSINE}\n")  # fmt: skip
    truths: dict[tuple[int, str], set[int]] = {}
    for label, shingle, weighting, projection in (
        ("words, TF-IDF, sign hyperplanes (seed 004)", ShingleSpec(k=1), "tfidf", "sign"),
        ("words, TF-IDF, Gaussian hyperplanes", ShingleSpec(k=1), "tfidf", "gaussian"),
        ("word 3-shingles, TF-IDF, sign hyperplanes", ShingleSpec(k=3), "tfidf", "sign"),
        ("word 3-shingles, TF, sign hyperplanes", ShingleSpec(k=3), "tf", "sign"),
    ):
        start = time.perf_counter()
        spec = SketchSpec(
            kind="simhash", shingle=shingle, weighting=weighting, projection=projection
        )  # type: ignore[arg-type]
        idf = IDFWeights(spec).fit(texts) if weighting == "tfidf" else None
        key = (shingle.k, weighting)
        if key not in truths:
            truths[key] = similar_pairs(texts, spec, idf)
        truth = truths[key]
        precision = np.zeros((len(SEEDS), MAX_H + 1))
        recall = np.zeros((len(SEEDS), MAX_H + 1))
        within = np.zeros((len(SEEDS), MAX_H + 1))
        for s, seed in enumerate(SEEDS):
            seeded = SketchSpec.from_dict({**spec.to_dict(), "seed": seed})
            found = distances(SimHasher(seeded, idf).sketch(texts).values)
            codes = np.array(list(found), dtype=np.int64)
            d = np.array(list(found.values()), dtype=np.int64)
            similar = np.isin(codes, np.array(sorted(truth), dtype=np.int64))
            for h in range(MAX_H + 1):
                near = d <= h
                within[s, h] = near.sum()
                hits = (near & similar).sum()
                precision[s, h] = hits / near.sum() if near.sum() else 1.0
                recall[s, h] = hits / len(truth) if truth else 1.0
        p, r = precision.mean(axis=0), recall.mean(axis=0)
        crossing = int(np.argmin(np.abs(p - r)))
        print(f"### {label}: {len(truth):,} similar pairs ({time.perf_counter() - start:.0f} s)\n")
        print("| h | pairs within h | precision | recall |\n|---:|---:|---:|---:|")
        for h in range(MAX_H + 1):
            mark = " (curves cross)" if h == crossing else ""
            print(f"| {h}{mark} | {within[:, h].mean():,.0f} | {p[h]:.3f} | {r[h]:.3f} |")
        print()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", choices=["licences", "rfc", "both"], default="both")
    args = parser.parse_args()
    if args.corpus in ("licences", "both"):
        study("ScanCode licences", load_licences())
    if args.corpus in ("rfc", "both"):
        study("RFCs", load_rfcs()[1])


if __name__ == "__main__":
    main()
