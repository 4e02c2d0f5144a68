"""Quality of neardup's clusters on labelled data, ``--cluster components`` against ``center``.

Four labelled corpora from ``../shared/data`` (or ``$NEARDUP_SHARED_DATA``), each run through
``neardup.dedup`` (OPH, 128 slots, exact verification, keep the first) once per clustering mode:

* ``scancode``: the ScanCode licence database. The 2,310 licence texts against their key's
  stem (``bsd-new`` -> ``bsd``), with word 5- and character 9-shingles; and every licence and
  rule text but the false-positive rules (which have no licence) against its
  ``license_expression``, with word 5-shingles. Per threshold: clusters, documents in clusters
  of two or more, the largest cluster, purity of those clusters, adjusted Rand index, and the
  clusters that chained (a member below the threshold against its representative).
* ``clough``: Clough & Stevenson's 95 short answers. Per class (cut, light, heavy, non), the
  exact Jaccard and containment of each answer against its Wikipedia source, whether the mean
  similarity orders cut > light > heavy > non, the AUC of plagiarised (cut, light, heavy)
  against non, and per class the share of answers clustered with their source.
* ``pan``: the PAN-13 suspicious/source pairs. This copy labels only the 500 pairs with no
  obfuscation (truth XML); the other pairs are random, translation or summary obfuscation, or
  no plagiarism at all, unlabelled. Per group, the pairs' exact Jaccard and the share that lands
  in one cluster; and how many co-clustered document pairs are listed pairs at all.
* ``rfc``: every RFC; the obsoletes pairs (new, old) per exact-Jaccard band, with the share
  clustered together; per mode, the clusters, the largest one and the chained ones.

Every similarity here is neardup's own exact Jaccard of lower-cased word 5-shingles (unless a
table says otherwise), the measure its verification thresholds. Prints markdown tables.

Run: ``.venv/bin/python bench/quality.py [--only scancode|clough|pan|rfc] [--cluster MODE]``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import sys
import tarfile
import time
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import numpy as np
from sklearn.metrics import adjusted_rand_score, roc_auc_score  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpora import load_rfcs  # noqa: E402
from neardup import (  # noqa: E402
    CandidatePairs,
    Clusters,
    DedupConfig,
    LSHSpec,
    Shingler,
    ShingleSpec,
    SketchSpec,
    dedup,
    exact_jaccard,
)
from neardup.errors import ParameterError  # noqa: E402

DATA = Path(os.environ.get("NEARDUP_SHARED_DATA", ROOT.parent / "shared" / "data"))
MODES = ("components", "center")
THRESHOLDS = (0.5, 0.7, 0.8, 0.9)
CLASSES = ("cut", "light", "heavy", "non")
BANDS = (0.0, 0.3, 0.5, 0.7, 0.8, 0.9)


def _contingency(labels: np.ndarray, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per non-empty (cluster, class) cell: its cluster's code and its document count."""
    _, labels = np.unique(labels, return_inverse=True)
    _, classes = np.unique(classes, return_inverse=True)
    cells, counts = np.unique(np.stack([labels, classes]), axis=1, return_counts=True)
    return cells[0], counts


def purity(labels: np.ndarray, classes: np.ndarray) -> tuple[float, int]:
    """Purity of the clusters of two or more documents, and how many documents they hold.

    Purity: the share of those documents that belong to their cluster's most common class
    (singletons are pure by definition, so they are left out). 1.0 when there are none.
    """
    cluster, counts = _contingency(labels, classes)
    sizes = np.bincount(cluster, weights=counts).astype(np.int64)
    majority = np.zeros(sizes.shape[0], dtype=np.int64)
    np.maximum.at(majority, cluster, counts)
    grouped = sizes > 1
    total = int(sizes[grouped].sum())
    return (float(majority[grouped].sum() / total) if total else 1.0), total


