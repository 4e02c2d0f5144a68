"""Numba kernel of the bit-valued LSH families over vectors: a band's bits packed into words.

Random hyperplanes (the sign of a projection), bit sampling and the bit sampling of a unary
code (seed 002) each give ``num_rows`` elementary bits per band; this packs them, 64 to a word,
so that :func:`neardup.hashing.bands.band_keys` mixes each band's words into one key. The
projections themselves are BLAS matrix products in the typed wrappers (``neardup.lsh``).
"""

from __future__ import annotations

from numba import njit, uint64


@njit(cache=True, nogil=True)
def pack_band_bits(bits, num_bands, num_rows, out):  # type: ignore[no-untyped-def]
    """``out[d, j * w + k]``: bits ``64 k .. 64 k + 63`` of band ``j`` of row ``d``, LSB first.

    ``bits`` is ``bool[rows, num_bands * num_rows]``, band ``j`` holding columns
    ``j * r .. j * r + r - 1`` (``num_rows`` is *r*, the AND of MMDS §3.6.3); ``out`` is
    ``uint64[rows, num_bands * w]`` with ``w = ceil(r / 64)`` words per band: bit ``t`` of a
    band is bit ``t % 64`` of its word ``t // 64`` and unused high bits are 0, so two rows
    have equal words in a band exactly when all ``r`` bits agree. Cost: O(b * r) per row.
    """
    words = (num_rows + 63) // 64
    for d in range(bits.shape[0]):
        for j in range(num_bands):
            base = j * words
            for k in range(words):
                out[d, base + k] = 0
            for t in range(num_rows):
                if bits[d, j * num_rows + t]:
                    out[d, base + (t >> 6)] |= uint64(1) << uint64(t & 63)
