"""Candidate pairs: what every candidate family finds and verification checks.

A result type below every stage that makes or reads pairs (sketch estimators, LSH families,
Hamming search, verification), so none of them needs another's module for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from neardup._types import I64Array

__all__ = ["CandidatePairs"]


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
