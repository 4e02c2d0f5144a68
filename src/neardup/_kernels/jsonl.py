r"""Numba kernels for JSON Lines: two fields of each record pulled out of raw bytes, no objects.

A chunk of a JSONL file is a ``uint8`` buffer holding whole lines (each ends with ``\\n`` but
perhaps the last). :func:`line_starts` finds the lines; :func:`parse_lines` reads each one (blocks
of lines in threads at once) and, for the common case, decodes the text and id fields straight
into byte buffers.

The fast path accepts only what :func:`json.loads` accepts *and* decodes the same way: a line is
``FAST`` when it is one JSON object whose members are well formed (strings with valid UTF-8, no
raw control characters and known escapes; numbers in JSON's grammar; ``true``/``false``/
``null``; nested arrays and objects), with the text field a string and the id field, if present,
a string, a small integer or ``null``. Anything else (a duplicated field, an escape in a key, a
lone surrogate escape, ``NaN``, a long integer, a malformed line) is ``SLOW``: the caller parses
that line with :mod:`json` and gets exactly the old behaviour and error message. Whitespace-only
lines (the ASCII whitespace of :meth:`bytes.strip`) are ``BLANK``.

Decoded strings are never longer than their JSON form, so each line's text and id are written
into output buffers at the line's own offset; ``spans.gather_spans`` packs them afterwards.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._kernels.groups import lower_bound
from neardup._kernels.utf8 import put_code_point

FAST = 0
SLOW = 1
BLANK = 2

ID_NONE = 0
ID_STRING = 1
ID_INTEGER = 2

_MAX_DEPTH = 64
_MAX_INT_DIGITS = 18
"""Longest integer id the kernel copies (longer ones, and ``-0``, go to :mod:`json`)."""
_PYTHON_INT_DIGITS = 4300
"""Python's default ``sys.get_int_max_str_digits()``: json refuses longer integers."""


_ONES = uint64(0x0101010101010101)
_HIGH_BITS = uint64(0x8080808080808080)
_NEWLINES = uint64(0x0A0A0A0A0A0A0A0A)


@njit(cache=True, nogil=True, inline="always")
def _has_newline(word):  # type: ignore[no-untyped-def]
    """Whether any byte of the 8-byte ``word`` is a newline (a zero byte of ``word ^ 0x0A..``)."""
    x = word ^ _NEWLINES
    return ((x - _ONES) & ~x & _HIGH_BITS) != uint64(0)


@njit(cache=True, nogil=True)
def line_starts(buf, n):  # type: ignore[no-untyped-def]
    """Start offsets of the lines of ``buf[:n]``, plus ``n`` at the end.

    Eight bytes at a time: only words holding a newline are looked at byte by byte (long lines
    cost an eighth of a byte-by-byte scan). Cost: O(n).
    """
    whole = n - n % 8
    words = buf[:whole].view(np.uint64)
    count = 0
    for w in range(words.shape[0]):
        if _has_newline(words[w]):
            for i in range(8 * w, 8 * w + 8):
                count += buf[i] == 10
    for i in range(whole, n):
        count += buf[i] == 10
    has_tail = n > 0 and buf[n - 1] != 10
    out = np.empty(count + 1 + (1 if has_tail else 0), dtype=np.int64)
    out[0] = 0
    k = 1
    for w in range(words.shape[0]):
        if _has_newline(words[w]):
            for i in range(8 * w, 8 * w + 8):
                if buf[i] == 10:
                    out[k] = i + 1
                    k += 1
    for i in range(whole, n):
        if buf[i] == 10:
            out[k] = i + 1
            k += 1
    if has_tail:
        out[k] = n
    return out


@njit(cache=True, nogil=True, inline="always")
def _is_json_space(b):  # type: ignore[no-untyped-def]
    return b == 32 or b == 9 or b == 10 or b == 13


@njit(cache=True, nogil=True, inline="always")
def _is_strip_space(b):  # type: ignore[no-untyped-def]
    r"""ASCII whitespace as bytes.strip() sees it: space, \\t, \\n, \\v, \\f, \\r."""
    return b == 32 or (9 <= b <= 13)


@njit(cache=True, nogil=True, inline="always")
def _is_blank(buf, start, end):  # type: ignore[no-untyped-def]
    """Whether ``buf[start:end]`` is only the whitespace :meth:`bytes.strip` strips."""
    for i in range(start, end):
        if not _is_strip_space(buf[i]):
            return False
    return True


