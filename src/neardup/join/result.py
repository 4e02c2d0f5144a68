"""What a similarity join returns: the close pairs, their exact values, and how they were found."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from neardup._types import F64Array, I64Array

__all__ = ["JoinResult"]


@dataclass(frozen=True, slots=True)
class JoinResult:
    """Pairs of items within the threshold, verified by the exact measure.

    Attributes
    ----------
    first, second
        Item numbers (rows of the input) of each pair, ``first < second``, sorted by
        ``(first, second)``.
    values
        The exact similarity (``cosine``, ``jaccard``) or distance (``hamming``, ``l1``, ``l2``,
        ``edit``) of each pair.
    metric
        The :data:`~neardup.kinds.METRICS` name.
    info
        How the pairs were found, for ``summary.json``: the family, ``num_bands``,
        ``num_rows``, the predicted recall at the threshold, and the counts of candidates and
        verified pairs.
    """

    first: I64Array
    second: I64Array
    values: F64Array
    metric: str
    info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.first.shape[0])
