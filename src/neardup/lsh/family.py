"""The LSH families over vectors (seed 002, MMDS §3.6-3.7), and the part amplified ones share.

A family is a maker: built from a :class:`~neardup.params.JoinSpec`, the data's width and the
amplification (``num_bands`` bands of ``num_rows`` elementary hashes), it draws its random
parameters once from the seed and turns a batch of vectors into one ``uint64`` key per band.
Two items share a band's key when all ``num_rows`` of that band's elementary hashes agree
(r-way AND); they are candidates when any band agrees (b-way OR).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from neardup._types import F64Array, U64Array
from neardup.errors import ParameterError
from neardup.hashing.bands import band_keys
from neardup.lsh.amplify import Amplification, is_count
from neardup.params import JoinSpec

__all__ = ["AmplifiedHasher", "VectorHasher"]


class VectorHasher(ABC):
    """An LSH family over fixed-width vectors, amplified into band keys.

    Parameters
    ----------
    spec
        The join's spec (metric, threshold, seed and the family's own fields).
    dim
        The width of every vector (bits for Hamming, coordinates otherwise).
    num_bands, num_rows
        *b* and *r*: ``num_bands * num_rows`` elementary hashes are drawn.
    max_value
        The largest coordinate (``l1``'s *C* when the spec gives none).
    """

    metric: str
    needs_max_value: ClassVar[bool] = False
    """Whether the family hashes values in ``[0, C]`` only, and so needs ``C``."""

    def __init__(
        self,
        spec: JoinSpec,
        dim: int,
        *,
        num_bands: int,
        num_rows: int,
        max_value: int | None = None,
    ) -> None:
        self.spec = spec
        self.dim = dim
        self.num_bands = num_bands
        self.num_rows = num_rows
        self.max_value = max_value

    @classmethod
    @abstractmethod
    def collision_probability(
        cls, value: float | F64Array, spec: JoinSpec, dim: int, max_value: int | None = None
    ) -> float | F64Array:
        """The chance one elementary hash agrees on two items at this similarity or distance."""

    @abstractmethod
    def keys(self, vectors: Any) -> U64Array:
        """``uint64[num_items, num_bands]``: each band's ``num_rows`` hashes mixed into one key."""


class AmplifiedHasher(VectorHasher):
    """A vector family amplified into band keys: ``num_rows``-way AND, ``num_bands``-way OR.

    The part every family over vectors shares. It checks the spec's metric and the sizes,
    seeds the family's random generator from ``spec.seed`` (and the family's own tag, so two
    families never share draws), and :meth:`keys` validates the input, hashes it in chunks of
    rows (the memory stays bounded whatever the number of items) and mixes each band's
    elementary hashes into one key with :func:`~neardup.hashing.bands.band_keys`. A
    subclass says how to check its input (:meth:`_rows`, :meth:`_check_chunk`) and how to
    turn a chunk into each band's elementary hash words (:meth:`_band_words`).

    Attributes
    ----------
    amplification
        ``Amplification.bands(num_bands, num_rows)``.
    """

    _tag: ClassVar[int]
    """Mixed into the seed of the family's draws (never change one: keys depend on it)."""
    _chunk_bytes: ClassVar[int] = 32 << 20
    """Working memory of one chunk: its copy, projections and words."""

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
        name = type(self).__name__
        if spec.metric != self.metric:
            raise ParameterError(
                f"{name} hashes metric {self.metric!r}; got JoinSpec.metric {spec.metric!r}."
            )
        if not is_count(dim):
            raise ParameterError(f"{name} dim must be an int >= 1; got {dim!r}.")
        for field, value in (("num_bands", num_bands), ("num_rows", num_rows)):
            if not is_count(value):
                raise ParameterError(f"{name} {field} must be an int >= 1; got {value!r}.")
        self.amplification = Amplification.bands(num_bands, num_rows)
        self._rng = np.random.default_rng([spec.seed, self._tag])

    @property
    def num_hashes(self) -> int:
        """Elementary hashes drawn: ``num_bands * num_rows``."""
        return self.num_bands * self.num_rows

    def keys(self, vectors: Any, *, chunk_rows: int | None = None) -> U64Array:
        """``uint64[num_items, num_bands]``: each band's ``num_rows`` hashes mixed into one key.

        Two items share band ``j``'s key when all ``num_rows`` of its elementary hashes agree
        (up to 64-bit key collisions, probability ``2^-64`` a pair). The keys depend on the
        seed and the items, and on ``chunk_rows`` only through the last bits of the BLAS
        projections (cosine, L2): an item within about ``1e-16`` (relative) of a hyperplane or
        a bucket edge may fall on either side depending on the chunk's shape. Sampled bits
        (Hamming, L1) never depend on it.

        Parameters
        ----------
        vectors
            ``(num_items, columns)``, as the family's docstring says.
        chunk_rows
            Rows hashed at once; ``None``: as many as fit in 32 MiB of working memory.
        """
        rows = self._rows(vectors)
        if chunk_rows is not None and not is_count(chunk_rows):
            raise ParameterError(
                f"{type(self).__name__}.keys chunk_rows must be None or an int >= 1; "
                f"got {chunk_rows!r}."
            )
        row_bytes = 8 * (rows.shape[1] + 3 * self.num_hashes)
        step = chunk_rows or max(1, self._chunk_bytes // row_bytes)
        out = np.empty((rows.shape[0], self.num_bands), dtype=np.uint64)
        for start in range(0, rows.shape[0], step):
            chunk = rows[start : start + step]
            self._check_chunk(chunk, start)
            words = self._band_words(chunk)
            out[start : start + chunk.shape[0]] = band_keys(
                words, self.num_bands, words.shape[1] // self.num_bands
            )
        return out

    def _matrix(self, vectors: Any, columns: int, what: str) -> NDArray[Any]:
        """``vectors`` as a 2-D array of ``columns`` columns (else a :class:`ParameterError`)."""
        array = np.asarray(vectors)
        if array.ndim != 2 or array.shape[1] != columns:
            raise ParameterError(
                f"{type(self).__name__}.keys needs a 2-D array of {columns} columns ({what}); "
                f"got shape {array.shape}."
            )
        return array

    def _float_matrix(self, vectors: Any) -> NDArray[np.floating[Any]]:
        """``vectors`` as a 2-D float array of ``dim`` columns (integers are refused)."""
        array = self._matrix(vectors, self.dim, "coordinates")
        if not np.issubdtype(array.dtype, np.floating):
            raise ParameterError(
                f"{type(self).__name__}.keys needs float32 or float64 vectors; got dtype "
                f"{array.dtype} (convert with .astype(np.float64))."
            )
        return array

    def _check_finite(self, chunk: NDArray[np.floating[Any]], start: int) -> None:
        """Refuse NaN and infinite coordinates, naming the first one."""
        finite = np.isfinite(chunk)
        if not np.all(finite):
            row, column = (int(i[0]) for i in np.nonzero(~finite))
            raise ParameterError(
                f"{type(self).__name__}.keys needs finite coordinates; got {chunk[row, column]} "
                f"at row {start + row}, column {column}."
            )

    @staticmethod
    def _domain(value: float | ArrayLike, low: float, high: float, what: str) -> F64Array:
        """``value`` as float64, each in ``[low, high]`` (else a :class:`ParameterError`)."""
        array = np.asarray(value, dtype=np.float64)
        inside = (array >= low) & (array <= high)
        if not np.all(inside):
            bad = float(array[~inside].reshape(-1)[0])
            raise ParameterError(f"A {what} must be in [{low:g}, {high:g}]; got {bad!r}.")
        return array

    @abstractmethod
    def _rows(self, vectors: Any) -> NDArray[Any]:
        """The input as a 2-D array of the family's dtype and width, or a ParameterError."""

    def _check_chunk(self, chunk: NDArray[Any], start: int) -> None:
        """Refuse values the family cannot hash; rows are numbered from ``start``."""

    @abstractmethod
    def _band_words(self, chunk: NDArray[Any]) -> U64Array:
        """``uint64[rows, num_bands * w]``: each band's elementary hashes as ``w`` words."""
