"""Numba kernels for word-level rewrites of normalised text: stop-word removal and stemming.

The words are those of the word-shingling kernels (``neardup._kernels.tokens._tokens`` in word
mode: maximal runs of WORD code points, PUNCT ones too unless punctuation is stripped, each
ALONE code point a word of its own), found here with their places in the text. A word's hash is
64-bit FNV-1a over its bytes as the shingling kernels read them (ASCII through ``byte_words``,
so folded when case is folded), finalised with ``fmix64``: the ``nd64`` token hash.

The word rules are the shingling kernels' own (``tokens.token_class`` and
``utf8.decode_code_point``), imported, not copied: the cache directory is named for a hash of
every kernel's source (:mod:`neardup._kernels`), so a change to them starts a new one.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._kernels.mix import fmix64
from neardup._kernels.tokens import (
    ALONE,
    FNV_OFFSET,
    FNV_PRIME,
    MULTI_BYTE,
    SEPARATOR_BYTE,
    SPACE,
    WORD,
    token_class,
)
from neardup._kernels.utf8 import decode_code_point


@njit(cache=True, nogil=True)
def _words(buf, start, end, classes, byte_words, strip_punct, starts, lengths, hashes):  # type: ignore[no-untyped-def]
    """Find the words of ``buf[start:end]``; return how many.

    With ``starts`` not empty, write each word's first byte, byte length and hash at
    ``[0, n)`` of ``starts``, ``lengths`` and ``hashes``; with it empty, only count.
    Mirrors the word mode of the shingling kernels' tokeniser. Cost: O(bytes).
    """
    record = starts.shape[0] > 0
    n = 0
    i = start
    while i < end:
        t = byte_words[buf[i]]
        if t == SEPARATOR_BYTE:
            i += 1
            continue
        first = i
        h = FNV_OFFSET
        if t == MULTI_BYTE:
            cp, size = decode_code_point(buf, i)
            cls = token_class(classes, cp, strip_punct)
            if cls == SPACE:
                i += size
                continue
            if cls == ALONE:
                for j in range(i, i + size):
                    h = (h ^ uint64(buf[j])) * FNV_PRIME
                i += size
                if record:
                    starts[n] = first
                    lengths[n] = i - first
                    hashes[n] = fmix64(h)
                n += 1
                continue
        while i < end:  # a word starts at buf[first]: hash it to its end
            t = byte_words[buf[i]]
            if t < SEPARATOR_BYTE:
                h = (h ^ uint64(t)) * FNV_PRIME
                i += 1
                continue
            if t == SEPARATOR_BYTE:
                break
            cp, size = decode_code_point(buf, i)
            if token_class(classes, cp, strip_punct) != WORD:
                break
            for j in range(i, i + size):
                h = (h ^ uint64(buf[j])) * FNV_PRIME
            i += size
        if record:
            starts[n] = first
            lengths[n] = i - first
            hashes[n] = fmix64(h)
        n += 1
    return n


@njit(cache=True, nogil=True)
def count_words(buf, offsets, classes, byte_words, strip_punct, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[d]``: the number of words of document ``d``. Cost: O(bytes).

    For the documents ``lo .. hi - 1`` (as every kernel here: blocks run in threads at once).
    """
    none = np.empty(0, dtype=np.int64)
    no_hashes = np.empty(0, dtype=np.uint64)
    for d in range(lo, hi):
        out[d] = _words(
            buf, offsets[d], offsets[d + 1], classes, byte_words, strip_punct, none, none,
            no_hashes,
        )  # fmt: skip


@njit(cache=True, nogil=True)
def word_spans(  # type: ignore[no-untyped-def]
    buf, offsets, classes, byte_words, strip_punct, word_offsets, starts, lengths, hashes, lo, hi
):
    """Each word's first byte, byte length and hash, in document order.

    Document ``d``'s words go to ``[word_offsets[d], word_offsets[d + 1])`` (sized by
    :func:`count_words`). For the documents ``lo .. hi - 1``. Cost: O(bytes).
    """
    for d in range(lo, hi):
        w = word_offsets[d]
        _words(
            buf, offsets[d], offsets[d + 1], classes, byte_words, strip_punct, starts[w:],
            lengths[w:], hashes[w:],
        )  # fmt: skip


