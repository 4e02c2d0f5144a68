"""Weighted sets: Jaccard of bags and of weighted sets, and weighted MinHash (ICWS).

A document as a bag counts each shingle's occurrences; as a weighted set it gives each shingle
a non-negative real weight (a count, or TF-IDF with :class:`IDFWeights`). Two similarities
(MMDS §3.1.3): the *max* definition ``sum min / sum max`` (the weighted Jaccard), and the *sum*
definition ``|A ∩ B| / (|A| + |B|)`` of bag intersection over the bag sum (at most 1/2).
Integer weights can be handled by replication (seed 000, "important features": a feature of
weight w becomes w distinct features), real weights by consistent weighted sampling.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from neardup._kernels.compiling import read_only
from neardup._kernels.tokens import document_fingerprints
from neardup._kernels.verify import weighted_overlaps
from neardup._kernels.weighted import icws_samples
from neardup._parallel import SCRATCH_BLOCK, in_blocks
from neardup._types import Batch, F64Array, I64Array, U64Array
from neardup.errors import ParameterError
from neardup.pairs import CandidatePairs
from neardup.params import SketchSpec
from neardup.sketch.base import TextSketcher
from neardup.text.shingle import Shingler, ShingleSets

__all__ = [
    "IDFWeights",
    "WeightedMinHasher",
    "WeightedSets",
    "bag_jaccard_sum",
    "cosine_similarity",
    "estimate_weighted_jaccard",
    "replicate",
    "term_counts",
    "weighted_jaccard",
]


@dataclass(frozen=True, slots=True)
class WeightedSets:
    """Sorted distinct features per document, each with a weight.

    ``weights`` aligns with ``sets.hashes``.
    """

    sets: ShingleSets
    weights: F64Array

    def of(self, doc: int) -> tuple[U64Array, F64Array]:
        """Document ``doc``'s features and weights."""
        start, end = self.sets.offsets[doc], self.sets.offsets[doc + 1]
        return self.sets.hashes[start:end], self.weights[start:end]


def term_counts(texts: Sequence[str] | Batch, spec: SketchSpec | None = None) -> WeightedSets:
    """Shingles weighted by how often they occur in their document."""
    spec = spec if spec is not None else SketchSpec()
    sets, counts = Shingler(spec.shingle, spec.normalize).shingle_counts(texts)
    return WeightedSets(sets=sets, weights=counts.astype(np.float64))


