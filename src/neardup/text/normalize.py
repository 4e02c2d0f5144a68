"""Normalisation: the first step after reading, from Python strings to a :class:`Batch`.

Per document, in C-speed string operations: Unicode NFKC, then case folding. Whitespace
collapsing and punctuation stripping happen inside the tokenising kernels, driven by a table
that classifies every Unicode code point (:func:`codepoint_classes`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from functools import cache

import numpy as np

from neardup._kernels.shingles import ALONE, PUNCT, SPACE
from neardup._types import Batch, U8Array
from neardup.params import NormalizeSpec

__all__ = ["UNICODE_VERSION", "codepoint_classes", "normalize", "normalize_batch"]

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
    """Normalise ``texts`` and pack them into one UTF-8 buffer with offsets.

    ASCII-only texts are packed as they are: NFKC leaves them unchanged, and their case
    folding is done by the tokenising kernels on the fly, which is several times faster.
    """
    encoded = [
        (t if t.isascii() else normalize(t, spec)).encode("utf-8", "surrogatepass") for t in texts
    ]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    return Batch(data=data, offsets=offsets)
