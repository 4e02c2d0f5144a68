"""Classic MinHash with ``num_perm`` linear permutations (MMDS §3.3; seed 000)."""

from __future__ import annotations

from functools import partial

import numpy as np

from neardup._kernels.compiling import read_only
from neardup._kernels.minhash import (
    minhash_lead_byte_signatures,
    minhash_of_sets,
    minhash_signatures,
)
from neardup._parallel import SCRATCH_BLOCK, in_blocks
from neardup._types import Batch, I64Array, U64Array
from neardup.errors import ParameterError
from neardup.params import SketchSpec
from neardup.sketch.base import TextSketcher
from neardup.text.shingle import ShingleSets

__all__ = ["LeadByteMinHasher", "MinHasher", "SupershingleSketcher", "minhash_sets"]


def minhash_sets(
    sets: ShingleSets, perm_a: U64Array, perm_b: U64Array, modulus: int | None = None
) -> U64Array:
    """The MinHash signature matrix of integer sets under linear hash functions.

    ``out[d, i] = min over x in set d of (perm_a[i] * x + perm_b[i]) mod modulus``, where no
    modulus means arithmetic modulo 2^64. Computed as MMDS §3.3.5 describes, one element at a
    time (an empty set's slots hold the maximum uint64).

    Examples
    --------
    MMDS Example 3.8: rows 0..4, h1(x) = x + 1 mod 5, h2(x) = 3x + 1 mod 5.

    >>> sets = ShingleSets(hashes=np.array([0, 3, 2, 1, 3, 4, 0, 2, 3], np.uint64),
    ...                    offsets=np.array([0, 2, 3, 6, 9]))
    >>> minhash_sets(sets, np.array([1, 3], np.uint64), np.array([1, 1], np.uint64), 5).T
    array([[1, 3, 0, 1],
           [0, 2, 0, 0]], dtype=uint64)
    """
    if modulus is not None and not 1 <= modulus <= 2**32:
        raise ParameterError(f"minhash_sets modulus must be None or in [1, 2^32]; got {modulus}.")
    if perm_a.shape != perm_b.shape or perm_a.ndim != 1:
        raise ParameterError("minhash_sets needs perm_a and perm_b of one equal length.")
    limit = 2**32 if modulus is not None else None
    if limit is not None and len(sets.hashes) and int(sets.hashes.max()) >= limit:
        raise ParameterError("minhash_sets with a modulus needs every set element below 2^32.")
    out = np.empty((len(sets), perm_a.shape[0]), dtype=np.uint64)
    run = partial(
        minhash_of_sets,
        np.ascontiguousarray(sets.hashes, dtype=np.uint64),
        np.ascontiguousarray(sets.offsets, dtype=np.int64),
        np.ascontiguousarray(perm_a, dtype=np.uint64),
        np.ascontiguousarray(perm_b, dtype=np.uint64),
        0 if modulus is None else modulus,
        out,
    )
    in_blocks(run, len(sets))
    return out


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
        run = partial(
            minhash_signatures,
            read_only(batch.data),
            batch.offsets,
            *kt.tokenizer,
            kt.k,
            self.perm_a,
            self.perm_b,
            values,
            num_shingles,
            fingerprints,
        )
        in_blocks(run, batch.num_docs, max_block=SCRATCH_BLOCK)


class SupershingleSketcher(MinHasher):
    """The classic MinHash that Broder's feature filter cuts into supershingles.

    Its own kind (``"supershingle"``) because its candidates come from shared features
    (:mod:`neardup.sketch.features`, ``spec.preset``) instead of LSH bands; the samples are
    independent permutations, as the acceptance formulas of seed 003 assume.
    """

    kind = "supershingle"


class LeadByteMinHasher(MinHasher):
    """MinHash by left-to-right minima: a lead byte per slot first, the full value if needed.

    Seed 003's trick (and seed 000's "improving sampling"): each slot ranks shingles by the
    pair ``(lead byte, a * x + b)``; the lead bytes of eight slots come from one random
    GF(2)-linear map of the fingerprint (eight table lookups), and ``a * x + b`` is computed
    only for shingles whose lead byte ties or beats the slot's best. Estimates are those of
    MinHash; ``bench/sketches.py`` measures whether the saving pays on today's CPUs.
    """

    kind = "minhash-lead"

    def __init__(self, spec: SketchSpec | None = None) -> None:
        super().__init__(spec)
        groups = -(-self.spec.num_perm // 8)
        columns = self._random_uint64(groups * 64).reshape(groups, 8, 8)
        # tables[g, j, v]: the image of byte value v at byte j, the xor of the columns of its bits.
        bits = (np.arange(256)[:, None] >> np.arange(8)) & 1
        self.lead_tables: U64Array = np.zeros((groups, 8, 256), dtype=np.uint64)
        for bit in range(8):
            chosen = bits[:, bit].astype(bool)
            self.lead_tables[:, :, chosen] ^= columns[:, :, bit, None]

    def _fill(
        self, batch: Batch, values: U64Array, num_shingles: I64Array, fingerprints: U64Array
    ) -> None:
        kt = self._kernel_text
        run = partial(
            minhash_lead_byte_signatures,
            read_only(batch.data),
            batch.offsets,
            *kt.tokenizer,
            kt.k,
            self.lead_tables,
            self.perm_a,
            self.perm_b,
            values,
            num_shingles,
            fingerprints,
        )
        in_blocks(run, batch.num_docs, max_block=SCRATCH_BLOCK)
