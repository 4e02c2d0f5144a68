"""The batch job as named stages, and :func:`dedup` / :func:`dedup_files` composing them.

::

    fit_idf          for a TF-IDF SimHash only: a first pass learning document frequencies
    sketch_records   read → normalise → shingle → sketch, batch by batch (signatures, lookup
                     keys, exact fingerprints)
    exact_groups     documents with identical normalised text, grouped by fingerprint
    find_candidates  the sketch kind's candidate scheme (LSH bands, shared bottom-k hashes,
                     supershingles, or SimHashes within h bits) over one representative per
                     exact group
    verify_candidates  estimate from signatures, exact similarity from shingles: Jaccard,
                     weighted Jaccard, or cosine for SimHash
    cluster_pairs    union-find over exact and verified pairs, one representative each

Each stage is timed; the summary reports every parameter, count and timing.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neardup._types import BoolArray, F64Array, I64Array, U64Array
from neardup._version import __version__
from neardup.cluster import Clusters, connected_components
from neardup.errors import InputError, NeardupWarning
from neardup.io.spill import MatrixSink, MemoryMatrix
from neardup.lsh.banding import CandidatePairs
from neardup.lsh.schemes import candidate_scheme
from neardup.params import DedupConfig
from neardup.sketch import IDFWeights, make_sketcher
from neardup.sketch.signatures import Signatures
from neardup.text.normalize import normalize_batch
from neardup.verify import exact_similarity

__all__ = [
    "DedupResult",
    "Sketched",
    "Timings",
    "VerifiedPairs",
    "cluster_pairs",
    "dedup",
    "exact_groups",
    "find_candidates",
    "find_duplicates",
    "fit_idf",
    "sketch_records",
    "verify_candidates",
]

TextLoader = Callable[[I64Array], list[str]]
"""Given sorted document numbers, their texts in that order (a second pass over the input)."""


@dataclass
class Timings:
    """Seconds spent per stage, in the order the stages ran."""

    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the enclosed block as stage ``name``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start

    def report(self, num_bytes: int) -> dict[str, Any]:
        """Seconds per stage, the total, and the throughput over ``num_bytes`` of text."""
        total = sum(self.seconds.values())
        return {
            "timings_s": {name: round(s, 4) for name, s in self.seconds.items()},
            "total_s": round(total, 4),
            "throughput_mb_s": round(num_bytes / 1e6 / total, 2) if total > 0 else None,
        }


@dataclass(frozen=True, slots=True)
class Sketched:
    """What the first pass keeps per document: small, fixed-size arrays (plus ids)."""

    ids: list[str]
    lengths: I64Array
    """Characters per document (``keep="longest"`` compares these)."""
    signatures: Signatures
    keys: U64Array
    """Lookup keys of the candidate scheme (LSH band keys for banding), one row per document."""
    num_bytes: int
    """UTF-8 bytes of normalised text sketched."""
    idf: IDFWeights | None = None
    """The IDF weights of a TF-IDF SimHash (verification weighs the shingles with them too)."""


@dataclass(frozen=True, slots=True)
class VerifiedPairs:
    """Near-duplicate pairs accepted by verification, with both similarity measures.

    ``jaccard`` is NaN where it was not computed (``verify="signature"`` or ``"none"``).
    """

    first: I64Array
    second: I64Array
    estimate: F64Array
    jaccard: F64Array

    def __len__(self) -> int:
        return int(self.first.shape[0])


@dataclass(frozen=True, slots=True)
class DedupResult:
    """The outcome of a dedup run.

    Attributes
    ----------
    ids
        Document ids in input order.
    clusters
        ``labels`` (smallest member of each document's cluster) and ``keep`` flags.
    exact_pairs
        ``(first, second)``: each exact duplicate linked to the first document of its group.
    pairs
        Verified near-duplicate pairs between exact-group representatives.
    summary
        Every parameter, count and timing, as written to ``summary.json``.
    """

    ids: list[str]
    clusters: Clusters
    exact_pairs: tuple[I64Array, I64Array]
    pairs: VerifiedPairs
    summary: dict[str, Any]


def _batches(
    records: Iterable[tuple[str, str]], batch_bytes: int
) -> Iterator[list[tuple[str, str]]]:
    batch: list[tuple[str, str]] = []
    size = 0
    for record in records:
        batch.append(record)
        size += len(record[1])
        if size >= batch_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def sketch_records(
    records: Iterable[tuple[str, str]],
    config: DedupConfig,
    sink: MatrixSink | None = None,
    progress: Callable[[int], object] | None = None,
    idf: IDFWeights | None = None,
) -> Sketched:
    """Read ``(id, text)`` records in batches of ``config.batch_bytes`` and sketch them.

    Signature rows go to ``sink`` (memory by default; the batch job spills them to a file);
    only ids, lengths, fingerprints, shingle counts and lookup keys stay in memory. ``idf``:
    the weights of ``weighting="tfidf"`` (:func:`fit_idf`).
    """
    sketcher = make_sketcher(config.sketch, idf)
    scheme = candidate_scheme(config.sketch, config.lsh)
    sink = sink if sink is not None else MemoryMatrix(sketcher.width)
    ids: list[str] = []
    lengths: list[I64Array] = []
    counts: list[I64Array] = []
    fingerprints: list[U64Array] = []
    keys: list[U64Array] = []
    num_bytes = 0
    for batch in _batches(records, config.batch_bytes):
        texts = [text for _, text in batch]
        normalized = normalize_batch(texts, config.sketch.normalize)
        signatures = sketcher.sketch(normalized)
        sink.append(signatures.values)
        keys.append(scheme.keys(signatures.values))
        counts.append(signatures.num_shingles)
        fingerprints.append(signatures.fingerprints)
        lengths.append(np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts)))
        num_bytes += normalized.num_bytes
        ids.extend(doc_id for doc_id, _ in batch)
        if progress is not None:
            progress(len(batch))
    if not ids:
        raise InputError("no usable records in the input")
    return Sketched(
        ids=ids,
        lengths=np.concatenate(lengths),
        signatures=Signatures(
            values=sink.finish(),
            num_shingles=np.concatenate(counts),
            fingerprints=np.concatenate(fingerprints),
            spec=config.sketch,
        ),
        keys=np.concatenate(keys),
        num_bytes=num_bytes,
        idf=idf,
    )


def fit_idf(records: Iterable[tuple[str, str]], config: DedupConfig) -> IDFWeights | None:
    """The IDF of the corpus when ``config`` asks for TF-IDF weights (a first pass), else None."""
    if config.sketch.weighting != "tfidf" or config.sketch.kind != "simhash":
        return None
    batches = ([text for _, text in batch] for batch in _batches(records, config.batch_bytes))
    return IDFWeights(config.sketch).fit_batches(batches)


def exact_groups(fingerprints: U64Array) -> tuple[I64Array, BoolArray]:
    """Group documents with equal 128-bit fingerprints.

    Returns ``(group_first, is_first)``: for each document the first document (input order) with
    the same fingerprint, and whether it is that first document itself.

    Examples
    --------
    >>> fp = np.array([[1, 2], [3, 4], [1, 2]], dtype=np.uint64)
    >>> first, is_first = exact_groups(fp)
    >>> first.tolist(), is_first.tolist()
    ([0, 1, 0], [True, True, False])
    """
    num_docs = fingerprints.shape[0]
    order = np.lexsort((fingerprints[:, 1], fingerprints[:, 0]))
    ordered = fingerprints[order]
    starts = np.ones(num_docs, dtype=bool)
    starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    run = np.cumsum(starts) - 1
    group_first = np.empty(num_docs, dtype=np.int64)
    group_first[order] = order[starts][run]
    return group_first, group_first == np.arange(num_docs)


def find_candidates(keys: U64Array, active: BoolArray, config: DedupConfig) -> CandidatePairs:
    """Candidate pairs among the ``active`` documents, by the sketch kind's scheme."""
    return candidate_scheme(config.sketch, config.lsh).pairs(keys, active)


def verify_candidates(
    candidates: CandidatePairs,
    signatures: Signatures,
    config: DedupConfig,
    load_texts: TextLoader,
    idf: IDFWeights | None = None,
) -> VerifiedPairs:
    """Estimate every candidate's similarity and keep the pairs ``config.verify_mode`` accepts.

    With ``"exact"`` the shingles of the documents in candidate pairs are taken from their
    texts (``load_texts``) and the exact similarity (:func:`~neardup.verify.exact_similarity`,
    weighing by ``idf`` for a TF-IDF SimHash) must reach the threshold.
    """
    estimate = candidate_scheme(config.sketch, config.lsh).estimate(signatures, candidates)
    jaccard = np.full(len(candidates), np.nan)
    mode = config.verify_mode
    threshold = config.lsh.threshold
    if mode == "exact" and len(candidates):
        docs = np.unique(np.concatenate([candidates.first, candidates.second]))
        texts = load_texts(docs)
        local = CandidatePairs(
            first=np.searchsorted(docs, candidates.first),
            second=np.searchsorted(docs, candidates.second),
        )
        jaccard = exact_similarity(texts, local, config.sketch, idf)
        accepted = jaccard >= threshold
    elif mode == "signature":
        accepted = estimate >= threshold
    else:
        accepted = np.ones(len(candidates), dtype=bool)
    return VerifiedPairs(
        first=candidates.first[accepted],
        second=candidates.second[accepted],
        estimate=estimate[accepted],
        jaccard=jaccard[accepted],
    )


def cluster_pairs(
    num_docs: int,
    exact_first: I64Array,
    pairs: VerifiedPairs,
    config: DedupConfig,
    lengths: I64Array,
) -> Clusters:
    """Connected components of the exact links and the verified pairs; one kept per cluster."""
    docs = np.arange(num_docs, dtype=np.int64)
    linked = exact_first != docs
    first = np.concatenate([exact_first[linked], pairs.first])
    second = np.concatenate([docs[linked], pairs.second])
    return connected_components(num_docs, first, second, keep=config.keep, lengths=lengths)


def find_duplicates(
    sketched: Sketched,
    config: DedupConfig,
    load_texts: TextLoader,
    timings: Timings,
) -> DedupResult:
    """Every stage after sketching: exact groups, candidates, verification, clustering."""
    signatures = sketched.signatures
    num_docs = signatures.num_docs
    with timings.stage("exact"):
        group_first, is_first = exact_groups(signatures.fingerprints)
    with timings.stage("candidates"):
        active = is_first & ~signatures.is_short
        candidates = find_candidates(sketched.keys, active, config)
    if candidates.num_giant_buckets:
        warnings.warn(
            f"{candidates.num_giant_buckets} LSH buckets held more than "
            f"{config.lsh.max_bucket_size} documents (largest: {candidates.largest_bucket}); "
            "in them each document was paired only with the documents just before it. "
            "Boilerplate shared by many documents usually causes this.",
            NeardupWarning,
            stacklevel=2,
        )
    with timings.stage("verify"):
        pairs = verify_candidates(candidates, signatures, config, load_texts, sketched.idf)
    with timings.stage("cluster"):
        clusters = cluster_pairs(num_docs, group_first, pairs, config, sketched.lengths)
    docs = np.arange(num_docs, dtype=np.int64)
    linked = group_first != docs
    summary = _summary(sketched, config, candidates, pairs, clusters, int(linked.sum()), timings)
    return DedupResult(
        ids=sketched.ids,
        clusters=clusters,
        exact_pairs=(group_first[linked], docs[linked]),
        pairs=pairs,
        summary=summary,
    )


def dedup(
    texts: Sequence[str],
    ids: Sequence[str] | None = None,
    config: DedupConfig | None = None,
) -> DedupResult:
    """Find near-duplicate clusters among in-memory texts.

    Parameters
    ----------
    texts
        The documents.
    ids
        Their ids (default: ``"0"``, ``"1"``, ...).
    config
        Every parameter; the defaults are word 5-shingles, OPH with 128 slots, threshold 0.8 and
        exact verification.

    Examples
    --------
    >>> base = "the quick brown fox jumps over the lazy dog and runs far away into the woods"
    >>> result = dedup([base, base + " today", "an entirely different sentence about cats"])
    >>> result.clusters.labels.tolist(), result.clusters.keep.tolist()
    ([0, 0, 2], [True, False, True])
    """
    config = config if config is not None else DedupConfig()
    if ids is None:
        ids = [str(i) for i in range(len(texts))]
    if len(ids) != len(texts):
        raise InputError(f"dedup got {len(texts)} texts but {len(ids)} ids")
    timings = Timings()
    records = list(zip(map(str, ids), texts, strict=True))
    with timings.stage("idf"):
        idf = fit_idf(records, config)
    with timings.stage("read_sketch"):
        sketched = sketch_records(records, config, idf=idf)

    def load_texts(docs: I64Array) -> list[str]:
        return [texts[i] for i in docs.tolist()]

    return find_duplicates(sketched, config, load_texts, timings)


def _summary(
    sketched: Sketched,
    config: DedupConfig,
    candidates: CandidatePairs,
    pairs: VerifiedPairs,
    clusters: Clusters,
    num_exact: int,
    timings: Timings,
) -> dict[str, Any]:
    signatures = sketched.signatures
    sizes = clusters.sizes()
    return {
        "neardup_version": __version__,
        "config": config.to_dict(),
        "lsh": candidate_scheme(config.sketch, config.lsh).describe(),
        "verify": config.verify_mode,
        "signatures": signatures.provenance(),
        **({"idf": sketched.idf.describe()} if sketched.idf is not None else {}),
        "counts": {
            "documents": signatures.num_docs,
            "bytes": sketched.num_bytes,
            "short_documents": int(signatures.is_short.sum()),
            "exact_duplicates": num_exact,
            "candidate_pairs": len(candidates),
            "verified_pairs": len(pairs),
            "clusters": int(np.count_nonzero(sizes > 1)),
            "documents_in_clusters": int(sizes[sizes > 1].sum()),
            "removed": int(signatures.num_docs - clusters.keep.sum()),
            "kept": int(clusters.keep.sum()),
            "giant_buckets": candidates.num_giant_buckets,
            "largest_bucket": candidates.largest_bucket,
        },
        "biggest_clusters": [
            {"cluster": sketched.ids[label], "size": int(sizes[label])}
            for label in np.argsort(-sizes, kind="stable")[:5].tolist()
            if sizes[label] > 1
        ],
        **timings.report(sketched.num_bytes),
    }
