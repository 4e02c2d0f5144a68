"""Weighted SimHash: fingerprints whose Hamming distance tracks cosine similarity.

Charikar (2002); Manku, Jain and Das Sarma (2007); seed 004 (Sood and Loguinov). Features are
the shingles of :class:`~neardup.params.ShingleSpec` (``k=1``: words), weighted by term
frequency, or by TF-IDF with a fitted :class:`~neardup.sketch.weighted.IDFWeights`. Each of the
``simhash_bits`` bits is the side of a random hyperplane the weighted vector falls on: a
hash-sign hyperplane (Manku et al.; seed 004 Algorithm 1) or a Gaussian one (Charikar, seed 004
equation (4), with normals quantised to 16 bits); bit ``j`` is set when the sum ``W_j`` is
non-negative (seed 004), so a document without shingles is all ones. Two vectors at angle ``θ``
differ in each bit with probability ``θ / π`` for Gaussian hyperplanes. Sign hyperplanes only
approach that: a feature heavier than all others together fixes every bit (see
docs/simhash.md). The per-bit sums ``W_j``, which SimHash normally discards, are kept on
request: their magnitudes say which bits a small edit is likely to flip (seed 004's PSM
searches those first).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, partial
from statistics import NormalDist

import numpy as np

from neardup._kernels.compiling import read_only
from neardup._kernels.simhash import simhash_signatures
from neardup._parallel import SCRATCH_BLOCK, in_blocks
from neardup._types import Batch, F64Array, I64Array, U64Array
from neardup.errors import ParameterError
from neardup.pairs import CandidatePairs
from neardup.params import SketchSpec
from neardup.sketch.base import TextSketcher
from neardup.sketch.signatures import Signatures
from neardup.sketch.weighted import IDFWeights
from neardup.text.shingle import as_batch

__all__ = ["SimHasher", "estimate_cosine", "estimate_simhash_cosine", "hamming_distance"]

_NO_GAUSSIANS = np.empty(0, dtype=np.float64)


@cache
def _gaussians() -> F64Array:
    """The 65,536 quantiles of the standard normal: 16 random bits become one Gaussian draw."""
    quantiles = NormalDist().inv_cdf
    return np.array([quantiles((i + 0.5) / 65536) for i in range(65536)], dtype=np.float64)


class SimHasher(TextSketcher):
    """Makes weighted SimHash fingerprints (``simhash_bits / 64`` words per document).

    ``idf`` is required with ``spec.weighting == "tfidf"`` and refused otherwise.

    Examples
    --------
    >>> from neardup import ShingleSpec
    >>> hasher = SimHasher(SketchSpec(kind="simhash", shingle=ShingleSpec(k=1)))
    >>> h = hasher.sketch(["the cat sat on the mat", "the cat sat on a mat", "stock prices"])
    >>> int(hamming_distance(h.values[0], h.values[1])) < int(hamming_distance(h.values[0],
    ...     h.values[2]))
    True
    """

    kind = "simhash"

    def __init__(self, spec: SketchSpec | None = None, idf: IDFWeights | None = None) -> None:
        super().__init__(spec)
        if (self.spec.weighting == "tfidf") != (idf is not None):
            raise ParameterError(
                "SimHash with weighting='tfidf' needs a fitted IDFWeights (and 'tf' takes none); "
                f"got weighting={self.spec.weighting!r} and idf={'given' if idf else None}."
            )
        self.idf = idf
        self.keys = self._random_uint64(2 * self.width)
        self.keys[1::2] |= np.uint64(1)

    @property
    def width(self) -> int:
        """64-bit words per fingerprint."""
        return self.spec.simhash_bits // 64

    def sketch_with_bit_weights(self, texts: Sequence[str] | Batch) -> tuple[Signatures, F64Array]:
        """The fingerprints and ``float64[num_docs, simhash_bits]`` per-bit sums ``W_j``."""
        batch = as_batch(texts, self.spec.normalize)
        n = batch.num_docs
        values = np.empty((n, self.width), dtype=np.uint64)
        weights = np.empty((n, self.spec.simhash_bits), dtype=np.float64)
        num_shingles = np.empty(n, dtype=np.int64)
        fingerprints = np.empty((n, 2), dtype=np.uint64)
        if n:
            self._hash(batch, values, weights, num_shingles, fingerprints)
        signatures = Signatures(
            values=values, num_shingles=num_shingles, fingerprints=fingerprints, spec=self.spec
        )
        return signatures, weights

    def _fill(
        self, batch: Batch, values: U64Array, num_shingles: I64Array, fingerprints: U64Array
    ) -> None:
        no_weights = np.empty((batch.num_docs, 0), dtype=np.float64)
        self._hash(batch, values, no_weights, num_shingles, fingerprints)

    def _hash(
        self,
        batch: Batch,
        values: U64Array,
        weights: F64Array,
        num_shingles: I64Array,
        fingerprints: U64Array,
    ) -> None:
        if self.idf is not None:
            keys, idf, missing = self.idf.features_, self.idf.idf_, self.idf.missing_idf_
        else:
            keys, idf, missing = np.empty(0, np.uint64), np.empty(0, np.float64), 1.0
        kt = self._kernel_text
        gaussians = _gaussians() if self.spec.projection == "gaussian" else _NO_GAUSSIANS
        run = partial(
            simhash_signatures, read_only(batch.data), batch.offsets, *kt.tokenizer, kt.k,
            self.keys, gaussians, keys, idf, missing, values, weights, num_shingles, fingerprints,
        )  # fmt: skip
        in_blocks(run, batch.num_docs, max_block=SCRATCH_BLOCK)


def hamming_distance(a: U64Array | np.uint64, b: U64Array | np.uint64) -> I64Array:
    """Bits that differ between fingerprint rows (the last axis holds a row's 64-bit words).

    Examples
    --------
    >>> int(hamming_distance(np.array([0b1011, 1], np.uint64), np.array([0b0001, 0], np.uint64)))
    3
    """
    x = np.bitwise_xor(np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64))
    counts: I64Array = np.bitwise_count(x).astype(np.int64).sum(axis=-1)
    return counts


def estimate_simhash_cosine(signatures: Signatures, pairs: CandidatePairs) -> F64Array:
    """The cosine each pair's SimHash fingerprints estimate (:func:`estimate_cosine`)."""
    values = signatures.values
    distance = hamming_distance(values[pairs.first], values[pairs.second])
    return estimate_cosine(distance, signatures.spec.simhash_bits)


def estimate_cosine(distance: I64Array | int, bits: int) -> F64Array:
    """``cos(π d / bits)``: the cosine whose expected SimHash distance is ``d`` (Charikar).

    Examples
    --------
    >>> float(estimate_cosine(0, 64)), round(float(estimate_cosine(32, 64)), 12)
    (1.0, 0.0)
    """
    cosine: F64Array = np.cos(np.pi * np.asarray(distance, dtype=np.float64) / bits)
    return cosine
