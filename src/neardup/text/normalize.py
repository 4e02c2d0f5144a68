"""Normalisation: the first step after reading, from raw UTF-8 texts to a normalised :class:`Batch`.

Unicode NFKC, then case folding: character by character in a kernel for texts whose every
character normalises on its own (:class:`SimpleFolds`), in Python for the others; ASCII
documents pass untouched (the tokenising kernels fold their case on the fly). Whitespace
collapsing and punctuation stripping happen inside the tokenising kernels, driven by a table
that classifies every Unicode code point (:func:`codepoint_classes`). Then, when the spec asks
for it, stop words are dropped and words stemmed (:mod:`neardup.text.lexicon`). Last, with a
tokenizer, each text is rewritten as one word per model token or segmented word
(:mod:`neardup.text.tokenizers`), so that every later stage shingles tokens as it shingles words.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, partial

import numpy as np
from numpy.typing import NDArray

from neardup._kernels import normalize as kernels
from neardup._kernels.compiling import read_only
from neardup._kernels.spans import text_stats
from neardup._kernels.tokens import ALONE, MULTI_BYTE, PUNCT, SEPARATOR_BYTE, SPACE, WORD
from neardup._parallel import in_blocks
from neardup._types import Batch, BoolArray, I64Array, U8Array
from neardup.params import NormalizeSpec
from neardup.text.lexicon import Lexicon, spaced_words, stopword_list, word_spans
from neardup.text.spans import gather, pack_strings, take
from neardup.text.tokenizers import token_words

__all__ = [
    "UNICODE_VERSION",
    "TextStats",
    "byte_word_table",
    "codepoint_classes",
    "lexicon_of",
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

# Blocks of letters (or of private and surrogate code points) only: not scanned, for speed.
_NEITHER_SPACE_NOR_PUNCT = (
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7A3),  # Hangul syllables
    (0xD800, 0xF8FF),  # surrogates, private use
    (0x20000, 0x2FFFF),  # CJK extensions B and later
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
    scanned = np.ones(0x30000, dtype=bool)  # beyond: CJK planes (below), unassigned, private
    for low, high in _NEITHER_SPACE_NOR_PUNCT:
        scanned[low : high + 1] = False
    points = np.flatnonzero(scanned)
    chars = [chr(cp) for cp in points.tolist()]
    is_punct = np.fromiter(
        (unicodedata.category(ch)[0] == "P" for ch in chars), dtype=bool, count=len(chars)
    )
    is_space = np.fromiter((ch.isspace() for ch in chars), dtype=bool, count=len(chars))
    classes = np.zeros(0x110000, dtype=np.uint8)
    classes[points[is_punct]] = PUNCT
    classes[points[is_space]] = SPACE
    classes[np.frombuffer(_ASCII_PUNCT, dtype=np.uint8)] = PUNCT
    for low, high in _ALONE_RANGES:
        block = classes[low : high + 1]
        block[block == 0] = ALONE
    classes.setflags(write=False)
    return classes


def byte_word_table(classes: U8Array, spec: NormalizeSpec) -> NDArray[np.uint16]:
    """For each byte value: what the tokenising kernels read it as.

    The byte an ASCII word byte hashes as (lower-cased when folding), ``SEPARATOR_BYTE`` for
    an ASCII separator, ``MULTI_BYTE`` for any byte of a multi-byte character: the ASCII part
    of ``classes`` resolved once, a byte in one lookup.
    """
    ascii_classes = classes[:128].copy()
    punct_as = SPACE if spec.strip_punctuation else WORD
    ascii_classes[ascii_classes == PUNCT] = punct_as
    table = np.full(256, MULTI_BYTE, dtype=np.uint16)
    table[:128] = np.arange(128)
    if spec.casefold:
        table[65:91] += 32
    table[:128][ascii_classes != WORD] = SEPARATOR_BYTE
    return table


@cache
def lexicon_of(spec: NormalizeSpec) -> Lexicon:
    """The :class:`~neardup.text.lexicon.Lexicon` of ``spec`` (one per spec, kept).

    Its stop words are the words of ``spec.stopwords``' list normalised as texts are; an
    entry that is not one word under ``spec`` (``"don't"`` with punctuation stripped) can
    never equal a word and is left out.
    """
    classes = codepoint_classes()
    table = byte_word_table(classes, spec)
    stop_hashes = np.empty(0, dtype=np.uint64)
    if spec.stopwords is not None:
        listed = _fold_bytes(Batch(*pack_strings(list(stopword_list(spec.stopwords)))), spec)
        spans = word_spans(listed, classes, table, spec.strip_punctuation)
        one_word = np.diff(spans.offsets) == 1
        stop_hashes = spans.hashes[spans.offsets[:-1][one_word]]
    return Lexicon(spec, classes, table, stop_hashes)


def normalize(text: str, spec: NormalizeSpec) -> str:
    """Apply NFKC and case folding as ``spec`` asks (whitespace is collapsed later, in kernels).

    Stop words and stems (``spec.stopwords``, ``spec.stem``) are applied to batches only
    (:func:`normalize_bytes`).

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

    As :func:`normalize_bytes`: ASCII letters keep their case (the kernels fold it).

    Examples
    --------
    >>> bytes(normalize_batch(["ÉCOLE", "Straße", "Plain ASCII"], NormalizeSpec()).data)
    b'\xc3\xa9COLEstrassePlain ASCII'
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
        run = partial(text_stats, read_only(texts.data), texts.offsets, stats.chars, stats.is_ascii)
        in_blocks(run, n)
    return stats


