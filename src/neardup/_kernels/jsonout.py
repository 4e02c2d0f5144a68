r"""Numba kernels writing JSON Lines results byte for byte as :func:`json.dumps` would, in UTF-8.

Strings are UTF-8 bytes (lone surrogates as Python's ``surrogatepass`` writes them) encoded as
``json.dumps(s, ensure_ascii=False)`` does: ``"`` and ``\\`` escaped, ``\\b \\f \\n \\r \\t``
by name, other bytes below 0x20 as ``\\u00XX`` (lower-case hex), everything else as it is;
but a lone surrogate, which has no UTF-8 form, as its ``\\udXXX`` escape, so every line is
UTF-8 as JSON must be (:func:`neardup.io.results.utf8_json`).

Similarities are written as ``repr(round(x, 6))``: the kernels round ``x * 10^6`` exactly as
Python's correctly rounded ``round`` does (the product's rounding error is recovered exactly,
Dekker's two-product, so a tie is told from a near tie, and ties go to even) and write the
digits; values where ``repr`` switches to exponent notation (below 1e-4), negative or from
:data:`LARGEST` on are flagged for the caller to format in Python.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)

NUMBER_WIDTH = 24
"""Bytes reserved per formatted number (``repr`` of a float is at most 24 characters)."""

LARGEST = 2.0**32
"""Values from here on are formatted in Python: at ``2^33`` the doubles are more than 10^-6
apart, and ``repr`` may then write a shorter decimal than the six places."""


@njit(cache=True, nogil=True, inline="always")
def _escaped_size(c):  # type: ignore[no-untyped-def]
    if c == 34 or c == 92 or c == 8 or c == 12 or c == 10 or c == 13 or c == 9:
        return 2
    if c < 0x20:
        return 6
    return 1


@njit(cache=True, nogil=True, inline="always")
def _is_surrogate(data, i, stop):  # type: ignore[no-untyped-def]
    """Whether ``data[i:i + 3]`` is a surrogate as ``surrogatepass`` encodes it: ED A0-BF xx."""
    return data[i] == 0xED and i + 2 < stop and data[i + 1] >= 0xA0


@njit(cache=True, nogil=True)
def _string_size(data, start, stop):  # type: ignore[no-untyped-def]
    """Bytes of the JSON string literal (quotes included) of ``data[start:stop]``."""
    size = 2
    i = start
    while i < stop:
        if _is_surrogate(data, i, stop):
            size += 6
            i += 3
        else:
            size += _escaped_size(data[i])
            i += 1
    return size


@njit(cache=True, nogil=True)
def _put_string(data, start, stop, out, o, hex_digits):  # type: ignore[no-untyped-def]
    """Write the JSON string literal of ``data[start:stop]`` at ``out[o]``; return the end."""
    out[o] = 34
    o += 1
    i = start
    while i < stop:
        c = data[i]
        if _is_surrogate(data, i, stop):
            code = 0xD000 | ((data[i + 1] & 0x3F) << 6) | (data[i + 2] & 0x3F)
            out[o] = 92
            out[o + 1] = 117
            out[o + 2] = hex_digits[code >> 12]
            out[o + 3] = hex_digits[(code >> 8) & 15]
            out[o + 4] = hex_digits[(code >> 4) & 15]
            out[o + 5] = hex_digits[code & 15]
            o += 6
            i += 3
            continue
        i += 1
        size = _escaped_size(c)
        if size == 1:
            out[o] = c
            o += 1
        elif size == 2:
            out[o] = 92
            if c == 34 or c == 92:
                out[o + 1] = c
            elif c == 8:
                out[o + 1] = 98
            elif c == 12:
                out[o + 1] = 102
            elif c == 10:
                out[o + 1] = 110
            elif c == 13:
                out[o + 1] = 114
            else:
                out[o + 1] = 116
            o += 2
        else:
            out[o] = 92
            out[o + 1] = 117
            out[o + 2] = 48
            out[o + 3] = 48
            out[o + 4] = hex_digits[c >> 4]
            out[o + 5] = hex_digits[c & 15]
            o += 6
    out[o] = 34
    return o + 1


@njit(cache=True, nogil=True)
def _put_bytes(src, out, o):  # type: ignore[no-untyped-def]
    for j in range(src.shape[0]):
        out[o + j] = src[j]
    return o + src.shape[0]


@njit(cache=True, nogil=True, inline="always")
def _put_id(data, start, stop, quoted, out, o):  # type: ignore[no-untyped-def]
    """Write an id at ``out[o]``, a JSON string or its bytes as they are; return the end."""
    if quoted:
        return _put_string(data, start, stop, out, o, _HEX)
    for j in range(stop - start):
        out[o + j] = data[start + j]
    return o + stop - start


@njit(cache=True, nogil=True, inline="always")
def _put_part(parts, part_bounds, p, out, o):  # type: ignore[no-untyped-def]
    """Write constant piece ``p`` at ``out[o]``; return the end.

    Piece ``p`` is ``parts[part_bounds[p]:part_bounds[p + 1]]`` (:func:`pair_lines`,
    :func:`cluster_lines`).
    """
    start, stop = part_bounds[p], part_bounds[p + 1]
    for j in range(stop - start):
        out[o + j] = parts[start + j]
    return o + stop - start


@njit(cache=True, nogil=True)
def string_sizes(data, offsets, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[i]``: bytes of the JSON literal of string ``i`` (``data[offsets[i]:offsets[i+1]]``).

    For the strings ``lo .. hi - 1`` (every kernel here works on such a block, so that blocks
    can be formatted in threads at once).
    """
    for i in range(lo, hi):
        out[i] = _string_size(data, offsets[i], offsets[i + 1])


