"""One-permutation hashing with optimal densification (seed 000; Li 2012; Shrivastava 2017)."""

from __future__ import annotations

from functools import partial

import numpy as np

from neardup._kernels.compiling import read_only
from neardup._kernels.oph import (
    oph_agreement_of_sets,
    oph_bin_agreement_of_sets,
    oph_rank_table,
    oph_signatures,
)
from neardup._parallel import SCRATCH_BLOCK, in_blocks
from neardup._types import Batch, BoolArray, F64Array, I64Array, U64Array
from neardup.params import SketchSpec
from neardup.sketch.base import TextSketcher
from neardup.sketch.signatures import Signatures
from neardup.text.shingle import ShingleSets, packed_sets, shingle_rooms

__all__ = ["OPHSketcher"]

RANKED_BINS = 256
"""Up to this many bins, densification goes through a rank table of ``bins^2`` 16-bit entries
(128 KB at 256 bins), about three times as fast as following each empty bin's probes."""

NO_SETS = (np.zeros(1, dtype=np.int64), np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64))
"""The set arguments of :func:`oph_signatures` when no set is kept."""


class OPHSketcher(TextSketcher):
    """One-permutation hashing: one hash per shingle fills ``num_perm`` bins; empty bins borrow.

    Each shingle is hashed once; the hash picks a bin and the bin keeps its smallest hash
    (seed 000, "Ping Li's fast uniform sampling"). Short documents leave bins empty; each empty
    bin copies the first filled bin of a fixed pseudo-random probe sequence (optimal
    densification), which keeps ``P[slot agrees] = Jaccard``. Cost: O(1) per shingle instead of
    O(num_perm), at the accuracy of classic MinHash (``tests/stats``).

    Examples
    --------
    >>> sketcher = OPHSketcher(SketchSpec(kind="oph", num_perm=8, seed=7))
    >>> sigs = sketcher.sketch(["one two three four five six", "one two"])
    >>> sigs.num_shingles.tolist(), sigs.is_short.tolist()
    ([2, 0], [False, True])
    """

    kind = "oph"

    def __init__(self, spec: SketchSpec | None = None) -> None:
        super().__init__(spec)
        self.key: U64Array = self._random_uint64(2)
        self.key[1] |= 1
        self.densify_key = self._random_uint64(1)[0]
        num_bins = self.spec.num_perm
        self._index_bits = 8
        self._ranks = np.empty((0, 0), dtype=np.uint16)  # densify by probing, not by table
        if num_bins <= RANKED_BINS:
            ranks = np.empty((num_bins, num_bins), dtype=np.uint32)
            oph_rank_table(self.densify_key, num_bins, self._index_bits, ranks)
            self._ranks = ranks.astype(np.uint16)

    def agreement_of_sets(self, sets: ShingleSets, first: I64Array, second: I64Array) -> F64Array:
        """The fraction of equal slots of the rows of sets ``first[p]`` and ``second[p]``.

        Equal to :func:`~neardup.verify.estimate_jaccard` of the rows of the texts the sets
        come from: verification has the sets anyway, so the estimate costs no second pass over
        the text, and no row is kept.
        """
        first = np.ascontiguousarray(first, dtype=np.int64)
        second = np.ascontiguousarray(second, dtype=np.int64)
        counts = np.empty(first.shape[0], dtype=np.int64)
        run = partial(
            oph_agreement_of_sets, sets.hashes, sets.offsets, first, second, self.key,
            self.densify_key, self._ranks, self._index_bits, self.width, counts,
        )  # fmt: skip
        in_blocks(run, first.shape[0], max_block=SCRATCH_BLOCK)
        fraction: F64Array = counts / self.width
        return fraction

    def estimate_without_densification(
        self, sets: ShingleSets, first: I64Array, second: I64Array
    ) -> F64Array:
        """Seed 000's estimate of the Jaccard similarity of each pair, from bins left empty.

        "Some of the bins may end up empty with short (<2000 feature) documents, but empty !=
        non-empty for comparing vectors, but empty vs. empty doesn't count at all" (seed 000):
        ``matches / (num_perm - bins empty in both)``, the estimator of Li, Owen and Zhang
        (2012), unbiased given that some bin is filled. :meth:`agreement_of_sets` (what the
        batch job reports) estimates from densified rows instead, whose bins are all filled, so
        that the rows can be banded. NaN for two empty sets.

        Examples
        --------
        Two sets of 4 words sharing 3 (Jaccard 3/5) fill 5 of 64 bins; the densified rows copy
        those 5 into the other 59:

        >>> from neardup import ShingleSpec, Shingler
        >>> sketcher = OPHSketcher(SketchSpec(kind="oph", num_perm=64, seed=1))
        >>> sets = Shingler(ShingleSpec(k=1)).shingle_sets(["a b c d", "a b c e", ""])
        >>> pairs = np.array([0, 0, 2]), np.array([0, 1, 2])
        >>> sketcher.estimate_without_densification(sets, *pairs).round(3).tolist()
        [1.0, 0.6, nan]
        >>> sketcher.agreement_of_sets(sets, np.array([0]), np.array([1])).tolist()
        [0.484375]
        """
        first = np.ascontiguousarray(first, dtype=np.int64)
        second = np.ascontiguousarray(second, dtype=np.int64)
        matches = np.empty(first.shape[0], dtype=np.int64)
        counted = np.empty(first.shape[0], dtype=np.int64)
        run = partial(
            oph_bin_agreement_of_sets, sets.hashes, sets.offsets, first, second, self.key,
            self.width, matches, counted,
        )  # fmt: skip
        in_blocks(run, first.shape[0], max_block=SCRATCH_BLOCK)
        with np.errstate(divide="ignore", invalid="ignore"):
            estimate: F64Array = matches / counted
        return estimate

    def sketch_keeping_sets(self, batch: Batch, keep: BoolArray) -> tuple[Signatures, ShingleSets]:
        """Sketch a normalised batch, and keep the shingle sets of the ``keep`` documents.

        The sets come from the pass that sketches (each shingle is hashed once for both): those
        of the ``keep`` documents, sorted and distinct as :meth:`Shingler.shingle_sets` makes
        them, the others empty.
        """
        rooms = shingle_rooms(np.where(keep, np.diff(batch.offsets), 0), self._kernel_text)
        scratch = np.empty(max(int(rooms[-1]), 1), dtype=np.uint64)
        sizes = np.zeros(batch.num_docs, dtype=np.int64)
        signatures = self._sketched(batch, (rooms, scratch, sizes))
        return signatures, packed_sets(scratch, rooms, sizes)[0]

    def _fill(
        self,
        batch: Batch,
        values: U64Array,
        num_shingles: I64Array,
        fingerprints: U64Array,
        sets: tuple[I64Array, U64Array, I64Array] = NO_SETS,
    ) -> None:
        kt = self._kernel_text
        run = partial(
            oph_signatures,
            read_only(batch.data),
            batch.offsets,
            *kt.tokenizer,
            kt.k,
            self.key,
            self.densify_key,
            self._ranks,
            self._index_bits,
            values,
            num_shingles,
            fingerprints,
            *sets,
        )
        in_blocks(run, batch.num_docs, max_block=SCRATCH_BLOCK)
