"""Candidate pairs from Broder's features: documents sharing enough supershingles (seed 003).

The features come from :func:`neardup.sketch.features.supershingles`; this module finds the
*fungible* pairs: with ``min_shared = 1`` by one lookup per feature, with ``min_shared >= 2``
through the C(k, 2) megashingles, each candidate's shared features then counted exactly.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from neardup._kernels import features as kernels
from neardup._parallel import in_blocks
from neardup._types import I64Array, U64Array
from neardup.errors import ParameterError
from neardup.hashing.bands import band_keys
from neardup.lsh.banding import candidate_pairs
from neardup.pairs import CandidatePairs

__all__ = ["fungible_pairs"]


def fungible_pairs(
    features: U64Array,
    min_shared: int,
    *,
    active: np.ndarray | None = None,
    max_bucket_size: int = 2**31 - 1,
) -> tuple[CandidatePairs, I64Array]:
    """Pairs of documents sharing at least ``min_shared`` features, and how many they share.

    ``min_shared = 1`` looks up each feature; ``min_shared >= 2`` looks up megashingles (pairs
    of features) and then counts the shared features of each candidate exactly. Lookup buckets
    above ``max_bucket_size`` are paired linearly, as in :func:`candidate_pairs`.
    """
    num_groups = features.shape[1]
    if not 1 <= min_shared <= num_groups:
        raise ParameterError(f"min_shared must be in [1, {num_groups}]; got {min_shared}.")
    features = np.ascontiguousarray(features, dtype=np.uint64)
    if min_shared == 1:
        keys = features
    else:
        keys = np.empty((features.shape[0], num_groups * (num_groups - 1) // 2), dtype=np.uint64)
        in_blocks(partial(kernels.megashingles, features, keys), features.shape[0])
    # Position-tagged keys, so that equal features at different positions do not collide.
    tagged = band_keys(keys, keys.shape[1], 1)
    candidates = candidate_pairs(tagged, active=active, max_bucket_size=max_bucket_size)
    shared = np.empty(len(candidates), dtype=np.int64)
    run = partial(kernels.shared_features, features, candidates.first, candidates.second, shared)
    in_blocks(run, shared.shape[0])
    keep = shared >= min_shared
    return (
        CandidatePairs(
            first=candidates.first[keep],
            second=candidates.second[keep],
            num_giant_buckets=candidates.num_giant_buckets,
            largest_bucket=candidates.largest_bucket,
        ),
        shared[keep],
    )
