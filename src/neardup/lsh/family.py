"""The LSH families over vectors (seed 002, MMDS §3.6-3.7): what each must provide.

A family is a maker: built from a :class:`~neardup.params.JoinSpec`, the data's width and the
amplification (``num_bands`` bands of ``num_rows`` elementary hashes), it draws its random
parameters once from the seed and turns a batch of vectors into one ``uint64`` key per band.
Two items share a band's key when all ``num_rows`` of that band's elementary hashes agree
(r-way AND); they are candidates when any band agrees (b-way OR).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from neardup._types import F64Array, U64Array
from neardup.params import JoinSpec

__all__ = ["VectorHasher"]


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