@njit(cache=True, nogil=True)
def _skip_space(buf, i, end):  # type: ignore[no-untyped-def]
    while i < end and _is_json_space(buf[i]):
        i += 1
    return i


@njit(cache=True, nogil=True)
def _utf8_length(buf, i, end):  # type: ignore[no-untyped-def]
    """Bytes of the valid UTF-8 sequence at ``buf[i]`` (a byte >= 0x80), or 0 if invalid.

    Strict as Python's decoder: no overlong forms, no encoded surrogates, nothing past U+10FFFF.
    """
    b0 = buf[i]
    if 0xC2 <= b0 <= 0xDF:
        if i + 1 < end and 0x80 <= buf[i + 1] <= 0xBF:
            return 2
        return 0
    if 0xE0 <= b0 <= 0xEF:
        if i + 2 >= end:
            return 0
        b1 = buf[i + 1]
        low = 0xA0 if b0 == 0xE0 else 0x80
        high = 0x9F if b0 == 0xED else 0xBF
        if low <= b1 <= high and 0x80 <= buf[i + 2] <= 0xBF:
            return 3
        return 0
    if 0xF0 <= b0 <= 0xF4:
        if i + 3 >= end:
            return 0
        b1 = buf[i + 1]
        low = 0x90 if b0 == 0xF0 else 0x80
        high = 0x8F if b0 == 0xF4 else 0xBF
        if low <= b1 <= high and 0x80 <= buf[i + 2] <= 0xBF and 0x80 <= buf[i + 3] <= 0xBF:
            return 4
        return 0
    return 0


@njit(cache=True, nogil=True)
def _hex4(buf, i, end):  # type: ignore[no-untyped-def]
    """The value of four hex digits at ``buf[i]``, or -1."""
    if i + 4 > end:
        return -1
    value = 0
    for j in range(i, i + 4):
        c = buf[j]
        if 48 <= c <= 57:
            digit = c - 48
        elif 97 <= c <= 102:
            digit = c - 87
        elif 65 <= c <= 70:
            digit = c - 55
        else:
            return -1
        value = value * 16 + digit
    return value


@njit(cache=True, nogil=True)
def _string(buf, i, end, out, o, write, plain):  # type: ignore[no-untyped-def]
    """Read the JSON string whose opening quote is at ``buf[i]``.

    Returns ``(position after the closing quote, bytes written, has_escape, characters,
    is_ascii)``, decoding into ``out[o:]`` when ``write``; position -1 when the string is not
    on the fast path. Characters and ASCII are those of the decoded string. Runs of ``plain``
    bytes (printable ASCII but quote and backslash: the table of :func:`plain_bytes`) are
    found first and copied as one block. Callers pass ``o`` and ``write`` as typed values
    (``np.int64``, ``np.bool_``), never literals, so one specialisation serves them all.
    """
    i += 1
    start_o = o
    has_escape = False
    chars = 0
    is_ascii = True
    while i < end:
        j = i
        while j < end and plain[buf[j]]:
            j += 1
        if j > i:
            if write:
                out[o : o + j - i] = buf[i:j]  # a slice: copied as memcpy, not byte by byte
            o += j - i
            chars += j - i
            i = j
            if i >= end:
                break
        c = buf[i]
        if c == 34:  # closing quote
            return i + 1, o - start_o, has_escape, chars, is_ascii
        chars += 1  # an escape or a multi-byte character: one character either way
        if c == 92:  # backslash
            has_escape = True
            if i + 1 >= end:
                return -1, 0, has_escape, 0, False
            e = buf[i + 1]
            if e == 117:  # \uXXXX
                cp = _hex4(buf, i + 2, end)
                if cp < 0 or 0xDC00 <= cp <= 0xDFFF:
                    return -1, 0, has_escape, 0, False
                i += 6
                if 0xD800 <= cp <= 0xDBFF:
                    if i + 1 >= end or buf[i] != 92 or buf[i + 1] != 117:
                        return -1, 0, has_escape, 0, False
                    low = _hex4(buf, i + 2, end)
                    if low < 0xDC00 or low > 0xDFFF:
                        return -1, 0, has_escape, 0, False
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                is_ascii = is_ascii and cp < 0x80
                if write:
                    o = put_code_point(out, o, cp)
                else:
                    o += 1
                continue
            if e == 34 or e == 92 or e == 47:
                value = e
            elif e == 98:
                value = 8
            elif e == 102:
                value = 12
            elif e == 110:
                value = 10
            elif e == 114:
                value = 13
            elif e == 116:
                value = 9
            else:
                return -1, 0, has_escape, 0, False
            if write:
                out[o] = value
            o += 1
            i += 2
            continue
        if c < 0x20:
            return -1, 0, has_escape, 0, False
        size = _utf8_length(buf, i, end)
        if size == 0:
            return -1, 0, has_escape, 0, False
        is_ascii = False
        if write:
            for j in range(size):
                out[o + j] = buf[i + j]
        o += size
        i += size
    return -1, 0, has_escape, 0, False


