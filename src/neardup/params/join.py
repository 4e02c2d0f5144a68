"""How a similarity join over vectors, bit strings, item sets or strings is done.

The parameters of ``neardup join`` and :func:`neardup.similarity_join`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from neardup.errors import ParameterError
from neardup.kinds import METRICS
from neardup.params.rules import (
    MAX_SEED,
    Rule,
    Spec,
    boolean,
    integer,
    one_of,
    optional_integer,
    real,
)


def _metric_family(metric: str, family: str | None) -> str:
    return f"{metric!r}" + (f" with family {family!r}" if family else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinSpec(Spec):
    """How a similarity join finds close pairs: the metric, its threshold and the LSH family's.

    The family is the metric's (:data:`neardup.kinds.METRICS`); its elementary hashes are
    amplified by ``num_rows``-way AND within a band and ``num_bands``-way OR across bands (MMDS
    §3.6.3), chosen from the threshold, ``recall`` and the data when not given.

    Parameters
    ----------
    metric
        One of :data:`neardup.kinds.METRICS`.
    threshold
        A similarity for ``cosine`` and ``jaccard`` (pairs at or above it), a distance for
        ``hamming``, ``l1``, ``l2`` and ``edit`` (pairs at or below it; whole numbers for
        ``hamming`` and ``edit``).
    recall
        The chance the amplified family makes a pair exactly at the threshold a candidate, which
        the choice of ``num_bands`` and ``num_rows`` must reach.
    num_bands, num_rows
        *b* (OR) and *r* (AND); given together, or neither to choose them.
    max_hashes
        The most elementary hashes ``num_bands * num_rows`` the chooser may use.
    family
        The metric's LSH family by name, where it has several (``l1``: ``"cauchy"``, 1-stable
        projections into buckets, any range of values; ``"unary"``, seed 002's bit sampling of
        the unary code of values in ``[0, C]``); ``None``: the metric's default (the first).
    bucket_width
        ``l2``, and ``l1`` by projections: the width *a* of the buckets each random line is
        cut into (seed 002); ``None``: chosen from the threshold.
    max_value
        ``l1`` by the unary code only: the coordinates' range ``[0, C]`` (seed 002); ``None``:
        the largest coordinate of the data.
    qgram
        ``edit`` only: the length *q* of the q-grams that filter candidates.
    exact
        An exact filter instead of LSH where the metric has one (``jaccard``: length, prefix,
        position and suffix filtering, MMDS §3.9; ``edit`` always filters exactly): no false
        negatives.
    max_bucket_size
        Buckets up to this size yield all their pairs; in a larger one each item is paired with
        the ``max_bucket_size - 1`` before it (as in :class:`LSHSpec`).
    seed
        Seeds every random draw of the family.
    """

    metric: str = "cosine"
    threshold: float = 0.8
    recall: float = 0.95
    num_bands: int | None = None
    num_rows: int | None = None
    max_hashes: int = 1024
    family: str | None = None
    bucket_width: float | None = None
    max_value: int | None = None
    qgram: int = 2
    exact: bool = False
    max_bucket_size: int = 1000
    seed: int = 42

    _RULES: ClassVar[Mapping[str, Rule]] = {
        "metric": one_of(*METRICS),
        "threshold": real(-1.0, math.inf, high_open=True),
        "recall": real(0.0, 1.0, low_open=True, high_open=True),
        "num_bands": optional_integer(1, 4096),
        "num_rows": optional_integer(1, 4096),
        "max_hashes": integer(1, 65536),
        "family": Rule("None or a family's name", lambda v: v is None or isinstance(v, str)),
        "bucket_width": Rule(
            "None or a float > 0",
            lambda v: v is None or (real(0.0, math.inf, low_open=True, high_open=True).check(v)),
        ),
        "max_value": optional_integer(1, 2**31 - 1),
        "qgram": integer(1, 8),
        "exact": boolean(),
        "max_bucket_size": integer(2, 2**31 - 1),
        "seed": integer(0, MAX_SEED),
    }

    def __post_init__(self) -> None:
        self._validate()
        metric = METRICS[self.metric]
        above = self.threshold > metric.low if metric.low_open else self.threshold >= metric.low
        bounded = metric.high is None or self.threshold <= metric.high
        whole = not metric.integral or float(self.threshold).is_integer()
        if not (above and bounded and whole):
            kind = "a whole-number distance" if metric.integral else f"a {metric.measure}"
            opening = "(" if metric.low_open else "["
            closing = ", inf)" if metric.high is None else f", {metric.high:g}]"
            raise ParameterError(
                f"JoinSpec.threshold for {self.metric!r} must be {kind} in "
                f"{opening}{metric.low:g}{closing}; got {self.threshold!r}."
            )
        if (self.num_bands is None) != (self.num_rows is None):
            given = "num_bands" if self.num_rows is None else "num_rows"
            raise ParameterError(
                "JoinSpec.num_bands and JoinSpec.num_rows must be given together (or neither, "
                f"to choose them); got JoinSpec.{given} only."
            )
        if self.exact and not metric.has_exact_join:
            exact = [m.name for m in METRICS.values() if m.has_exact_join]
            raise ParameterError(
                f"JoinSpec.exact applies to {' and '.join(exact)}; got metric {self.metric!r}."
            )
        if self.family is not None and self.family not in metric.families:
            choices = {name: ", ".join(map(repr, m.families)) for name, m in METRICS.items()}
            choice = [f"{name!r} ({names})" for name, names in choices.items() if names]
            raise ParameterError(
                f"JoinSpec.family chooses among the families of {' and '.join(choice)}; got "
                f"{self.family!r} for metric {self.metric!r}."
            )
        family = self.family_name
        for name, owners in (
            ("bucket_width", (("l2", None), ("l1", "cauchy"))),
            ("max_value", (("l1", "unary"),)),
        ):
            if getattr(self, name) is not None and (self.metric, family) not in owners:
                where = " or ".join(_metric_family(m, f) for m, f in owners)
                raise ParameterError(
                    f"JoinSpec.{name} applies to metric {where}; got metric "
                    f"{_metric_family(self.metric, family)}."
                )

    @property
    def family_name(self) -> str | None:
        """The name of the family in use, where the metric has several (None otherwise)."""
        families = METRICS[self.metric].families
        return self.family or next(iter(families), None)
