"""Locality-sensitive hashing: banding of MinHash signatures into candidate pairs."""

from neardup.lsh.banding import (
    CandidatePairs,
    band_keys,
    candidate_pairs,
    choose_bands,
    s_curve,
    threshold_of,
)

__all__ = [
    "CandidatePairs",
    "band_keys",
    "candidate_pairs",
    "choose_bands",
    "s_curve",
    "threshold_of",
]