@njit(cache=True, nogil=True)
def cluster_lines(  # type: ignore[no-untyped-def]
    data, offsets, labels, keep, numbers, number_sizes, first_doc, parts, part_bounds, out,
    out_offsets, lo, hi,
):  # fmt: skip
    """Lines ``lo .. hi - 1`` of ``clusters.jsonl`` from document ``first_doc`` on.

    Line ``i`` is ``head id middle cluster-id kept|dropped similarity``, then each later column
    of ``numbers`` after its key, then the tail. ``parts`` holds the constant pieces, piece
    ``p`` at ``part_bounds[p] .. part_bounds[p + 1]``: ``{"id": ``, ``, "cluster": ``,
    ``, "keep": true, "similarity": `` and the same with ``false``, the key of each column
    after the first (``, "min_similarity": ``, ...), and ``}`` + newline. ``numbers[i, c]``
    holds line ``i``'s formatted value of column ``c`` (its size in ``number_sizes[i, c]``);
    ``out_offsets[i]`` (prefix sums of the line sizes) places line ``i``.
    """
    columns = numbers.shape[1]
    for i in range(lo, hi):
        doc = first_doc + i
        label = labels[i]
        o = _put_part(parts, part_bounds, 0, out, out_offsets[i])
        o = _put_string(data, offsets[doc], offsets[doc + 1], out, o, _HEX)
        o = _put_part(parts, part_bounds, 1, out, o)
        o = _put_string(data, offsets[label], offsets[label + 1], out, o, _HEX)
        o = _put_part(parts, part_bounds, 2 if keep[i] else 3, out, o)
        for c in range(columns):
            if c > 0:
                o = _put_part(parts, part_bounds, 3 + c, out, o)
            for j in range(number_sizes[i, c]):
                out[o + j] = numbers[i, c, j]
            o += number_sizes[i, c]
        _put_part(parts, part_bounds, 3 + columns, out, o)


@njit(cache=True, nogil=True)
def annotation_texts(  # type: ignore[no-untyped-def]
    data, offsets, labels, keep, numbers, number_sizes, parts, out, out_offsets, lo, hi
):
    """The texts ``--annotate`` inserts, ``lo .. hi - 1``, placed as :func:`cluster_lines`.

    Text ``i`` is ``head cluster-id kept|dropped similarity tail``, ``parts`` holding the
    constant pieces (e.g. ``, "neardup": {"cluster": ``, ``, "keep": true, "similarity": ``
    and with ``false``, ``}``).
    """
    head, kept, dropped, tail = parts
    for i in range(lo, hi):
        label = labels[i]
        o = _put_bytes(head, out, out_offsets[i])
        o = _put_string(data, offsets[label], offsets[label + 1], out, o, _HEX)
        o = _put_bytes(kept if keep[i] else dropped, out, o)
        for j in range(number_sizes[i]):
            out[o + j] = numbers[i, j]
        _put_bytes(tail, out, o + number_sizes[i])


