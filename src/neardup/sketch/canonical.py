"""Canonical-form fingerprints (I-Match): near copies made exact duplicates, then one hash.

Seed 004 (Sood and Loguinov, related work): "convert them to some canonical form in which they
become exact duplicates. By removing certain tokens perceived dispensable (e.g., high/low IDF
words [9]) and hashing the resulting page to a single fingerprint, similar documents can be
found in Θ(n log n) time using sorting." [9] is I-Match (Chowdhury, Frieder, Grossman and
McCabe 2002): a document's canonical form is its distinct terms whose IDF in the collection
lies in a middle band; documents with equal forms are duplicates. The terms are the shingles
of :class:`~neardup.params.ShingleSpec` (``word:1``, I-Match's terms, on the command line
``--shingle word:1``); the IDF is learned from the corpus by
:class:`~neardup.sketch.weighted.IDFWeights` in a first pass, as for a TF-IDF SimHash.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from neardup._kernels.canonical import canonical_fingerprints
from neardup._kernels.compiling import read_only
from neardup._kernels.tokens import document_fingerprints
from neardup._parallel import SCRATCH_BLOCK, in_blocks
from neardup._types import Batch, F64Array, I64Array, U64Array
from neardup.params import SketchSpec
from neardup.sketch.base import TextSketcher
from neardup.sketch.weighted import IDFWeights
from neardup.text.shingle import Shingler

__all__ = ["CanonicalSketcher", "normalized_idf"]


def normalized_idf(idf: IDFWeights) -> F64Array:
    """The IDF of each learned term over ``log(N)``: ``log(N / df) / log(N)`` in [0, 1].

    0 is a term of every document, 1 a term of one; with ``N = 1`` every term gets 0.

    Examples
    --------
    >>> from neardup import ShingleSpec
    >>> words = SketchSpec(kind="canonical", shingle=ShingleSpec(k=1))
    >>> idf = IDFWeights(words).fit(["a b", "a c", "a d", "a b"])
    >>> sorted(normalized_idf(idf).round(3).tolist())
    [0.0, 0.5, 1.0, 1.0]
    """
    scale = np.log(idf.num_docs_) if idf.num_docs_ > 1 else 1.0
    return np.asarray(idf.idf_ / scale, dtype=np.float64)


class CanonicalSketcher(TextSketcher):
    """One 64-bit fingerprint per document: the hash of its distinct terms in the IDF band.

    The kept terms of a document are its distinct shingles whose normalised IDF
    (:func:`normalized_idf`) lies in ``[spec.idf_low, spec.idf_high]``: the *lexicon*, sorted
    ``uint64`` term hashes. Terms ``idf`` never saw are dropped (they are rarer than any it
    saw). Without ``idf`` (no collection to learn from) no term is dropped, and the canonical
    form is the whole distinct term set. The fingerprint folds the kept hashes in ascending
    order (``neardup._kernels.canonical.canonical_fingerprints``); a document without a kept
    term is *short* (``num_shingles``, which here counts kept terms, is 0) and only exact
    copies match it. Equal fingerprints are the candidates (LSH banding of one band of the one
    slot).

    Examples
    --------
    >>> from neardup import ShingleSpec
    >>> spec = SketchSpec(kind="canonical", shingle=ShingleSpec(k=1), idf_high=0.5)
    >>> corpus = ["the cat sat on the mat", "the cat sat on the mat xyzzy", "the dog ran"]
    >>> sketcher = CanonicalSketcher(spec, IDFWeights(spec).fit(corpus))
    >>> sigs = sketcher.sketch(corpus)
    >>> bool(sigs.values[0, 0] == sigs.values[1, 0]), sigs.values.shape
    (True, (3, 1))
    """

    kind = "canonical"

    def __init__(self, spec: SketchSpec | None = None, idf: IDFWeights | None = None) -> None:
        super().__init__(spec)
        self._shingler = Shingler(self.spec.shingle, self.spec.normalize)
        self.idf = idf
        self.lexicon: U64Array = np.empty(0, dtype=np.uint64)
        if idf is not None:
            nidf = normalized_idf(idf)
            band = (nidf >= self.spec.idf_low) & (nidf <= self.spec.idf_high)
            self.lexicon = np.ascontiguousarray(idf.features_[band])

    def _fill(
        self, batch: Batch, values: U64Array, num_shingles: I64Array, fingerprints: U64Array
    ) -> None:
        kt = self._kernel_text
        run = partial(
            document_fingerprints, read_only(batch.data), batch.offsets, *kt.tokenizer, kt.k,
            num_shingles, fingerprints,
        )  # fmt: skip
        in_blocks(run, batch.num_docs, max_block=SCRATCH_BLOCK)
        # num_shingles is overwritten below: the kept terms
        sets = self._shingler.shingle_sets(batch)
        run = partial(
            canonical_fingerprints, sets.hashes, sets.offsets, self.lexicon, self.idf is not None,
            values, num_shingles,
        )  # fmt: skip
        in_blocks(run, len(sets))
