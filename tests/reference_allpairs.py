"""Exact all-pairs Jaccard above a threshold, through an inverted index with prefix filtering.

If ``J(A, B) >= t`` then ``|A ∩ B| >= ceil(t * |A|)``, so with every set's elements ordered by a
common order (rarest first), the first ``|A| - ceil(t * |A|) + 1`` elements of ``A`` and those
of ``B`` share an element (Bayardo, Ma and Srikant, "Scaling up all pairs similarity search",
WWW 2007). Only pairs sharing a prefix element are compared, exactly. Slow but exact.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from neardup import CandidatePairs, exact_jaccard
from neardup.text import ShingleSets


def all_pairs_above(sets: ShingleSets, threshold: float) -> dict[tuple[int, int], float]:
    """Every pair ``(a, b)``, ``a < b``, of non-empty sets with exact Jaccard >= threshold."""
    values, counts = np.unique(sets.hashes, return_counts=True)
    frequency = dict(zip(values.tolist(), counts.tolist(), strict=True))
    postings: dict[int, list[int]] = defaultdict(list)
    for doc in range(len(sets)):
        members = sets.set_of(doc).tolist()
        if not members:
            continue
        members.sort(key=lambda h: (frequency[h], h))
        prefix = len(members) - math.ceil(threshold * len(members)) + 1
        for h in members[:prefix]:
            postings[h].append(doc)
    candidates = {
        (a, b) for docs in postings.values() for i, a in enumerate(docs) for b in docs[i + 1 :]
    }
    if not candidates:
        return {}
    first, second = (
        np.array(side, dtype=np.int64) for side in zip(*sorted(candidates), strict=True)
    )
    jaccard = exact_jaccard(sets, CandidatePairs(first=first, second=second))
    keep = jaccard >= threshold
    return dict(
        zip(
            zip(first[keep].tolist(), second[keep].tolist(), strict=True),
            jaccard[keep].tolist(),
            strict=True,
        )
    )