class IDFWeights:
    """Inverse document frequency of shingles, learned from a corpus: ``log(N / df)``.

    Attributes
    ----------
    features_, idf_
        Sorted shingle fingerprints seen in ``fit`` and their IDF.
    num_docs_
        ``N``: documents seen; an unseen shingle gets ``log(N + 1)``.
    """

    def __init__(self, spec: SketchSpec | None = None) -> None:
        self.spec = spec if spec is not None else SketchSpec()

    def fit(self, corpus: Sequence[str]) -> IDFWeights:
        """Learn document frequencies from ``corpus``."""
        return self.fit_batches([corpus])

    def fit_batches(self, batches: Iterable[Sequence[str] | Batch]) -> IDFWeights:
        """Learn document frequencies from a corpus read batch by batch.

        Batches are texts or normalised :class:`~neardup._types.Batch` es. Memory holds the
        distinct shingles seen, not the corpus.
        """
        shingler = Shingler(self.spec.shingle, self.spec.normalize)
        features = np.empty(0, dtype=np.uint64)
        df = np.empty(0, dtype=np.int64)
        num_docs = 0
        for batch in batches:
            sets = shingler.shingle_sets(batch)
            new, counts = np.unique(sets.hashes, return_counts=True)
            features, inverse = np.unique(np.concatenate([features, new]), return_inverse=True)
            df = np.bincount(inverse, weights=np.concatenate([df, counts]), minlength=len(features))
            df = df.astype(np.int64)
            num_docs += len(sets)
        if num_docs == 0:
            raise ParameterError("IDFWeights needs at least one document to learn from.")
        return self.set_learned(features, np.log(num_docs / df), num_docs)

    def set_learned(self, features: U64Array, idf: F64Array, num_docs: int) -> IDFWeights:
        """Restore learned weights (as stored beside an index); ``features`` sorted, distinct."""
        if features.shape != idf.shape or np.any(features[1:] <= features[:-1]):
            raise ParameterError("IDF features must be sorted, distinct and align with idf.")
        self.features_ = np.ascontiguousarray(features, dtype=np.uint64)
        self.idf_ = np.ascontiguousarray(idf, dtype=np.float64)
        self.num_docs_ = int(num_docs)
        return self

    @property
    def missing_idf_(self) -> float:
        """The IDF of a shingle never seen in ``fit``: ``log(N + 1)``."""
        return float(np.log(self.num_docs_ + 1))

    def describe(self) -> dict[str, Any]:
        """Documents and shingles learned from, and a digest of the weights (for provenance)."""
        digest = hashlib.sha256(np.int64(self.num_docs_).tobytes())
        digest.update(self.features_.tobytes())
        digest.update(self.idf_.tobytes())
        return {
            "num_docs": self.num_docs_,
            "num_features": int(self.features_.shape[0]),
            "sha256": digest.hexdigest(),
        }

    def transform(self, texts: Sequence[str] | Batch) -> WeightedSets:
        """TF-IDF weights of the texts' shingles; unseen shingles get ``log(N + 1)``."""
        if not hasattr(self, "idf_"):
            raise ParameterError("IDFWeights must be fitted before transform; call fit(corpus).")
        counts = term_counts(texts, self.spec)
        position = np.searchsorted(self.features_, counts.sets.hashes)
        position = np.minimum(position, len(self.features_) - 1)
        seen = self.features_[position] == counts.sets.hashes
        idf = np.where(seen, self.idf_[position], self.missing_idf_)
        return WeightedSets(sets=counts.sets, weights=counts.weights * idf)


def _overlaps(weighted: WeightedSets, pairs: CandidatePairs) -> tuple[F64Array, F64Array]:
    """Per pair: the sum of the smaller weights of shared features, and their dot product."""
    low = np.empty(len(pairs), dtype=np.float64)
    dot = np.empty(len(pairs), dtype=np.float64)
    run = partial(
        weighted_overlaps,
        weighted.sets.hashes,
        np.ascontiguousarray(weighted.weights, dtype=np.float64),
        weighted.sets.offsets,
        np.ascontiguousarray(pairs.first, dtype=np.int64),
        np.ascontiguousarray(pairs.second, dtype=np.int64),
        low,
        dot,
    )
    in_blocks(run, len(pairs))
    return low, dot


def _per_document(weighted: WeightedSets, values: F64Array) -> F64Array:
    """Sums of ``values`` (aligned with the features) per document."""
    doc = np.repeat(np.arange(len(weighted.sets)), weighted.sets.sizes())
    sums = np.bincount(doc, weights=values, minlength=len(weighted.sets))
    return sums.astype(np.float64)


