"""UTF-8 encoding and decoding of one code point, shared by the kernels that read or write text."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def put_code_point(out, o, cp):  # type: ignore[no-untyped-def]
    """Write ``cp`` as UTF-8 at ``out[o]``; return the new position."""
    if cp < 0x80:
        out[o] = cp
        return o + 1
    if cp < 0x800:
        out[o] = 0xC0 | (cp >> 6)
        out[o + 1] = 0x80 | (cp & 0x3F)
        return o + 2
    if cp < 0x10000:
        out[o] = 0xE0 | (cp >> 12)
        out[o + 1] = 0x80 | ((cp >> 6) & 0x3F)
        out[o + 2] = 0x80 | (cp & 0x3F)
        return o + 3
    out[o] = 0xF0 | (cp >> 18)
    out[o + 1] = 0x80 | ((cp >> 12) & 0x3F)
    out[o + 2] = 0x80 | ((cp >> 6) & 0x3F)
    out[o + 3] = 0x80 | (cp & 0x3F)
    return o + 4


@njit(cache=True, nogil=True, inline="always")
def decode_code_point(buf, i):  # type: ignore[no-untyped-def]
    """The code point of the multi-byte UTF-8 sequence at ``buf[i]``, and its size."""
    b0 = buf[i]
    if b0 < 0xE0:
        return (np.int64(b0 & 0x1F) << 6) | np.int64(buf[i + 1] & 0x3F), 2
    if b0 < 0xF0:
        cp = (
            (np.int64(b0 & 0x0F) << 12)
            | (np.int64(buf[i + 1] & 0x3F) << 6)
            | np.int64(buf[i + 2] & 0x3F)
        )
        return cp, 3
    cp = (
        (np.int64(b0 & 0x07) << 18)
        | (np.int64(buf[i + 1] & 0x3F) << 12)
        | (np.int64(buf[i + 2] & 0x3F) << 6)
        | np.int64(buf[i + 3] & 0x3F)
    )
    return cp, 4
