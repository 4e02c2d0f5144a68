"""Choosing num_perm, bands and rows from an estimated distribution of pair similarities.

A pair of similarity *s* becomes a candidate with probability 1 - (1 - a(s)^r)^b (MMDS §3.4.2,
seed 001), where a(s) is the chance that one slot agrees (*s* itself for MinHash and OPH). Over
the estimated number of pairs at each similarity (:class:`PairDistribution`) that gives the
expected candidates, the expected recall over the pairs at or above the threshold, and the
candidates' precision; the measured rates (:class:`Rates`) turn a design into seconds, and a
per-document model into peak memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from neardup._types import F64Array, I64Array
from neardup.errors import ParameterError
from neardup.params import DedupConfig
from neardup.pipeline import VERIFY_BYTES_PER_BYTE

__all__ = [
    "GRID",
    "NUM_PERMS",
    "Design",
    "PairDistribution",
    "Rates",
    "choose_design",
    "peak_memory",
]

GRID = np.linspace(0.0, 1.0, 1001)
"""The similarities pairs are counted at: a pair of similarity *s* counts at ``floor(1000 s) /
1000``, a little below (so predicted candidate chances are never above the S-curve's)."""

NUM_PERMS = (64, 128, 256)
"""The signature lengths a plan chooses among."""

BASE_MEMORY = 210 * 2**20
"""Resident memory of ``neardup dedup`` before any data: Python, NumPy, numba and the kernels
(208 MB measured with ``/usr/bin/time -v`` on a two-line input)."""

BATCH_MEMORY_PER_BYTE = 7
"""Memory per byte of a read batch while it is sketched: the batch, the next one read ahead,
the normalised texts and the shingles' room (about four bytes per byte)."""

MEMORY_PER_DOC = 128
"""Memory per document kept between the passes: id, length, fingerprint, flags and the text
store's line span (about 60 bytes, with ids of about 20 bytes), and the cluster labels, keep
flags and similarities made at the end."""

MEMORY_PER_CANDIDATE = 48
"""Memory per candidate pair: its two documents and, while verified, its two similarities."""


@dataclass(frozen=True, slots=True, eq=False)
class PairDistribution:
    """Estimated numbers of document pairs at each similarity of :data:`GRID`.

    ``near[i]`` counts pairs at or above the threshold, ``far[i]`` those below it; both at
    ``GRID[i]`` (see :data:`GRID` for the rounding).
    """

    near: F64Array
    far: F64Array

    @classmethod
    def of(cls, similarity: F64Array, weights: F64Array, threshold: float) -> PairDistribution:
        """Pairs of the given similarities, each standing for ``weights`` pairs.

        Examples
        --------
        >>> d = PairDistribution.of(np.array([0.9, 0.5]), np.array([2.0, 3.0]), 0.8)
        >>> float(d.near.sum()), float(d.far[500])
        (2.0, 3.0)
        """
        bins = np.clip(np.floor(similarity * 1000 + 1e-9), 0, 1000).astype(np.int64)
        is_near = similarity >= threshold
        near = np.bincount(bins[is_near], weights=weights[is_near], minlength=1001)
        far = np.bincount(bins[~is_near], weights=weights[~is_near], minlength=1001)
        return cls(near=near.astype(np.float64), far=far.astype(np.float64))

    @property
    def num_near(self) -> float:
        """Pairs at or above the threshold."""
        return float(self.near.sum())


@dataclass(frozen=True, slots=True)
class Design:
    """A signature length and its banding: ``num_bands * num_rows <= num_perm``."""

    num_perm: int
    num_bands: int
    num_rows: int


def all_designs() -> I64Array:
    """``int64[k, 3]``: every ``(num_perm, num_bands, num_rows)`` of :data:`NUM_PERMS`."""
    return np.array(
        [(p, b, r) for p in NUM_PERMS for r in range(1, p + 1) for b in range(1, p // r + 1)],
        dtype=np.int64,
    )


def candidate_chances(agreement: F64Array, designs: I64Array) -> F64Array:
    """``float64[k, len(agreement)]``: 1 - (1 - a^r)^b for each design and slot agreement."""
    rows = designs[:, 2:3].astype(np.float64)
    bands = designs[:, 1:2].astype(np.float64)
    chance: F64Array = 1.0 - (1.0 - agreement[None, :] ** rows) ** bands
    return chance


@dataclass(frozen=True, slots=True)
class Rates:
    """What the work of a run costs, measured on the sample.

    Attributes
    ----------
    read_seconds
        Reading the whole input once (measured: the sampling pass).
    normalize_per_byte
        Seconds to normalise a byte of text.
    sketch_per_byte
        Seconds to shingle, sketch and key (what was) a byte of text once normalised, by
        ``num_perm``.
    band_per_key
        Seconds to sort one band key of one document into buckets.
    verify_per_pair
        Seconds to verify one pair exactly (texts taken again, shingled, intersected).
    """

    read_seconds: float
    normalize_per_byte: float
    sketch_per_byte: Mapping[int, float]
    band_per_key: float
    verify_per_pair: float

    def seconds(
        self, design: Design, candidates: float, num_bytes: int, num_distinct: float
    ) -> dict[str, float]:
        """Predicted seconds per stage for the whole input, and their ``total``.

        ``num_distinct``: documents with distinct texts (only those are banded).
        """
        parts = {
            "read": self.read_seconds,
            "normalize": self.normalize_per_byte * num_bytes,
            "sketch": self.sketch_per_byte[design.num_perm] * num_bytes,
            "candidates": self.band_per_key * num_distinct * design.num_bands,
            "verify": self.verify_per_pair * candidates,
        }
        return {**parts, "total": sum(parts.values())}


def peak_memory(
    num_docs: int, num_bytes: int, candidates: float, config: DedupConfig, batch_bytes: int
) -> int:
    """Predicted peak resident memory of ``neardup dedup`` (local engine), in bytes.

    :data:`BASE_MEMORY`, plus the larger of the sketching pass (:data:`BATCH_MEMORY_PER_BYTE`
    per byte of a batch of ``batch_bytes``, the run's ``ReadSpec.batch_bytes``) and the
    verification chunks (at most a quarter of the working memory,
    :data:`~neardup.pipeline.VERIFY_BYTES_PER_BYTE` per byte of text), plus
    :data:`MEMORY_PER_DOC` per document and :data:`MEMORY_PER_CANDIDATE` per candidate.
    """
    batch = BATCH_MEMORY_PER_BYTE * min(batch_bytes, num_bytes)
    verify = min(config.working_memory // 4, VERIFY_BYTES_PER_BYTE * num_bytes)
    return int(
        BASE_MEMORY
        + max(batch, verify)
        + MEMORY_PER_DOC * num_docs
        + MEMORY_PER_CANDIDATE * candidates
    )


@dataclass(frozen=True, slots=True)
class Choice:
    """The chosen design and what it is expected to do on the whole input."""

    design: Design
    chance_at_threshold: float
    """The S-curve at the threshold: the recall promised for pairs exactly at it (and so, at
    least, for every pair above it)."""
    expected_recall: float
    """Over the estimated pairs at or above the threshold (NaN when none were seen)."""
    precision: float
    """Expected share of the candidates at or above the threshold (NaN: no candidate)."""
    candidates: float
    meets_recall: bool
    meets_precision: bool
    seconds: dict[str, float]


def choose_design(
    distribution: PairDistribution,
    agreement: Callable[[float], float],
    *,
    threshold: float,
    recall: float,
    precision: float,
    cost: Callable[[Design, float], dict[str, float]],
) -> Choice:
    """The cheapest design whose S-curve at ``threshold`` reaches ``recall``.

    Among those, the cheapest whose candidates' expected precision reaches ``precision``;
    when none does, the most precise (``meets_precision`` False); when no design reaches
    ``recall``, the one that comes closest (``meets_recall`` False). ``agreement(s)``: the
    chance that one slot of a pair at similarity ``s`` agrees; ``cost(design, candidates)``:
    the predicted seconds per stage with a ``"total"``.
    """
    if not 0.0 < threshold <= 1.0:
        raise ParameterError(f"plan.threshold must be a float in (0, 1]; got {threshold!r}.")
    designs = all_designs()
    chance = candidate_chances(np.array([agreement(float(s)) for s in GRID]), designs)
    candidates = chance @ (distribution.near + distribution.far)
    found = chance @ distribution.near
    at_threshold = candidate_chances(np.array([agreement(threshold)]), designs)[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        recalls = found / distribution.num_near
        precisions = np.where(candidates > 0, found / candidates, np.nan)
    designs_of = [Design(int(p), int(b), int(r)) for p, b, r in designs.tolist()]
    totals = np.array([cost(d, c)["total"] for d, c in zip(designs_of, candidates, strict=True)])
    meets_recall = at_threshold >= recall
    is_precise = np.isnan(precisions) | (precisions >= precision)
    if not meets_recall.any():
        order = np.lexsort((totals, -at_threshold))
    elif (meets_recall & is_precise).any():
        order = np.lexsort((totals, ~(meets_recall & is_precise)))
    else:
        order = np.lexsort((totals, -np.nan_to_num(precisions), ~meets_recall))
    best = int(order[0])
    design = designs_of[best]
    return Choice(
        design=design,
        chance_at_threshold=float(at_threshold[best]),
        expected_recall=float(recalls[best]),
        precision=float(precisions[best]),
        candidates=float(candidates[best]),
        meets_recall=bool(meets_recall[best]),
        meets_precision=bool(is_precise[best]),
        seconds=cost(design, float(candidates[best])),
    )
