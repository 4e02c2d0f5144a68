"""Locality-sensitive hashing: banding, the families over vectors, and amplification.

Banding of MinHash signatures into candidate pairs (MMDS §3.4); the families over vectors for
cosine, Hamming, L1 and L2 (seed 002, and Cauchy projections for L1); AND and OR amplification
and its choice (MMDS §3.6).
"""

from neardup.lsh.amplify import Amplification, Sensitivity, choose_amplification
from neardup.lsh.banding import (
    band_keys,
    bands_rows,
    candidate_pairs,
    choose_bands,
    s_curve,
    threshold_of,
)
from neardup.lsh.bitsampling import BitSampler, UnaryBitSampler, pack_bits, unpack_bits
from neardup.lsh.hyperplanes import HyperplaneHasher
from neardup.lsh.pstable import CauchyHasher, PStableHasher, bucket_width

__all__ = [
    "Amplification",
    "BitSampler",
    "CauchyHasher",
    "HyperplaneHasher",
    "PStableHasher",
    "Sensitivity",
    "UnaryBitSampler",
    "band_keys",
    "bands_rows",
    "bucket_width",
    "candidate_pairs",
    "choose_amplification",
    "choose_bands",
    "pack_bits",
    "s_curve",
    "threshold_of",
    "unpack_bits",
]
