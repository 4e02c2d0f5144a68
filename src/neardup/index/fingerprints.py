"""SimHash fingerprints as index postings, searched for every one within ``h`` bits.

An :class:`~neardup.index.LSHIndex` of ``SketchSpec(kind="simhash")`` keeps, instead of LSH
band keys, postings ``(band, key, doc)`` whose keys are the fingerprints themselves (or their
block permutations), so that the stored fingerprints within ``h`` bits of a query are found by
range scans of the store's sorted keys, as :mod:`neardup.hamming` scans sorted arrays in
memory, but in the index file:

- ``search="tables"`` (block-permuted tables, seed 004 §3): ``T = C(G, G - h)`` postings per
  64-bit word, table ``t``'s being the word with its leading blocks moved to the top; a query
  scans, in each table, the keys sharing its permuted header. Exact.
- ``search="psm"`` (probabilistic SimHash matching, seed 004 §4): one posting per word, the
  word itself; a query scans its own header bucket (the top ``t = log2 n`` bits) and then the
  buckets of its header with the flip sets ``S`` of at most ``h`` header bits, likeliest first
  (VOSH, by the query's flip probabilities). Every set of a full budget makes it exact; a
  budget of a few sets finds most neighbours for a fraction of the scans.

A scanned posting's key is the (permuted) word, so it is checked by popcount before its
document is read. 128-bit fingerprints are searched word by word within ``h // 2`` bits
(pigeonhole) and checked on the full distance by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from neardup._kernels.vosh import MAX_PROBABILITY
from neardup._types import F64Array, I64Array, U64Array
from neardup.errors import ParameterError
from neardup.hamming.bphs import BlockLayout, BPHSDesign, choose_blocks
from neardup.hamming.psm import flip_budget, header_bits_for, vosh_masks
from neardup.params import LSHSpec, Search, SketchSpec, check_psm_radius, per_word_radius

__all__ = ["DESIGN_FINGERPRINTS", "FingerprintPostings", "Ranges"]

DESIGN_FINGERPRINTS = 1_000_000
"""The collection size the tables' ``G`` is chosen for when none is given: an index's size is
not known when it is made, and its tables cannot change afterwards."""


@dataclass(frozen=True, slots=True)
class Ranges:
    """Key ranges to scan for a batch of queries: range ``i`` serves query ``query[i]``.

    ``target[i]`` is the query's word as the range's band stores it (permuted for a table):
    a posting in the range is near when its key is within the per-word radius of it.
    """

    query: I64Array
    band: I64Array
    low: U64Array
    high: U64Array
    target: U64Array


@dataclass(frozen=True)
class FingerprintPostings:
    """How an index's SimHash fingerprints become postings, and queries key ranges.

    Examples
    --------
    >>> postings = FingerprintPostings(bits=64, max_distance=3, search="tables", num_blocks=4)
    >>> postings.num_bands, postings.keys(np.array([[0x1111_2222_3333_4444]], np.uint64)).shape
    (4, (1, 4))
    >>> FingerprintPostings(bits=64, max_distance=3, search="psm").num_bands
    1
    """

    bits: int
    max_distance: int
    search: Search
    num_blocks: int | None = None
    """``G`` of the tables (``search="tables"`` only)."""
    budget: int | None = None
    """PSM's header buckets per query and word; ``None``: every one within ``h`` header bits."""

    def __post_init__(self) -> None:
        if self.search == "psm":
            check_psm_radius(self.bits, self.max_distance)
        if self.search == "tables" and not (
            self.num_blocks is not None and self.per_word < self.num_blocks <= 64
        ):
            raise ParameterError(
                f"the tables need {self.per_word} < blocks <= 64; got {self.num_blocks}."
            )

    @classmethod
    def of(
        cls, sketch: SketchSpec, lsh: LSHSpec, num_blocks: int | None = None
    ) -> FingerprintPostings:
        """The postings of an index made with these specs (and, if given, ``G`` tables)."""
        if lsh.search == "tables" and num_blocks is None:
            h = per_word_radius(sketch.simhash_bits, lsh.hamming)
            num_blocks = lsh.hamming_blocks or choose_blocks(DESIGN_FINGERPRINTS, h)
        return cls(sketch.simhash_bits, lsh.hamming, lsh.search, num_blocks, lsh.psm_budget)

    @property
    def words(self) -> int:
        """64-bit words per fingerprint."""
        return self.bits // 64

    @property
    def per_word(self) -> int:
        """The radius each word is searched with: ``h``, or ``h // 2`` for two words."""
        return per_word_radius(self.bits, self.max_distance)

    @cached_property
    def _layout(self) -> BlockLayout:
        assert self.num_blocks is not None
        return BlockLayout.of(BPHSDesign(self.num_blocks, self.num_blocks - self.per_word))

    @property
    def tables(self) -> int:
        """Postings per word: the tables' ``C(G, G - h)``, or PSM's one."""
        return 1 if self.search == "psm" else int(self._layout.sources.shape[0])

    @property
    def num_bands(self) -> int:
        """Postings per document (band ``w * tables + t`` holds word ``w`` in table ``t``)."""
        return self.words * self.tables

    def keys(self, values: U64Array) -> U64Array:
        """``uint64[n, num_bands]``: the posting keys of fingerprint rows ``values``."""
        values = np.ascontiguousarray(values, dtype=np.uint64)
        if self.search == "psm":
            return values.copy()
        out = np.empty((values.shape[0], self.num_bands), dtype=np.uint64)
        for word in range(self.words):
            for table in range(self.tables):
                out[:, word * self.tables + table] = self._layout.permute(values[:, word], table)
        return out

    def ranges(self, queries: U64Array, probabilities: F64Array | None, stored: int) -> Ranges:
        """The key ranges holding every stored fingerprint near each query row.

        ``probabilities`` (``float64[n, bits]``) are the queries' flip probabilities for PSM
        (``None``: every bit alike); ``stored`` is about how many fingerprints are stored
        (an index counts every document it ever stored), whose ``log2`` is PSM's header width.
        """
        queries = np.ascontiguousarray(queries, dtype=np.uint64)
        if queries.shape[0] == 0:
            nothing = np.empty(0, np.uint64)
            return Ranges(np.empty(0, np.int64), np.empty(0, np.int64), nothing, nothing, nothing)
        keys = self.keys(queries)
        if self.search == "tables":
            shifts = np.tile(self._layout.prefix_shifts, self.words)
            query = np.repeat(np.arange(queries.shape[0], dtype=np.int64), self.num_bands)
            band = np.tile(np.arange(self.num_bands, dtype=np.int64), queries.shape[0])
            target = keys.reshape(-1)
            return _buckets(query, band, target, shifts[band], target)
        return self._header_ranges(keys, probabilities, stored)

    def _header_ranges(
        self, queries: U64Array, probabilities: F64Array | None, stored: int
    ) -> Ranges:
        """PSM: per query and word, its header buckets in VOSH order, ``budget`` at most."""
        t = max(1, header_bits_for(stored))
        shift = np.uint64(64 - t)
        budget = flip_budget(self.budget, t, self.per_word)
        uniform = np.full(t, MAX_PROBABILITY)
        parts: list[tuple[int, int, U64Array]] = []
        for q in range(queries.shape[0]):
            for word in range(self.words):
                p = uniform
                if probabilities is not None:
                    p = probabilities[q, 64 * word + 64 - t : 64 * (word + 1)]
                masks = vosh_masks(p, min(self.per_word, t), budget) << shift
                parts.append((q, word, masks))
        query = np.concatenate([np.full(m.shape[0], q, np.int64) for q, _, m in parts])
        band = np.concatenate([np.full(m.shape[0], w, np.int64) for _, w, m in parts])
        target = queries[query, band]
        flipped = target ^ np.concatenate([m for _, _, m in parts])
        return _buckets(query, band, flipped, shift, target)


def _buckets(
    query: I64Array, band: I64Array, point: U64Array, shift: U64Array | np.uint64, target: U64Array
) -> Ranges:
    """The ranges of the keys sharing each ``point``'s bits above ``shift`` (its bucket)."""
    low = (point >> shift) << shift
    return Ranges(query, band, low, low | ((np.uint64(1) << shift) - np.uint64(1)), target)
