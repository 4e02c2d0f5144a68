"""Numba kernels for Rabin fingerprints: table-driven arithmetic modulo a degree-64 polynomial.

A fingerprint is ``A(t) mod P(t)`` over GF(2), where the bits of a byte string are the
coefficients of ``A`` (first byte highest) and ``P`` is irreducible of degree 64 (Rabin 1981;
seed 003 §2). A residue fits in 64 bits. The tables are built in :mod:`neardup.hashing.rabin`:

* ``tables[0][v] = v(t) * t^64 mod P``: appending a byte costs one lookup, one shift and one
  xor, ``f' = (f << 8) ^ byte ^ tables[0][f >> 56]``;
* ``tables[1 + j][v] = v(t) * t^(8 j) * t^(8 w) mod P`` for ``j = 0..7``: the contribution of
  the bytes of a 64-bit value that leaves a sliding window ``w`` bytes later.

The token and shingle kernels in ``tokens.py`` call (and inline) the step functions here; after
changing them run ``make clean`` (numba's cache does not track callees in other files, see
``mix``).
"""

from __future__ import annotations

from numba import njit, uint64


@njit(cache=True, nogil=True, inline="always")
def push_byte(f, byte, shift_table):  # type: ignore[no-untyped-def]
    """``f(A . byte)`` from ``f(A)``: the extension property, one byte at a time."""
    return (f << uint64(8)) ^ byte ^ shift_table[f >> uint64(56)]


@njit(cache=True, nogil=True, inline="always")
def push_word(f, word, shift_table):  # type: ignore[no-untyped-def]
    """``f(A . w)`` for an 8-byte symbol ``w`` (already below degree 64): eight byte shifts."""
    for _ in range(8):
        f = (f << uint64(8)) ^ shift_table[f >> uint64(56)]
    return f ^ word


@njit(cache=True, nogil=True, inline="always")
def outgoing(word, tables):  # type: ignore[no-untyped-def]
    """``word(t) * t^(8 w) mod P`` by eight lookups in ``tables[1:9]`` (w fixed by the tables)."""
    out = uint64(0)
    for j in range(8):
        out ^= tables[1 + j, (word >> uint64(8 * j)) & uint64(0xFF)]
    return out


@njit(cache=True, nogil=True)
def fingerprints(buf, offsets, shift_table, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[d]`` = the fingerprint of ``buf[offsets[d]:offsets[d + 1]]``. Cost: O(bytes).

    For the strings ``lo .. hi - 1`` (blocks run in threads at once:
    ``neardup._parallel.in_blocks``).
    """
    for d in range(lo, hi):
        f = uint64(0)
        for i in range(offsets[d], offsets[d + 1]):
            f = push_byte(f, uint64(buf[i]), shift_table)
        out[d] = f


@njit(cache=True, nogil=True)
def window_fingerprints(buf, width, shift_table, drop_table, out):  # type: ignore[no-untyped-def]
    """``out[i]`` = the fingerprint of ``buf[i:i + width]``, in one pass over ``buf``.

    ``drop_table[v] = v(t) * t^(8 width) mod P`` removes the byte leaving the window: each step
    is two lookups and three xors. Cost: O(bytes).
    """
    f = uint64(0)
    for i in range(buf.shape[0]):
        f = push_byte(f, uint64(buf[i]), shift_table)
        if i >= width:
            f ^= drop_table[buf[i - width]]
        if i >= width - 1:
            out[i - width + 1] = f
