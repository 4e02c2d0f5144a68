"""Numba kernels for word-level rewrites of normalised text: stop-word removal and stemming.

The words are those of the word-shingling kernels, found here with their places in the text:
maximal runs of WORD code points (PUNCT ones too unless punctuation is stripped), each ALONE
code point a word of its own. A word's hash is 64-bit FNV-1a over its bytes as the shingling
kernels read them (ASCII through ``byte_words``, so folded when case is folded), finalised with
``fmix64``: the ``nd64`` token hash. They are read by the shingling kernels' own reader
(``neardup._kernels.tokens.words``), imported, not copied: the cache directory is named for
a hash of every kernel's source (:mod:`neardup._kernels`), so a change to it starts a new one.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neardup._kernels.tokens import words


@njit(cache=True, nogil=True)
def count_words(buf, offsets, classes, byte_words, strip_punct, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[d]``: the number of words of document ``d``. Cost: O(bytes).

    For the documents ``lo .. hi - 1`` (as every kernel here: blocks run in threads at once).
    """
    for d in range(lo, hi):
        out[d] = words(
            buf, offsets[d], offsets[d + 1], classes, byte_words, strip_punct, None, None, None,
            None,
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
        words(
            buf, offsets[d], offsets[d + 1], classes, byte_words, strip_punct, None, hashes[w:],
            starts[w:], lengths[w:],
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
