"""The LSH join every family shares: plan the bands, hash into band keys, pair, verify.

A join over vectors (:mod:`neardup.join.vectors`) or item sets (:mod:`neardup.join.sets`)
differs only in its family and its exact measure; the steps are these, and the Spark engine
plans with the same functions so that both engines choose the same bands:

1. :func:`sample_pairs`: :data:`SAMPLE_PAIRS` random pairs of items, seeded by the spec, whose
   exact values stand for the far pairs;
2. :func:`plan_bands`: the spec's ``num_bands`` and ``num_rows``, or the cheapest that reach
   ``spec.recall`` at the threshold (:func:`~neardup.lsh.amplify.choose_amplification`);
   :func:`predict` then says how many pairs the bands will measure, and :func:`warn_if_large`
   warns before any work when that is many;
3. :func:`banded_stream`: band keys appended chunk by chunk (spilled with a work directory);
   one band at a time, the pairs sharing a key are generated in chunks of bounded size,
   measured exactly at once, and only those within the threshold kept, in a
   :class:`~neardup.io.spill.PairRuns` (spilled beyond its budget) that gives them back sorted
   and each once (a pair sharing keys in several bands is measured in each).

Memory: the band keys (``8 n b`` bytes, on disk with a work directory), one band's sort (about
``40 n`` bytes), one chunk of candidate pairs (:data:`CHUNK_PAIR_BYTES` a pair) and the close
pairs' buffer: with ``memory_bytes``, a quarter of it each for the chunk and the buffer, so the
candidates are never all held at once, however many there are.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import astuple
from pathlib import Path
from typing import Any

import numpy as np

from neardup._types import BoolArray, F64Array, I64Array, U64Array
from neardup.errors import NeardupWarning, advice
from neardup.io.spill import KeyColumns, PairRuns
from neardup.join.distances import within_threshold
from neardup.join.result import JoinResult, JoinStream
from neardup.kinds import METRICS
from neardup.lsh.amplify import Amplification, Sensitivity, choose_amplification
from neardup.lsh.banding import bucket_pair_chunks, equal_key_groups
from neardup.params import JoinSpec

__all__ = [
    "CHUNK_PAIR_BYTES",
    "LARGE_JOIN",
    "SAMPLE_PAIRS",
    "VERIFY_PAIRS",
    "BandProgress",
    "band_info",
    "banded_join",
    "banded_stream",
    "plan_bands",
    "predict",
    "sample_pairs",
    "sensitivity",
    "warn_if_large",
]

SAMPLE_PAIRS = 4000
"""Random pairs of the data measured to weigh the candidate cost of each amplification."""

VERIFY_PAIRS = 1 << 20
"""Candidate pairs measured at once when no memory budget is given."""

CHUNK_PAIR_BYTES = 40
"""Bytes a candidate pair takes while its chunk is measured (the pair, its value, the kept)."""

LARGE_JOIN = 50_000_000
"""Pairs to measure from which a join warns before it starts, with a threshold that cuts them."""

BandProgress = Callable[[int, int], object]
"""Told ``(bands done, bands in all)`` as a banded join goes (a ``neardup._progress.Progress``)."""

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

    Warns
    -----
    NeardupWarning
        When no bands within ``spec.max_hashes`` reach the recall: the best are used, and the
        message names what a user can change (the threshold, the recall, the bands).
    """
    if spec.num_bands is not None and spec.num_rows is not None:
        return spec.num_bands, spec.num_rows
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chosen = choose_amplification(
            p_near,
            recall=spec.recall,
            max_hashes=spec.max_hashes,
            far_probabilities=sample if sample is not None and sample.shape[0] else None,
            num_items=num_items,
        )
    for warning in caught:
        if not issubclass(warning.category, NeardupWarning):
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
            continue
        b, r = chosen.as_bands()
        reached = float(chosen.probability(p_near))
        nearer = "higher" if METRICS[spec.metric].measure == "similarity" else "lower"
        options = [
            advice("--threshold", f"a {nearer} --threshold"),
            advice("--recall", f"a lower --recall (now {spec.recall:g})"),
            advice("--bands", "more bands and fewer rows (--bands, --rows)"),
        ]
        named = [option for option in options if option]
        hint = f"; {' or '.join(named)} would reach it" if named else ""
        warnings.warn(
            f"a pair at the threshold becomes a candidate with probability {reached:.4f} at "
            f"most ({b} bands of {r} rows, the best of {spec.max_hashes} hashes), short of the "
            f"recall {spec.recall:g} asked{hint}.",
            NeardupWarning,
            stacklevel=2,
        )
    return chosen.as_bands()


