"""Bottom-k sketches and mod-m sketches: resemblance and containment from samples of one hash.

Under one random hash function, the ``k`` smallest values of a set are a uniform sample of it.
For two sets, the ``k`` smallest of the union of their sketches are the ``k`` smallest of the
union of the sets, so resemblance is estimated from sketches alone (Broder 2000 §4, seed 003):
``|U ∩ S(A) ∩ S(B)| / |U|``. Containment of A in B, ``|A ∩ B| / |A|``, is estimated from the
elements of S(A) small enough that S(B) decides whether B holds them. A mod-m sketch keeps every
element whose hash is 0 mod m: variable size, and both estimators are plain set ratios.
Containment is what finds a copied article inside a page full of other material.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from neardup._kernels.bottomk import bottom_k_counts, bottom_k_sketches
from neardup._kernels.compiling import read_only
from neardup._parallel import SCRATCH_BLOCK, in_blocks
from neardup._types import Batch, F64Array, I64Array, U64Array
from neardup.errors import ParameterError
from neardup.pairs import CandidatePairs
from neardup.params import SketchSpec
from neardup.sketch.base import TextSketcher
from neardup.sketch.signatures import EMPTY_SLOT, Signatures
from neardup.text.shingle import ShingleSets

__all__ = [
    "BottomKSketcher",
    "ModMSketcher",
    "containment",
    "keyed_mix",
    "resemblance",
    "sketch_sizes",
]

_MODM_TAG = 4


class BottomKSketcher(TextSketcher):
    """Bottom-k sketches with ``k = spec.num_perm`` under one seeded hash function.

    Row ``d`` of the signatures holds document ``d``'s smallest distinct hashes ascending,
    padded with :data:`~neardup.sketch.EMPTY_SLOT` (:func:`sketch_sizes` counts them).

    Examples
    --------
    >>> sketcher = BottomKSketcher(SketchSpec(kind="bottomk", num_perm=4, seed=1))
    >>> sketch_sizes(sketcher.sketch(["one two three four five six seven", "too short"]))
    array([3, 0])
    """

    kind = "bottomk"

    def __init__(self, spec: SketchSpec | None = None) -> None:
        super().__init__(spec)
        self.key: U64Array = self._random_uint64(2)
        self.key[1] |= np.uint64(1)

    def _fill(
        self, batch: Batch, values: U64Array, num_shingles: I64Array, fingerprints: U64Array
    ) -> None:
        kt = self._kernel_text
        run = partial(
            bottom_k_sketches,
            read_only(batch.data),
            batch.offsets,
            *kt.tokenizer,
            kt.k,
            self.key,
            values,
            num_shingles,
            fingerprints,
        )
        in_blocks(run, batch.num_docs, max_block=SCRATCH_BLOCK)


def sketch_sizes(sketches: Signatures) -> I64Array:
    """How many hashes each bottom-k sketch holds (fewer than k for a small set)."""
    sizes: I64Array = np.count_nonzero(sketches.values != EMPTY_SLOT, axis=1).astype(np.int64)
    return sizes


def _counts(sketches: Signatures, pairs: CandidatePairs) -> I64Array:
    out = np.empty((len(pairs), 6), dtype=np.int64)
    run = partial(
        bottom_k_counts,
        np.ascontiguousarray(sketches.values),
        sketch_sizes(sketches),
        np.ascontiguousarray(pairs.first, dtype=np.int64),
        np.ascontiguousarray(pairs.second, dtype=np.int64),
        sketches.spec.num_perm,
        out,
    )
    in_blocks(run, len(pairs))
    return out


def _ratio(numerator: I64Array, denominator: I64Array) -> F64Array:
    out = np.zeros(numerator.shape[0], dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def resemblance(sketches: Signatures, pairs: CandidatePairs) -> F64Array:
    """Estimated Jaccard of each pair: ``|U ∩ S(A) ∩ S(B)| / |U|`` over the union's bottom k."""
    counts = _counts(sketches, pairs)
    return _ratio(counts[:, 1], counts[:, 0])


def containment(sketches: Signatures, pairs: CandidatePairs) -> tuple[F64Array, F64Array]:
    """Estimated containment of ``first`` in ``second`` and of ``second`` in ``first``."""
    counts = _counts(sketches, pairs)
    return _ratio(counts[:, 3], counts[:, 2]), _ratio(counts[:, 5], counts[:, 4])


class ModMSketcher:
    """Mod-m sketches: every shingle whose seeded hash is 0 mod ``modulus`` (seed 003 §4).

    Examples
    --------
    >>> from neardup import Shingler
    >>> sets = Shingler().shingle_sets(["the quick brown fox jumps over the lazy dog " * 20])
    >>> sketch = ModMSketcher(modulus=4).sketch(sets)
    >>> 0 < len(sketch.set_of(0)) < len(sets.set_of(0))
    True
    """

    def __init__(self, modulus: int, seed: int = 42) -> None:
        if not isinstance(modulus, int) or modulus < 1:
            raise ParameterError(f"ModMSketcher.modulus must be a positive int; got {modulus!r}.")
        self.modulus = modulus
        rng = np.random.default_rng([seed, _MODM_TAG])
        self.key = rng.integers(0, 2**64, size=2, dtype=np.uint64, endpoint=False)
        self.key[1] |= np.uint64(1)

    def sketch(self, sets: ShingleSets) -> ShingleSets:
        """The sub-sets of hashed shingles that are 0 mod m, sorted, as :class:`ShingleSets`."""
        hashed = keyed_mix(sets.hashes, self.key)
        keep = hashed % np.uint64(self.modulus) == 0
        doc = np.repeat(np.arange(len(sets)), sets.sizes())
        order = np.lexsort((hashed[keep], doc[keep]))
        sizes = np.bincount(doc[keep], minlength=len(sets))
        offsets = np.zeros(len(sets) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        return ShingleSets(hashes=hashed[keep][order], offsets=offsets)


def keyed_mix(values: U64Array, key: U64Array) -> U64Array:
    """``fmix64((x ^ key[0]) * key[1])`` elementwise, in NumPy (wrap-around uint64)."""
    x: U64Array = (values ^ key[0]) * key[1]
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xC4CEB9FE1A85EC53)
    x ^= x >> np.uint64(33)
    return x
