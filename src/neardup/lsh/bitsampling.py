"""Bit sampling (seed 002): LSH for Hamming distance, and through a unary code for L1.

Candidates for the ``hamming`` and ``l1`` joins (:data:`neardup.kinds.METRICS`). An elementary
hash of :class:`BitSampler` is one bit of the string at a random position, so two strings
``d`` bits apart agree with probability ``1 - d / N``. :class:`UnaryBitSampler` samples a
bit of the unary code of integer vectors in ``[0, C]``, whose Hamming distance is their L1
distance, without ever writing the code down. Both are amplified into band keys
(:class:`~neardup.lsh.family.AmplifiedHasher`): ``num_rows`` sampled bits per band, packed
64 to a word (:func:`band_bit_words`) and mixed into one key.

Bit strings travel packed: ``uint64[n, ceil(N / 64)]``, bit ``j`` of a row being bit
``j % 64`` (least significant first) of word ``j // 64`` (:func:`pack_bits`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from neardup._kernels.projections import pack_band_bits
from neardup._types import BoolArray, F64Array, U64Array
from neardup.errors import ParameterError
from neardup.io.vectors import pack_bits, unpack_bits
from neardup.lsh.family import AmplifiedHasher
from neardup.params import JoinSpec

__all__ = ["BitSampler", "UnaryBitSampler", "band_bit_words", "pack_bits", "unpack_bits"]


def band_bit_words(bits: BoolArray, num_bands: int, num_rows: int) -> U64Array:
    """Each band's ``num_rows`` bits packed 64 to a word: ``uint64[n, num_bands * w]``.

    ``bits`` is ``bool[n, num_bands * num_rows]``, band ``j`` in columns ``j r .. j r + r - 1``;
    a band takes ``w = ceil(num_rows / 64)`` words, its bit ``t`` being bit ``t % 64`` of word
    ``t // 64``. Two rows have equal words in a band exactly when all its bits agree.

    Examples
    --------
    >>> bits = np.array([[True, False, True, True, False, False]])
    >>> band_bit_words(bits, num_bands=2, num_rows=3).tolist()
    [[5, 1]]
    """
    words = np.empty((bits.shape[0], num_bands * ((num_rows + 63) // 64)), dtype=np.uint64)
    pack_band_bits(np.ascontiguousarray(bits, dtype=np.bool_), num_bands, num_rows, words)
    return words


class BitSampler(AmplifiedHasher):
    """Bit sampling for Hamming distance (seed 002, "Hamming distance and bit sampling").

    An elementary hash is the bit at a random position ``i`` of the ``N``-bit string,
    ``h_i(x) = x_i``; positions are drawn uniformly, independently (with replacement, as the
    seed's family does), ``num_bands * num_rows`` of them once from ``spec.seed``. A band
    packs its ``num_rows`` sampled bits (seed 002's ``g_l(x)`` in ``{0, 1}^k``, ``k`` =
    ``num_rows``, ``L`` = ``num_bands``) and mixes them into one key.

    Parameters
    ----------
    spec
        A :class:`~neardup.params.JoinSpec` with ``metric="hamming"``.
    dim
        *N*, the bits of every string.
    num_bands, num_rows
        *b* and *r* (the seed's *L* and *k*).
    max_value
        Unused (bit strings have no range to set).

    Attributes
    ----------
    positions
        ``int64[num_bands * num_rows]``: the sampled bit of each elementary hash, band by band.

    Notes
    -----
    :meth:`keys` takes ``uint64[n, ceil(N / 64)]`` packed bits (:func:`pack_bits`); the bits
    of the last word beyond ``N`` are never read. A pair ``d`` bits apart agrees on one
    sampled bit with probability ``1 - d / N``, so the family is ``(r, c r, 1 - r / N,
    1 - c r / N)``-sensitive for any ``r`` and ``c > 1``. Cost: ``O(b r)`` per string.

    Examples
    --------
    >>> spec = JoinSpec(metric="hamming", threshold=3)
    >>> sampler = BitSampler(spec, 128, num_bands=4, num_rows=8)
    >>> bits = np.zeros((2, 128), dtype=np.uint8)
    >>> bits[1, 5] = 1
    >>> keys = sampler.keys(pack_bits(bits))
    >>> keys.shape, keys.dtype
    ((2, 4), dtype('uint64'))
    >>> BitSampler.collision_probability(np.array([0.0, 32.0, 128.0]), spec, 128).tolist()
    [1.0, 0.75, 0.0]
    """

    metric = "hamming"
    _tag: ClassVar[int] = 102

    def __init__(
        self,
        spec: JoinSpec,
        dim: int,
        *,
        num_bands: int,
        num_rows: int,
        max_value: int | None = None,
    ) -> None:
        super().__init__(spec, dim, num_bands=num_bands, num_rows=num_rows, max_value=max_value)
        self.positions = self._rng.integers(0, dim, size=self.num_hashes, dtype=np.int64)

    @classmethod
    def collision_probability(
        cls, value: float | F64Array, spec: JoinSpec, dim: int, max_value: int | None = None
    ) -> float | F64Array:
        """``1 - d / N``: the chance one sampled bit agrees on strings ``d`` bits apart.

        Examples
        --------
        Seed 002: at ``d = N/3`` the bit agrees with probability 2/3.

        >>> spec = JoinSpec(metric="hamming", threshold=40)
        >>> round(BitSampler.collision_probability(40, spec, 120), 4)
        0.6667
        """
        d = cls._domain(value, 0.0, float(dim), "Hamming distance")
        p = 1.0 - d / dim
        return float(p) if p.ndim == 0 else p

    def _rows(self, vectors: Any) -> NDArray[Any]:
        words = (self.dim + 63) // 64
        array = self._matrix(vectors, words, f"{self.dim} bits packed 64 to a uint64 word")
        if array.dtype != np.uint64:
            raise ParameterError(
                f"BitSampler.keys needs packed bits, uint64[n, {words}]; got dtype "
                f"{array.dtype} (pack 0/1 arrays with neardup.lsh.pack_bits)."
            )
        return array

    def _band_words(self, chunk: NDArray[Any]) -> U64Array:
        shifts = (self.positions & 63).astype(np.uint64)
        bits = (chunk[:, self.positions >> 6] >> shifts) & np.uint64(1)
        return band_bit_words(bits.astype(np.bool_), self.num_bands, self.num_rows)


class UnaryBitSampler(AmplifiedHasher):
    """Bit sampling of the unary code: LSH for L1 distance (seed 002, "From Hamming to L1").

    Write each coordinate ``x_i`` in ``[0, C]`` as ``C`` bits, bit ``t`` (``0 <= t < C``)
    being 1 exactly when ``x_i > t``; the L1 distance of two vectors is the Hamming distance of
    their ``C * dim``-bit codes. An elementary hash samples one bit of that code: a pair
    ``(i, t)`` drawn uniformly over the ``C * dim`` bits, hashing ``x`` to ``x_i > t``. The code
    is never written down: a bit is one comparison, so the memory is that of the vectors and
    the ``num_bands * num_rows`` sampled pairs, independent of ``C``; wide ranges cost nothing.

    Parameters
    ----------
    spec
        A :class:`~neardup.params.JoinSpec` with ``metric="l1"`` and ``family="unary"``.
    dim
        The coordinates of every vector.
    num_bands, num_rows
        *b* and *r*.
    max_value
        *C* when ``spec.max_value`` is ``None`` (the largest coordinate of the data); one of
        the two is required, and ``spec.max_value`` wins.

    Attributes
    ----------
    max_value
        *C*, the range in use.
    coordinates, levels
        ``int64[num_bands * num_rows]``: the sampled bit ``(i, t)`` of each elementary hash.

    Notes
    -----
    :meth:`keys` takes integers ``(n, dim)`` of any integer dtype, each in ``[0, C]`` (a value
    outside is a :class:`~neardup.errors.ParameterError` naming it). Other data are brought
    into range first: shift by the minimum (``x - x.min()``; L1 distances do not change), and
    quantise reals to a step ``s`` (``np.rint((x - x.min()) / s)``: distances are then in units
    of ``s``, off by at most ``s`` per coordinate); ``C`` is the largest value after that. A pair
    at L1 distance ``d`` agrees on one sampled bit with probability ``1 - d / (C dim)``.

    Examples
    --------
    >>> spec = JoinSpec(metric="l1", threshold=4, family="unary", max_value=16)
    >>> sampler = UnaryBitSampler(spec, 3, num_bands=2, num_rows=4)
    >>> sampler.keys(np.array([[0, 16, 3], [0, 16, 3]])).shape
    (2, 2)
    >>> UnaryBitSampler.collision_probability(12.0, spec, 3)
    0.75
    """

    metric = "l1"
    needs_max_value = True
    _tag: ClassVar[int] = 103

    def __init__(
        self,
        spec: JoinSpec,
        dim: int,
        *,
        num_bands: int,
        num_rows: int,
        max_value: int | None = None,
    ) -> None:
        super().__init__(spec, dim, num_bands=num_bands, num_rows=num_rows, max_value=max_value)
        self.max_value: int = self._range(spec, max_value)
        flat = self._rng.integers(0, self.max_value * dim, size=self.num_hashes, dtype=np.int64)
        self.coordinates = flat // self.max_value
        self.levels = flat % self.max_value

    @staticmethod
    def _range(spec: JoinSpec, max_value: int | None) -> int:
        """*C*: ``spec.max_value``, else ``max_value``; an int >= 1."""
        value = spec.max_value if spec.max_value is not None else max_value
        if value is None:
            raise ParameterError(
                "UnaryBitSampler needs the coordinates' range C: set JoinSpec.max_value, or "
                "pass max_value (the largest coordinate of the data)."
            )
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ParameterError(f"UnaryBitSampler max_value must be an int >= 1; got {value!r}.")
        return int(value)

    @classmethod
    def collision_probability(
        cls, value: float | F64Array, spec: JoinSpec, dim: int, max_value: int | None = None
    ) -> float | F64Array:
        """``1 - d / (C dim)``: the chance one sampled unary bit agrees at L1 distance ``d``."""
        top = cls._range(spec, max_value) * dim
        d = cls._domain(value, 0.0, float(top), "L1 distance")
        p = 1.0 - d / top
        return float(p) if p.ndim == 0 else p

    def _rows(self, vectors: Any) -> NDArray[Any]:
        array = self._matrix(vectors, self.dim, "coordinates")
        if not np.issubdtype(array.dtype, np.integer):
            raise ParameterError(
                f"UnaryBitSampler.keys needs integer coordinates in [0, {self.max_value}]; got "
                f"dtype {array.dtype} (shift by the minimum and quantise reals, e.g. "
                "np.rint((x - x.min()) / step).astype(np.int64))."
            )
        return array

    def _check_chunk(self, chunk: NDArray[Any], start: int) -> None:
        if chunk.size == 0:
            return
        outside = (chunk < 0) | (chunk > self.max_value)
        if np.any(outside):
            row, column = (int(i[0]) for i in np.nonzero(outside))
            raise ParameterError(
                f"UnaryBitSampler.keys needs coordinates in [0, {self.max_value}] (C); got "
                f"{chunk[row, column]} at row {start + row}, column {column}."
            )

    def _band_words(self, chunk: NDArray[Any]) -> U64Array:
        bits = chunk[:, self.coordinates] > self.levels
        return band_bit_words(bits, self.num_bands, self.num_rows)
