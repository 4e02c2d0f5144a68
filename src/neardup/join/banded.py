"""The LSH join every family shares: plan the bands, hash into band keys, pair, verify.

A join over vectors (:mod:`neardup.join.vectors`) or item sets (:mod:`neardup.join.sets`)
differs only in its family and its exact measure; the steps are these, and the Spark engine
plans with the same functions so that both engines choose the same bands:

1. :func:`sample_pairs`: :data:`SAMPLE_PAIRS` random pairs of items, seeded by the spec, whose
   exact values stand for the far pairs;
2. :func:`plan_bands`: the spec's ``num_bands`` and ``num_rows``, or the cheapest that reach
   ``spec.recall`` at the threshold (:func:`~neardup.lsh.amplify.choose_amplification`);
3. :func:`banded_join`: band keys appended chunk by chunk (spilled with a work directory),
   pairs sharing a band's key found one band at a time, measured exactly in chunks, and those
   within the threshold kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import astuple
from pathlib import Path
from typing import Any

import numpy as np

from neardup._types import BoolArray, F64Array, I64Array, U64Array
from neardup.io.spill import KeyColumns
from neardup.join.distances import within_threshold
from neardup.join.result import JoinResult
from neardup.kinds import METRICS
from neardup.lsh.amplify import Amplification, Sensitivity, choose_amplification
from neardup.lsh.banding import banded_pairs
from neardup.params import JoinSpec

__all__ = [
    "SAMPLE_PAIRS",
    "VERIFY_PAIRS",
    "band_info",
    "banded_join",
    "plan_bands",
    "sample_pairs",
    "sensitivity",
]

SAMPLE_PAIRS = 4000
"""Random pairs of the data measured to weigh the candidate cost of each amplification."""

VERIFY_PAIRS = 1 << 20
"""Candidate pairs measured at once."""

_SAMPLE_TAG = 0x6A6F696E
"""Mixed into ``spec.seed`` for the sample, so it draws apart from the family's hashes."""


def sample_pairs(num_items: int, seed: int) -> tuple[I64Array, I64Array]:
    """:data:`SAMPLE_PAIRS` uniform random pairs of distinct items (fewer when there are fewer).

    Examples
    --------
    >>> first, second = sample_pairs(5, seed=1)
    >>> len(first), bool((first < second).all())
    (10, True)
    """
    if num_items < 2:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    rng = np.random.default_rng([seed, _SAMPLE_TAG])
    size = min(SAMPLE_PAIRS, num_items * (num_items - 1) // 2)
    a = rng.integers(0, num_items, size)
    b = rng.integers(0, num_items - 1, size)
    b += b >= a  # a uniform other item
    return np.minimum(a, b).astype(np.int64), np.maximum(a, b).astype(np.int64)


def plan_bands(
    spec: JoinSpec, p_near: float, sample: F64Array | None, num_items: int | None
) -> tuple[int, int]:
    """``(num_bands, num_rows)``: the spec's, or chosen for ``spec.recall`` at ``p_near``.

    ``sample``: the elementary collision probabilities of :func:`sample_pairs`' pairs;
    ``num_items``: how many items are joined (``None`` with no sample: an index, which grows).
    """
    if spec.num_bands is not None and spec.num_rows is not None:
        return spec.num_bands, spec.num_rows
    chosen = choose_amplification(
        p_near,
        recall=spec.recall,
        max_hashes=spec.max_hashes,
        far_probabilities=sample if sample is not None and sample.shape[0] else None,
        num_items=num_items,
    )
    return chosen.as_bands()


def sensitivity(
    spec: JoinSpec, p_near: float, values: F64Array, probabilities: F64Array
) -> Sensitivity | None:
    """The family's ``(d1, d2, p1, p2)``: ``d1`` the threshold, ``d2`` the median random pair.

    ``values`` and ``probabilities``: the sampled pairs' exact values and elementary collision
    probabilities. ``None`` when there is no sample, or the median pair is not beyond the
    threshold (the data's random pairs are near).
    """
    if not values.shape[0]:
        return None
    far = float(np.median(values))
    similarity = METRICS[spec.metric].measure == "similarity"
    beyond = far < spec.threshold if similarity else far > spec.threshold
    if not beyond:
        return None
    return Sensitivity(spec.threshold, far, p_near, float(np.median(probabilities)))


def band_info(
    num_bands: int, num_rows: int, p_near: float, family: Sensitivity | None
) -> dict[str, Any]:
    """What a banded join reports of its bands (``summary.json``).

    ``b``, ``r``, the elementary and the amplified probability at the threshold, and the
    family's sensitivity before and after (MMDS §3.6.3).
    """
    bands = Amplification.bands(num_bands, num_rows)
    out: dict[str, Any] = {
        "num_bands": num_bands,
        "num_rows": num_rows,
        "collision_probability": p_near,
        "predicted_recall": float(bands.probability(p_near)),
    }
    if family is not None:
        out["sensitivity"] = {
            "family": dict(zip(("d1", "d2", "p1", "p2"), astuple(family), strict=True)),
            "amplified": dict(
                zip(("d1", "d2", "p1", "p2"), astuple(bands.apply(family)), strict=True)
            ),
        }
    return out


def banded_join(
    spec: JoinSpec,
    num_items: int,
    key_chunks: Iterable[U64Array],
    measure: Callable[[I64Array, I64Array], F64Array],
    *,
    num_bands: int,
    num_rows: int,
    p_near: float,
    active: BoolArray | None = None,
    work_dir: Path | None = None,
    info: dict[str, Any] | None = None,
    family: Sensitivity | None = None,
) -> JoinResult:
    """Pairs sharing a band key, measured by ``measure(first, second)``, kept within threshold.

    ``key_chunks`` yields ``uint64[rows, num_bands]`` keys of consecutive items; ``active``
    marks the items that may pair (all by default). ``info`` is extended with the bands, the
    predicted recall, the counts and, given the elementary ``family``'s sensitivity (see
    :func:`sensitivity`), the amplified one (MMDS §3.6.3).
    """
    keys = KeyColumns(work_dir)
    for chunk in key_chunks:
        keys.append(chunk)
    bands = (keys.column(band) for band in range(num_bands))
    candidates = banded_pairs(bands, num_items, active=active, max_bucket_size=spec.max_bucket_size)
    firsts: list[I64Array] = [np.empty(0, np.int64)]
    seconds: list[I64Array] = [np.empty(0, np.int64)]
    values: list[F64Array] = [np.empty(0, np.float64)]
    for start in range(0, len(candidates), VERIFY_PAIRS):
        first = candidates.first[start : start + VERIFY_PAIRS]
        second = candidates.second[start : start + VERIFY_PAIRS]
        value = measure(first, second)
        close = within_threshold(spec.metric, value, spec.threshold)
        firsts.append(first[close])
        seconds.append(second[close])
        values.append(value[close])
    found = {
        **(info or {}),
        **band_info(num_bands, num_rows, p_near, family),
        "num_candidates": len(candidates),
        "num_giant_buckets": candidates.num_giant_buckets,
        "largest_bucket": candidates.largest_bucket,
    }
    result = JoinResult(
        first=np.concatenate(firsts),
        second=np.concatenate(seconds),
        values=np.concatenate(values),
        metric=spec.metric,
        info=found,
    )
    found["num_pairs"] = len(result)
    return result
