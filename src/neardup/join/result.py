"""What a similarity join returns: the close pairs, their exact values, and how they were found."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neardup._types import F64Array, I64Array

__all__ = ["JoinResult", "JoinStream"]

PairChunks = Iterator[tuple[I64Array, I64Array, F64Array]]
"""``(first, second, values)`` chunks, sorted by ``(first, second)`` across chunks."""


@dataclass(frozen=True, slots=True)
class JoinResult:
    """Pairs of items within the threshold, verified by the exact measure.

    Attributes
    ----------
    first, second
        Item numbers (rows of the input) of each pair, sorted by ``(first, second)``:
        ``first < second``, except under ``containment``, where ``first`` is the contained
        item (the smaller set; of two equal, the later).
    values
        The exact similarity (``cosine``, ``jaccard``, ``containment``) or distance
        (``hamming``, ``l1``, ``l2``, ``edit``) of each pair.
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


@dataclass(frozen=True, slots=True)
class JoinStream:
    """A join's close pairs read back a chunk at a time, for outputs that never hold them all.

    Attributes
    ----------
    chunks
        Called once: ``(first, second, values)`` chunks as :class:`JoinResult` holds them
        (oriented and sorted as there, each pair once), concatenated.
    metric, info
        As :class:`JoinResult`'s (``info`` without ``num_pairs``, known once read).
    """

    chunks: Callable[[], PairChunks]
    metric: str
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, result: JoinResult) -> JoinStream:
        """A stream of a result already in memory (one chunk)."""

        def chunks() -> PairChunks:
            yield result.first, result.second, result.values

        return cls(chunks=chunks, metric=result.metric, info=result.info)

    def result(self) -> JoinResult:
        """Every pair in memory; ``info`` gains ``num_pairs``."""
        firsts: list[I64Array] = [np.empty(0, np.int64)]
        seconds: list[I64Array] = [np.empty(0, np.int64)]
        values: list[F64Array] = [np.empty(0, np.float64)]
        for first, second, value in self.chunks():
            firsts.append(first)
            seconds.append(second)
            values.append(value)
        found = JoinResult(
            first=np.concatenate(firsts),
            second=np.concatenate(seconds),
            values=np.concatenate(values),
            metric=self.metric,
            info=self.info,
        )
        self.info["num_pairs"] = len(found)
        return found
