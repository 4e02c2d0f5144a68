"""Stop words and stems: the word-level text options of seed 004 and MMDS §3.8.6.

:class:`Lexicon` rewrites normalised texts word by word, as :class:`~neardup.params.NormalizeSpec`
asks: stop words of ``stopwords`` dropped, the other words replaced by their Snowball stem of
``stem``. Nothing here runs per token in Python: a kernel finds each word and hashes it (the
``nd64`` token hash of the shingling kernels), stop words are found by their hashes in a sorted
table, and stemming works on the *vocabulary*: the distinct word hashes not seen before are
decoded once, stemmed by PyStemmer in one call, and kept in a sorted table (hash → stem bytes)
that a kernel applies while it copies the text. The table grows over the batches of a job, so
each distinct word is stemmed once.

The stop-word lists are the Snowball lists in ``neardup/text/stopwords`` (see the README
there), one file per language of :data:`~neardup.params.STOPWORD_LANGUAGES`.

:func:`spaced_words` writes texts out as the kernels read their words (ASCII folded, each run of
separators one space): what a tokenizer (:mod:`neardup.text.tokenizers`) is given, so that texts
the kernels read as the same words get the same tokens.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from functools import cache, partial
from importlib import resources
from typing import Any

import numpy as np
from numpy.typing import NDArray

from neardup._kernels import lexicon as kernels
from neardup._parallel import in_blocks
from neardup._types import Batch, I64Array, U8Array, U64Array
from neardup.errors import MissingExtraError, ParameterError
from neardup.params import (
    STEM_LANGUAGES,
    STOPWORD_LANGUAGES,
    STOPWORD_LIST_PREFIX,
    NormalizeSpec,
)

__all__ = [
    "Lexicon",
    "WordSpans",
    "frequent_words",
    "spaced_words",
    "stem_words",
    "stopword_list",
    "word_spans",
]

MAX_VOCABULARY = 4_000_000
"""Distinct words a :class:`Lexicon` keeps stems of across batches (about 100 MB at most); past
it, the words of a batch not among them are stemmed for that batch only."""


@cache
def stopword_list(language: str) -> tuple[str, ...]:
    """The stop words a stop-word field names.

    The Snowball list of a language, as listed (lower case, in the list's order), or the words
    of a ``"words:..."`` list, as given.

    Examples
    --------
    >>> stopword_list("english")[:5]
    ('i', 'me', 'my', 'myself', 'we')
    >>> stopword_list("words:a for the")
    ('a', 'for', 'the')
    """
    if language.startswith(STOPWORD_LIST_PREFIX):
        return tuple(language[len(STOPWORD_LIST_PREFIX) :].split())
    if language not in STOPWORD_LANGUAGES:
        raise ParameterError(
            f"no stop-word list for {language!r}; valid languages: {', '.join(STOPWORD_LANGUAGES)}."
        )
    data = (
        resources.files("neardup.text").joinpath("stopwords", f"{language}.txt").read_text("utf-8")
    )
    return tuple(word for word in data.split() if word)


def frequent_words(texts: Iterable[str], num_words: int) -> tuple[str, ...]:
    """The ``num_words`` most frequent words of ``texts``: a corpus's own stop-word list.

    MMDS §3.2.4: "there is no set number of the most frequent words that should be considered
    stop words". Words are split at whitespace and case-folded; ties go to the word first in
    code-point order. Pass them as ``"words:" + " ".join(words)`` to
    :attr:`~neardup.params.ShingleSpec.stopwords` (or ``--stopwords @FILE``, one a line). One
    pass over the texts in Python: a sample of the corpus is enough.

    Examples
    --------
    >>> frequent_words(["the cat and the hat", "The end"], 2)
    ('the', 'and')
    """
    if isinstance(num_words, bool) or not isinstance(num_words, int) or num_words < 1:
        raise ParameterError(f"frequent_words num_words must be an int >= 1; got {num_words!r}.")
    counts = Counter(word for text in texts for word in text.casefold().split())
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return tuple(word for word, _ in ranked[:num_words])


def _stemmer(language: str) -> Any:
    """A PyStemmer stemmer for ``language`` (PyStemmer is in the ``web`` extra)."""
    if language not in STEM_LANGUAGES:
        raise ParameterError(
            f"no Snowball stemmer for {language!r}; valid languages: {', '.join(STEM_LANGUAGES)}."
        )
    try:
        import Stemmer
    except ImportError as exc:
        raise MissingExtraError(
            "stemming (--stem, NormalizeSpec.stem) needs PyStemmer: pip install 'neardup[web]'"
        ) from exc
    return Stemmer.Stemmer(language)


def stem_words(words: list[str], language: str) -> list[str]:
    """The Snowball stems of ``words`` in ``language``, in one call to PyStemmer.

    Examples
    --------
    >>> stem_words(["running", "ponies", "caresses"], "english")
    ['run', 'poni', 'caress']
    """
    stemmer = _stemmer(language)
    try:
        return list(stemmer.stemWords(words))
    except UnicodeError:  # a word with bytes that are not UTF-8: that one stays as it is
        return [_stem_or_keep(stemmer, word) for word in words]


def _stem_or_keep(stemmer: Any, word: str) -> str:
    try:
        return str(stemmer.stemWord(word))
    except UnicodeError:
        return word


class WordSpans:
    """The words of a batch of texts: where each is and its hash.

    Document ``d``'s words are ``[offsets[d], offsets[d + 1])`` of ``starts`` (first byte in
    the batch's buffer), ``lengths`` (bytes) and ``hashes`` (the ``nd64`` token hash).
    """

    __slots__ = ("hashes", "lengths", "offsets", "starts")

    def __init__(
        self, offsets: I64Array, starts: I64Array, lengths: I64Array, hashes: U64Array
    ) -> None:
        self.offsets, self.starts, self.lengths, self.hashes = offsets, starts, lengths, hashes


def word_spans(
    texts: Batch, classes: U8Array, byte_words: NDArray[np.uint16], strip_punctuation: bool
) -> WordSpans:
    """Find the words of ``texts`` as the word-shingling kernels see them.

    ``classes`` and ``byte_words`` are the tokenising tables (``codepoint_classes`` and
    ``byte_word_table`` of :mod:`neardup.text.normalize`).
    """
    counts = np.empty(texts.num_docs, dtype=np.int64)
    offsets = np.zeros(texts.num_docs + 1, dtype=np.int64)
    args = (texts.data, texts.offsets, classes, byte_words, strip_punctuation)
    in_blocks(partial(kernels.count_words, *args, counts), texts.num_docs)
    np.cumsum(counts, out=offsets[1:])
    total = int(offsets[-1])
    starts = np.empty(total, dtype=np.int64)
    lengths = np.empty(total, dtype=np.int64)
    hashes = np.empty(total, dtype=np.uint64)
    run = partial(kernels.word_spans, *args, offsets, starts, lengths, hashes)
    in_blocks(run, texts.num_docs)
    return WordSpans(offsets, starts, lengths, hashes)


def spaced_words(
    texts: Batch, words: WordSpans, byte_words: NDArray[np.uint16]
) -> tuple[Batch, I64Array]:
    r"""``texts`` as their ``words`` (:func:`word_spans`) read: the words and single spaces.

    Each word is copied with its ASCII bytes through ``byte_words`` (lower-cased when case is
    folded); two words that separators (whitespace, punctuation when it is stripped) parted
    get one space between them, two that touch (characters of a script written without
    spaces, each a word of its own) none; nothing is left before the first word or after the
    last. Texts that the shingling kernels read as the same words become the same bytes.
    Returns the texts so written and where each word starts in them.

    Examples
    --------
    >>> from neardup.params import NormalizeSpec
    >>> from neardup.text.normalize import byte_word_table, codepoint_classes
    >>> from neardup.text.spans import pack_strings
    >>> texts = Batch(*pack_strings(["  Hello,\t  WORLD 漢字 ", "one"]))
    >>> table = byte_word_table(codepoint_classes(), NormalizeSpec(strip_punctuation=True))
    >>> spaced, starts = spaced_words(texts, word_spans(texts, codepoint_classes(), table, True),
    ...                               table)
    >>> bytes(spaced.data).decode(), spaced.offsets.tolist(), starts.tolist()
    ('hello world 漢字one', [0, 18, 21], [0, 6, 12, 15, 18])
    """
    num = words.starts.shape[0]
    ends = words.starts + words.lengths
    spaced = np.zeros(num, dtype=np.int64)
    spaced[1:] = words.starts[1:] > ends[:-1]  # separators lie between the word and the last
    spaced[words.offsets[:-1][np.diff(words.offsets) > 0]] = 0  # a document's first word
    room = np.zeros(num + 1, dtype=np.int64)
    np.cumsum(words.lengths + spaced, out=room[1:])
    starts = room[:-1] + spaced
    out = np.full(int(room[-1]), ord(" "), dtype=np.uint8)
    run = partial(
        kernels.copy_words, texts.data, words.starts, words.lengths, byte_words, out, starts
    )
    in_blocks(run, num)
    return Batch(out, room[words.offsets]), starts


def _decoded(
    data: U8Array, starts: I64Array, lengths: I64Array, byte_words: NDArray[np.uint16]
) -> list[str]:
    """The words at ``starts``/``lengths`` of ``data`` as strings (ASCII folded as read)."""
    if starts.shape[0] == 0:
        return []
    out_offsets = np.zeros(starts.shape[0], dtype=np.int64)
    np.cumsum(lengths[:-1] + 1, out=out_offsets[1:])
    out = np.full(int(lengths.sum()) + starts.shape[0] - 1, ord(" "), dtype=np.uint8)
    run = partial(kernels.copy_words, data, starts, lengths, byte_words, out, out_offsets)
    in_blocks(run, starts.shape[0])
    return out.tobytes().decode("utf-8", "surrogateescape").split(" ")


def _packed(words: list[str]) -> tuple[I64Array, U8Array]:
    """UTF-8 bytes of ``words`` (none holding a space) back to back, and their offsets."""
    joined = np.frombuffer(" ".join(words).encode("utf-8", "surrogateescape"), dtype=np.uint8)
    spaces = np.flatnonzero(joined == 32)
    offsets = np.empty(len(words) + 1, dtype=np.int64)
    offsets[0] = 0
    offsets[1:-1] = spaces - np.arange(spaces.shape[0])
    offsets[-1] = joined.shape[0] - spaces.shape[0]
    return offsets, joined[joined != 32]


class Lexicon:
    """Drops stop words and stems words of normalised texts, as a ``NormalizeSpec`` says.

    Built once per spec (``neardup.text.normalize.lexicon_of``): ``classes`` and
    ``byte_words`` are the tokenising tables, ``stop_hashes`` the word hashes of the stop-word
    list in the texts' normalised form. Safe to share between threads.

    Examples
    --------
    >>> from neardup.text.normalize import normalize_batch
    >>> spec = NormalizeSpec(stopwords="english", stem="english")
    >>> bytes(normalize_batch(["The ponies were running to the hills"], spec).data)
    b' poni  run   hill'
    """

    def __init__(
        self,
        spec: NormalizeSpec,
        classes: U8Array,
        byte_words: NDArray[np.uint16],
        stop_hashes: U64Array,
    ) -> None:
        self.spec = spec
        self._classes = classes
        self._byte_words = byte_words
        self.drop_keys: U64Array = (
            np.unique(stop_hashes) if spec.stopwords else np.empty(0, np.uint64)
        )
        if spec.stem is not None:
            _stemmer(spec.stem)  # fail now when PyStemmer is missing
        self._lock = threading.Lock()
        self._stem_keys: U64Array = np.empty(0, dtype=np.uint64)
        self._stem_offsets: I64Array = np.zeros(1, dtype=np.int64)
        self._stem_bytes: U8Array = np.empty(0, dtype=np.uint8)

    def rewrite(self, texts: Batch) -> Batch:
        """``texts`` with stop words dropped and words stemmed (separators kept as they are)."""
        if texts.num_docs == 0:
            return texts
        spans = word_spans(texts, self._classes, self._byte_words, self.spec.strip_punctuation)
        keys, offsets, stems = self._stems_for(texts.data, spans)
        sizes = np.empty(texts.num_docs, dtype=np.int64)
        out_offsets = np.zeros(texts.num_docs + 1, dtype=np.int64)
        run = partial(
            kernels.rewrite_sizes, texts.offsets, spans.offsets, spans.lengths, spans.hashes,
            self.drop_keys, keys, offsets, sizes,
        )  # fmt: skip
        in_blocks(run, texts.num_docs)
        np.cumsum(sizes, out=out_offsets[1:])
        out = np.empty(int(out_offsets[-1]), dtype=np.uint8)
        run = partial(
            kernels.rewrite_fill, texts.data, texts.offsets, spans.offsets, spans.starts,
            spans.lengths, spans.hashes, self.drop_keys, keys, offsets, stems, out, out_offsets,
        )  # fmt: skip
        in_blocks(run, texts.num_docs)
        return Batch(out, out_offsets)

    def _stems_for(self, data: U8Array, spans: WordSpans) -> tuple[U64Array, I64Array, U8Array]:
        """The stem table (sorted hashes, stem offsets, stem bytes) covering ``spans``' words."""
        empty = (np.empty(0, dtype=np.uint64), np.zeros(1, dtype=np.int64), np.empty(0, np.uint8))
        if self.spec.stem is None:
            return empty
        hashes, first = np.unique(spans.hashes, return_index=True)
        with self._lock:
            keys, offsets, stems = self._stem_keys, self._stem_offsets, self._stem_bytes
        if keys.shape[0]:
            at = np.minimum(np.searchsorted(keys, hashes), keys.shape[0] - 1)
            new = keys[at] != hashes
            hashes, first = hashes[new], first[new]
        if self.drop_keys.shape[0]:  # stop words are dropped, never stemmed
            new = ~np.isin(hashes, self.drop_keys)
            hashes, first = hashes[new], first[new]
        if hashes.shape[0] == 0:
            return keys, offsets, stems
        words = _decoded(data, spans.starts[first], spans.lengths[first], self._byte_words)
        new_offsets, new_stems = _packed(stem_words(words, self.spec.stem))
        merged = _merge((keys, offsets, stems), (hashes, new_offsets, new_stems))
        if merged[0].shape[0] <= MAX_VOCABULARY:
            with self._lock:
                if self._stem_keys.shape[0] < merged[0].shape[0]:
                    self._stem_keys, self._stem_offsets, self._stem_bytes = merged
        return merged


def _merge(
    old: tuple[U64Array, I64Array, U8Array], new: tuple[U64Array, I64Array, U8Array]
) -> tuple[U64Array, I64Array, U8Array]:
    """Two stem tables (sorted keys, offsets, bytes) with disjoint keys as one."""
    keys = np.concatenate([old[0], new[0]])
    order = np.argsort(keys, kind="stable")
    lengths = np.concatenate([np.diff(old[1]), np.diff(new[1])])[order]
    starts = np.concatenate([old[1][:-1], new[1][:-1] + old[2].shape[0]])[order]
    data = np.concatenate([old[2], new[2]])
    offsets = np.zeros(keys.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    # the bytes of each stem, in key order: a ragged gather done with one repeat + arange
    index = np.repeat(starts - offsets[:-1], lengths) + np.arange(int(offsets[-1]))
    return keys[order], offsets, data[index]
