"""Numba kernels for passage-level dedup: documents cut into lines, paragraphs or sentences.

A document is cut into *pieces*: its lines (those that are not blank), its paragraphs (lines up
to a blank line) or its sentences. Each piece is a *tile* of the text, from its first byte to
where the next piece begins (so removing a tile removes the line break or the spaces after it
too), and has a *content*: the tile without its leading and trailing whitespace, the part that
is matched. :func:`cut_pieces` writes per piece its document, its tile in characters from the
document's start (the offsets users see, into the text as read), its content in bytes of the
batch buffer and its characters other than whitespace.

Sentences end at a terminal mark (``.``, ``!``, ``?``, ``…`` and the full stops and question
marks of the Arabic, Armenian, Devanagari, Ethiopic, Greek and CJK scripts) followed by closing
quotes or brackets and then whitespace and a character that is not a lower-case letter, or at a
blank line. A single ``.`` after a listed abbreviation (``Mr``, ``Dr``, ``Fig`` ...), after an
initial (one ASCII letter) or after a dotted abbreviation (``e.g``, ``U.S``) ends nothing. The
CJK full stops need no space after them. Whitespace is the normaliser's (``classes``: the
shingling kernels' code-point classes, read through ``tokens.read_char``; a change there starts
a new cache directory, see :mod:`neardup._kernels`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._kernels.mix import fmix64
from neardup._kernels.tokens import FNV_OFFSET, FNV_PRIME, SPACE, read_char

LINE = 0
PARAGRAPH = 1
SENTENCE = 2

DOC, TILE_START, TILE_END, CONTENT_START, CONTENT_END, CHARS = range(6)
"""The columns :func:`cut_pieces` writes per piece."""


@njit(cache=True, nogil=True, inline="always")
def _emit(out, n, doc, tile_start, tile_end, content_start, content_end, chars):  # type: ignore[no-untyped-def]
    """Write one piece at row ``n`` (unless only counting); the next row."""
    if out.shape[0] > 0:
        out[n, DOC] = doc
        out[n, TILE_START] = tile_start
        out[n, TILE_END] = tile_end
        out[n, CONTENT_START] = content_start
        out[n, CONTENT_END] = content_end
        out[n, CHARS] = chars
    return n + 1


@njit(cache=True, nogil=True)
def cut_pieces(buf, offsets, mode, classes, abbreviations, out):  # type: ignore[no-untyped-def]
    """Cut every document of ``buf``/``offsets`` into pieces; return how many.

    ``mode``: :data:`LINE`, :data:`PARAGRAPH` or :data:`SENTENCE`. ``out``: ``int64[n, 6]``
    rows (columns :data:`DOC` .. :data:`CHARS`), or ``int64[0, 6]`` to count only.
    ``abbreviations``: the FNV-1a hashes of lower-case ASCII abbreviations. Cost: O(bytes).
    """
    n = 0
    for d in range(offsets.shape[0] - 1):
        if mode == SENTENCE:
            n = _sentences(buf, offsets[d], offsets[d + 1], d, classes, abbreviations, out, n)
        else:
            n = _lines(buf, offsets[d], offsets[d + 1], d, mode == PARAGRAPH, classes, out, n)
    return n


@njit(cache=True, nogil=True)
def _lines(buf, start, end, doc, paragraphs, classes, out, n):  # type: ignore[no-untyped-def]
    """The lines (or paragraphs) of ``buf[start:end]`` from row ``n`` on; the next row."""
    i = start
    chars_seen = 0
    is_open = False  # a paragraph has begun
    has_gap = False  # a blank line came since the open paragraph's last line
    para_tile = para_start = para_end = para_chars = 0
    while i < end:
        line_tile = chars_seen
        content_start = content_end = -1
        chars = 0
        while i < end:
            if buf[i] == 10:
                i += 1
                chars_seen += 1
                break
            cp, size = read_char(buf, i, False)
            if classes[cp] != SPACE:
                if content_start < 0:
                    content_start = i
                content_end = i + size
                chars += 1
            i += size
            chars_seen += 1
        if not paragraphs:
            if content_start >= 0:
                n = _emit(out, n, doc, line_tile, chars_seen, content_start, content_end, chars)
            continue
        if content_start < 0:
            has_gap = is_open
            continue
        if is_open and has_gap:
            n = _emit(out, n, doc, para_tile, line_tile, para_start, para_end, para_chars)
            is_open = False
        if not is_open:
            is_open, has_gap = True, False
            para_tile, para_start, para_chars = line_tile, content_start, 0
        para_end = content_end
        para_chars += chars
    if is_open:
        n = _emit(out, n, doc, para_tile, chars_seen, para_start, para_end, para_chars)
    return n


@njit(cache=True, nogil=True)
def _sentences(buf, start, end, doc, classes, abbreviations, out, n):  # type: ignore[no-untyped-def]
    """The sentences of ``buf[start:end]`` from row ``n`` on; the next row."""
    i = start
    chars_seen = 0
    tile = content_start = content_end = -1
    chars = 0
    boundary = -1  # content from this byte on begins a new sentence
    checked_to = start  # terminal marks before this byte belong to a run already read
    is_blank_line = True
    while i < end:
        if buf[i] == 10:
            if is_blank_line and content_start >= 0:
                boundary = i
            is_blank_line = True
            i += 1
            chars_seen += 1
            continue
        cp, size = read_char(buf, i, False)
        if classes[cp] == SPACE:
            i += size
            chars_seen += 1
            continue
        is_blank_line = False
        if boundary >= 0 and i >= boundary:
            n = _emit(out, n, doc, tile, chars_seen, content_start, content_end, chars)
            boundary = -1
            content_start = -1
        if content_start < 0:
            tile, content_start, chars = chars_seen, i, 0
        content_end = i + size
        chars += 1
        if i >= checked_to and _is_terminal(cp):
            after, ends = _sentence_end(buf, i, start, end, classes, abbreviations)
            checked_to = after
            if ends:
                boundary = after
        i += size
        chars_seen += 1
    if content_start >= 0:
        n = _emit(out, n, doc, tile, chars_seen, content_start, content_end, chars)
    return n


@njit(cache=True, nogil=True, inline="always")
def _is_terminal(cp):  # type: ignore[no-untyped-def]
    """A mark that can end a sentence."""
    return (
        cp == 46  # .
        or cp == 33  # !
        or cp == 63  # ?
        or cp == 0x2026  # … horizontal ellipsis
        or cp == 0x037E  # Greek question mark
        or cp == 0x0589  # Armenian full stop
        or cp == 0x061F  # Arabic question mark
        or cp == 0x06D4  # Arabic full stop
        or cp == 0x0964  # Devanagari danda
        or cp == 0x0965  # Devanagari double danda
        or cp == 0x1362  # Ethiopic full stop
        or _is_cjk_terminal(cp)
    )


@njit(cache=True, nogil=True, inline="always")
def _is_cjk_terminal(cp):  # type: ignore[no-untyped-def]
    """A full stop or mark of the scripts written without spaces: ends a sentence as it is."""
    return cp == 0x3002 or cp == 0xFF01 or cp == 0xFF1F or cp == 0xFF0E or cp == 0xFF61


@njit(cache=True, nogil=True, inline="always")
def _is_closer(cp):  # type: ignore[no-untyped-def]
    """A closing quote or bracket, which stays with the sentence it closes."""
    return (
        cp == 34  # "
        or cp == 39  # '
        or cp == 41  # )
        or cp == 93  # ]
        or cp == 125  # }
        or cp == 0x00BB  # right guillemet
        or cp == 0x2019  # right single quotation mark
        or cp == 0x201D  # right double quotation mark
        or cp == 0x203A  # single right guillemet
        or cp == 0x300B  # right double angle bracket
        or cp == 0x300D  # right corner bracket
        or cp == 0x300F  # right white corner bracket
        or cp == 0x3011  # right black lenticular bracket
        or cp == 0xFF02  # fullwidth quotation mark
        or cp == 0xFF09  # fullwidth right parenthesis
        or cp == 0xFF3D  # fullwidth right square bracket
    )


@njit(cache=True, nogil=True, inline="always")
def _is_lower(cp):  # type: ignore[no-untyped-def]
    """A lower-case letter of the Latin, Greek or Cyrillic alphabets (a sentence goes on)."""
    return (
        97 <= cp <= 122
        or (0xDF <= cp <= 0xFF and cp != 0xF7)
        or 0x3AC <= cp <= 0x3CE
        or 0x430 <= cp <= 0x45F
    )


@njit(cache=True, nogil=True)
def _sentence_end(buf, i, start, end, classes, abbreviations):  # type: ignore[no-untyped-def]
    """Read the run of terminal marks at ``buf[i]`` and its closers: ``(after, ends)``.

    ``after`` is the byte after the closers; ``ends`` whether a sentence ends there.
    """
    j = i
    marks = 0
    only_periods = True
    is_cjk = False
    while j < end:
        cp, size = read_char(buf, j, False)
        if not _is_terminal(cp):
            break
        only_periods &= cp == 46
        is_cjk |= _is_cjk_terminal(cp)
        marks += 1
        j += size
    while j < end:
        cp, size = read_char(buf, j, False)
        if not _is_closer(cp):
            break
        j += size
    if is_cjk:
        return j, True
    if j >= end:
        return j, False  # the document's end closes its last sentence anyway
    cp, size = read_char(buf, j, False)
    if classes[cp] != SPACE:
        return j, False  # 3.14, a.m, "?!x"
    k = j
    while k < end:
        cp, size = read_char(buf, k, False)
        if classes[cp] != SPACE:
            break
        k += size
    if k >= end or _is_lower(cp):
        return j, False
    if only_periods and marks == 1 and _is_abbreviation(buf, start, i, abbreviations):
        return j, False
    return j, True


@njit(cache=True, nogil=True)
def _is_abbreviation(buf, start, dot, abbreviations):  # type: ignore[no-untyped-def]
    """Whether the word before the ``.`` at ``buf[dot]`` abbreviates (an initial, e.g, Dr)."""
    w = dot
    while w > start:
        b = buf[w - 1]
        if b == 32 or b == 9 or b == 10 or b == 13 or b == 40 or b == 34 or b == 91:
            break
        w -= 1
    if w == dot:
        return False
    h = FNV_OFFSET
    has_dot = has_digit = False
    for q in range(w, dot):
        b = buf[q]
        if b >= 0x80:
            return False
        has_dot |= b == 46
        has_digit |= 48 <= b <= 57
        if 65 <= b <= 90:
            b += 32
        h = (h ^ uint64(b)) * FNV_PRIME
    if has_dot:
        return not has_digit  # e.g, U.S, but not the version 1.2
    first = buf[w]
    if dot - w == 1 and (65 <= first <= 90 or 97 <= first <= 122):
        return True  # an initial
    for a in range(abbreviations.shape[0]):
        if abbreviations[a] == h:
            return True
    return False


@njit(cache=True, nogil=True)
def unit_texts(buf, starts, ends, fold_digits, out, out_offsets, keys):  # type: ignore[no-untyped-def]
    """Copy each unit's bytes ``buf[starts[u]:ends[u]]`` into ``out``, digits read as 0.

    ``out_offsets`` (``num_units + 1``) receives where each begins, ``keys`` a 64-bit key of
    each (FNV-1a, finalised) over its bytes with ASCII letters lower-cased and each run of ASCII
    whitespace read as one space: units with equal keys normalise to equal texts (up to 64-bit
    collisions). Cost: O(bytes copied).
    """
    o = 0
    for u in range(starts.shape[0]):
        out_offsets[u] = o
        h = FNV_OFFSET
        in_space = False
        for q in range(starts[u], ends[u]):
            b = buf[q]
            if fold_digits and 48 <= b <= 57:
                b = np.uint8(48)
            out[o] = b
            o += 1
            if b == 32 or 9 <= b <= 13:
                in_space = True
                continue
            if in_space:
                h = (h ^ uint64(32)) * FNV_PRIME
                in_space = False
            if 65 <= b <= 90:
                b += 32
            h = (h ^ uint64(b)) * FNV_PRIME
        keys[u] = fmix64(h)
    out_offsets[starts.shape[0]] = o