def pair_agreement(labels: np.ndarray, classes: np.ndarray) -> tuple[float, float]:
    """Pair precision and recall of a clustering against classes.

    Precision: the share of document pairs in one cluster that share a class; recall: the share
    of pairs sharing a class that are in one cluster. 1.0 where there is no pair to count.
    """
    cluster, counts = _contingency(labels, classes)
    _, by_class = np.unique(classes, return_counts=True)
    sizes = np.bincount(cluster, weights=counts)
    both = float((counts * (counts - 1) // 2).sum())
    clustered = float((sizes * (sizes - 1) / 2).sum())
    same_class = float((by_class * (by_class - 1) // 2).sum())
    return (both / clustered if clustered else 1.0), (both / same_class if same_class else 1.0)


def pair_similarity(
    texts: Sequence[str], first: np.ndarray, second: np.ndarray, spec: ShingleSpec | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact Jaccard of each pair ``(first[i], second[i])`` of ``texts``, and both containments.

    Returns ``(jaccard, first_in_second, second_in_first)``: the containment of ``a`` in ``b``
    is ``|A ∩ B| / |A|`` (0 for an empty ``A``), with ``|A ∩ B| = J (|A| + |B|) / (1 + J)``.
    """
    first, second = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
    if first.shape != second.shape:
        raise ParameterError(
            f"pair_similarity got {first.shape[0]} first documents but {second.shape[0]} "
            "second ones; pass one of each per pair."
        )
    sets = Shingler(spec if spec is not None else ShingleSpec()).shingle_sets(list(texts))
    jaccard = exact_jaccard(sets, CandidatePairs(first=first, second=second))
    size_a, size_b = sets.sizes()[first], sets.sizes()[second]
    shared = np.rint(jaccard * (size_a + size_b) / (1 + jaccard))
    a_in_b = np.divide(shared, size_a, out=np.zeros_like(shared), where=size_a > 0)
    b_in_a = np.divide(shared, size_b, out=np.zeros_like(shared), where=size_b > 0)
    return jaccard, a_in_b, b_in_a


def band_of(values: np.ndarray, edges: Sequence[float] = BANDS) -> np.ndarray:
    """Index of each value's band ``[edges[i], edges[i + 1])``; the last band is closed at 1."""
    return np.clip(np.searchsorted(np.asarray(edges), values, side="right") - 1, 0, None)


def band_names(edges: Sequence[float] = BANDS) -> list[str]:
    """``[0, 0.3)``, ..., ``[0.9, 1]``."""
    bounds = [*edges, 1.0]
    return [
        f"[{low:g}, {high:g}{']' if i == len(edges) - 1 else ')'}"
        for i, (low, high) in enumerate(pairwise(bounds))
    ]


def chained(clusters: Clusters, threshold: float) -> int:
    """Clusters with a member whose similarity to the representative is below ``threshold``."""
    return int(np.count_nonzero(clusters.keep & (clusters.min_similarity() < threshold)))


def run(
    texts: Sequence[str],
    ids: Sequence[str],
    threshold: float,
    mode: str,
    shingle: ShingleSpec | None = None,
) -> Clusters:
    """neardup's clusters of ``texts`` at ``threshold`` under clustering ``mode``."""
    config = DedupConfig(
        sketch=SketchSpec(shingle=shingle if shingle is not None else ShingleSpec()),
        lsh=LSHSpec(threshold=threshold),
        cluster=mode,  # type: ignore[arg-type]
        pairs="none",
    )
    return dedup(texts, ids, config).clusters


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A markdown table; the first column left-aligned, the others right-aligned."""
    lines = [
        "| " + " | ".join(header) + " |",
        "|---|" + "---:|" * (len(header) - 1),
        *("| " + " | ".join(map(str, row)) + " |" for row in rows),
    ]
    return "\n".join(lines)


def cluster_rows(
    texts: list[str],
    ids: list[str],
    classes: np.ndarray,
    modes: Sequence[str],
    shingle: ShingleSpec,
) -> list[list[object]]:
    """One row per threshold and mode: the cluster counts and their agreement with classes."""
    rows: list[list[object]] = []
    for threshold in THRESHOLDS:
        for mode in modes:
            start = time.perf_counter()
            clusters = run(texts, ids, threshold, mode, shingle)
            pure, grouped = purity(clusters.labels, classes)
            precision, recall = pair_agreement(clusters.labels, classes)
            rows.append(
                [
                    threshold,
                    mode,
                    f"{clusters.num_clusters:,}",
                    f"{grouped:,}",
                    int(clusters.sizes().max()),
                    f"{pure:.3f}",
                    f"{precision:.3f}",
                    f"{recall:.3f}",
                    f"{adjusted_rand_score(classes, clusters.labels):.3f}",
                    chained(clusters, threshold),
                    f"{time.perf_counter() - start:.1f}",
                ]
            )
    return rows


CLUSTER_HEADER = (
    "threshold",
    "cluster",
    "clusters",
    "docs in clusters >= 2",
    "largest",
    "purity (clusters >= 2)",
    "pair precision",
    "pair recall",
    "ARI",
    "chained",
    "s",
)


def scancode(modes: Sequence[str]) -> None:
    path = DATA / "scancode_licenses" / "scancode_licensedb_32.1.0.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    licences = [r for r in records if r["kind"] == "license"]
    stems = np.array([r["id"].split("-")[0] for r in licences])
    texts, ids = [r["text"] for r in licences], [r["id"] for r in licences]
    print(f"\n## ScanCode licence texts: {len(texts):,} texts, {len(set(stems)):,} key stems\n")
    for shingle in (ShingleSpec(), ShingleSpec(unit="char", k=9)):
        print(f"\n### {shingle.unit} {shingle.k}-shingles, class = key stem\n")
        print(table(CLUSTER_HEADER, cluster_rows(texts, ids, stems, modes, shingle)))

    labelled = [r for r in records if r["license_expression"]]
    expressions = np.array([r["license_expression"] for r in labelled])
    print(
        f"\n## ScanCode licence and rule texts: {len(labelled):,} texts "
        f"({len(records) - len(labelled):,} false-positive rules left out), "
        f"{len(set(expressions)):,} licence expressions\n"
    )
    print("\n### word 5-shingles, class = license_expression\n")
    rows = cluster_rows(
        [r["text"] for r in labelled],
        [f"{r['kind']}:{r['id']}" for r in labelled],
        expressions,
        modes,
        ShingleSpec(),
    )
    print(table(CLUSTER_HEADER, rows))


def load_clough() -> tuple[list[str], list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Clough & Stevenson: ``(names, texts, source, answer, category)``.

    The five sources come first (with keep="first" each one is its cluster's
    representative), then the 95 answers; ``source[i]`` and ``answer[i]`` are the texts of the
    i-th answer's pair, ``category[i]`` its class (cut, light, heavy, non).
    """
    folder = DATA / "clough_stevenson_short_answers"
    with open(folder / "file_information.csv", newline="") as f:
        answers = [row for row in csv.DictReader(f) if row["Category"] != "orig"]
    tasks = "abcde"
    names = [f"orig_task{task}.txt" for task in tasks] + [row["File"] for row in answers]
    texts = [(folder / name).read_text(encoding="latin-1") for name in names]
    source = np.array([tasks.index(row["Task"]) for row in answers])
    answer = np.arange(len(tasks), len(names))
    category = np.array([row["Category"] for row in answers])
    return names, texts, source, answer, category


def clough(modes: Sequence[str]) -> None:
    names, texts, source, answer, category = load_clough()
    jaccard, source_in_answer, answer_in_source = pair_similarity(texts, source, answer)
    print(f"\n## Clough & Stevenson: {len(answer)} answers to {len(names) - len(answer)} sources\n")
    measures = {"Jaccard": jaccard, "containment of answer in source": answer_in_source}
    rows: list[list[object]] = []
    for name in CLASSES:
        of = category == name
        rows.append(
            [
                name,
                int(of.sum()),
                *(f"{v[of].mean():.3f} (median {np.median(v[of]):.3f})" for v in measures.values()),
                f"{source_in_answer[of].mean():.3f}",
            ]
        )
    print(table(["class", "answers", *measures, "containment of source in answer"], rows))
    plagiarised = category != "non"
    print()
    for label, values in measures.items():
        means = [values[category == name].mean() for name in CLASSES]
        holds = all(a > b for a, b in pairwise(means))
        auc = roc_auc_score(plagiarised, values)
        print(
            f"- {label}: mean ordering cut > light > heavy > non "
            f"{'holds' if holds else 'fails'}; AUC plagiarised vs non {auc:.3f}"
        )
    print("\nShare of each class's answers clustered with their source:\n")
    rows = []
    for threshold in (0.1, 0.2, 0.3, 0.5):
        above = jaccard >= threshold
        rows.append(
            [threshold, "(exact J >= threshold)"]
            + [f"{above[category == name].mean():.2f}" for name in CLASSES]
            + ["-"]
        )
        for mode in modes:
            labels = run(texts, names, threshold, mode).labels
            together = labels[source] == labels[answer]
            rows.append(
                [
                    threshold,
                    mode,
                    *(f"{together[category == name].mean():.2f}" for name in CLASSES),
                    int(np.count_nonzero(np.bincount(labels) > 1)),
                ]
            )
    print(table(["threshold", "cluster", *CLASSES, "clusters >= 2"], rows))


def load_pan() -> tuple[list[str], list[str], list[tuple[str, str]], set[tuple[str, str]]]:
    """``(names, texts, pairs, no_obfuscation)`` of the PAN-13 copy (pairs with both texts)."""
    texts: dict[str, str] = {}
    lists: dict[str, list[tuple[str, str]]] = {}
    path = DATA / "pan13_panpc" / "panpc_pan13_sample.tar.xz"
    with tarfile.open(path, "r:xz") as tar:
        for member in tar:
            f = tar.extractfile(member) if member.isfile() else None
            if f is None:
                continue
            content = f.read().decode("utf-8", "replace")
            if member.name.endswith(".txt"):
                texts[Path(member.name).name] = content
            elif member.name in ("pairs", "02-no-obfuscation/pairs"):
                lists[member.name] = [(s, r) for s, r in map(str.split, content.splitlines())]
    names = sorted(texts)
    kept = [(s, r) for s, r in lists["pairs"] if s in texts and r in texts]
    return names, [texts[n] for n in names], kept, set(lists["02-no-obfuscation/pairs"])


def pan(modes: Sequence[str]) -> None:
    names, texts, pairs, plain = load_pan()
    index = {name: i for i, name in enumerate(names)}
    first = np.array([index[s] for s, _ in pairs])
    second = np.array([index[r] for _, r in pairs])
    jaccard, _, source_in_susp = pair_similarity(texts, first, second)
    groups = {
        "no obfuscation (labelled)": np.array([p in plain for p in pairs]),
        "rest (random / translation / summary / none; unlabelled)": np.array(
            [p not in plain for p in pairs]
        ),
    }
    print(f"\n## PAN-13: {len(names):,} documents, {len(pairs):,} listed pairs with both texts\n")
    rows: list[list[object]] = [
        [
            group,
            int(of.sum()),
            f"{np.median(jaccard[of]):.3f}",
            f"{np.quantile(jaccard[of], 0.99):.3f}",
            f"{jaccard[of].max():.3f}",
            f"{np.median(source_in_susp[of]):.3f}",
        ]
        for group, of in groups.items()
    ]
    header = ["pairs", "n", "median J", "99th pct J", "max J", "median containment src in susp"]
    print(table(header, rows))
    print("\nShare of pairs in one cluster; co-clustered document pairs and how many are listed:\n")
    rows = []
    for threshold in (0.1, 0.3, 0.5):
        for mode in modes:
            labels = run(texts, names, threshold, mode).labels
            together = labels[first] == labels[second]
            sizes = np.bincount(labels)
            rows.append(
                [
                    threshold,
                    mode,
                    *(f"{together[of].mean():.3f}" for of in groups.values()),
                    f"{int((sizes * (sizes - 1) // 2).sum()):,}",
                    int(together.sum()),
                ]
            )
    print(table(["threshold", "cluster", *groups, "co-clustered pairs", "listed"], rows))


def rfc_obsoletes(ids: Sequence[str]) -> list[tuple[int, int]]:
    """The (new, old) obsoletes pairs among the RFCs ``ids``, as their places in ``ids``."""
    index = {name: i for i, name in enumerate(ids)}
    with open(DATA / "rfc" / "rfc_pair_similarity.tsv", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [
        (index[f"rfc{row['rfc_new']}"], index[f"rfc{row['rfc_old']}"])
        for row in rows
        if row["relation"] == "obsoletes"
        and f"rfc{row['rfc_new']}" in index
        and f"rfc{row['rfc_old']}" in index
    ]


def rfc(modes: Sequence[str]) -> None:
    ids, texts = load_rfcs(DATA / "rfc" / "rfc_txt.tar.xz")
    obsoletes = rfc_obsoletes(ids)
    new, old = np.array(obsoletes).T
    jaccard, _, _ = pair_similarity(texts, new, old)
    band = band_of(jaccard)
    print(f"\n## RFCs: {len(ids):,} documents, {len(obsoletes):,} obsoletes pairs (new, old)\n")
    shares: dict[tuple[float, str], np.ndarray] = {}
    summary: list[list[object]] = []
    for threshold in THRESHOLDS:
        for mode in modes:
            start = time.perf_counter()
            clusters = run(texts, ids, threshold, mode)
            shares[threshold, mode] = clusters.labels[new] == clusters.labels[old]
            summary.append(
                [
                    threshold,
                    mode,
                    f"{clusters.num_clusters:,}",
                    f"{clusters.num_duplicate_clusters:,}",
                    int(clusters.sizes().max()),
                    chained(clusters, threshold),
                    f"{time.perf_counter() - start:.1f}",
                ]
            )
    print("Share of obsoletes pairs clustered together, per exact-Jaccard band; cells are")
    print(f"{' / '.join(modes)}:\n")
    rows: list[list[object]] = []
    for b, name in enumerate(band_names()):
        of = band == b
        cells = [
            " / ".join(f"{shares[t, m][of].mean():.2f}" if of.any() else "-" for m in modes)
            for t in THRESHOLDS
        ]
        rows.append([name, int(of.sum()), *cells])
    print(table(["J band", "pairs", *(f"threshold {t}" for t in THRESHOLDS)], rows))
    print()
    header = ["threshold", "cluster", "clusters", "clusters >= 2", "largest", "chained", "s"]
    print(table(header, summary))


STUDIES = {"scancode": scancode, "clough": clough, "pan": pan, "rfc": rfc}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", choices=list(STUDIES), help="run one data set")
    parser.add_argument("--cluster", choices=[*MODES, "both"], default="both")
    args = parser.parse_args()
    if not DATA.exists():
        sys.exit(f"shared data not found at {DATA} (set NEARDUP_SHARED_DATA)")
    modes = MODES if args.cluster == "both" else (args.cluster,)
    dedup(["warm up the kernels", "warm up the kernels too"])  # compile outside the timings
    for name, study in STUDIES.items():
        if args.only in (None, name):
            start = time.perf_counter()
            study(modes)
            print(f"\n({name}: {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
