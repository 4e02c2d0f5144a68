"""Random hyperplanes (seed 002, "LSH for cosine"): LSH for the cosine of float vectors.

Candidates for the ``cosine`` join (:data:`neardup.kinds.METRICS`). An elementary hash is the
side of a random hyperplane through the origin a vector falls on; two vectors at angle ``θ``
fall on different sides with probability ``θ / π`` (Charikar 2002). ``num_rows`` signs make a
band (seed 002's *K* hyperplanes cutting space into ``2^K`` cones), packed and mixed into one
key, and ``num_bands`` bands make the OR (:class:`~neardup.lsh.family.AmplifiedHasher`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from neardup._types import F64Array, U64Array
from neardup.lsh.bitsampling import band_bit_words
from neardup.lsh.family import AmplifiedHasher
from neardup.params import JoinSpec

__all__ = ["HyperplaneHasher"]

_ROUNDING = 1e-9
"""How far beyond ``[-1, 1]`` a computed cosine may stray by rounding (it is clipped)."""


class HyperplaneHasher(AmplifiedHasher):
    """Random-hyperplane LSH for cosine similarity (seed 002; Charikar 2002).

    ``num_bands * num_rows`` hyperplanes are drawn once from ``spec.seed``, their normals
    ``a ~ N(0, I_dim)`` (a Gaussian vector's direction is uniform on the sphere: seed 002,
    "Generating random Gaussians"). The elementary hash of ``x`` is the bit ``a · x > 0``.

    Parameters
    ----------
    spec
        A :class:`~neardup.params.JoinSpec` with ``metric="cosine"``.
    dim
        The coordinates of every vector.
    num_bands, num_rows
        *b* bands of *r* hyperplanes each (seed 002's *K* = ``num_rows``).
    max_value
        Unused.

    Attributes
    ----------
    hyperplanes
        ``float64[num_bands * num_rows, dim]``: the normals, band ``j`` owning rows
        ``j r .. j r + r - 1``.

    Notes
    -----
    :meth:`keys` takes float32 or float64 vectors ``(n, dim)``, all finite. The projections are
    one BLAS matrix product per chunk of rows, in float64 (memory stays bounded by the chunk).
    Ties: a projection of exactly 0 gives bit 0, the side of ``a · x < 0``; for a non-zero
    vector that has probability 0 under Gaussian normals, and the zero vector (whose cosine is
    undefined) hashes to all zeros in every band. Keys do not depend on the chunking nor on
    the number of threads, up to the rounding of the matrix product, which can only flip the
    bit of a vector lying within about ``1e-16`` (relative) of a hyperplane. Cost:
    ``O(dim b r)`` per vector.

    Examples
    --------
    >>> spec = JoinSpec(metric="cosine", threshold=0.9)
    >>> hasher = HyperplaneHasher(spec, 3, num_bands=4, num_rows=8)
    >>> keys = hasher.keys(np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [-1.0, -2.0, -3.0]]))
    >>> bool(np.all(keys[0] == keys[1])), bool(np.any(keys[0] == keys[2]))
    (True, False)
    >>> HyperplaneHasher.collision_probability(np.array([1.0, 0.0, -1.0]), spec, 3).tolist()
    [1.0, 0.5, 0.0]
    """

    metric = "cosine"
    _tag: ClassVar[int] = 101

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
        self.hyperplanes = self._rng.standard_normal((self.num_hashes, dim))

    @classmethod
    def collision_probability(
        cls, value: float | F64Array, spec: JoinSpec, dim: int, max_value: int | None = None
    ) -> float | F64Array:
        """``1 - arccos(s) / π``: the chance one hyperplane keeps vectors of cosine ``s`` together.

        Examples
        --------
        >>> round(HyperplaneHasher.collision_probability(0.5, JoinSpec(), 10), 4)
        0.6667
        """
        edge = 1.0 + _ROUNDING
        s = np.clip(cls._domain(value, -edge, edge, "cosine similarity"), -1.0, 1.0)
        p = 1.0 - np.arccos(s) / np.pi
        return float(p) if p.ndim == 0 else p

    def _rows(self, vectors: Any) -> NDArray[Any]:
        return self._float_matrix(vectors)

    def _check_chunk(self, chunk: NDArray[Any], start: int) -> None:
        self._check_finite(chunk, start)

    def _band_words(self, chunk: NDArray[Any]) -> U64Array:
        projections = chunk.astype(np.float64) @ self.hyperplanes.T
        return band_bit_words(projections > 0.0, self.num_bands, self.num_rows)