def predict(
    probabilities: F64Array, num_bands: int, num_rows: int, num_items: int
) -> dict[str, int]:
    """What bands of ``num_rows`` will meet among ``num_items`` items, from a sample of pairs.

    ``probabilities``: the sampled pairs' elementary collision probabilities ``q``. Over the
    ``N = n (n - 1) / 2`` pairs, ``candidate_pairs`` is ``N`` times the mean of
    ``1 - (1 - q^r)^b`` (pairs sharing a key in some band) and ``measured_pairs`` ``N`` times
    the mean of ``b q^r`` (bucket pairs, a pair counted once per band it shares: what the
    join measures). Giant buckets, which pair fewer, are not foreseen.

    Examples
    --------
    >>> predict(np.array([0.5, 0.5]), num_bands=4, num_rows=2, num_items=101)
    {'candidate_pairs': 3452, 'measured_pairs': 5050}
    """
    total = num_items * (num_items - 1) / 2
    if not probabilities.shape[0] or total == 0:
        return {"candidate_pairs": 0, "measured_pairs": 0}
    band = np.asarray(probabilities, dtype=np.float64) ** num_rows
    found = 1.0 - (1.0 - band) ** num_bands
    return {
        "candidate_pairs": round(total * float(found.mean())),
        "measured_pairs": round(total * num_bands * float(band.mean())),
    }


def warn_if_large(
    spec: JoinSpec,
    measured: int,
    at_threshold: Callable[[float], int],
    *,
    limit: int = LARGE_JOIN,
) -> float | None:
    """Warn before the work when a join will measure more than ``limit`` pairs.

    ``measured``: the pairs :func:`predict` expects; ``at_threshold(t)``: those it expects at
    threshold ``t`` (bands chosen again). The warning names the nearest threshold of a grid
    towards the strict end that brings them under ``limit`` (returned), or, with the bands
    given, says that more rows cut them.
    """
    if measured <= limit:
        return None
    metric = METRICS[spec.metric]
    head = (
        f"this join will measure about {measured:,} candidate pairs (predicted from "
        f"{SAMPLE_PAIRS:,} random pairs); it stays within its memory, but takes long"
    )
    if spec.num_bands is not None:
        hint = advice("--rows", "; more rows a band (--rows) cut them")
        warnings.warn(head + hint + ".", NeardupWarning, stacklevel=2)
        return None
    strict = metric.high if metric.measure == "similarity" else metric.low
    suggested = None
    if strict is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NeardupWarning)
            for step in np.linspace(spec.threshold, strict, 41)[1:-1].tolist():
                t = float(round(step) if metric.integral else round(step, 3))
                if t == spec.threshold:
                    continue
                cut = at_threshold(t)
                if cut <= limit:
                    suggested = (t, cut)
                    break
    if suggested is None:
        warnings.warn(head + ".", NeardupWarning, stacklevel=2)
        return None
    t, cut = suggested
    hint = advice("--threshold", f"; --threshold {t:g} would cut them to about {cut:,}")
    warnings.warn(head + hint + ".", NeardupWarning, stacklevel=2)
    return t


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
    """:func:`banded_stream`'s pairs, all in memory: a :class:`JoinResult`."""
    return banded_stream(
        spec,
        num_items,
        key_chunks,
        measure,
        num_bands=num_bands,
        num_rows=num_rows,
        p_near=p_near,
        active=active,
        work_dir=work_dir,
        info=info,
        family=family,
    ).result()


