"""Numba kernels normalising texts whose every character normalises on its own.

For such a text, NFKC followed by case folding is a per-character map (the table built in
``neardup.text.normalize``: ``casefold(NFKC(c))`` when that is one character and ``c`` can
neither compose with a neighbour nor be reordered), so it is done here on the UTF-8 bytes
instead of in Python. A text with any other character is left to Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neardup._kernels.utf8 import put_code_point

UNKNOWN = -2
"""A table entry (and a size) for a block of code points not looked at yet."""


@njit(cache=True, nogil=True, inline="always")
def _continues(buf, i):  # type: ignore[no-untyped-def]
    return (buf[i] & 0xC0) == 0x80


@njit(cache=True, nogil=True)
def _next(buf, i, end):  # type: ignore[no-untyped-def]
    """The code point at ``buf[i]`` and its size in bytes (size 0: not valid UTF-8)."""
    b0 = np.int64(buf[i])
    if b0 < 0x80:
        return b0, 1
    if b0 < 0xC2 or b0 > 0xF4:
        return 0, 0
    size = 2 if b0 < 0xE0 else (3 if b0 < 0xF0 else 4)
    if i + size > end:
        return 0, 0
    cp = b0 & (0x1F if size == 2 else (0x0F if size == 3 else 0x07))
    for j in range(i + 1, i + size):
        if not _continues(buf, j):
            return 0, 0
        cp = (cp << 6) | (np.int64(buf[j]) & 0x3F)
    if (size == 3 and cp < 0x800) or (size == 4 and not 0x10000 <= cp <= 0x10FFFF):
        return 0, 0
    return cp, size


@njit(cache=True, nogil=True, inline="always")
def _size_of(cp):  # type: ignore[no-untyped-def]
    if cp < 0x80:
        return 1
    if cp < 0x800:
        return 2
    if cp < 0x10000:
        return 3
    return 4


@njit(cache=True, nogil=True, inline="always")
def _mapped(cp, table):  # type: ignore[no-untyped-def]
    """The normalised code point of ``cp``, or -1 when it does not normalise on its own.

    ASCII stays as it is: the tokenising kernels fold its case themselves.
    """
    if cp < 0x80:
        return cp
    if cp >= table.shape[0]:
        return -1
    return table[cp]


@njit(cache=True, nogil=True)
def simple_sizes(buf, offsets, docs, table, sizes, changed, resized, unknown, lo, hi):  # type: ignore[no-untyped-def]
    """``sizes[t]``: bytes of document ``docs[t]`` normalised by ``table``, for ``lo <= t < hi``.

    -1 when it holds a character the table does not map (or bytes that are not UTF-8); -2
    when it holds one of a block the table has not filled in yet (``UNKNOWN`` entries), whose
    number is then marked in ``unknown`` (threads only write True there). ``changed[t]``:
    whether the table changes any of its characters; ``resized[t]``: whether it changes the
    UTF-8 size of any (then the text cannot be rewritten in place, even when its total size
    stays the same). Cost: O(bytes).
    """
    for t in range(lo, hi):
        d = docs[t]
        i, end = offsets[d], offsets[d + 1]
        size = 0
        differs = False
        grows = False
        while i < end:
            if buf[i] < 0x80:  # ASCII is kept: step over a run of it
                size += 1 if size >= 0 else 0
                i += 1
                continue
            cp, step = _next(buf, i, end)
            mapped = _mapped(cp, table) if step else -1
            if mapped == UNKNOWN:
                unknown[cp >> 8] = True
                size = UNKNOWN
            elif mapped < 0:
                size = -1
                break
            elif size >= 0:
                size += _size_of(mapped)
                differs = differs or mapped != cp
                grows = grows or _size_of(mapped) != step
            i += step
        sizes[t] = size
        changed[t] = differs
        resized[t] = grows


@njit(cache=True, nogil=True)
def simple_fill(buf, offsets, docs, table, out, out_offsets, lo, hi):  # type: ignore[no-untyped-def]
    """For ``lo <= t < hi``: document ``docs[t]`` normalised by ``table``, at ``out_offsets[t]``.

    For documents :func:`simple_sizes` sized (valid UTF-8, every character mapped); ``out``
    may be ``buf`` itself for those it did not find ``resized``.
    """
    for t in range(lo, hi):
        d = docs[t]
        i, end = offsets[d], offsets[d + 1]
        o = out_offsets[t]
        while i < end:
            cp, step = _next(buf, i, end)
            mapped = _mapped(cp, table) if step else -1
            if mapped < 0:  # not a document simple_sizes sized: never write past it
                break
            o = put_code_point(out, o, mapped)
            i += step
