"""Numba kernels over byte spans: documents as ``(buffer, offsets)``, gathered and measured.

Every text in the flow is UTF-8 bytes plus ``int64`` offsets (document ``d`` is
``buf[offsets[d]:offsets[d + 1]]``); these kernels move such spans around and count their
characters without a Python object per document.
"""

from __future__ import annotations

from numba import njit, prange


@njit(cache=True, nogil=True, parallel=True)
def gather_spans(first, second, use_second, starts, lengths, out, out_offsets):  # type: ignore[no-untyped-def]
    """Pack spans of two byte buffers into ``out``.

    Item ``r`` comes from ``second`` when ``use_second[r]``, else from ``first``, at
    ``starts[r]`` for ``lengths[r]`` bytes. ``out_offsets`` (the prefix sums of ``lengths``)
    says where each item goes. Cost: O(bytes).
    """
    for r in prange(starts.shape[0]):
        source = second if use_second[r] else first
        base = out_offsets[r]
        s = starts[r]
        for j in range(lengths[r]):
            out[base + j] = source[s + j]


@njit(cache=True, nogil=True, parallel=True)
def text_stats(buf, offsets, chars, is_ascii, has_nul):  # type: ignore[no-untyped-def]
    """Per document: characters, whether every byte is ASCII, whether a NUL byte occurs.

    Characters are the bytes that do not continue a UTF-8 sequence. Cost: O(bytes).
    """
    for d in prange(offsets.shape[0] - 1):
        count = 0
        high = False
        nul = False
        for i in range(offsets[d], offsets[d + 1]):
            b = buf[i]
            if b & 0xC0 != 0x80:
                count += 1
            if b >= 0x80:
                high = True
            if b == 0:
                nul = True
        chars[d] = count
        is_ascii[d] = not high
        has_nul[d] = nul
