"""Candidate pairs: what every candidate family finds and verification checks.

A result type below every stage that makes or reads pairs (sketch estimators, LSH families,
Hamming search, verification), so none of them needs another's module for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from neardup._types import F64Array, I64Array

__all__ = ["CandidatePairs", "Measured"]


@dataclass(frozen=True, slots=True)
class CandidatePairs:
    """Distinct candidate pairs ``(first[i], second[i])`` with ``first < second``, sorted.

    Attributes
    ----------
    num_giant_buckets
        Buckets larger than ``max_bucket_size``, where each member was paired only with the
        ``max_bucket_size - 1`` members before it.
    largest_bucket
        Members of the largest bucket over all bands.
    """

    first: I64Array
    second: I64Array
    num_giant_buckets: int = 0
    largest_bucket: int = 0

    def __len__(self) -> int:
        return int(self.first.shape[0])


class Measured(NamedTuple):
    """What verification measured of some pairs, one value per pair (NaN: not measured).

    ``estimate``: the sketch's estimate of the similarity; ``exact``: the exact similarity (of
    shingle sets, or the cosine of vectors); ``cosine``: the vectors' cosine beside the
    shingles' Jaccard (``--method minhash+embedding``), else ``None``.
    """

    estimate: F64Array
    exact: F64Array
    cosine: F64Array | None = None
