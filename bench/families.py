"""Similarity joins side by side: neardup's LSH families against exact brute force and peers.

Data, all from the RFC corpus (``$NEARDUP_SHARED_DATA/rfc`` or ``../shared/data/rfc``): the
paragraphs of 20 or more words, lower-cased with whitespace collapsed, distinct, in archive
order (about 908,000; the first ``--n`` of them are used, 100,000 by default). RFCs repeat
boilerplate with small changes, so there are real close pairs. Each paragraph becomes a hashed
word-count vector (2^16 buckets, sublinear TF times IDF learned on the paragraphs used,
L2-normalised), projected by a fixed Gaussian matrix to 256 dimensions (float32).

1. **Cosine** (unit vectors) at 0.9 and 0.95: exact brute force (NumPy, blocked BLAS
   products: the baseline), FAISS ``IndexFlatIP.range_search`` (exact, C++), scikit-learn
   ``NearestNeighbors.radius_neighbors`` (brute, cosine), neardup ``vector_join``, and FAISS
   ``IndexLSH`` (k nearest by Hamming distance of the sign bits of a random rotation, then
   verified):
   for each ``nbits`` the least ``k`` (of 8, 16, 32, 64) reaching neardup's measured recall is
   found on one search, then timed end to end.
2. **Hamming**: the 256 sign bits of the same vectors at h = 8 and 16: brute force (the bits
   as +-1 floats, ``h = (256 - x.y) / 2`` by BLAS: exact), FAISS ``IndexBinaryFlat``
   (exact popcount scan), ``IndexBinaryMultiHash`` with ``h + 1`` tables of ``256 // (h + 1)``
   bits (exact by the pigeonhole principle), ``IndexBinaryHash`` (16 bits, 2 flips), neardup.
3. **L2** on the projections scaled by 1/16 (norms near 1) at 0.45, and **L1** on two kinds of
   integer rows: the first 64 coordinates quantised to steps of 0.25 (a narrow range), the
   first ``--n-l1`` rows, at ``--l1-threshold`` (48 steps); and the whole RFCs' word counts in
   64 hashed bins (heavy-tailed, as the documents' lengths are; quick: the first 3,000) at
   ``--l1-count-threshold`` (400 words): brute force, scikit-learn radius queries, and neardup
   with each L1 family (Cauchy projections, the default; seed 002's unary code).
4. **Jaccard** of word shingle sets at 0.95, 0.9, 0.8, 0.7 and 0.5: the exact prefix-filter
   join (the truth), neardup's MinHash LSH join (recall 0.95, the default, and 0.999), and on
   the paragraphs (word 3-shingles) datasketch ``MinHashLSH`` over the same shingle hashes (128
   permutations built once with ``MinHash.bulk``; with the bands it chooses itself, and with
   neardup's); on the whole RFCs (word 5-shingles) the neardup joins only (datasketch hashes
   every shingle in Python: minutes for the 60 million shingles).
5. **The CLI** as a separate process: ``neardup join vecs.npy --metric cosine --threshold 0.9``
   on the cosine section's vectors: wall time and peak RSS.

Every candidate pair of every method is measured by the same exact measure; the truth is
computed independently in float64 (NumPy). Printed per method: the median wall time
(``--repeat`` runs for neardup, brute force and the fast peers, ``--peer-repeat`` for the
slow ones), its ratio to neardup's, the pairs found, recall (overall, and "near t": of the
pairs within 0.02 of a similarity threshold or 2% of a distance threshold, the hard ones) and
precision. Building each index is timed with its method; the FAISS IndexLSH tuning searches
are not. A pass whose cost does not depend on the threshold (brute force, FAISS flat,
scikit-learn) is run once at the loosest threshold and serves every threshold. The CLI's peak
RSS is ``getrusage(RUSAGE_CHILDREN)`` of a wrapper process that runs only the CLI.

Run: ``.venv/bin/python bench/families.py [--quick]`` (full: 8 to 12 minutes on 2 cores; quick: 1).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import neardup  # noqa: E402
from bench.corpora import load_rfcs, paragraphs  # noqa: E402
from neardup import CandidatePairs, Shingler, ShingleSpec  # noqa: E402
from neardup.join.distances import pair_values  # noqa: E402
from neardup.join.sets import set_join  # noqa: E402
from neardup.join.vectors import vector_join  # noqa: E402
from neardup.lsh import pack_bits  # noqa: E402
from neardup.params import JoinSpec  # noqa: E402
from neardup.verify import exact_jaccard  # noqa: E402

DIM = 256
HASHED_FEATURES = 1 << 16
COSINE = (0.9, 0.95)
HAMMING = (8, 16)
L2_THRESHOLD = 0.45
L1_DIMS, L1_STEP = 64, 0.25
JACCARD = (0.95, 0.9, 0.8, 0.7, 0.5)
NEAR = 0.02
"""Pairs within this of a similarity threshold (within this fraction of a distance threshold)
are the hard ones: their recall is printed apart."""
STRICT_RECALL = 0.999
"""The recall the second LSH set join asks for: the price of coming close to the exact join."""
BLOCK_ROWS, BLOCK_COLUMNS = 4096, 16384
PAIR_CHUNK = 1 << 16


def rfc_archive() -> Path:
    """The RFC archive, where tests/conftest.py and bench/corpora.py look for it."""
    data = Path(os.environ.get("NEARDUP_SHARED_DATA", ROOT.parent / "shared" / "data"))
    return data / "rfc" / "rfc_txt.tar.xz"


def environment() -> str:
    import datasketch
    import faiss
    import numba
    import sklearn

    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        found = re.search(r"model name\s*:\s*(.+)", cpuinfo.read_text())
        cpu = found.group(1).strip() if found else cpu
    return (
        f"date {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; {os.cpu_count()} cores "
        f"({cpu}), {platform.system()} {platform.release()}; Python {platform.python_version()}"
        f"; neardup {neardup.__version__}, numpy {np.__version__}, numba {numba.__version__} "
        f"({numba.get_num_threads()} threads), faiss {faiss.__version__} "
        f"({faiss.omp_get_max_threads()} threads), scikit-learn {sklearn.__version__}, "
        f"datasketch {datasketch.__version__}"
    )


def timed(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The median wall time of ``repeat`` runs, and the last run's result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


# data -----------------------------------------------------------------------------------------


def distinct_paragraphs(texts: list[str]) -> list[str]:
    """Paragraphs of 20+ words, lower-cased, whitespace collapsed, distinct, in order."""
    return list(dict.fromkeys(" ".join(p.lower().split()) for p in paragraphs(texts, min_words=20)))


def text_vectors(paras: list[str], n: int) -> tuple[list[str], np.ndarray]:
    """The first ``n`` paragraphs with a word, and their 256-d Gaussian projections of TF-IDF."""
    from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer

    hasher = HashingVectorizer(n_features=HASHED_FEATURES, alternate_sign=False, norm=None)
    counts = hasher.transform(paras[: n + n // 10 + 100])
    kept = np.flatnonzero(counts.getnnz(axis=1) > 0)[:n]
    tfidf = TfidfTransformer(sublinear_tf=True).fit_transform(counts[kept])
    rng = np.random.default_rng(0)
    projection = rng.standard_normal((HASHED_FEATURES, DIM)).astype(np.float32)
    projected = np.asarray(tfidf @ projection, dtype=np.float32)
    return [paras[i] for i in kept], projected


# truth ------------------------------------------------------------------------------------------


def blocked_pairs(
    left: np.ndarray, right: np.ndarray, keep: Callable[[np.ndarray], np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``i < j`` whose BLAS product ``left[i] . right[j]`` passes ``keep``, by blocks."""
    n = left.shape[0]
    firsts, seconds = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
    for i in range(0, n, BLOCK_ROWS):
        rows = left[i : i + BLOCK_ROWS]
        for j in range(i, n, BLOCK_COLUMNS):
            a, b = np.nonzero(keep(rows @ right[j : j + BLOCK_COLUMNS].T))
            a += i
            b += j
            upper = b > a
            firsts.append(a[upper].astype(np.int64))
            seconds.append(b[upper].astype(np.int64))
    return np.concatenate(firsts), np.concatenate(seconds)


