"""Documents cut into units for passage-level dedup: lines, paragraphs, runs of sentences.

:func:`cut_pieces` cuts a batch's texts into pieces (its lines, paragraphs or sentences; see
:mod:`neardup._kernels.units` for the rules); :func:`units_of` groups them into the units that
are matched: each piece for lines and paragraphs, every run of ``num_sentences`` consecutive
sentences for sentences. A unit's text (its content, digits read as 0 when the spec folds
them) is what the dedup stages normalise, shingle and compare; pieces are what is removed.

Examples
--------
>>> from neardup.params import UnitSpec
>>> from neardup.text.spans import pack_strings
>>> from neardup._types import Batch
>>> texts = Batch(*pack_strings(["Dr. Who came. He saw! It ended."]))
>>> pieces = cut_pieces(texts, UnitSpec(kind="sentences", num_sentences=2))
>>> [(int(a), int(b)) for a, b in zip(pieces.tile_start, pieces.tile_end)]
[(0, 14), (14, 22), (22, 31)]
>>> units = units_of(texts, pieces, UnitSpec(kind="sentences", num_sentences=2))
>>> bytes(units.texts.data).decode(), units.texts.offsets.tolist()
('Dr. Who came. He saw!He saw! It ended.', [0, 21, 38])
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from neardup._kernels import units as kernels
from neardup._types import Batch, I64Array, U64Array
from neardup.params import UnitSpec
from neardup.text.normalize import codepoint_classes

__all__ = ["ABBREVIATIONS", "Pieces", "Units", "cut_pieces", "units_of"]

ABBREVIATIONS = (
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "ft", "rev", "hon", "gen", "col",
    "lt", "capt", "sgt", "gov", "sen", "rep", "pres", "vs", "inc", "ltd", "co", "corp", "dept",
    "univ", "assn", "bros", "no", "nos", "fig", "figs", "eq", "eqs", "sec", "ch", "vol", "vols",
    "pp", "ed", "eds", "approx", "cf", "al", "ca", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec", "mon", "tue", "wed", "thu", "fri", "sat", "sun",
)  # fmt: skip
"""Words whose ``.`` ends no sentence (lower-case ASCII; matched case-insensitively). ``etc``
is left out: it ends sentences more often than not."""

_MODES = {"line": kernels.LINE, "paragraph": kernels.PARAGRAPH, "sentences": kernels.SENTENCE}


@dataclass(frozen=True, slots=True)
class Pieces:
    """The pieces of a batch's documents, in document order.

    Attributes
    ----------
    doc
        The document (within the batch) of each piece.
    tile_start, tile_end
        The piece's tile in characters from its document's start: removing the piece removes
        these characters (the content and the whitespace up to the next piece).
    content_start, content_end
        The piece's content (its tile without surrounding whitespace) in bytes of the batch
        buffer.
    chars
        Characters of the content other than whitespace.
    """

    doc: I64Array
    tile_start: I64Array
    tile_end: I64Array
    content_start: I64Array
    content_end: I64Array
    chars: I64Array

    @property
    def num_pieces(self) -> int:
        """Pieces cut."""
        return int(self.doc.shape[0])


@dataclass(frozen=True, slots=True)
class Units:
    """The units of a batch: runs of consecutive pieces of one document, and their texts.

    ``first[u]`` is the first piece of unit ``u`` and ``count[u]`` how many it holds; units
    with fewer characters than the spec's ``min_chars`` are left out. ``keys[u]``: equal for
    units whose texts normalise alike for sure (the same bytes up to ASCII case and runs of
    ASCII whitespace, digits folded as the texts are).
    """

    first: I64Array
    count: I64Array
    texts: Batch
    keys: U64Array

    @property
    def num_units(self) -> int:
        """Units kept for matching."""
        return int(self.first.shape[0])


@cache
def _abbreviation_hashes() -> U64Array:
    """FNV-1a of each listed abbreviation, as the sentence kernel hashes the word before a dot."""
    hashes = []
    for word in ABBREVIATIONS:
        h = 0xCBF29CE484222325
        for byte in word.encode("ascii"):
            h = ((h ^ byte) * 0x100000001B3) & (2**64 - 1)
        hashes.append(h)
    return np.array(hashes, dtype=np.uint64)


def cut_pieces(texts: Batch, spec: UnitSpec) -> Pieces:
    """Cut each text into the pieces ``spec.kind`` names (lines, paragraphs or sentences)."""
    args = (
        texts.data,
        np.ascontiguousarray(texts.offsets, dtype=np.int64),
        _MODES[spec.kind],
        codepoint_classes(),
        _abbreviation_hashes(),
    )
    num = kernels.cut_pieces(*args, np.empty((0, 6), dtype=np.int64))
    out = np.empty((num, 6), dtype=np.int64)
    kernels.cut_pieces(*args, out)
    columns = [np.ascontiguousarray(out[:, c]) for c in range(6)]
    return Pieces(*columns)


def units_of(texts: Batch, pieces: Pieces, spec: UnitSpec) -> Units:
    """The units to match: each piece, or every run of ``spec.num_sentences`` sentences.

    A document with fewer sentences than a run is one unit. Units with fewer than
    ``spec.min_chars`` characters (whitespace left out) are dropped.
    """
    size = spec.num_sentences
    num_docs = texts.num_docs
    per_doc = np.bincount(pieces.doc, minlength=num_docs)
    doc_first = np.r_[0, np.cumsum(per_doc)[:-1]].astype(np.int64)
    index = np.arange(pieces.num_pieces, dtype=np.int64)
    rank = index - doc_first[pieces.doc]
    in_doc = per_doc[pieces.doc]
    starts = (rank + size <= in_doc) | ((in_doc < size) & (rank == 0))
    first = index[starts]
    count = np.minimum(size, in_doc[first]).astype(np.int64)
    last = first + count - 1
    total = np.r_[0, np.cumsum(pieces.chars)]
    chars = total[last + 1] - total[first]
    wanted = chars >= spec.min_chars
    first, count, last = first[wanted], count[wanted], last[wanted]
    starts_b = pieces.content_start[first]
    ends_b = pieces.content_end[last]
    data = np.empty(int((ends_b - starts_b).sum()), dtype=np.uint8)
    offsets = np.empty(first.shape[0] + 1, dtype=np.int64)
    keys = np.empty(first.shape[0], dtype=np.uint64)
    kernels.unit_texts(texts.data, starts_b, ends_b, spec.fold_digits, data, offsets, keys)
    return Units(first=first, count=count, texts=Batch(data=data, offsets=offsets), keys=keys)
