"""Exact all-pairs Jaccard above a threshold, through an inverted index with prefix filtering.

If ``J(A, B) >= t`` then ``|A ∩ B| >= ceil(t * |A|)``, so with every set's elements ordered by a
common order (rarest first), the first ``|A| - ceil(t * |A|) + 1`` elements of ``A`` and those
of ``B`` share an element (Bayardo, Ma and Srikant, "Scaling up all pairs similarity search",
WWW 2007). Only pairs sharing a prefix element are compared, exactly: no pair is missed and no
estimate is involved. Used by the tests and by the benchmarks as the ground truth.
"""

from __future__ import annotations

import numpy as np

from neardup import CandidatePairs, exact_jaccard
from neardup._kernels.groups import bucket_pairs
from neardup.lsh.banding import equal_key_groups
from neardup.text import ShingleSets


def all_pairs_above(sets: ShingleSets, threshold: float) -> dict[tuple[int, int], float]:
    """Every pair ``(a, b)``, ``a < b``, of non-empty sets with exact Jaccard >= threshold."""
    sizes = sets.sizes()
    _, inverse, counts = np.unique(sets.hashes, return_inverse=True, return_counts=True)
    doc_of = np.repeat(np.arange(len(sets), dtype=np.int64), sizes)
    order = np.lexsort((sets.hashes, counts[inverse], doc_of))  # per document, rarest first
    position = np.arange(order.shape[0]) - np.repeat(sets.offsets[:-1], sizes)
    prefix = sizes - np.ceil(threshold * sizes - 1e-9).astype(np.int64) + 1
    chosen = order[position < np.repeat(prefix, sizes)]
    keys, docs = sets.hashes[chosen], doc_of[chosen]  # docs ascending
    members, bounds = equal_key_groups(keys)
    first, second, _, _ = bucket_pairs(docs[members], bounds, 2**62)
    codes = np.unique(first * len(sets) + second)
    pairs = CandidatePairs(first=codes // len(sets), second=codes % len(sets))
    jaccard = exact_jaccard(sets, pairs)
    keep = jaccard >= threshold
    return dict(
        zip(
            zip(pairs.first[keep].tolist(), pairs.second[keep].tolist(), strict=True),
            jaccard[keep].tolist(),
            strict=True,
        )
    )
