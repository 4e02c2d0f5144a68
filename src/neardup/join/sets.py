"""Similarity joins over item sets: MinHash LSH, or the exact prefix-filtering joins.

Where it sits: item sets (a :class:`~neardup.text.shingle.ShingleSets`: each item's sorted
distinct 64-bit element hashes; shingles of texts, the products each customer bought, the
links of each page) → candidate pairs → exact Jaccard ``|A ∩ B| / |A ∪ B|`` → the pairs at or
above the threshold (:class:`~neardup.join.result.JoinResult`). Two ways to the candidates:

* :func:`set_join` with ``JoinSpec.exact`` false: MinHash LSH
  (:class:`~neardup.lsh.sets.SetHasher`), ``b`` bands of ``r`` slots chosen for the recall
  wanted at the threshold (:func:`~neardup.lsh.amplify.choose_amplification`); a pair at the
  threshold is found with probability ``1 - (1 - t^r)^b``.
* :func:`prefix_join` (``exact`` true): MMDS §3.9's length, prefix and position filters with
  PPJoin+'s suffix filter (Xiao, Wang, Lin and Yu, "Efficient similarity joins for near
  duplicate detection", WWW 2008): every pair at or above the threshold, none missed, and no
  hashing. Its cost grows as the threshold falls (longer prefixes); LSH's with the recall
  asked and with how similar the data's random pairs are.
* :func:`containment_join` (metric ``containment``, always exact): every pair where the
  smaller set is at least the threshold contained in the larger, ``|A ∩ B| / |A|``
  (:func:`~neardup.lsh.containment.exact_containment_pairs`).

"At or above the threshold" is decided by the float64 value ``o / (|A| + |B| - o)`` (``o`` the
shared elements), the value reported: a pair exactly at the threshold (9 of 10 shared at 0.9)
is kept by both joins. An empty set has Jaccard 0 with every set (itself included) and is never
paired; the threshold must be above 0 (at 0 every pair would qualify).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from neardup._types import F64Array, I64Array
from neardup.errors import ParameterError
from neardup.join.banded import (
    BandProgress,
    banded_stream,
    plan_bands,
    predict,
    sample_pairs,
    sensitivity,
    warn_if_large,
)
from neardup.join.result import JoinResult, JoinStream
from neardup.lsh.containment import exact_containment_pairs
from neardup.lsh.prefix import exact_set_pairs, jaccard_threshold
from neardup.lsh.sets import SetHasher, check_item_sets
from neardup.pairs import CandidatePairs
from neardup.params import JoinSpec
from neardup.text.shingle import ShingleSets
from neardup.verify import exact_jaccard

__all__ = ["containment_join", "prefix_join", "set_join", "set_stream"]


CHUNK_SETS = 65536
"""Sets hashed into band keys at once (the keys do not depend on it)."""

# the exact join -------------------------------------------------------------------------------


def prefix_join(sets: ShingleSets, threshold: float, *, suffix_depth: int = 2) -> JoinResult:
    """Every pair of sets with Jaccard >= ``threshold``, exactly: no pair missed, none estimated.

    :func:`~neardup.lsh.prefix.exact_set_pairs` (length, prefix, position and suffix filtering,
    MMDS §3.9 and PPJoin+) as a :class:`JoinResult`; ``info``: ``family`` ``"prefix"``,
    ``num_bands`` and ``num_rows`` ``None``, ``predicted_recall`` 1.0, ``num_pairs`` and the
    filter's counts. ``suffix_depth`` changes the work, never the pairs.

    Examples
    --------
    >>> import numpy as np
    >>> sets = ShingleSets(hashes=np.array([1, 2, 3, 4, 1, 2, 3, 4, 5, 7, 8, 9], np.uint64),
    ...                    offsets=np.array([0, 4, 9, 12]))
    >>> result = prefix_join(sets, 0.8)
    >>> list(zip(result.first.tolist(), result.second.tolist())), result.values.tolist()
    ([(0, 1)], [0.8])
    """
    found = exact_set_pairs(sets, threshold, suffix_depth=suffix_depth)
    return _exact_result(*found, metric="jaccard", family="prefix")


def containment_join(sets: ShingleSets, threshold: float) -> JoinResult:
    """Every pair where the smaller set is at least ``threshold`` contained in the larger.

    :func:`~neardup.lsh.containment.exact_containment_pairs` as a :class:`JoinResult`:
    ``first`` the contained set (the smaller; of two equal, the later), ``values`` its
    containment ``|first ∩ second| / |first|``; ``info``: ``family`` ``"containment"``,
    ``predicted_recall`` 1.0 and the filter's counts.

    Examples
    --------
    >>> import numpy as np
    >>> sets = ShingleSets(hashes=np.array([1, 2, 3, 4, 5, 6, 2, 3, 4, 9], np.uint64),
    ...                    offsets=np.array([0, 6, 10]))
    >>> result = containment_join(sets, 0.75)
    >>> list(zip(result.first.tolist(), result.second.tolist())), result.values.tolist()
    ([(1, 0)], [0.75])
    """
    found = exact_containment_pairs(sets, threshold)
    return _exact_result(*found, metric="containment", family="containment")


def _exact_result(
    first: I64Array,
    second: I64Array,
    values: F64Array,
    counts: dict[str, Any],
    *,
    metric: str,
    family: str,
) -> JoinResult:
    """The pairs of an exact join, with no bands and a recall of 1 in ``info``."""
    info: dict[str, Any] = {
        "family": family,
        "num_bands": None,
        "num_rows": None,
        "predicted_recall": 1.0,
        **counts,
        "num_pairs": int(first.shape[0]),
    }
    return JoinResult(first=first, second=second, values=values, metric=metric, info=info)


# the LSH join ---------------------------------------------------------------------------------


def set_join(
    sets: ShingleSets,
    spec: JoinSpec,
    *,
    work_dir: Path | None = None,
    memory_bytes: int | None = None,
) -> JoinResult:
    """All pairs of sets with Jaccard similarity >= ``spec.threshold``, verified exactly.

    Parameters
    ----------
    sets
        The item sets (sorted distinct ``uint64`` per set).
    spec
        A ``jaccard`` spec. ``exact``: :func:`prefix_join` (every pair). Otherwise MinHash
        LSH: ``num_bands`` and ``num_rows`` as given, or the cheapest bands reaching
        ``recall`` at the threshold within ``max_hashes``; ``max_bucket_size`` and ``seed``.
    work_dir
        LSH only: where the band keys are spilled, one file per band; ``None`` keeps them in
        memory.
    memory_bytes
        LSH only: the working memory of candidate chunks and close pairs, as
        :func:`~neardup.join.vectors.vector_join` takes it.

    Returns
    -------
    JoinResult
        The pairs ``first < second``, sorted, ``values`` their exact Jaccard. ``info`` (LSH):
        ``family`` ``"minhash"``, ``num_bands``, ``num_rows``, ``collision_probability`` (the
        threshold), ``predicted_recall`` (``1 - (1 - t^r)^b``), ``sampled_pairs``,
        ``num_candidates`` (bucket pairs measured), ``num_pairs``, ``num_giant_buckets``,
        ``largest_bucket``, ``prediction``; exact:
        as :func:`prefix_join`.

    Raises
    ------
    ParameterError
        A metric other than ``jaccard``, or a threshold of 0.
    InputError
        ``sets`` is not a valid :class:`ShingleSets`.

    Notes
    -----
    LSH steps, those of every family (:mod:`neardup.join.banded`): (1) unless the spec gives
    the bands, the exact Jaccard of random pairs of sets
    (:func:`~neardup.join.banded.sample_pairs`, seeded by ``spec.seed``; an empty set has 0
    with every set) stands for the far pairs, and :func:`~neardup.join.banded.plan_bands`
    picks the bands (one MinHash slot agrees with probability ``J``, so the elementary
    probability at the threshold is the threshold); (2) :data:`CHUNK_SETS` sets at a time
    are hashed into band keys (:class:`~neardup.lsh.sets.SetHasher`); (3) the non-empty sets
    sharing a band's key are paired one band at a time; (4) the candidates' exact Jaccard
    (:func:`neardup.verify.exact_jaccard`) keeps those at or above the threshold. Every pair
    returned is true; one at the threshold is missed with probability ``(1 - t^r)^b``.

    Memory (LSH), besides ``sets``: the band keys, ``8 n b`` bytes (on disk with
    ``work_dir``: then one band, ``8 n`` bytes, plus its sort), one chunk of signatures
    (32 MiB at most), one chunk of candidate pairs and the close pairs (bounded by
    ``memory_bytes`` with ``work_dir``); the candidates are never all held.
    Time: ``O(N b r)`` hashing for ``N`` elements in all, plus the sorts and candidates.

    References
    ----------
    MMDS §3.3-3.4 and §3.6.3 (seed 001): MinHash, banding and amplification.

    Examples
    --------
    >>> import numpy as np
    >>> sets = ShingleSets(hashes=np.array([1, 2, 3, 4, 1, 2, 3, 4, 5, 7, 8, 9], np.uint64),
    ...                    offsets=np.array([0, 4, 9, 12]))
    >>> result = set_join(sets, JoinSpec(metric="jaccard", threshold=0.8))
    >>> list(zip(result.first.tolist(), result.second.tolist())), result.info["family"]
    ([(0, 1)], 'minhash')
    """
    return set_stream(sets, spec, work_dir=work_dir, memory_bytes=memory_bytes).result()


def set_stream(
    sets: ShingleSets,
    spec: JoinSpec,
    *,
    work_dir: Path | None = None,
    memory_bytes: int | None = None,
    progress: BandProgress | None = None,
) -> JoinStream:
    """:func:`set_join`'s pairs as a :class:`~neardup.join.result.JoinStream` (same arguments).

    ``progress``: told the bands done (:func:`~neardup.join.banded.banded_stream`).
    """
    if spec.metric not in ("jaccard", "containment"):
        raise ParameterError(
            "set_join joins item sets: JoinSpec.metric must be 'jaccard' or 'containment'; "
            f"got {spec.metric!r}."
        )
    t = jaccard_threshold(spec.threshold, "set_join")
    if spec.metric == "containment":
        return JoinStream.of(containment_join(sets, t))
    if spec.exact:
        return JoinStream.of(prefix_join(sets, t))
    sets = check_item_sets(sets, "set_join")
    # As the Spark engine plans: every set, empty ones included. One MinHash slot agrees with
    # probability J, so the sample's values are their collision probabilities.
    first, second = sample_pairs(len(sets), spec.seed)
    sample = exact_jaccard(sets, CandidatePairs(first=first, second=second))
    num_bands, num_rows = plan_bands(spec, t, sample, len(sets))
    prediction = predict(sample, num_bands, num_rows, len(sets))

    def at_threshold(threshold: float) -> int:
        bands = plan_bands(replace(spec, threshold=threshold), threshold, sample, len(sets))
        return predict(sample, *bands, len(sets))["measured_pairs"]

    warn_if_large(spec, prediction["measured_pairs"], at_threshold)
    total = len(sets) * (len(sets) - 1) // 2
    close = float(np.mean(sample >= t)) if sample.shape[0] else 0.0
    hasher = SetHasher(spec, num_bands=num_bands, num_rows=num_rows)
    return banded_stream(
        spec,
        len(sets),
        (hasher.keys(chunk) for chunk in _chunks(sets, CHUNK_SETS)),
        lambda first, second: exact_jaccard(sets, CandidatePairs(first=first, second=second)),
        num_bands=num_bands,
        num_rows=num_rows,
        p_near=t,
        active=sets.sizes() > 0,
        work_dir=work_dir,
        info={
            "family": "minhash",
            "sampled_pairs": len(sample),
            "prediction": {**prediction, "pairs": round(total * close)},
        },
        family=sensitivity(spec, t, sample, sample),
        memory_bytes=memory_bytes,
        progress=progress,
    )


def _chunks(sets: ShingleSets, size: int) -> Iterator[ShingleSets]:
    """Consecutive runs of ``size`` sets (the last shorter), offsets from 0."""
    for start in range(0, len(sets), size):
        bounds = sets.offsets[start : min(len(sets), start + size) + 1]
        yield ShingleSets(hashes=sets.hashes[bounds[0] : bounds[-1]], offsets=bounds - bounds[0])