def exact_cosine(vectors: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The cosine of each pair in float64, by NumPy (independent of neardup's kernels)."""
    out = np.empty(first.shape[0])
    for s in range(0, first.shape[0], PAIR_CHUNK):
        part = slice(s, s + PAIR_CHUNK)
        a = vectors[first[part]].astype(np.float64)
        b = vectors[second[part]].astype(np.float64)
        out[part] = np.einsum("ij,ij->i", a, b) / np.sqrt(
            np.einsum("ij,ij->i", a, a) * np.einsum("ij,ij->i", b, b)
        )
    return out


def exact_distance(
    vectors: np.ndarray, first: np.ndarray, second: np.ndarray, p: int
) -> np.ndarray:
    """The L1 (``p`` 1) or L2 distance of each pair in float64, by NumPy."""
    out = np.empty(first.shape[0])
    for s in range(0, first.shape[0], PAIR_CHUNK):
        part = slice(s, s + PAIR_CHUNK)
        diff = vectors[first[part]].astype(np.float64) - vectors[second[part]].astype(np.float64)
        out[part] = np.abs(diff).sum(1) if p == 1 else np.sqrt((diff * diff).sum(1))
    return out


class Truth:
    """The exact close pairs at the loosest threshold, as keys ``first * n + second``."""

    def __init__(self, n: int, first: np.ndarray, second: np.ndarray, values: np.ndarray) -> None:
        self.n = n
        self.keys = first * n + second
        self.values = values

    def close(self, threshold: float, similarity: bool) -> np.ndarray:
        """The keys of the true pairs at ``threshold``: what an exact pass reports there."""
        within = self.values >= threshold if similarity else self.values <= threshold
        return self.keys[within]

    def score(
        self, keys: np.ndarray, threshold: float, similarity: bool
    ) -> tuple[int, float, float, float]:
        """``(pairs, recall, recall near the threshold, precision)`` of ``keys``.

        Near the threshold: within :data:`NEAR` of a similarity, within ``NEAR`` times a
        distance (for Hamming and L1, the pairs exactly at it).
        """
        close = self.values >= threshold if similarity else self.values <= threshold
        width = NEAR if similarity else NEAR * threshold
        near = close & (np.abs(self.values - threshold) <= width)
        true = self.keys[close]
        keys = np.unique(keys)
        hit = np.isin(true, keys)
        recall = float(hit.mean()) if true.shape[0] else 1.0
        near_recall = float(np.isin(self.keys[near], keys).mean()) if near.any() else 1.0
        precision = float(np.isin(keys, true).mean()) if keys.shape[0] else 1.0
        return int(keys.shape[0]), recall, near_recall, precision


Row = tuple[str, float, int, float, float, float, str]


def print_table(title: str, rows: list[Row], base: float) -> None:
    print(f"\n{title}\n")
    print(
        "| method | wall s | time vs neardup | pairs | recall | recall near t | precision | notes |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name, seconds, num_pairs, recall, near, precision, notes in rows:
        print(
            f"| {name} | {seconds:.2f} | {seconds / base:.1f}x | {num_pairs:,} | {recall:.4f} "
            f"| {near:.4f} | {precision:.4f} | {notes} |",
            flush=True,
        )


def result_keys(result: Any, n: int) -> np.ndarray:
    return np.asarray(result.first, np.int64) * n + np.asarray(result.second, np.int64)


def pair_keys(query: np.ndarray, found: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct pairs ``(min, max)`` of the query-result links, without self links."""
    other = query != found
    a, b = np.minimum(query[other], found[other]), np.maximum(query[other], found[other])
    keys = np.unique(a.astype(np.int64) * n + b)
    return keys // n, keys % n


def neardup_row(run: Callable[[], Any], repeat: int) -> tuple[float, Any, str]:
    seconds, result = timed(run, repeat)
    info = result.info
    notes = (
        f"{info['num_bands']} bands x {info['num_rows']} rows, predicted recall "
        f"{info['predicted_recall']:.3f}, {info['num_candidates']:,} candidates"
        if info.get("num_bands")
        else f"{info['num_candidates']:,} candidates verified"
    )
    return seconds, result, notes


# 1. cosine ---------------------------------------------------------------------------------------


def faiss_lsh(
    vectors: np.ndarray, nbits: int, k: int, threshold: float
) -> tuple[np.ndarray, np.ndarray, int]:
    """FAISS IndexLSH: the ``k`` nearest codes of every vector, verified by exact cosine."""
    import faiss

    index = faiss.IndexLSH(vectors.shape[1], nbits, True, False)
    index.train(vectors)
    index.add(vectors)
    _, found = index.search(vectors, k)
    n = vectors.shape[0]
    first, second = pair_keys(np.repeat(np.arange(n), k), found.reshape(-1), n)
    values = pair_values("cosine", vectors, first, second)
    close = values >= threshold
    return first[close], second[close], int(first.shape[0])


def cosine_section(vectors: np.ndarray, args: argparse.Namespace) -> dict[str, Any]:
    import faiss
    from sklearn.neighbors import NearestNeighbors

    n = vectors.shape[0]
    loose = min(COSINE)
    vector_join(vectors[:2000], JoinSpec(metric="cosine", threshold=loose))  # compile

    def brute() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        first, second = blocked_pairs(vectors, vectors, lambda s: s >= loose - 1e-4)
        return first, second, exact_cosine(vectors, first, second)

    brute_s, (first, second, values) = timed(brute, args.repeat)
    truth = Truth(n, first, second, values)
    print(
        f"  brute force: {brute_s:.1f} s, {int((values >= loose).sum()):,} pairs >= {loose}",
        flush=True,
    )

    def flat() -> Any:
        index = faiss.IndexFlatIP(DIM)
        index.add(vectors)
        return index.range_search(vectors, loose - 1e-4)

    flat_s, (lims, _, found) = timed(flat, args.peer_repeat)
    flat_first, flat_second = pair_keys(
        np.repeat(np.arange(n), np.diff(lims).astype(np.int64)), found, n
    )
    flat_values = pair_values("cosine", vectors, flat_first, flat_second)

    def sklearn() -> Any:
        model = NearestNeighbors(radius=1 - loose, metric="cosine", algorithm="brute", n_jobs=-1)
        return model.fit(vectors).radius_neighbors(vectors, return_distance=False)

    sk_s, neighbours = timed(sklearn, args.peer_repeat)
    sizes = np.fromiter((len(x) for x in neighbours), np.int64, n)
    sk_first, sk_second = pair_keys(
        np.repeat(np.arange(n), sizes), np.concatenate(list(neighbours)).astype(np.int64), n
    )
    sk_values = pair_values("cosine", vectors, sk_first, sk_second)
    print(f"  FAISS flat: {flat_s:.1f} s; scikit-learn: {sk_s:.1f} s", flush=True)

    # FAISS IndexLSH: one search per nbits with the largest k gives the recall of every k.
    tuning: dict[int, Any] = {}
    for nbits in (64, 128, 256):
        index = faiss.IndexLSH(DIM, nbits, True, False)
        index.train(vectors)
        index.add(vectors)
        _, found = index.search(vectors, 64)
        tuning[nbits] = found
    results: dict[str, Any] = {"brute_s": brute_s, "truth": truth}
    for t in COSINE:
        spec = JoinSpec(metric="cosine", threshold=t)
        nd_s, nd, notes = neardup_row(lambda s=spec: vector_join(vectors, s), args.repeat)
        _, nd_recall, _, _ = truth.score(result_keys(nd, n), t, True)
        rows: list[Row] = [
            ("neardup vector_join", nd_s, *truth.score(result_keys(nd, n), t, True), notes)
        ]
        rows.append(
            (
                "exact brute force (NumPy BLAS blocks)",
                brute_s,
                *truth.score(truth.close(t, True), t, True),
                "one pass serves both thresholds",
            )
        )
        keys = (flat_first * n + flat_second)[flat_values >= t]
        rows.append(
            (
                "FAISS IndexFlatIP range_search (exact)",
                flat_s,
                *truth.score(keys, t, True),
                "one pass serves both thresholds",
            )
        )
        keys = (sk_first * n + sk_second)[sk_values >= t]
        rows.append(
            (
                "scikit-learn radius_neighbors (brute, cosine)",
                sk_s,
                *truth.score(keys, t, True),
                "one pass serves both thresholds",
            )
        )
        for nbits, found in tuning.items():
            chosen, reached = 64, 0.0
            for k in (8, 16, 32, 64):
                f, s = pair_keys(np.repeat(np.arange(n), k), found[:, :k].reshape(-1), n)
                close = pair_values("cosine", vectors, f, s) >= t
                reached = truth.score(f[close] * n + s[close], t, True)[1]
                if reached >= nd_recall:
                    chosen = k
                    break
            seconds, (f, s, num_candidates) = timed(
                lambda b=nbits, k=chosen, t=t: faiss_lsh(vectors, b, k, t), args.peer_repeat
            )
            note = f"{num_candidates:,} candidates" + (
                "" if reached >= nd_recall else f"; no k <= 64 reaches {nd_recall:.4f}"
            )
            rows.append(
                (
                    f"FAISS IndexLSH nbits={nbits}, k={chosen}",
                    seconds,
                    *truth.score(f * n + s, t, True),
                    note,
                )
            )
        print_table(f"Cosine >= {t}, {n:,} vectors of {DIM} dims", rows, nd_s)
        results[t] = {"neardup_s": nd_s, "recall": nd_recall, "rows": rows, "info": nd.info}
    return results


# 2. Hamming --------------------------------------------------------------------------------------


def hamming_section(vectors: np.ndarray, args: argparse.Namespace) -> None:
    import faiss

    n = vectors.shape[0]
    bits = vectors > 0
    packed = pack_bits(bits)
    codes = np.packbits(bits, axis=1, bitorder="little")
    signs = np.where(bits, np.float32(1), np.float32(-1))
    loose = max(HAMMING)
    vector_join(packed[:2000], JoinSpec(metric="hamming", threshold=loose), dim=DIM)  # compile

    def brute() -> tuple[np.ndarray, np.ndarray]:
        return blocked_pairs(signs, signs, lambda s: s >= DIM - 2 * loose)

    brute_s, (first, second) = timed(brute, args.peer_repeat)
    distance = np.bitwise_count(packed[first] ^ packed[second]).sum(axis=1).astype(np.float64)
    truth = Truth(n, first, second, distance)

    def faiss_pairs(index: Any, h: int) -> np.ndarray:
        index.add(codes)
        lims, found_distance, found = index.range_search(codes, h + 1)  # strictly below radius
        query = np.repeat(np.arange(n), np.diff(lims).astype(np.int64))
        keep = (found > query) & (found_distance <= h)
        return query[keep].astype(np.int64) * n + found[keep]

    for h in HAMMING:
        spec = JoinSpec(metric="hamming", threshold=h)
        nd_s, nd, notes = neardup_row(lambda s=spec: vector_join(packed, s, dim=DIM), args.repeat)
        rows: list[Row] = [
            ("neardup vector_join", nd_s, *truth.score(result_keys(nd, n), h, False), notes)
        ]
        rows.append(
            (
                "exact brute force (+-1 bits, NumPy BLAS blocks)",
                brute_s,
                *truth.score(truth.close(h, False), h, False),
                "one pass serves both h",
            )
        )
        tables = h + 1
        peers = [
            (
                "FAISS IndexBinaryFlat range_search (exact)",
                lambda: faiss.IndexBinaryFlat(DIM),
                0,
                "popcount scan",
            ),
            (
                f"FAISS IndexBinaryMultiHash {tables} x {DIM // tables} bits",
                lambda m=tables: faiss.IndexBinaryMultiHash(DIM, m, DIM // m),
                0,
                "nflip 0: exact by pigeonhole",
            ),
            ("FAISS IndexBinaryHash 16 bits", lambda: faiss.IndexBinaryHash(DIM, 16), 2, "nflip 2"),
        ]
        for name, make, nflip, note in peers:

            def run(make: Callable[[], Any] = make, nflip: int = nflip, h: int = h) -> np.ndarray:
                index = make()
                if nflip:
                    index.nflip = nflip
                return faiss_pairs(index, h)

            seconds, keys = timed(run, args.repeat)
            rows.append((name, seconds, *truth.score(keys, h, False), note))
        print_table(f"Hamming <= {h} of {DIM} sign bits, {n:,} strings", rows, nd_s)


# 3. L2 and L1 -----------------------------------------------------------------------------------


def l2_section(projected: np.ndarray, args: argparse.Namespace) -> None:
    from sklearn.neighbors import NearestNeighbors

    vectors = np.ascontiguousarray(projected / np.float32(np.sqrt(DIM)))
    n, t = vectors.shape[0], L2_THRESHOLD
    norms = (vectors.astype(np.float64) ** 2).sum(1).astype(np.float32)
    spec = JoinSpec(metric="l2", threshold=t)
    vector_join(vectors[:2000], spec)  # compile

    def brute() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # |x - y|^2 = |x|^2 + |y|^2 - 2 x.y <= t^2 written as x.y >= (|x|^2 + |y|^2 - t^2) / 2,
        # per block; a margin covers float32 rounding and every kept pair is measured again.
        def run() -> tuple[np.ndarray, np.ndarray]:
            firsts, seconds = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
            for i in range(0, n, BLOCK_ROWS):
                for j in range(i, n, BLOCK_COLUMNS):
                    dots = vectors[i : i + BLOCK_ROWS] @ vectors[j : j + BLOCK_COLUMNS].T
                    bound = (
                        norms[i : i + BLOCK_ROWS, None] + norms[None, j : j + BLOCK_COLUMNS] - t * t
                    ) / 2 - 1e-4
                    a, b = np.nonzero(dots >= bound)
                    a += i
                    b += j
                    firsts.append(a[b > a].astype(np.int64))
                    seconds.append(b[b > a].astype(np.int64))
            return np.concatenate(firsts), np.concatenate(seconds)

        first, second = run()
        return first, second, exact_distance(vectors, first, second, 2)

    brute_s, (first, second, values) = timed(brute, args.peer_repeat)
    truth = Truth(n, first, second, values)
    nd_s, nd, notes = neardup_row(lambda: vector_join(vectors, spec), args.repeat)

    def sklearn() -> Any:
        model = NearestNeighbors(radius=t, algorithm="brute", n_jobs=-1).fit(vectors)
        return model.radius_neighbors(vectors, return_distance=False)

    sk_s, neighbours = timed(sklearn, args.peer_repeat)
    sizes = np.fromiter((len(x) for x in neighbours), np.int64, n)
    f, s = pair_keys(np.repeat(np.arange(n), sizes), np.concatenate(list(neighbours)), n)
    close = pair_values("l2", vectors, f, s) <= t
    rows: list[Row] = [
        ("neardup vector_join", nd_s, *truth.score(result_keys(nd, n), t, False), notes),
        (
            "exact brute force (NumPy BLAS blocks)",
            brute_s,
            *truth.score(truth.close(t, False), t, False),
            "",
        ),
        (
            "scikit-learn radius_neighbors (brute, euclidean)",
            sk_s,
            *truth.score(f[close] * n + s[close], t, False),
            "",
        ),
    ]
    print_table(f"L2 <= {t}, {n:,} vectors of {DIM} dims (norms near 1)", rows, nd_s)


def l1_section(counts: np.ndarray, t: float, title: str, args: argparse.Namespace) -> None:
    """Both L1 families (Cauchy projections, the default, and seed 002's unary code) against
    brute force and scikit-learn on the integer rows ``counts``."""
    from sklearn.neighbors import NearestNeighbors

    n, top = counts.shape[0], int(counts.max())
    vector_join(counts[:500], JoinSpec(metric="l1", threshold=t))  # compile

    def brute() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        firsts, seconds = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
        small = counts.astype(np.int32)
        for i in range(0, n, 64):
            block = np.abs(small[i : i + 64, None, :] - small[None, i:, :]).sum(2, dtype=np.int64)
            a, b = np.nonzero(block <= t)
            a += i
            b += i
            firsts.append(a[b > a].astype(np.int64))
            seconds.append(b[b > a].astype(np.int64))
        first, second = np.concatenate(firsts), np.concatenate(seconds)
        return first, second, exact_distance(counts, first, second, 1)

    brute_s, (first, second, values) = timed(brute, args.peer_repeat)
    truth = Truth(n, first, second, values)
    joins = {
        family: neardup_row(
            lambda family=family: vector_join(
                counts, JoinSpec(metric="l1", threshold=t, family=family)
            ),
            args.repeat,
        )
        for family in ("cauchy", "unary")
    }
    base = joins["cauchy"][0]

    def sklearn() -> Any:
        model = NearestNeighbors(radius=t, metric="manhattan", algorithm="brute", n_jobs=-1)
        return model.fit(counts.astype(np.float64)).radius_neighbors(return_distance=False)

    sk_s, neighbours = timed(sklearn, args.peer_repeat)
    sizes = np.fromiter((len(x) for x in neighbours), np.int64, n)
    f, s = pair_keys(np.repeat(np.arange(n), sizes), np.concatenate(list(neighbours)), n)
    rows: list[Row] = [
        (
            f"neardup vector_join, family {family}",
            seconds,
            *truth.score(result_keys(result, n), t, False),
            f"{notes}; {result.info['bucket_pairs_skipped']:,} pairs of capped buckets skipped",
        )
        for family, (seconds, result, notes) in joins.items()
    ]
    rows += [
        (
            "exact brute force (NumPy blocks)",
            brute_s,
            *truth.score(truth.close(t, False), t, False),
            "",
        ),
        (
            "scikit-learn radius_neighbors (brute, manhattan)",
            sk_s,
            *truth.score(f * n + s, t, False),
            "",
        ),
    ]
    print_table(f"L1 <= {t:g}, {n:,} {title} in [0, {top:,}]", rows, base)


def word_counts(texts: list[str], bins: int) -> np.ndarray:
    """Each text's words (lower-cased, split at whitespace) counted into ``bins`` by CRC-32:
    heavy-tailed, as the texts' lengths are."""
    counts = np.zeros((len(texts), bins), dtype=np.int64)
    for row, text in enumerate(texts):
        words = text.lower().split()
        hashed = np.fromiter((zlib.crc32(w.encode()) % bins for w in words), np.int64, len(words))
        counts[row] = np.bincount(hashed, minlength=bins)
    return counts


# 4. Jaccard -------------------------------------------------------------------------------------


def datasketch_join(
    sets: Any, minhashes: list[Any], threshold: float, bands: tuple[int, int] | None
) -> tuple[np.ndarray, int, tuple[int, int]]:
    """datasketch MinHashLSH insert + query, candidates verified by exact Jaccard.

    ``bands``: ``(b, r)`` given to datasketch; ``None`` lets it choose for ``threshold``.
    """
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=128, params=bands)
    with lsh.insertion_session() as session:
        for i, m in enumerate(minhashes):
            session.insert(i, m)
    first, second = [], []
    for i, m in enumerate(minhashes):
        for j in lsh.query(m):
            if j > i:
                first.append(i)
                second.append(j)
    pairs = CandidatePairs(first=np.array(first, np.int64), second=np.array(second, np.int64))
    keep = exact_jaccard(sets, pairs) >= threshold
    n = len(minhashes)
    return pairs.first[keep] * n + pairs.second[keep], len(first), (lsh.b, lsh.r)


def jaccard_section(
    label: str, sets: Any, args: argparse.Namespace, with_datasketch: bool
) -> list[tuple[float, float, float, float]]:
    n = len(sets)
    minhashes: list[Any] = []
    minhash_s = 0.0
    if with_datasketch:
        from datasketch import MinHash

        def build() -> list[Any]:
            lists = [
                (sets.hashes[sets.offsets[i] : sets.offsets[i + 1]] & 0xFFFFFFFF).tolist()
                for i in range(n)
            ]
            return MinHash.bulk(lists, num_perm=128, hashfunc=int)

        minhash_s, minhashes = timed(build, 1)
    crossover = []
    for t in JACCARD:
        exact_spec = JoinSpec(metric="jaccard", threshold=t, exact=True)
        exact_s, exact = timed(lambda s=exact_spec: set_join(sets, s), args.repeat)
        keys = result_keys(exact, n)
        truth = Truth(n, exact.first, exact.second, exact.values)
        lsh_s, lsh, notes = neardup_row(
            lambda t=t: set_join(sets, JoinSpec(metric="jaccard", threshold=t)), args.repeat
        )
        lsh_bands = (lsh.info["num_bands"], lsh.info["num_rows"])
        rows: list[Row] = [
            (
                "neardup set_join, MinHash LSH",
                lsh_s,
                *truth.score(result_keys(lsh, n), t, True),
                notes,
            ),
            (
                "neardup set_join, exact (prefix filter)",
                exact_s,
                *truth.score(keys, t, True),
                f"{exact.info['num_candidates']:,} candidates verified",
            ),
        ]
        strict = JoinSpec(metric="jaccard", threshold=t, recall=STRICT_RECALL)
        strict_s, strict_result, strict_notes = neardup_row(
            lambda s=strict: set_join(sets, s), args.repeat
        )
        rows.append(
            (
                f"neardup set_join, MinHash LSH, recall {STRICT_RECALL}",
                strict_s,
                *truth.score(result_keys(strict_result, n), t, True),
                strict_notes,
            )
        )
        if with_datasketch:
            for name, bands in (
                ("datasketch MinHashLSH, its bands", None),
                ("datasketch MinHashLSH, neardup's bands", lsh_bands),
            ):
                ds_s, (ds_keys, num_candidates, (b, r)) = timed(
                    lambda t=t, bands=bands: datasketch_join(sets, minhashes, t, bands),
                    args.peer_repeat,
                )
                rows.append(
                    (
                        name,
                        ds_s + minhash_s,
                        *truth.score(ds_keys, t, True),
                        f"{b} bands x {r} rows, {num_candidates:,} candidates; 128 MinHashes: "
                        f"{minhash_s:.1f} s of it",
                    )
                )
        print_table(f"Jaccard >= {t}, {label}", rows, lsh_s)
        crossover.append((t, exact_s, lsh_s, truth.score(result_keys(lsh, n), t, True)[1]))
    return crossover


# 5. the CLI -------------------------------------------------------------------------------------

_PEAK = (
    "import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)"
)


def cli_section(
    vectors: np.ndarray, work: Path, args: argparse.Namespace, truth: Truth, threshold: float
) -> None:
    path = work / "vecs.npy"
    np.save(path, vectors)
    neardup_cli = Path(sys.executable).parent / "neardup"
    times, peaks = [], []
    for attempt in range(args.repeat):
        out = work / f"out{attempt}"
        command = [
            str(neardup_cli),
            "join",
            str(path),
            "--metric",
            "cosine",
            "--threshold",
            str(threshold),
            "-o",
            str(out),
            "-q",
        ]
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", _PEAK, *command], capture_output=True, text=True, check=True
        )
        times.append(time.perf_counter() - start)
        peaks.append(int(done.stdout.split()[-1]) / 1024)
    summary = json.loads((out / "summary.json").read_text())
    lines = (out / "pairs.jsonl").read_text().splitlines()
    first = np.array([json.loads(line)["a"] for line in lines], np.int64)
    second = np.array([json.loads(line)["b"] for line in lines], np.int64)
    num_pairs, recall, _, _ = truth.score(
        np.minimum(first, second) * truth.n + np.maximum(first, second), threshold, True
    )
    print(
        f"\nThe CLI as a process: neardup join vecs.npy ({vectors.shape[0]:,} x {DIM} float32, "
        f"{path.stat().st_size / 2**20:.0f} MiB) --metric cosine --threshold {threshold}\n"
    )
    print("| wall s (median) | peak RSS MiB | join s (summary) | pairs | recall | bands x rows |")
    print("|---:|---:|---:|---:|---:|---|")
    print(
        f"| {statistics.median(times):.2f} | {max(peaks):,.0f} "
        f"| {summary['timings_s']['join']:.2f} | {num_pairs:,} | {recall:.4f} "
        f"| {summary['num_bands']} x {summary['num_rows']} |"
    )


# main -------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="20,000 vectors, 1,000 RFCs")
    parser.add_argument("--n", type=int, help="vectors (paragraphs) [100,000; quick 20,000]")
    parser.add_argument("--n-l1", type=int, help="L1 vectors [10,000; quick 3,000]")
    parser.add_argument("--l1-threshold", type=float, default=48.0, help="L1 distance [48]")
    parser.add_argument(
        "--l1-count-threshold", type=float, default=400.0, help="L1 of word counts [400]"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs of the fast methods")
    parser.add_argument("--peer-repeat", type=int, default=1, help="runs of the slow ones")
    parser.add_argument("--rfc", type=Path, default=rfc_archive())
    args = parser.parse_args()
    args.n = args.n or (20_000 if args.quick else 100_000)
    args.n_l1 = args.n_l1 or (3_000 if args.quick else 10_000)
    if not args.rfc.exists():
        sys.exit(f"RFC corpus not found at {args.rfc} (set NEARDUP_SHARED_DATA)")

    print(environment())
    print(f"load average at the start: {os.getloadavg()[0]:.2f} (a shared machine)")
    start = time.perf_counter()
    _, texts = load_rfcs(args.rfc)
    paras = distinct_paragraphs(texts)
    used, projected = text_vectors(paras, args.n)
    vectors = np.ascontiguousarray(
        projected / np.linalg.norm(projected, axis=1, keepdims=True), dtype=np.float32
    )
    print(
        f"{len(texts):,} RFCs -> {len(paras):,} distinct paragraphs of 20+ words; the first "
        f"{len(used):,} with a word -> TF-IDF over {HASHED_FEATURES:,} hashed words -> "
        f"{DIM}-d Gaussian projections ({time.perf_counter() - start:.1f} s)",
        flush=True,
    )

    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        cosine = cosine_section(vectors, args)
        cli_section(vectors, work, args, cosine["truth"], min(COSINE))
    hamming_section(vectors, args)
    l2_section(projected, args)
    raw = projected[: args.n_l1, :L1_DIMS]
    quantised = np.rint((raw - raw.min()) / L1_STEP).astype(np.int64)
    l1_section(quantised, args.l1_threshold, f"vectors of {L1_DIMS} quantised projections", args)
    documents = texts[:3000] if args.quick else texts
    l1_section(
        word_counts(documents, L1_DIMS),
        args.l1_count_threshold,
        f"RFCs as counts of their words in {L1_DIMS} hashed bins",
        args,
    )

    shingled = Shingler(ShingleSpec(k=3)).shingle_sets(used)
    crossover = {
        "paragraphs": jaccard_section(
            f"{len(used):,} paragraphs, word 3-shingles", shingled, args, with_datasketch=True
        )
    }
    documents = texts[:1000] if args.quick else texts
    shingled = Shingler(ShingleSpec(k=5)).shingle_sets(documents)
    crossover["RFCs"] = jaccard_section(
        f"{len(documents):,} whole RFCs, word 5-shingles", shingled, args, with_datasketch=False
    )

    print("\nTargets")
    for t in COSINE:
        row = cosine[t]
        peers = [r for r in row["rows"] if r[0].startswith("FAISS IndexLSH")]
        matched = [r for r in peers if r[3] >= row["recall"]]
        fastest = min(matched or peers, key=lambda r: r[1])
        speedup = cosine["brute_s"] / row["neardup_s"]
        print(
            f"- cosine {t}: neardup recall {row['recall']:.4f}, {speedup:.1f}x "
            f"faster than brute force (target: recall >= 0.95 at >= 5x); the fastest FAISS "
            f"IndexLSH {'at equal recall' if matched else '(none reached it)'} "
            f"({fastest[0]}, recall {fastest[3]:.4f}) takes {fastest[1] / row['neardup_s']:.1f}x "
            "neardup's time"
        )
    for label, points in crossover.items():
        wins = ", ".join(
            f"J={t}: exact {e:.2f} s vs LSH {s:.2f} s (LSH recall {r:.3f})" for t, e, s, r in points
        )
        print(f"- exact vs LSH, {label}: {wins}")
    print(
        f"\ntotal {time.perf_counter() - start:.0f} s; load average (1, 5, 15 min) at the end: "
        + ", ".join(f"{x:.2f}" for x in os.getloadavg())
    )


if __name__ == "__main__":
    main()
