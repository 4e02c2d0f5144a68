"""One-permutation hashing with optimal densification (seed 000; Li 2012; Shrivastava 2017)."""

from __future__ import annotations

import numpy as np

from neardup._kernels.shingles import oph_of_sets, oph_probe_table, oph_signatures
from neardup._parallel import parallel_section
from neardup._types import Batch, I64Array, U64Array
from neardup.params import SketchSpec
from neardup.sketch.base import TextSketcher
from neardup.text.shingle import ShingleSets

__all__ = ["OPHSketcher"]

PROBE_DEPTH = 64
"""Densification probes tabled per bin (a bin rarely needs more when a tenth of bins is filled)."""


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
        self._probes = oph_probe_table(self.densify_key, self.spec.num_perm, PROBE_DEPTH)

    def sketch_sets(self, sets: ShingleSets) -> U64Array:
        """The signature rows of shingle sets: equal to those of the texts they come from.

        Verification has the sets of its documents anyway, so their rows cost no second pass
        over the text.
        """
        values = np.empty((len(sets), self.width), dtype=np.uint64)
        if len(sets):
            with parallel_section:
                oph_of_sets(
                    sets.hashes, sets.offsets, self.key, self.densify_key, self._probes, values
                )
        return values

    def _fill(
        self, batch: Batch, values: U64Array, num_shingles: I64Array, fingerprints: U64Array
    ) -> None:
        kt = self._kernel_text
        oph_signatures(
            batch.data,
            batch.offsets,
            *kt.tokenizer,
            kt.k,
            self.key,
            self.densify_key,
            self._probes,
            values,
            num_shingles,
            fingerprints,
        )
