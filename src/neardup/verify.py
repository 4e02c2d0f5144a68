"""Verification of candidate pairs: similarity estimated from signatures, and exact Jaccard.

Kernels return counts; this module turns them into similarities once.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from neardup._kernels import verify as kernels
from neardup._parallel import in_blocks
from neardup._types import Batch, BoolArray, F64Array, I64Array, U64Array
from neardup.errors import ParameterError
from neardup.kinds import SKETCH_KINDS
from neardup.pairs import CandidatePairs
from neardup.params import SketchSpec
from neardup.sketch.signatures import Signatures
from neardup.sketch.weighted import IDFWeights, cosine_similarity, term_counts, weighted_jaccard
from neardup.text.shingle import Shingler, ShingleSets

__all__ = [
    "agreement",
    "estimate_jaccard",
    "exact_containment",
    "exact_jaccard",
    "exact_similarity",
    "jaccard_of_sets",
]


def _pair_arrays(pairs: CandidatePairs, num_rows: int) -> tuple[I64Array, I64Array]:
    """The pairs as contiguous int64 arrays, checked: the kernels index rows without bounds."""
    first = np.ascontiguousarray(pairs.first, dtype=np.int64)
    second = np.ascontiguousarray(pairs.second, dtype=np.int64)
    if first.ndim != 1 or first.shape != second.shape:
        raise ParameterError(
            f"pairs need two 1-D arrays of one length; got first {first.shape}, "
            f"second {second.shape}."
        )
    for name, side in (("first", first), ("second", second)):
        if side.shape[0] and (side.min() < 0 or side.max() >= num_rows):
            raise ParameterError(
                f"pairs.{name} holds a document number outside 0..{num_rows - 1} "
                f"(min {side.min()}, max {side.max()}): pairs of other documents?"
            )
    return first, second


def estimate_jaccard(signatures: Signatures, pairs: CandidatePairs) -> F64Array:
    """The fraction of agreeing slots of each pair: an unbiased estimate of its Jaccard.

    Its standard deviation is ``sqrt(J * (1 - J) / num_perm)`` (MMDS §3.3.3).
    """
    return agreement(signatures.values, pairs)


def agreement(values: U64Array, pairs: CandidatePairs) -> F64Array:
    """The fraction of equal slots of each pair's rows of ``values``."""
    values = np.ascontiguousarray(values)
    first, second = _pair_arrays(pairs, values.shape[0])
    counts = np.empty(first.shape[0], dtype=np.int64)
    in_blocks(partial(kernels.agreeing_slots, values, first, second, counts), first.shape[0])
    fraction: F64Array = counts / values.shape[1]
    return fraction


def _shared(sets: ShingleSets, pairs: CandidatePairs) -> tuple[I64Array, I64Array, F64Array]:
    """The pairs' arrays and the number of shingles each pair's two sets share."""
    first, second = _pair_arrays(pairs, len(sets))
    shared = np.empty(first.shape[0], dtype=np.float64)
    run = partial(kernels.set_overlaps, sets.hashes, sets.offsets, first, second, shared)
    in_blocks(run, first.shape[0])
    return first, second, shared


def exact_jaccard(sets: ShingleSets, pairs: CandidatePairs, floor: float | None = None) -> F64Array:
    """The exact Jaccard similarity |A ∩ B| / |A ∪ B| of each pair's shingle sets.

    Two empty sets have similarity 0 here: emptiness is not evidence of duplication. With a
    ``floor``, a pair whose sets' sizes alone keep it below the floor
    (:func:`~neardup._kernels.verify.size_bounded`) is not measured: NaN.
    """
    sizes = sets.sizes()
    if floor is not None:
        first, second = _pair_arrays(pairs, len(sets))
        bounded = np.empty(first.shape[0], dtype=bool)
        kernels.size_bounded(sizes, first, second, floor, bounded)
        reachable = ~bounded
        out = np.full(first.shape[0], np.nan)
        measured = CandidatePairs(first=first[reachable], second=second[reachable])
        out[reachable] = exact_jaccard(sets, measured)
        return out
    first, second, shared = _shared(sets, pairs)
    union = sizes[first] + sizes[second] - shared
    out = np.zeros(shared.shape[0], dtype=np.float64)
    np.divide(shared, union, out=out, where=union > 0)
    return out


def exact_containment(
    sets: ShingleSets, pairs: CandidatePairs, second_contained: BoolArray
) -> F64Array:
    """The containment ``|A ∩ B| / |A|`` of each pair's contained set ``A`` in the other.

    ``A`` is the pair's first set, or its second where ``second_contained``. An empty ``A`` is
    contained in nothing here (0): emptiness is no evidence of a copy.
    """
    first, second, shared = _shared(sets, pairs)
    sizes = sets.sizes()[np.where(second_contained, second, first)]
    out = np.zeros(shared.shape[0], dtype=np.float64)
    np.divide(shared, sizes, out=out, where=sizes > 0)
    return out


def jaccard_of_sets(a: U64Array, b: U64Array) -> float:
    """Exact Jaccard of two sorted distinct fingerprint arrays (0 when both are empty).

    Examples
    --------
    >>> jaccard_of_sets(np.array([1, 2, 3], np.uint64), np.array([2, 3, 4], np.uint64))
    0.5
    """
    if a.ndim != 1 or b.ndim != 1:
        raise ParameterError("jaccard_of_sets takes two 1-D arrays of fingerprints.")
    shared = np.intersect1d(a, b, assume_unique=True).shape[0]
    union = a.shape[0] + b.shape[0] - shared
    return shared / union if union else 0.0


def exact_similarity(
    texts: Sequence[str] | Batch,
    pairs: CandidatePairs,
    spec: SketchSpec,
    idf: IDFWeights | None = None,
    floor: float | None = None,
) -> F64Array:
    """The exact similarity a sketch of ``spec`` estimates, for pairs of ``texts``.

    What the kind registers as ``exact`` (:attr:`neardup.kinds.SketchKind.exact`): the Jaccard
    similarity of the shingle sets; the weighted Jaccard (``sum min / sum max``) of the shingle
    counts; or the cosine of the shingle counts, times ``idf`` with ``weighting="tfidf"``.
    ``texts`` are strings, or a :class:`~neardup._types.Batch` already normalised as ``spec``
    says. ``floor``: as :func:`exact_jaccard`'s, for the Jaccard similarity.
    """
    measure = SKETCH_KINDS[spec.kind].exact
    if measure == "cosine":
        weighted = idf.transform(texts) if idf is not None else term_counts(texts, spec)
        return cosine_similarity(weighted, pairs)
    if measure == "weighted-jaccard":
        return weighted_jaccard(term_counts(texts, spec), pairs)
    return exact_jaccard(Shingler(spec.shingle, spec.normalize).shingle_sets(texts), pairs, floor)