def _ratio(numerator: F64Array, denominator: F64Array) -> F64Array:
    out = np.zeros(numerator.shape[0], dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def weighted_jaccard(weighted: WeightedSets, pairs: CandidatePairs) -> F64Array:
    """Exact ``sum min(w_a, w_b) / sum max(w_a, w_b)`` of each pair (the max definition)."""
    low, _ = _overlaps(weighted, pairs)
    total = _per_document(weighted, weighted.weights)
    both = total[pairs.first] + total[pairs.second]
    return _ratio(low, both - low)  # sum of max = sum a + sum b - sum of min


def bag_jaccard_sum(weighted: WeightedSets, pairs: CandidatePairs) -> F64Array:
    """Bag similarity with the *sum* definition of union: ``sum min / (sum a + sum b)``."""
    low, _ = _overlaps(weighted, pairs)
    total = _per_document(weighted, weighted.weights)
    return _ratio(low, total[pairs.first] + total[pairs.second])


def cosine_similarity(weighted: WeightedSets, pairs: CandidatePairs) -> F64Array:
    """Exact cosine of each pair's weight vectors (0 when either is empty)."""
    _, dot = _overlaps(weighted, pairs)
    norm = np.sqrt(_per_document(weighted, weighted.weights**2))
    return _ratio(dot, norm[pairs.first] * norm[pairs.second])


def replicate(weighted: WeightedSets) -> ShingleSets:
    """Integer weights by replication: a feature of weight ``w`` becomes ``w`` features.

    The plain Jaccard of the replicated sets is the weighted Jaccard of the originals, so any
    set sketch then estimates it (seed 000, "important features").
    """
    counts = np.rint(weighted.weights).astype(np.int64)
    if np.any(counts < 0) or not np.allclose(counts, weighted.weights):
        raise ParameterError("replicate needs non-negative integer weights; use ICWS otherwise.")
    features = np.repeat(weighted.sets.hashes, counts)
    copy = np.arange(features.shape[0]) - np.repeat(np.cumsum(counts) - counts, counts)
    replicated = features ^ (copy.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    doc = np.repeat(np.repeat(np.arange(len(weighted.sets)), weighted.sets.sizes()), counts)
    order = np.lexsort((replicated, doc))
    sizes = np.bincount(doc, minlength=len(weighted.sets))
    offsets = np.zeros(len(weighted.sets) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    return ShingleSets(hashes=replicated[order], offsets=offsets)


class WeightedMinHasher(TextSketcher):
    """Weighted MinHash by ICWS: ``num_perm`` consistent samples of a weighted set.

    The fraction of equal samples estimates the weighted Jaccard ``sum min / sum max``.
    :meth:`sketch` weighs each shingle of a text by its count (a bag, MMDS §3.1.3);
    :meth:`sketch_weighted` takes any weights, e.g. TF-IDF from :class:`IDFWeights`.

    Examples
    --------
    >>> hasher = WeightedMinHasher(SketchSpec(kind="weighted", num_perm=16))
    >>> sigs = hasher.sketch(["a b c d e f g h", "a b c d e f g h a b c d e"])
    >>> sigs.values.shape
    (2, 16)
    """

    kind = "weighted"

    def __init__(self, spec: SketchSpec | None = None) -> None:
        super().__init__(spec)
        self.seed = self._random_uint64(1)[0]

    def sketch_weighted(self, weighted: WeightedSets) -> U64Array:
        """``uint64[num_docs, num_perm]`` samples of weighted sets."""
        if np.any(weighted.weights < 0) or not np.all(np.isfinite(weighted.weights)):
            raise ParameterError("weights must be finite and non-negative.")
        out = np.zeros((len(weighted.sets), self.spec.num_perm), dtype=np.uint64)
        run = partial(
            icws_samples,
            weighted.sets.hashes,
            np.ascontiguousarray(weighted.weights, dtype=np.float64),
            weighted.sets.offsets,
            self.spec.num_perm,
            self.seed,
            out,
        )
        in_blocks(run, len(weighted.sets))
        return out

    def _fill(
        self, batch: Batch, values: U64Array, num_shingles: I64Array, fingerprints: U64Array
    ) -> None:
        values[:] = self.sketch_weighted(term_counts(batch, self.spec))
        kt = self._kernel_text
        run = partial(
            document_fingerprints, read_only(batch.data), batch.offsets, *kt.tokenizer, kt.k,
            num_shingles, fingerprints,
        )  # fmt: skip
        in_blocks(run, batch.num_docs, max_block=SCRATCH_BLOCK)


def estimate_weighted_jaccard(samples: U64Array, pairs: CandidatePairs) -> F64Array:
    """The fraction of equal ICWS samples of each pair."""
    agree: F64Array = np.mean(samples[pairs.first] == samples[pairs.second], axis=1)
    return agree