def plain_bytes() -> np.ndarray:
    """The table :func:`parse_lines` takes: 1 for bytes copied as they are inside a string."""
    table = np.zeros(256, dtype=np.uint8)
    table[0x20:0x80] = 1
    table[[34, 92]] = 0
    return table


@njit(cache=True, nogil=True)
def _number(buf, i, end):  # type: ignore[no-untyped-def]
    """Skip a JSON number at ``buf[i]``: ``(end position, is_integer)``, or ``(-1, False)``.

    -1 also for an integer longer than Python reads (json's error then names it).
    """
    j = i
    if j < end and buf[j] == 45:
        j += 1
    if j >= end:
        return -1, False
    first_digit = j
    if buf[j] == 48:
        j += 1
    elif 49 <= buf[j] <= 57:
        while j < end and 48 <= buf[j] <= 57:
            j += 1
    else:
        return -1, False
    digits = j - first_digit
    integer = True
    if j < end and buf[j] == 46:
        integer = False
        j += 1
        if j >= end or not 48 <= buf[j] <= 57:
            return -1, False
        while j < end and 48 <= buf[j] <= 57:
            j += 1
    if j < end and (buf[j] == 101 or buf[j] == 69):
        integer = False
        j += 1
        if j < end and (buf[j] == 43 or buf[j] == 45):
            j += 1
        if j >= end or not 48 <= buf[j] <= 57:
            return -1, False
        while j < end and 48 <= buf[j] <= 57:
            j += 1
    if integer and digits > _PYTHON_INT_DIGITS:
        return -1, False
    return j, integer


@njit(cache=True, nogil=True)
def _literal(buf, i, end):  # type: ignore[no-untyped-def]
    """Position after the ``true``, ``false`` or ``null`` at ``buf[i]``, else -1."""
    c = buf[i]
    if c == 116 and i + 4 <= end and buf[i + 1] == 114 and buf[i + 2] == 117:
        return i + 4 if buf[i + 3] == 101 else -1
    if c == 110 and i + 4 <= end and buf[i + 1] == 117 and buf[i + 2] == 108:
        return i + 4 if buf[i + 3] == 108 else -1
    if c == 102 and i + 5 <= end and buf[i + 1] == 97 and buf[i + 2] == 108:
        return i + 5 if buf[i + 3] == 115 and buf[i + 4] == 101 else -1
    return -1


@njit(cache=True, nogil=True)
def _skip_value(buf, i, end, plain, stack):  # type: ignore[no-untyped-def]
    """Validate and skip any JSON value at ``buf[i]``; return the position after it, or -1.

    Arrays and objects nest up to ``stack.shape[0]`` deep with an explicit stack (no
    recursion): ``stack[d]`` is 1 inside an object, 2 inside an array.
    """
    depth = 0
    while True:
        i = _skip_space(buf, i, end)
        if i >= end:
            return -1
        c = buf[i]
        if c == 34:
            i = _string(buf, i, end, plain, np.int64(0), np.bool_(False), plain)[0]
        elif c == 45 or 48 <= c <= 57:
            i, _ = _number(buf, i, end)
        elif c == 116 or c == 102 or c == 110:
            i = _literal(buf, i, end)
        elif c == 123 or c == 91:
            if depth == stack.shape[0]:
                return -1
            stack[depth] = 1 if c == 123 else 2
            depth += 1
            i = _skip_space(buf, i + 1, end)
            if i >= end:
                return -1
            if buf[i] == (125 if c == 123 else 93):  # empty container
                depth -= 1
                i += 1
            elif c == 123:
                if buf[i] != 34:
                    return -1
                i = _string(buf, i, end, plain, np.int64(0), np.bool_(False), plain)[0]
                if i < 0:
                    return -1
                i = _skip_space(buf, i, end)
                if i >= end or buf[i] != 58:
                    return -1
                i += 1
                continue  # the member's value
            else:
                continue  # the first element
        else:
            return -1
        if i < 0:
            return -1
        # after a value: close containers or move to the next member / element
        while depth > 0:
            i = _skip_space(buf, i, end)
            if i >= end:
                return -1
            c = buf[i]
            closing = 125 if stack[depth - 1] == 1 else 93
            if c == closing:
                depth -= 1
                i += 1
                continue
            if c != 44:
                return -1
            i = _skip_space(buf, i + 1, end)
            if stack[depth - 1] == 1:
                if i >= end or buf[i] != 34:
                    return -1
                i = _string(buf, i, end, plain, np.int64(0), np.bool_(False), plain)[0]
                if i < 0:
                    return -1
                i = _skip_space(buf, i, end)
                if i >= end or buf[i] != 58:
                    return -1
                i += 1
            break
        if depth == 0:
            return i


