"""Classic MinHash with ``num_perm`` linear permutations (MMDS §3.3; seed 000)."""

from __future__ import annotations

import numpy as np

from neardup._kernels.shingles import minhash_signatures
from neardup._types import Batch, I64Array, U64Array
from neardup.params import SketchSpec
from neardup.sketch.base import TextSketcher

__all__ = ["MinHasher"]


class MinHasher(TextSketcher):
    """MinHash signatures: slot ``i`` is ``min over shingles x of (a_i * x + b_i) mod 2^64``.

    Each ``a_i`` is odd, so ``x -> a_i * x + b_i`` permutes the 64-bit shingle fingerprints
    (a linear congruential permutation, seed 000 "discharging the supposition"); the chance that
    two documents agree in a slot is their Jaccard similarity (MMDS §3.3.3).

    Examples
    --------
    >>> sketcher = MinHasher(SketchSpec(kind="minhash", num_perm=64, seed=7))
    >>> sigs = sketcher.sketch(["the quick brown fox jumps over the lazy dog"] * 2)
    >>> sigs.values.shape, bool((sigs.values[0] == sigs.values[1]).all())
    ((2, 64), True)
    """

    kind = "minhash"

    def __init__(self, spec: SketchSpec | None = None) -> None:
        super().__init__(spec)
        self.perm_a: U64Array = self._random_uint64(self.spec.num_perm) | np.uint64(1)
        self.perm_b: U64Array = self._random_uint64(self.spec.num_perm)

    def _fill(
        self, batch: Batch, values: U64Array, num_shingles: I64Array, fingerprints: U64Array
    ) -> None:
        kt = self._kernel_text
        minhash_signatures(
            batch.data,
            batch.offsets,
            *kt.tokenizer,
            kt.k,
            self.perm_a,
            self.perm_b,
            values,
            num_shingles,
            fingerprints,
        )
