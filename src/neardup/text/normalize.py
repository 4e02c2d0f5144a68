"""Normalisation: the first step after reading, from raw UTF-8 texts to a normalised :class:`Batch`.

Unicode NFKC, then case folding, in C-speed string operations over all the non-ASCII documents
of a batch at once; ASCII documents pass untouched (the tokenising kernels fold their case on the
fly). Whitespace collapsing and punctuation stripping happen inside the tokenising kernels,
driven by a table that classifies every Unicode code point (:func:`codepoint_classes`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.typing import NDArray

from neardup._kernels import normalize as kernels
from neardup._kernels.shingles import ALONE, PUNCT, SPACE
from neardup._kernels.spans import text_stats
from neardup._parallel import parallel_section
from neardup._types import Batch, BoolArray, I64Array, U8Array
from neardup.params import NormalizeSpec
from neardup.text.spans import gather, pack_strings, take

__all__ = [
    "UNICODE_VERSION",
    "TextStats",
    "codepoint_classes",
    "normalize",
    "normalize_batch",
    "normalize_bytes",
    "text_statistics",
]

UNICODE_VERSION: str = unicodedata.unidata_version
"""The Unicode database version normalisation and the code-point classes come from."""

# Scripts written without spaces between words: each of their characters is a word.
_ALONE_RANGES = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x0F00, 0x0FFF),  # Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x19E0, 0x19FF),  # Khmer symbols
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3005, 0x3007),  # ideographic iteration and number marks
    (0x3021, 0x3029),  # Hangzhou numerals
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x312F),  # Bopomofo
    (0x31A0, 0x31FF),  # Bopomofo extended, Katakana extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
    (0x20000, 0x3FFFF),  # CJK extensions B and later, planes 2 and 3
)

# ASCII symbols (category S*: $ + < = > ^ ` | ~) count as punctuation too.
_ASCII_PUNCT = b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


@cache
def codepoint_classes() -> U8Array:
    """The class of every Unicode code point, as the tokenising kernels read it.

    ``0`` joins a word, ``1`` is whitespace, ``2`` is punctuation (general category P*),
    ``3`` is a character of a script written without spaces (a word by itself).

    Examples
    --------
    >>> classes = codepoint_classes()
    >>> [int(classes[ord(c)]) for c in "a ,漢"]
    [0, 1, 2, 3]
    """
    scanned = 0x30000  # beyond: CJK planes (below) and unassigned, private or tag characters
    classes = np.zeros(0x110000, dtype=np.uint8)
    chars = [chr(cp) for cp in range(scanned)]
    is_punct = np.fromiter(
        (unicodedata.category(ch)[0] == "P" for ch in chars), dtype=bool, count=scanned
    )
    is_space = np.fromiter((ch.isspace() for ch in chars), dtype=bool, count=scanned)
    classes[:scanned][is_punct] = PUNCT
    classes[:scanned][is_space] = SPACE
    classes[np.frombuffer(_ASCII_PUNCT, dtype=np.uint8)] = PUNCT
    for low, high in _ALONE_RANGES:
        block = classes[low : high + 1]
        block[block == 0] = ALONE
    classes.setflags(write=False)
    return classes


def normalize(text: str, spec: NormalizeSpec) -> str:
    """Apply NFKC and case folding as ``spec`` asks (whitespace is collapsed later, in kernels).

    Examples
    --------
    >>> normalize("Ｆｕｌｌ-width ＡＢＣ and Straße", NormalizeSpec())
    'full-width abc and strasse'
    """
    if spec.nfkc and not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    if spec.casefold:
        text = text.casefold()
    return text


def normalize_batch(texts: Sequence[str], spec: NormalizeSpec) -> Batch:
    r"""Normalise ``texts`` and pack them into one UTF-8 buffer with offsets.

    Examples
    --------
    >>> bytes(normalize_batch(["ÉCOLE", "Plain ASCII"], NormalizeSpec()).data)
    b'\xc3\xa9colePlain ASCII'
    """
    return normalize_bytes(Batch(*pack_strings(texts)), spec)


@dataclass(frozen=True, slots=True)
class TextStats:
    """What a pass over raw texts learns per document: characters, and whether all are ASCII."""

    chars: I64Array
    is_ascii: BoolArray


def text_statistics(texts: Batch) -> TextStats:
    """Characters (code points) of each UTF-8 text, and whether it is all ASCII."""
    n = texts.num_docs
    stats = TextStats(chars=np.empty(n, dtype=np.int64), is_ascii=np.empty(n, dtype=bool))
    if n:
        with parallel_section:
            text_stats(texts.data, texts.offsets, stats.chars, stats.is_ascii)
    return stats


def normalize_bytes(
    texts: Batch, spec: NormalizeSpec, stats: TextStats | None = None, *, in_place: bool = False
) -> Batch:
    """Normalise raw UTF-8 texts as :func:`normalize` does each.

    ASCII texts are kept as they are: NFKC leaves them unchanged and their case folding is
    done by the tokenising kernels. A text whose every character normalises on its own
    (nearly all text in Latin, Greek, Cyrillic, CJK, ... scripts) is mapped character by
    character in a kernel (:class:`SimpleFolds`); any other is
    normalised in Python, one by one
    (joining them into one string was measured three times slower: one wide character widens
    the whole string, and NFKC's quick check can no longer skip texts already normalised).
    Returns ``texts`` itself when nothing changes; with ``in_place``, also when the table
    normalised every text without changing its size (written into ``texts.data``).
    """
    stats = stats if stats is not None else text_statistics(texts)
    if stats.is_ascii.all() or not (spec.nfkc or spec.casefold):
        return texts
    docs = np.flatnonzero(~stats.is_ascii)
    if spec.nfkc and spec.casefold:
        normalized = _mapped(texts, docs, spec, in_place)
        if normalized is None:
            return texts
    else:
        normalized = _one_by_one(take(texts, docs), spec)
    starts = texts.offsets[:-1].copy()
    lengths = np.diff(texts.offsets)
    starts[docs] = normalized.offsets[:-1]
    lengths[docs] = np.diff(normalized.offsets)
    return gather(texts.data, normalized.data, ~stats.is_ascii, starts, lengths)


def _mapped(texts: Batch, docs: I64Array, spec: NormalizeSpec, in_place: bool) -> Batch | None:
    """``docs`` normalised: by the character table where it covers them, else in Python.

    None when they were normalised in place (``texts.data`` writable, no size changed).
    """
    table = _FOLDS.covering(texts, docs)
    sizes = np.empty(docs.shape[0], dtype=np.int64)
    with parallel_section:
        kernels.simple_sizes(texts.data, texts.offsets, docs, table, sizes)
    simple = sizes >= 0
    if (
        in_place
        and simple.all()
        and texts.data.flags.writeable
        and np.array_equal(sizes, texts.offsets[docs + 1] - texts.offsets[docs])
    ):  # same sizes (the common case): normalise in place, no copy of the batch
        with parallel_section:
            kernels.simple_fill(
                texts.data, texts.offsets, docs, table, texts.data, texts.offsets[docs]
            )
        return None
    offsets = np.zeros(docs.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.where(simple, sizes, 0), out=offsets[1:])
    out = np.empty(int(offsets[-1]), dtype=np.uint8)
    with parallel_section:
        kernels.simple_fill(
            texts.data, texts.offsets, docs[simple], table, out, offsets[:-1][simple]
        )
    if simple.all():
        return Batch(data=out, offsets=offsets)
    rest = _one_by_one(take(texts, docs[~simple]), spec)
    starts = offsets[:-1].copy()
    lengths = np.diff(offsets)
    starts[~simple] = rest.offsets[:-1]
    lengths[~simple] = np.diff(rest.offsets)
    return gather(out, rest.data, ~simple, starts, lengths)


class SimpleFolds:
    """For each code point below U+30000: its normalised form, or -1.

    The form is ``casefold(NFKC(c))`` when that is one character and normalising ``c`` alone
    is all there is to normalising it in any text. That holds when ``c`` and its image are
    starters (combining class 0) that no canonical composition takes as its second
    character: then NFKC neither reorders nor composes across characters, and case folding
    is per character anyway. (ASCII is mapped by the kernels themselves.) Filled from
    :mod:`unicodedata` a block of 256 code points at a time, for the blocks texts use.
    """

    SIZE = 0x30000

    def __init__(self) -> None:
        self.table = np.full(self.SIZE, -1, dtype=np.int32)
        self.filled = np.zeros(self.SIZE >> 8, dtype=bool)
        self._seconds: frozenset[int] | None = None

    def covering(self, texts: Batch, docs: I64Array) -> NDArray[np.int32]:
        """The table, with every block that ``docs`` use filled in."""
        seen = np.zeros(self.filled.shape[0], dtype=bool)
        with parallel_section:
            kernels.used_blocks(texts.data, texts.offsets, docs, seen)
        for block in np.flatnonzero(seen & ~self.filled).tolist():
            self._fill(block)
        return self.table

    def _fill(self, block: int) -> None:
        code_points = [
            cp
            for cp in range(max(block << 8, 0x80), (block + 1) << 8)
            if not 0xD800 <= cp <= 0xDFFF
        ]
        self.filled[block] = True
        if not code_points:  # surrogates only
            return
        chars = [chr(cp) for cp in code_points]
        normalized = unicodedata.normalize("NFKC", "\x00".join(chars)).split("\x00")
        folded = "\x00".join(normalized).casefold().split("\x00")
        seconds = self._second_characters()
        for cp, char, nfkc, fold in zip(code_points, chars, normalized, folded, strict=True):
            if len(nfkc) != 1 or len(fold) != 1 or cp in seconds or ord(nfkc) in seconds:
                continue
            if unicodedata.combining(char) or unicodedata.combining(nfkc):
                continue
            self.table[cp] = ord(fold)

    def _second_characters(self) -> frozenset[int]:
        """Code points a canonical composition takes as its second character."""
        if self._seconds is None:
            seconds = set(_HANGUL_SECONDS)
            for cp in range(self.SIZE):
                decomposition = unicodedata.decomposition(chr(cp))
                if decomposition and not decomposition.startswith("<"):
                    parts = decomposition.split()
                    if len(parts) == 2:
                        seconds.add(int(parts[1], 16))
            self._seconds = frozenset(seconds)
        return self._seconds


_HANGUL_SECONDS = (*range(0x1161, 0x1176), *range(0x11A8, 0x11C3))  # jamo V and T
_FOLDS = SimpleFolds()


def _one_by_one(pieces: Batch, spec: NormalizeSpec) -> Batch:
    data, offsets = pieces.data, pieces.offsets
    texts = [
        normalize(bytes(data[offsets[i] : offsets[i + 1]]).decode("utf-8", "surrogatepass"), spec)
        for i in range(pieces.num_docs)
    ]
    return Batch(*pack_strings(texts))
