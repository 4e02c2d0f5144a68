"""p-stable projections into buckets (seed 002, "LSH for L2"): LSH for L2 and for L1 distance.

Candidates for the ``l2`` join, and for ``l1`` by its default family
(:data:`neardup.kinds.METRICS`). An elementary hash projects a
vector onto a random line, shifts it by a random offset and cuts the line into buckets of
width ``w``: ``h(x) = floor((a · x + b) / w)`` with ``a ~ N(0, I)`` and ``b ~ U[0, w)``
(Datar, Immorlica, Indyk and Mirrokni 2004). The Gaussian is 2-stable: ``a · x - a · y`` is
distributed as ``|x - y|_2`` times a standard normal, so the chance of a shared bucket depends
on the distance only; the Cauchy distribution is 1-stable, and does the same for L1
(:class:`CauchyHasher`). ``num_rows`` bucket numbers make a band, mixed into one key
(:class:`~neardup.lsh.family.AmplifiedHasher`).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from neardup._types import F64Array, U64Array
from neardup.errors import ParameterError
from neardup.lsh.family import AmplifiedHasher
from neardup.params import JoinSpec

__all__ = ["CauchyHasher", "PStableHasher", "bucket_width"]

WIDTH_PER_THRESHOLD = 4.0
"""The default bucket width, in units of the threshold distance (E2LSH's ``w = 4``)."""

WIDTH_AT_ZERO = 1.0
"""The default bucket width when the threshold is 0 (only identical vectors are wanted)."""

_LARGEST_BUCKET = 2.0**62
"""Bucket numbers must stay below this in magnitude (they are stored as int64)."""


def bucket_width(spec: JoinSpec) -> float:
    """The width *w* of the buckets: ``spec.bucket_width``, else 4 times the threshold.

    Notes
    -----
    Datar et al. (2004, Fig. 1-2) show that ``rho = log(1/p1) / log(1/p2)``, which sets the
    work of LSH at a given recall, falls steeply as ``w`` grows to about 4 times the radius and
    is nearly flat beyond; E2LSH (Andoni and Indyk) fixes ``w = 4`` with distances in units of
    the radius. So ``w = 4 r`` for threshold ``r``: a pair at the threshold shares a bucket of
    one line with probability 0.80, and one at ``4 r`` with probability 0.37. A threshold of
    0 asks for identical vectors, which share every bucket whatever ``w`` is; the width then
    only sets how many other pairs collide, and without a scale it is 1.0 (the data's unit):
    give ``JoinSpec.bucket_width`` on the data's own scale there.

    Examples
    --------
    >>> bucket_width(JoinSpec(metric="l2", threshold=0.5))
    2.0
    >>> bucket_width(JoinSpec(metric="l2", threshold=0.5, bucket_width=3.0))
    3.0
    >>> bucket_width(JoinSpec(metric="l2", threshold=0.0))
    1.0
    """
    if spec.bucket_width is not None:
        return float(spec.bucket_width)
    if spec.threshold > 0:
        return WIDTH_PER_THRESHOLD * float(spec.threshold)
    return WIDTH_AT_ZERO


_erf = np.vectorize(math.erf, otypes=[np.float64])


class PStableHasher(AmplifiedHasher):
    """p-stable (Gaussian) LSH for Euclidean distance (seed 002; Datar et al. 2004).

    ``num_bands * num_rows`` lines ``a ~ N(0, I_dim)`` and offsets ``b ~ U[0, w)`` are drawn
    once from ``spec.seed``; the elementary hash of ``x`` is the bucket ``floor((a · x + b) /
    w)`` (seed 002's randomly oriented line cut into segments of width ``a``, here *w*).

    Parameters
    ----------
    spec
        A :class:`~neardup.params.JoinSpec` with ``metric="l2"``; its ``bucket_width`` (or
        the default of :func:`bucket_width`) is *w*.
    dim
        The coordinates of every vector.
    num_bands, num_rows
        *b* and *r*.
    max_value
        Unused.

    Attributes
    ----------
    width
        *w*.
    lines, offsets
        ``float64[num_bands * num_rows, dim]`` and ``float64[num_bands * num_rows]``: each
        elementary hash's ``a`` and ``b``, band ``j`` owning ``j r .. j r + r - 1``.

    Notes
    -----
    :meth:`keys` takes float32 or float64 vectors ``(n, dim)``, all finite, whose bucket
    numbers stay below ``2^62`` in magnitude. The projections are one BLAS matrix product per
    chunk of rows, in float64; keys do not depend on the chunking nor on the number of
    threads, up to the rounding of that product, which can only move a vector lying within
    about ``1e-16`` (relative) of a bucket's edge. Cost: ``O(dim b r)`` per vector.

    Examples
    --------
    >>> spec = JoinSpec(metric="l2", threshold=1.0)
    >>> hasher = PStableHasher(spec, 2, num_bands=3, num_rows=2)
    >>> hasher.width
    4.0
    >>> keys = hasher.keys(np.array([[0.0, 0.0], [0.0, 0.0], [100.0, 0.0]]))
    >>> bool(np.all(keys[0] == keys[1])), bool(np.any(keys[0] == keys[2]))
    (True, False)
    """

    metric = "l2"
    _tag: ClassVar[int] = 104

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
        self.width = bucket_width(spec)
        self.lines = self._lines(dim)
        self.offsets = self._rng.uniform(0.0, self.width, size=self.num_hashes)

    @classmethod
    def collision_probability(
        cls, value: float | F64Array, spec: JoinSpec, dim: int, max_value: int | None = None
    ) -> float | F64Array:
        """The chance one line puts two vectors at distance ``c`` into the same bucket.

        With ``u = w / c`` (Datar et al. 2004, §3.2, for the Gaussian)::

            p(c) = 1 - 2 Φ(-u) - 2 / (sqrt(2π) u) (1 - exp(-u² / 2)),   p(0) = 1

        computed as ``erf(u / sqrt 2) - sqrt(2/π) / u * (-expm1(-u² / 2))``, exact for small
        ``u`` too.

        Examples
        --------
        >>> spec = JoinSpec(metric="l2", threshold=1.0, bucket_width=1.0)
        >>> [round(float(p), 4) for p in PStableHasher.collision_probability(
        ...     np.array([0.0, 0.5, 1.0, 2.0]), spec, 8)]
        [1.0, 0.6095, 0.3687, 0.1954]
        """
        c = cls._domain(value, 0.0, math.inf, cls._distance)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(c == 0.0, 1.0, cls._probability(bucket_width(spec) / c))
        return float(p) if p.ndim == 0 else p

    _distance: ClassVar[str] = "Euclidean distance"

    @staticmethod
    def _probability(u: F64Array) -> F64Array:
        """One line's collision probability at ``u = w / c > 0`` (the Gaussian's)."""
        p: F64Array = _erf(u / math.sqrt(2.0)) - math.sqrt(2.0 / math.pi) / u * -np.expm1(
            -u * u / 2
        )
        return p

    def _lines(self, dim: int) -> F64Array:
        """``a`` of each elementary hash: rows of independent standard normals (2-stable)."""
        lines: F64Array = self._rng.standard_normal((self.num_hashes, dim))
        return lines

    def _rows(self, vectors: Any) -> NDArray[Any]:
        return self._float_matrix(vectors)

    def _check_chunk(self, chunk: NDArray[Any], start: int) -> None:
        self._check_finite(chunk, start)

    def _band_words(self, chunk: NDArray[Any]) -> U64Array:
        buckets = np.floor((chunk.astype(np.float64) @ self.lines.T + self.offsets) / self.width)
        if buckets.size and not np.abs(buckets).max() < _LARGEST_BUCKET:
            raise ParameterError(
                f"PStableHasher.keys: the vectors are too long for bucket_width {self.width:g} "
                "(bucket numbers beyond 2^62); scale the vectors down or widen the buckets."
            )
        words: U64Array = buckets.astype(np.int64).view(np.uint64)
        return words


class CauchyHasher(PStableHasher):
    """1-stable (Cauchy) projections into buckets: LSH for L1 distance (Datar et al. 2004).

    As :class:`PStableHasher` with ``a`` drawn from the standard Cauchy distribution, which is
    1-stable: ``a · x - a · y`` is distributed as ``|x - y|_1`` times a standard Cauchy
    variable, so the chance of a shared bucket depends on the L1 distance only, whatever the
    coordinates' range. Seed 002's family for L1 samples bits of a unary code as wide as the
    largest coordinate; on counts with a heavy tail (a few long documents) that code is
    thousands of bits per coordinate, a pair at the threshold and a pair far beyond it differ
    in a sliver of it, and the short vectors all share the all-zero keys. Projections do not
    see the range: only the distances.

    Parameters
    ----------
    spec
        A :class:`~neardup.params.JoinSpec` with ``metric="l1"``; its ``bucket_width`` (or
        the default of :func:`bucket_width`, 4 times the threshold) is *w*.
    dim, num_bands, num_rows, max_value
        As :class:`PStableHasher` (``max_value`` unused).

    Notes
    -----
    :meth:`keys` takes integer or float vectors ``(n, dim)``, all finite.

    Examples
    --------
    >>> spec = JoinSpec(metric="l1", threshold=4.0, family="cauchy")
    >>> hasher = CauchyHasher(spec, 2, num_bands=3, num_rows=2)
    >>> keys = hasher.keys(np.array([[0, 7], [0, 7], [900, 0]]))
    >>> bool(np.all(keys[0] == keys[1])), bool(np.any(keys[0] == keys[2]))
    (True, False)
    """

    metric = "l1"
    _tag: ClassVar[int] = 105

    @classmethod
    def collision_probability(
        cls, value: float | F64Array, spec: JoinSpec, dim: int, max_value: int | None = None
    ) -> float | F64Array:
        """The chance one line puts two vectors at L1 distance ``c`` into the same bucket.

        With ``u = w / c`` (Datar et al. 2004, §3.2, for the Cauchy)::

            p(c) = 2 arctan(u) / π - ln(1 + u²) / (π u),   p(0) = 1

        Examples
        --------
        >>> spec = JoinSpec(metric="l1", threshold=1.0, bucket_width=4.0, family="cauchy")
        >>> [round(float(p), 4) for p in CauchyHasher.collision_probability(
        ...     np.array([0.0, 1.0, 4.0, 16.0]), spec, 8)]
        [1.0, 0.6186, 0.2794, 0.0788]
        """
        return super().collision_probability(value, spec, dim, max_value)

    _distance: ClassVar[str] = "L1 distance"

    @staticmethod
    def _probability(u: F64Array) -> F64Array:
        """One line's collision probability at ``u = w / c > 0`` (the Cauchy's)."""
        p: F64Array = 2.0 / math.pi * np.arctan(u) - np.log1p(u * u) / (math.pi * u)
        return p

    def _lines(self, dim: int) -> F64Array:
        """``a`` of each elementary hash: rows of independent standard Cauchy draws (1-stable)."""
        lines: F64Array = self._rng.standard_cauchy((self.num_hashes, dim))
        return lines

    def _rows(self, vectors: Any) -> NDArray[Any]:
        array = self._matrix(vectors, self.dim, "coordinates")
        if array.dtype.kind not in "iuf":
            raise ParameterError(
                f"CauchyHasher.keys needs integer or float vectors; got dtype {array.dtype}."
            )
        return array

    def _check_chunk(self, chunk: NDArray[Any], start: int) -> None:
        if chunk.dtype.kind == "f":
            self._check_finite(chunk, start)