@njit(cache=True, nogil=True)
def _key_is(buf, start, stop, key):  # type: ignore[no-untyped-def]
    """Whether the raw key bytes ``buf[start:stop]`` equal ``key``."""
    if stop - start != key.shape[0]:
        return False
    for j in range(key.shape[0]):
        if buf[start + j] != key[j]:
            return False
    return True


@njit(cache=True, nogil=True)
def _parse_line(  # type: ignore[no-untyped-def]
    buf, start, end, text_key, id_key, text_out, id_out, plain, stack
):
    """Parse one line; return its status and the sizes of its fields.

    Returns ``(status, text_length, id_kind, id_length, text_chars, text_ascii)``: the last
    two are the text's characters and whether it is all ASCII. The text is decoded to
    ``text_out[start:]`` and the id to ``id_out[start:]``.
    """
    if _is_blank(buf, start, end):
        return BLANK, 0, ID_NONE, 0, 0, False
    i = _skip_space(buf, start, end)
    if i >= end or buf[i] != 123:
        return SLOW, 0, ID_NONE, 0, 0, False
    i = _skip_space(buf, i + 1, end)
    if i < end and buf[i] == 125:
        return SLOW, 0, ID_NONE, 0, 0, False  # {}: no text field; json reports it
    has_text = False
    text_length = 0
    text_chars = 0
    text_ascii = True
    id_kind = ID_NONE
    id_length = 0
    has_id = False
    while True:
        if i >= end or buf[i] != 34:
            return SLOW, 0, ID_NONE, 0, 0, False
        key_start = i + 1
        i, _, escaped, _, _ = _string(buf, i, end, plain, np.int64(0), np.bool_(False), plain)
        if i < 0 or escaped:
            return SLOW, 0, ID_NONE, 0, 0, False
        key_stop = i - 1
        i = _skip_space(buf, i, end)
        if i >= end or buf[i] != 58:
            return SLOW, 0, ID_NONE, 0, 0, False
        i = _skip_space(buf, i + 1, end)
        if i >= end:
            return SLOW, 0, ID_NONE, 0, 0, False
        is_text = _key_is(buf, key_start, key_stop, text_key)
        is_id = id_key.shape[0] > 0 and _key_is(buf, key_start, key_stop, id_key)
        if is_text:
            if has_text or buf[i] != 34:
                return SLOW, 0, ID_NONE, 0, 0, False
            i, text_length, _, text_chars, text_ascii = _string(
                buf, i, end, text_out, start, np.bool_(True), plain
            )
            has_text = True
        elif is_id:
            if has_id:
                return SLOW, 0, ID_NONE, 0, 0, False
            has_id = True
            c = buf[i]
            if c == 34:
                i, id_length, _, _, _ = _string(buf, i, end, id_out, start, np.bool_(True), plain)
                id_kind = ID_STRING
            elif c == 110:
                i = _literal(buf, i, end)
            elif c == 45 or 48 <= c <= 57:
                stop, integer = _number(buf, i, end)
                digits = stop - i
                if stop < 0 or not integer or digits > _MAX_INT_DIGITS:
                    return SLOW, 0, ID_NONE, 0, 0, False
                if digits == 2 and buf[i] == 45 and buf[i + 1] == 48:
                    return SLOW, 0, ID_NONE, 0, 0, False  # -0 is the integer 0
                for j in range(digits):
                    id_out[start + j] = buf[i + j]
                id_kind = ID_INTEGER
                id_length = digits
                i = stop
            else:
                return SLOW, 0, ID_NONE, 0, 0, False
        else:
            i = _skip_value(buf, i, end, plain, stack)
        if i < 0:
            return SLOW, 0, ID_NONE, 0, 0, False
        i = _skip_space(buf, i, end)
        if i >= end:
            return SLOW, 0, ID_NONE, 0, 0, False
        if buf[i] == 44:
            i = _skip_space(buf, i + 1, end)
            continue
        if buf[i] != 125:
            return SLOW, 0, ID_NONE, 0, 0, False
        i = _skip_space(buf, i + 1, end)
        if i != end or not has_text:
            return SLOW, 0, ID_NONE, 0, 0, False
        return FAST, text_length, id_kind, id_length, text_chars, text_ascii


