"""Weighted SimHash: 64-bit fingerprints whose Hamming distance tracks cosine similarity.

Charikar (2002); Manku, Jain and Das Sarma (2007); seed 004 (Sood and Loguinov). Features are
the shingles of :class:`~neardup.params.ShingleSpec` (``k=1``: words), weighted by term
frequency, or by TF-IDF with a fitted :class:`~neardup.sketch.weighted.IDFWeights`. The per-bit
sums ``W_j``, which SimHash normally discards, are kept on request: their magnitudes say which
bits a small edit is likely to flip (seed 004's PSM searches those first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neardup._kernels.shingles import simhash_signatures
from neardup._parallel import parallel_section
from neardup._types import Batch, F64Array, I64Array, U64Array
from neardup.params import SketchSpec
from neardup.sketch.weighted import IDFWeights
from neardup.text.shingle import KernelText, as_batch

__all__ = ["SimHasher", "SimHashes", "hamming_distance"]

_TAG = 9


@dataclass(frozen=True, slots=True, eq=False)
class SimHashes:
    """64-bit SimHash fingerprints of a batch, with the per-bit weights when kept.

    ``bit_weights[d, j]`` is ``W_j`` of document ``d``; ``fingerprints`` are the exact 128-bit
    text fingerprints (as in :class:`~neardup.sketch.Signatures`).
    """

    values: U64Array
    bit_weights: F64Array | None
    num_shingles: I64Array
    fingerprints: U64Array


class SimHasher:
    """Makes weighted SimHash fingerprints with ``spec``'s shingling, normalisation and seed.

    Examples
    --------
    >>> from neardup import ShingleSpec
    >>> hasher = SimHasher(SketchSpec(shingle=ShingleSpec(k=1)))
    >>> h = hasher.sketch(["the cat sat on the mat", "the cat sat on a mat", "stock prices"])
    >>> int(hamming_distance(h.values[0], h.values[1])) < int(hamming_distance(h.values[0],
    ...     h.values[2]))
    True
    """

    def __init__(self, spec: SketchSpec | None = None, idf: IDFWeights | None = None) -> None:
        self.spec = spec if spec is not None else SketchSpec()
        self.idf = idf
        self._kernel_text = KernelText.of(self.spec.shingle, self.spec.normalize)
        rng = np.random.default_rng([self.spec.seed, _TAG])
        self.key = rng.integers(0, 2**64, size=2, dtype=np.uint64, endpoint=False)
        self.key[1] |= np.uint64(1)

    def sketch(self, texts: Sequence[str] | Batch, *, keep_bit_weights: bool = False) -> SimHashes:
        """The SimHash of every text (and its ``W_j`` when ``keep_bit_weights``)."""
        batch = as_batch(texts, self.spec.normalize)
        n = batch.num_docs
        values = np.empty(n, dtype=np.uint64)
        weights = np.empty((n, 64 if keep_bit_weights else 0), dtype=np.float64)
        num_shingles = np.empty(n, dtype=np.int64)
        fingerprints = np.empty((n, 2), dtype=np.uint64)
        if self.idf is not None:
            keys, idf = self.idf.features_, self.idf.idf_
            missing = float(np.log(self.idf.num_docs_ + 1))
        else:
            keys, idf, missing = np.empty(0, np.uint64), np.empty(0, np.float64), 1.0
        kt = self._kernel_text
        if n:
            with parallel_section:
                simhash_signatures(
                    batch.data, batch.offsets, *kt.tokenizer, kt.k, self.key,
                    keys, idf, missing, values, weights, num_shingles, fingerprints,
                )  # fmt: skip
        return SimHashes(
            values=values,
            bit_weights=weights if keep_bit_weights else None,
            num_shingles=num_shingles,
            fingerprints=fingerprints,
        )


def hamming_distance(a: U64Array | np.uint64, b: U64Array | np.uint64) -> I64Array:
    """Bits that differ between 64-bit fingerprints (elementwise)."""
    x = np.bitwise_xor(np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64))
    counts: I64Array = np.bitwise_count(x).astype(np.int64)
    return counts