def banded_stream(
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
    memory_bytes: int | None = None,
    progress: BandProgress | None = None,
) -> JoinStream:
    """Pairs sharing a band key, measured by ``measure(first, second)``, kept within threshold.

    ``key_chunks`` yields ``uint64[rows, num_bands]`` keys of consecutive items; ``active``
    marks the items that may pair (all by default). One band at a time, the bucket pairs
    are generated in chunks (at most ``memory_bytes / 4`` bytes of them, or
    :data:`VERIFY_PAIRS` pairs without a budget), measured at once and the close ones kept
    in a :class:`~neardup.io.spill.PairRuns` of ``memory_bytes / 4`` (in ``work_dir``; in
    memory without it, or without a budget). ``info`` is extended with the bands, the
    predicted recall, the counts and, given the elementary ``family``'s sensitivity (see
    :func:`sensitivity`), the amplified one (MMDS §3.6.3); ``num_candidates`` counts the
    bucket pairs measured, a pair once for each band it shares a key in. ``progress`` is told
    ``(bands done, num_bands)`` after each band.
    """
    keys = KeyColumns(work_dir)
    for chunk in key_chunks:
        keys.append(chunk)
    if memory_bytes is None:
        chunk_pairs = VERIFY_PAIRS
        close = PairRuns(num_items, None, memory_bytes=1 << 62)
    else:
        chunk_pairs = max(1024, memory_bytes // 4 // CHUNK_PAIR_BYTES)
        close = PairRuns(num_items, work_dir, memory_bytes=max(1, memory_bytes // 4))
    docs = np.arange(num_items, dtype=np.int64)
    if active is not None:
        docs = docs[active]
    cap = spec.max_bucket_size
    num_measured = num_giant = largest = num_skipped = 0
    for band in range(num_bands):
        if docs.shape[0]:
            largest = max(largest, 1)
        members, bounds = equal_key_groups(keys.column(band)[docs])
        if bounds.shape[0] < 2:
            continue
        sizes = np.diff(bounds)
        num_giant += int(np.count_nonzero(sizes > cap))
        num_skipped += skipped_bucket_pairs(sizes, cap)
        largest = max(largest, int(sizes.max()))
        members = docs[members]
        for first, second in bucket_pair_chunks(members, bounds, cap, chunk_pairs):
            value = measure(first, second)
            kept = within_threshold(spec.metric, value, spec.threshold)
            close.add(first[kept], second[kept], value[kept])
            num_measured += int(first.shape[0])
        if progress is not None:
            progress(band + 1, num_bands)
    found = {
        **(info or {}),
        **band_info(num_bands, num_rows, p_near, family),
        "num_candidates": num_measured,
        "num_giant_buckets": num_giant,
        "largest_bucket": largest,
        "bucket_pairs_skipped": num_skipped,
        "spilled_runs": close.num_runs if work_dir is not None else 0,
    }
    warn_of_skipped_pairs(num_skipped, num_giant, largest, cap, found["predicted_recall"])
    return JoinStream(chunks=close.chunks, metric=spec.metric, info=found)


def skipped_bucket_pairs(sizes: I64Array, cap: int) -> int:
    """Pairs of buckets of ``sizes`` that the ``cap`` leaves unmeasured.

    A bucket of ``s > cap`` items pairs each with the ``cap - 1`` before it
    (:func:`~neardup.lsh.banding.bucket_pair_chunks`): ``(cap - 1) (s - cap / 2)`` of its
    ``s (s - 1) / 2`` pairs.

    Examples
    --------
    >>> skipped_bucket_pairs(np.array([3, 5]), 3)  # 10 pairs in the bucket of 5, 7 measured
    3
    """
    giant = sizes[sizes > cap].astype(np.int64)
    every = giant * (giant - 1) // 2
    measured = (cap - 1) * cap // 2 + (giant - cap) * (cap - 1)
    return int((every - measured).sum())


def warn_of_skipped_pairs(
    num_skipped: int, num_giant: int, largest: int, cap: int, predicted: float
) -> None:
    """Say that the bucket cap left pairs unmeasured, so the recall may fall short."""
    if not num_skipped:
        return
    fix = advice("--max-bucket-size", "; a larger --max-bucket-size measures them")
    warnings.warn(
        f"{num_skipped:,} pairs of {num_giant:,} buckets larger than {cap:,} items (largest "
        f"{largest:,}) were not measured, so the recall may fall short of the predicted "
        f"{predicted:.2f}: a close pair among them is found only if another band pairs it"
        f"{fix} (a bucket of s items measures s (s - 1) / 2 pairs).",
        NeardupWarning,
        stacklevel=3,
    )