@njit(cache=True, nogil=True)
def parse_lines(  # type: ignore[no-untyped-def]
    buf,
    starts,
    text_key,
    id_key,
    plain,
    text_out,
    id_out,
    status,
    text_length,
    text_chars,
    text_ascii,
    id_kind,
    id_length,
    lo,
    hi,
):
    """Parse the lines ``lo .. hi - 1``, line ``l`` being ``buf[starts[l]:starts[l + 1]]``.

    ``text_key`` and ``id_key`` are the field names as UTF-8 bytes (``id_key`` empty: no id
    field); ``plain`` is :func:`plain_bytes`. Writes per line its status, text length, id kind
    and id length, and the text's characters and whether it is all ASCII (counted while it is
    decoded); decoded bytes go to ``text_out`` and ``id_out`` at the line's start (so blocks
    of lines can be parsed in threads at once). Cost: O(bytes).
    """
    stack = np.empty(_MAX_DEPTH, dtype=np.uint8)
    for line in range(lo, hi):
        (
            status[line],
            text_length[line],
            id_kind[line],
            id_length[line],
            text_chars[line],
            text_ascii[line],
        ) = _parse_line(
            buf, starts[line], starts[line + 1], text_key, id_key, text_out, id_out, plain, stack
        )


FIELD_MISSING = 0
FIELD_NULL = 1
FIELD_NUMBER = 2
FIELD_STRING = 3
FIELD_OTHER = 4
"""A boolean, an array or an object: no order to keep by."""
FIELD_UNSURE = 5
"""Not decided on the fast path (an escaped key, a repeated one, ...): :mod:`json` decides."""
FIELD_BLANK = 6


@njit(cache=True, nogil=True)
def _field_value(buf, start, end, key, out, plain, stack):  # type: ignore[no-untyped-def]
    """The value of top-level field ``key`` of the line ``buf[start:end]``: ``(kind, length)``.

    A string is decoded, and a number's JSON text copied, to ``out[start:]``; ``length`` is
    their bytes. ``kind`` is one of the ``FIELD_*`` codes.
    """
    if _is_blank(buf, start, end):
        return FIELD_BLANK, 0
    i = _skip_space(buf, start, end)
    if i >= end or buf[i] != 123:
        return FIELD_UNSURE, 0
    i = _skip_space(buf, i + 1, end)
    kind = FIELD_MISSING
    length = 0
    if i < end and buf[i] == 125:
        return FIELD_UNSURE, 0
    while True:
        if i >= end or buf[i] != 34:
            return FIELD_UNSURE, 0
        key_start = i + 1
        i, _, escaped, _, _ = _string(buf, i, end, plain, np.int64(0), np.bool_(False), plain)
        if i < 0 or escaped:
            return FIELD_UNSURE, 0
        key_stop = i - 1
        i = _skip_space(buf, i, end)
        if i >= end or buf[i] != 58:
            return FIELD_UNSURE, 0
        i = _skip_space(buf, i + 1, end)
        if i >= end:
            return FIELD_UNSURE, 0
        if _key_is(buf, key_start, key_stop, key):
            if kind != FIELD_MISSING:
                return FIELD_UNSURE, 0  # a repeated key: json keeps the last
            c = buf[i]
            if c == 34:
                i, length, _, _, _ = _string(buf, i, end, out, start, np.bool_(True), plain)
                kind = FIELD_STRING
            elif c == 45 or 48 <= c <= 57:
                stop, _ = _number(buf, i, end)
                if stop < 0:
                    return FIELD_UNSURE, 0
                length = stop - i
                out[start : start + length] = buf[i:stop]
                kind = FIELD_NUMBER
                i = stop
            elif c == 110:
                i = _literal(buf, i, end)
                kind = FIELD_NULL
            else:
                i = _skip_value(buf, i, end, plain, stack)
                kind = FIELD_OTHER
        else:
            i = _skip_value(buf, i, end, plain, stack)
        if i < 0:
            return FIELD_UNSURE, 0
        i = _skip_space(buf, i, end)
        if i >= end:
            return FIELD_UNSURE, 0
        if buf[i] == 44:
            i = _skip_space(buf, i + 1, end)
            continue
        if buf[i] != 125 or _skip_space(buf, i + 1, end) != end:
            return FIELD_UNSURE, 0
        return kind, length