@njit(cache=True, nogil=True)
def copy_words(buf, starts, lengths, byte_words, out, out_starts, lo, hi):  # type: ignore[no-untyped-def]
    """Copy word ``t`` (``buf[starts[t]:][:lengths[t]]``) to ``out[out_starts[t]:]``.

    ASCII bytes go through ``byte_words`` (folded as the tokeniser reads them), others as they
    are; what lies between the words in ``out`` is left as it is (the caller fills it with
    spaces first). For the words ``lo .. hi - 1``.
    Cost: O(bytes copied).
    """
    for t in range(lo, hi):
        o = out_starts[t]
        for j in range(starts[t], starts[t] + lengths[t]):
            b = buf[j]
            out[o] = np.uint8(byte_words[b]) if b < 0x80 else b
            o += 1


@njit(cache=True, nogil=True, inline="always")
def _find(keys, h):  # type: ignore[no-untyped-def]
    """The index of ``h`` in the sorted ``keys``, or -1."""
    at = np.searchsorted(keys, h)
    if at < keys.shape[0] and keys[at] == h:
        return at
    return -1


@njit(cache=True, nogil=True)
def _rewritten_length(h, length, drop_keys, stem_keys, stem_offsets):  # type: ignore[no-untyped-def]
    """The bytes a word of hash ``h`` and ``length`` bytes becomes (0: dropped)."""
    if drop_keys.shape[0] and _find(drop_keys, h) >= 0:
        return 0
    if stem_keys.shape[0]:
        at = _find(stem_keys, h)
        if at >= 0:
            return stem_offsets[at + 1] - stem_offsets[at]
    return length


@njit(cache=True, nogil=True)
def rewrite_sizes(  # type: ignore[no-untyped-def]
    offsets, word_offsets, lengths, hashes, drop_keys, stem_keys, stem_offsets, out, lo, hi
):
    """``out[d]``: the bytes of document ``d`` once :func:`rewrite_fill` has rewritten it.

    For the documents ``lo .. hi - 1``.
    """
    for d in range(lo, hi):
        size = offsets[d + 1] - offsets[d]
        for w in range(word_offsets[d], word_offsets[d + 1]):
            size += (
                _rewritten_length(hashes[w], lengths[w], drop_keys, stem_keys, stem_offsets)
                - lengths[w]
            )
        out[d] = size


@njit(cache=True, nogil=True)
def rewrite_fill(  # type: ignore[no-untyped-def]
    buf,
    offsets,
    word_offsets,
    starts,
    lengths,
    hashes,
    drop_keys,
    stem_keys,
    stem_offsets,
    stem_bytes,
    out,
    out_offsets,
    lo,
    hi,
):
    """Write each document with its words dropped or replaced to ``out[out_offsets[d]:]``.

    A word whose hash is in ``drop_keys`` (sorted) is left out; one in ``stem_keys`` (sorted)
    becomes ``stem_bytes[stem_offsets[i]:stem_offsets[i + 1]]``; every other byte (the other
    words, the separators between words) is copied, so the separators of a dropped word stay
    and the tokeniser still sees them as one. For the documents ``lo .. hi - 1``.
    Cost: O(bytes + words * log keys).
    """
    for d in range(lo, hi):
        o = out_offsets[d]
        i = offsets[d]
        for w in range(word_offsets[d], word_offsets[d + 1]):
            s = starts[w]
            for j in range(i, s):  # the separators before the word
                out[o] = buf[j]
                o += 1
            i = s + lengths[w]
            if drop_keys.shape[0] and _find(drop_keys, hashes[w]) >= 0:
                continue
            at = _find(stem_keys, hashes[w]) if stem_keys.shape[0] else -1
            if at >= 0:
                for j in range(stem_offsets[at], stem_offsets[at + 1]):
                    out[o] = stem_bytes[j]
                    o += 1
            else:
                for j in range(s, i):
                    out[o] = buf[j]
                    o += 1
        for j in range(i, offsets[d + 1]):
            out[o] = buf[j]
            o += 1
