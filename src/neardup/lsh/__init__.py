"""Locality-sensitive hashing: banding of MinHash signatures into candidate pairs."""

from neardup.lsh.banding import (
    band_keys,
    bands_rows,
    candidate_pairs,
    choose_bands,
    s_curve,
    threshold_of,
)

__all__ = [
    "band_keys",
    "bands_rows",
    "candidate_pairs",
    "choose_bands",
    "s_curve",
    "threshold_of",
]
