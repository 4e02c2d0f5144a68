"""Numba kernels over byte spans: documents as ``(buffer, offsets)``, gathered and measured.

Every text in the flow is UTF-8 bytes plus ``int64`` offsets (document ``d`` is
``buf[offsets[d]:offsets[d + 1]]``); these kernels move such spans around and count their
characters without a Python object per document.
"""

from __future__ import annotations

from numba import njit, uint64

from neardup._kernels.mix import fmix64


@njit(cache=True, nogil=True)
def gather_spans(first, second, use_second, starts, lengths, out, out_offsets, lo, hi):  # type: ignore[no-untyped-def]
    """Pack spans ``lo .. hi - 1`` of two byte buffers into ``out``.

    Item ``r`` comes from ``second`` when ``use_second[r]``, else from ``first``, at
    ``starts[r]`` for ``lengths[r]`` bytes. ``out_offsets`` (the prefix sums of ``lengths``)
    says where each item goes. Cost: O(bytes).
    """
    for r in range(lo, hi):
        base = out_offsets[r]
        s = starts[r]
        n = lengths[r]
        if use_second[r]:  # slices: copied as memcpy (13x a byte loop), and compiled sooner
            out[base : base + n] = second[s : s + n]
        else:
            out[base : base + n] = first[s : s + n]


@njit(cache=True, nogil=True)
def text_stats(buf, offsets, chars, is_ascii, lo, hi):  # type: ignore[no-untyped-def]
    """Per document ``lo .. hi - 1``: characters, and whether every byte is ASCII.

    Characters are the bytes that do not continue a UTF-8 sequence. Cost: O(bytes).
    """
    for d in range(lo, hi):
        chars[d], is_ascii[d] = span_stats(buf, offsets[d], offsets[d + 1])


@njit(cache=True, nogil=True, inline="always")
def span_stats(buf, start, stop):  # type: ignore[no-untyped-def]
    """Characters of the UTF-8 text ``buf[start:stop]``, and whether it is all ASCII."""
    continuations = 0
    high = 0
    for i in range(start, stop):
        b = buf[i]
        continuations += (b & 0xC0) == 0x80
        high |= b
    return stop - start - continuations, high < 0x80


@njit(cache=True, nogil=True)
def span_hashes(buf, offsets, out, lo, hi):  # type: ignore[no-untyped-def]
    """``out[r]``: two 64-bit hashes of the bytes of item ``r``, for ``r`` in ``lo .. hi - 1``.

    FNV-1a and a multiply-xor chain of another odd multiplier, each finalised by fmix64: equal
    items hash equal (different ones rarely do; callers compare the bytes of a match).
    Cost: O(bytes).
    """
    for r in range(lo, hi):
        a = uint64(0xCBF29CE484222325)
        b = uint64(0x84222325CBF29CE4)
        for i in range(offsets[r], offsets[r + 1]):
            a = (a ^ uint64(buf[i])) * uint64(0x100000001B3)
            b = (b ^ uint64(buf[i])) * uint64(0x9E3779B97F4A7C15)
        n = uint64(offsets[r + 1] - offsets[r])
        out[r, 0] = fmix64(a ^ n)
        out[r, 1] = fmix64(b + n)