@njit(cache=True, nogil=True)
def _put_number(value, out, o):  # type: ignore[no-untyped-def]
    """Write ``value / 10^6`` as repr writes it: ``0.0``, ``1.0``, ``0.5``, ``12.923077``."""
    whole = value // 1000000
    frac = value % 1000000
    digits = 1
    while whole >= 10**digits:
        digits += 1
    for j in range(digits - 1, -1, -1):
        out[o + j] = 48 + whole % 10
        whole //= 10
    out[o + digits] = 46
    o += digits + 1
    if frac == 0:
        out[o] = 48
        return o + 1
    digits = 6
    while frac % 10 == 0:
        frac //= 10
        digits -= 1
    for j in range(digits - 1, -1, -1):
        out[o + j] = 48 + frac % 10
        frac //= 10
    return o + digits


@njit(cache=True, nogil=True)
def _round_millionths(v):  # type: ignore[no-untyped-def]
    """``round(v * 10^6)`` of the exact value of ``v`` (0 <= v < :data:`LARGEST`), ties to even.

    ``v * 10^6 = (64 v) * 15625``; ``64 v`` is exact, and the product's rounding error is
    recovered exactly by splitting ``64 v`` into two 26-bit halves (each half times 15625 is
    exact: Dekker's two-product, at any magnitude); below :data:`LARGEST` the product's whole
    part is exact too. Only a product that lands on ``k + 0.5`` needs the error, to tell a true tie
    (round to even) from a value just above or below it.
    """
    z = v * 64.0
    t = z * 134217729.0  # 2^27 + 1: Veltkamp's split
    high = t - (t - z)
    low = z - high
    product = z * 15625.0
    error = (high * 15625.0 - product) + low * 15625.0
    whole = np.floor(product)
    fraction = product - whole
    rounded = np.int64(whole)
    if fraction > 0.5 or (fraction == 0.5 and (error > 0 or (error == 0 and rounded % 2 == 1))):
        rounded += 1
    return rounded


@njit(cache=True, nogil=True)
def format_numbers(values, out, sizes, is_python, lo, hi):  # type: ignore[no-untyped-def]
    """``repr(round(v, 6))`` of each value into ``out[i, :sizes[i]]``; ``null`` for NaN.

    Values this kernel cannot format exactly are flagged in ``is_python``.
    """
    for i in range(lo, hi):
        v = values[i]
        if np.isnan(v):
            out[i, 0] = 110
            out[i, 1] = 117
            out[i, 2] = 108
            out[i, 3] = 108
            sizes[i] = 4
            is_python[i] = False
            continue
        if v == 0.0 and math.copysign(1.0, v) > 0.0:  # -0.0 is Python's to write
            out[i, 0] = 48
            out[i, 1] = 46
            out[i, 2] = 48
            sizes[i] = 3
            is_python[i] = False
            continue
        if not (1e-4 <= v < LARGEST):
            sizes[i] = 0
            is_python[i] = True
            continue
        sizes[i] = _put_number(_round_millionths(v), out[i], 0)
        is_python[i] = False


@njit(cache=True, nogil=True)
def pair_lines(  # type: ignore[no-untyped-def]
    data, offsets, quoted, first, second, numbers, number_sizes, parts, part_bounds, tail_of,
    out, out_offsets, lo, hi,
):  # fmt: skip
    r"""Lines ``lo .. hi - 1`` of ``pairs.jsonl``: ``{"a": A, "b": B, "similarity": S, ...}``.

    The ids are JSON strings (``quoted``), or written as they are (numbers). ``parts`` holds
    the constant pieces, piece ``p`` at ``part_bounds[p] .. part_bounds[p + 1]``: ``{"a": ``,
    ``, "b": ``, then the key before each column of ``numbers`` (``, "similarity": ``,
    ``, "estimate": ``, ...), then the line endings (``, "identical": false}\n``, ...), of
    which line ``i`` takes number ``tail_of[i]``. ``numbers[i, c]`` holds pair ``i``'s formatted
    value of column ``c`` (its size in ``number_sizes[i, c]``).
    """
    columns = numbers.shape[1]
    for i in range(lo, hi):
        a, b = first[i], second[i]
        o = _put_part(parts, part_bounds, 0, out, out_offsets[i])
        o = _put_id(data, offsets[a], offsets[a + 1], quoted, out, o)
        o = _put_part(parts, part_bounds, 1, out, o)
        o = _put_id(data, offsets[b], offsets[b + 1], quoted, out, o)
        for c in range(columns):
            o = _put_part(parts, part_bounds, 2 + c, out, o)
            for j in range(number_sizes[i, c]):
                out[o + j] = numbers[i, c, j]
            o += number_sizes[i, c]
        _put_part(parts, part_bounds, 2 + columns + tail_of[i], out, o)