@njit(cache=True, nogil=True)
def field_values(buf, starts, key, plain, out, kind, length, lo, hi):  # type: ignore[no-untyped-def]
    """The value of field ``key`` in lines ``lo .. hi - 1`` (see :func:`_field_value`).

    Per line its kind and length, the value's bytes at the line's start in ``out`` (so
    blocks of lines can be read in threads at once). Cost: O(bytes).
    """
    stack = np.empty(_MAX_DEPTH, dtype=np.uint8)
    for line in range(lo, hi):
        kind[line], length[line] = _field_value(
            buf, starts[line], starts[line + 1], key, out, plain, stack
        )


@njit(cache=True, nogil=True)
def annotated_lines(buf, starts, lines, notes, note_offsets, out):  # type: ignore[no-untyped-def]
    """Lines ``lines[r]`` of a chunk, each with note ``r`` before its closing brace.

    Every line is a JSON object (a record the reading pass read), so its last ``}`` closes
    it; each line written ends with a newline. Returns the bytes written to ``out``.
    """
    o = 0
    for r in range(lines.shape[0]):
        s, e = starts[lines[r]], starts[lines[r] + 1]
        close = e - 1
        while close > s and buf[close] != 125:
            close -= 1
        out[o : o + close - s] = buf[s:close]
        o += close - s
        size = note_offsets[r + 1] - note_offsets[r]
        out[o : o + size] = notes[note_offsets[r] : note_offsets[r + 1]]
        o += size
        out[o : o + e - close] = buf[close:e]
        o += e - close
        if buf[e - 1] != 10:
            out[o] = 10
            o += 1
    return o


@njit(cache=True, nogil=True)
def default_ids(prefix, numbers, out, out_offsets):  # type: ignore[no-untyped-def]
    """Write ``prefix`` followed by the decimal ``numbers[r]`` for every item ``r``."""
    for r in range(numbers.shape[0]):
        o = out_offsets[r]
        for j in range(prefix.shape[0]):
            out[o + j] = prefix[j]
        o += prefix.shape[0]
        value = numbers[r]
        digits = 1
        power = 10
        while value >= power:
            digits += 1
            power *= 10
        for j in range(digits - 1, -1, -1):
            out[o + j] = 48 + value % 10
            value //= 10


def decimal_digits(numbers: np.ndarray) -> np.ndarray:
    """How many decimal digits each non-negative integer has (vectorised)."""
    digits = np.ones(numbers.shape[0], dtype=np.int64)
    power = 10
    while True:
        more = numbers >= power
        if not more.any():
            return digits
        digits += more
        power *= 10


@njit(cache=True, nogil=True)
def kept_lines(buf, starts, first_record, keep, bad_lines, first_line, out):  # type: ignore[no-untyped-def]
    """Copy the kept records' lines of a chunk to ``out``, each ending with a newline.

    Line ``l`` of the chunk is line ``first_line + l`` of the file (1-based); it is a record
    unless it is blank or listed in ``bad_lines`` (sorted). Records are numbered from
    ``first_record``; ``keep[r]`` says whether record ``r`` is copied. Consecutive kept lines
    are copied as one block. Returns ``(bytes written, records seen)``, with -1 records when
    the chunk holds more records than ``keep`` has entries (the file changed since it was read).
    """
    num_lines = starts.shape[0] - 1
    o = 0
    record = first_record
    b = lower_bound(bad_lines, first_line)
    run_start = -1
    run_stop = -1
    for line in range(num_lines):
        s, e = starts[line], starts[line + 1]
        if _is_blank(buf, s, e):
            continue
        number = first_line + line
        while b < bad_lines.shape[0] and bad_lines[b] < number:
            b += 1
        if b < bad_lines.shape[0] and bad_lines[b] == number:
            continue
        if record >= keep.shape[0]:
            return o, -1
        if keep[record]:
            if run_stop != s:
                if run_start >= 0:
                    out[o : o + run_stop - run_start] = buf[run_start:run_stop]
                    o += run_stop - run_start
                run_start = s
            run_stop = e
        record += 1
    if run_start >= 0:
        out[o : o + run_stop - run_start] = buf[run_start:run_stop]
        o += run_stop - run_start
        if buf[run_stop - 1] != 10:
            out[o] = 10
            o += 1
    return o, record - first_record