def normalize_bytes(
    texts: Batch, spec: NormalizeSpec, stats: TextStats | None = None, *, in_place: bool = False
) -> Batch:
    """Normalise raw UTF-8 texts as the tokenising kernels need them.

    Each text becomes :func:`normalize` of it, except that ASCII letters keep their case: the
    kernels fold ASCII themselves (with ``spec.casefold``), so every kernel sees the same
    tokens either way. ASCII texts are kept as they are (NFKC leaves them unchanged). A text
    whose every character normalises on its own (nearly all text in Latin, Greek, Cyrillic,
    CJK, ... scripts) is mapped character by character in a kernel (:class:`SimpleFolds`),
    and left alone when that changes nothing; any other is normalised in Python, one by one
    (joining them into one string was measured three times slower: one wide character widens
    the whole string, and NFKC's quick check can no longer skip texts already normalised).
    Returns ``texts`` itself when nothing changes; with ``in_place``, also when the table
    rewrote texts without changing the size of any character (written into ``texts.data``:
    the caller must own that buffer alone). Then, with ``spec.stopwords`` or ``spec.stem``,
    the words are rewritten into a new buffer (:meth:`~neardup.text.lexicon.Lexicon.rewrite`).
    Last, with ``spec.tokenizer``, the texts as the kernels read their words (ASCII folded,
    punctuation stripped as asked, each run of separators one space:
    :func:`~neardup.text.lexicon.spaced_words`) are tokenized, and each becomes its token
    words (:func:`~neardup.text.tokenizers.token_words`): texts the kernels would read as
    the same words get the same tokens.

    Examples
    --------
    The Nanjing Yangtze River Bridge, and Nanjing's mayor Jiang Daqiao: the same seven Han
    characters, each a word of its own, but to jieba 南京市|长江大桥 and 南京|市长|江|大桥.

    >>> texts = ["南京市长江大桥", "南京 市长 江大桥"]
    >>> tokens = normalize_batch(texts, NormalizeSpec(tokenizer="jieba"))
    >>> [len(bytes(tokens.data[a:b]).split()) for a, b in zip(tokens.offsets, tokens.offsets[1:])]
    [2, 4]
    """
    folded = _fold_bytes(texts, spec, stats, in_place=in_place)
    if spec.rewrites_words:
        folded = lexicon_of(spec).rewrite(folded)
    if spec.tokenizer is None:
        return folded
    classes = codepoint_classes()
    table = byte_word_table(classes, spec)
    words = word_spans(folded, classes, table, spec.strip_punctuation)
    return token_words(spaced_words(folded, words, table)[0], spec.tokenizer)


