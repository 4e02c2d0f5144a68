"""Array aliases and the :class:`Batch` a group of documents travels in."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "Batch",
    "BoolArray",
    "F32Array",
    "F64Array",
    "I64Array",
    "Offsets",
    "U8Array",
    "U64Array",
]

U8Array = NDArray[np.uint8]
U64Array = NDArray[np.uint64]
I64Array = NDArray[np.int64]
F32Array = NDArray[np.float32]
F64Array = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
Offsets = NDArray[np.int64]
"""``num_docs + 1`` non-decreasing positions; item ``d`` spans ``[offsets[d], offsets[d+1])``."""


@dataclass(frozen=True, slots=True)
class Batch:
    """Documents as one flat UTF-8 buffer plus offsets: the shape kernels take.

    Attributes
    ----------
    data
        The UTF-8 bytes of every document, back to back.
    offsets
        ``num_docs + 1`` non-decreasing int64 positions into ``data`` (a batch may cover only
        part of ``data``: a block of a larger batch shares its buffer).
    """

    data: U8Array
    offsets: Offsets

    @property
    def num_docs(self) -> int:
        """How many documents the batch holds."""
        return int(self.offsets.shape[0]) - 1

    @property
    def num_bytes(self) -> int:
        """Total bytes of the documents' text."""
        return int(self.offsets[-1] - self.offsets[0])