def _fold_bytes(
    texts: Batch, spec: NormalizeSpec, stats: TextStats | None = None, *, in_place: bool = False
) -> Batch:
    """NFKC and case folding of :func:`normalize_bytes`, without the word rewrites."""
    stats = stats if stats is not None else text_statistics(texts)
    if stats.is_ascii.all() or not (spec.nfkc or spec.casefold):
        return texts
    docs = np.flatnonzero(~stats.is_ascii)
    if spec.nfkc and spec.casefold:
        sizes, changed, resized = _FOLDS.sizes(texts, docs)
    else:  # the table holds NFKC and case folding together: other specs go to Python
        n = docs.shape[0]
        sizes, changed, resized = np.full(n, -1), np.ones(n, dtype=bool), np.ones(n, dtype=bool)
    by_python = sizes < 0
    by_table = ~by_python & changed
    if not by_python.any():
        if not by_table.any():
            return texts
        if in_place and texts.data.flags.writeable and not resized[by_table].any():
            _FOLDS.fill(texts, docs[by_table], texts.data, texts.offsets[docs[by_table]])
            return texts
    table_offsets = np.zeros(int(by_table.sum()) + 1, dtype=np.int64)
    np.cumsum(sizes[by_table], out=table_offsets[1:])
    mapped = np.empty(int(table_offsets[-1]), dtype=np.uint8)
    _FOLDS.fill(texts, docs[by_table], mapped, table_offsets[:-1])
    rest = _one_by_one(take(texts, docs[by_python]), spec)
    starts = texts.offsets[:-1].copy()
    lengths = np.diff(texts.offsets)
    use_extra = np.zeros(texts.num_docs, dtype=bool)
    for chosen, offsets, shift in (
        (docs[by_table], table_offsets, 0),
        (docs[by_python], rest.offsets, mapped.shape[0]),
    ):
        starts[chosen] = offsets[:-1] + shift
        lengths[chosen] = np.diff(offsets)
        use_extra[chosen] = True
    return gather(texts.data, np.concatenate([mapped, rest.data]), use_extra, starts, lengths)


def _one_by_one(pieces: Batch, spec: NormalizeSpec) -> Batch:
    data, offsets = pieces.data, pieces.offsets
    texts = [
        normalize(bytes(data[offsets[i] : offsets[i + 1]]).decode("utf-8", "surrogatepass"), spec)
        for i in range(pieces.num_docs)
    ]
    return Batch(*pack_strings(texts))


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
        self.table = np.full(self.SIZE, kernels.UNKNOWN, dtype=np.int32)
        self._seconds: frozenset[int] | None = None

    def sizes(self, texts: Batch, docs: I64Array) -> tuple[I64Array, BoolArray, BoolArray]:
        """Per document of ``docs``: bytes mapped by the table, changed, resized.

        ``changed``: whether the table changes any character; ``resized``: whether it changes
        the UTF-8 size of any (the text cannot be rewritten in place). A size of -1: not by the
        table. Blocks the texts use for the first time are filled in on the way.
        """
        n = docs.shape[0]
        sizes = np.empty(n, dtype=np.int64)
        changed, resized = np.empty(n, dtype=bool), np.empty(n, dtype=bool)
        unknown = np.zeros(self.SIZE >> 8, dtype=bool)
        self._size(texts, docs, sizes, changed, resized, unknown)
        if unknown.any():
            for block in np.flatnonzero(unknown).tolist():
                self._fill(block)
            again = np.flatnonzero(sizes == kernels.UNKNOWN)
            m = again.shape[0]
            retry = (np.empty(m, dtype=np.int64), np.empty(m, dtype=bool), np.empty(m, dtype=bool))
            self._size(texts, docs[again], *retry, unknown)
            for whole, part in zip((sizes, changed, resized), retry, strict=True):
                whole[again] = part
        return sizes, changed, resized

    def _size(self, texts: Batch, docs: I64Array, *outputs: np.ndarray) -> None:
        run = partial(
            kernels.simple_sizes, read_only(texts.data), texts.offsets, docs, self.table, *outputs
        )
        in_blocks(run, docs.shape[0])

    def fill(self, texts: Batch, docs: I64Array, out: U8Array, starts: I64Array) -> None:
        """Write the documents ``docs`` (sized by :meth:`sizes`) mapped, at ``out[starts[t]:]``."""
        run = partial(
            kernels.simple_fill, read_only(texts.data), texts.offsets, docs, self.table, out, starts
        )
        in_blocks(run, docs.shape[0])

    def _fill(self, block: int) -> None:
        code_points = [
            cp
            for cp in range(max(block << 8, 0x80), (block + 1) << 8)
            if not 0xD800 <= cp <= 0xDFFF
        ]
        self.table[block << 8 : (block + 1) << 8] = -1
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
