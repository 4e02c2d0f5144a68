"""Amplifying an LSH family (MMDS §3.6): AND and OR constructions, and their choice.

A family of hash functions is *(d1, d2, p1, p2)-sensitive* when two items at most ``d1`` apart
agree under a random member with probability at least ``p1``, and two items at least ``d2``
apart with probability at most ``p2`` (MMDS §3.6.1; seed 002 writes the same for Hamming
distance as *(c, r, P1, P2)* with ``d1 = r`` and ``d2 = c r``). An AND of ``r`` members (all
must agree) maps a collision probability ``p`` to ``p^r``; an OR of ``b`` members (any may
agree) maps it to ``1 - (1 - p)^b`` (MMDS §3.6.3). LSH banding is AND within a band of ``r``
rows, then OR across ``b`` bands: the S-curve ``1 - (1 - p^r)^b``.

:class:`Amplification` is such a sequence of steps as a value; :func:`choose_amplification`
picks the bands for a join from the collision probability at the threshold, the recall wanted
and a sample of the data's pairs. The families that amplify their hashes into band keys are
:class:`neardup.lsh.family.AmplifiedHasher`'s.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from neardup._types import F64Array
from neardup.errors import NeardupWarning, ParameterError

__all__ = ["Amplification", "Sensitivity", "choose_amplification"]

StepKind = Literal["and", "or"]
Step = tuple[StepKind, int]


def _figure(x: float) -> str:
    """``x`` to four decimal places, as MMDS prints its figures, without trailing zeros."""
    return f"{round(x, 4):g}"


@dataclass(frozen=True, slots=True)
class Sensitivity:
    """A *(d1, d2, p1, p2)-sensitive* family (MMDS §3.6.1).

    Items at most ``d1`` apart collide with probability at least ``p1``; items at least ``d2``
    apart with probability at most ``p2``. ``d1`` is the near end and ``d2`` the far end:
    for a distance ``d1 < d2``; for a similarity (cosine, Jaccard) the same statement reads
    with similarity values, "at least ``d1`` similar" and "at most ``d2`` similar", so there
    ``d1 > d2``. Amplification changes the probabilities only.

    Parameters
    ----------
    d1, d2
        The near and the far distance (or similarity).
    p1, p2
        The collision probabilities at (and beyond) them, in ``[0, 1]``.

    Examples
    --------
    Seed 002's bit sampling on N-bit strings: ``(c, r, P1, P2) = (2, N/3, 2/3, 1/3)``.

    >>> print(Sensitivity(100, 200, 2 / 3, 1 / 3))
    (100, 200, 0.6667, 0.3333)
    """

    d1: float
    d2: float
    p1: float
    p2: float

    def __post_init__(self) -> None:
        for name in ("d1", "d2"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value):
                raise ParameterError(f"Sensitivity.{name} must be a finite number; got {value!r}.")
        for name in ("p1", "p2"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
                raise ParameterError(
                    f"Sensitivity.{name} must be a float in [0, 1]; got {value!r}."
                )

    def __str__(self) -> str:
        return f"({', '.join(_figure(v) for v in (self.d1, self.d2, self.p1, self.p2))})"


def _probabilities(p: float | ArrayLike, owner: str) -> F64Array:
    """``p`` as a float64 array, every value a probability in ``[0, 1]``."""
    array = np.asarray(p, dtype=np.float64)
    if not np.all((array >= 0.0) & (array <= 1.0)):  # also refuses NaN
        bad = array[~((array >= 0.0) & (array <= 1.0))].reshape(-1)[0]
        raise ParameterError(f"{owner} takes probabilities in [0, 1]; got {float(bad)!r}.")
    return array


@dataclass(frozen=True, slots=True)
class Amplification:
    """A sequence of AND and OR constructions applied to an LSH family (MMDS §3.6.3).

    Each step combines members of the family built so far: ``("and", r)`` makes a function that
    agrees when all ``r`` agree (probability ``p^r``), ``("or", b)`` one that agrees when any of
    ``b`` agrees (``1 - (1 - p)^b``). Steps apply in order to the elementary collision
    probability; the empty sequence is the family itself.

    Parameters
    ----------
    steps
        ``(kind, size)`` pairs, ``kind`` ``"and"`` or ``"or"``, ``size >= 1``.

    Examples
    --------
    MMDS §3.6.3: a 4-way AND then a 4-way OR turns a (0.2, 0.6, 0.8, 0.4)-sensitive family
    into a (0.2, 0.6, 0.8785, 0.0985)-sensitive one of 16 functions.

    >>> bands = Amplification.bands(num_bands=4, num_rows=4)
    >>> print(bands)
    AND(4) then OR(4)
    >>> print(bands.describe(Sensitivity(0.2, 0.6, 0.8, 0.4)))
    AND(4) then OR(4): (0.2, 0.6, 0.8, 0.4) -> (0.2, 0.6, 0.8785, 0.0985)
    >>> bands.num_hashes, bands.as_bands()
    (16, (4, 4))
    >>> or_and = Amplification.or_(4).then(Amplification.and_(4))
    >>> print(or_and.apply(Sensitivity(0.2, 0.6, 0.8, 0.4)))
    (0.2, 0.6, 0.9936, 0.574)
    """

    steps: tuple[Step, ...] = ()

    def __post_init__(self) -> None:
        for step in self.steps:
            kind, size = step if isinstance(step, tuple) and len(step) == 2 else (None, None)
            if kind not in ("and", "or") or not is_count(size):
                raise ParameterError(
                    f"Amplification.steps must be ('and' or 'or', int >= 1) pairs; got {step!r}."
                )

    @classmethod
    def and_(cls, num_rows: int) -> Amplification:
        """An ``r``-way AND: the combined function agrees when all ``r`` agree."""
        return cls((("and", num_rows),))

    @classmethod
    def or_(cls, num_bands: int) -> Amplification:
        """A ``b``-way OR: the combined function agrees when any of ``b`` agrees."""
        return cls((("or", num_bands),))

    @classmethod
    def bands(cls, num_bands: int, num_rows: int) -> Amplification:
        """LSH banding (MMDS §3.4): an AND of ``num_rows`` within a band, an OR of the bands."""
        return cls((("and", num_rows), ("or", num_bands)))

    @classmethod
    def near_neighbour(cls, num_items: int, sensitivity: Sensitivity) -> Amplification:
        """Seed 002's tables for a near-neighbour probe over ``num_items`` stored items.

        ``k = ceil(log n / log(1/P2))`` rows a band, so that an item at ``d2`` or beyond
        shares one band's key with a query with probability at most ``P2^k <= 1/n``, and at
        most ``L`` far entries are met in expectation over ``L`` bands; ``L = ceil(P1^-k)``
        bands, the seed's ``L = n^ρ`` (``ρ = log(1/P1) / log(1/P2)``; ``P1^-k >= n^ρ`` once
        ``k`` is rounded up), so that an item within ``d1`` shares some band with probability
        at least ``1 - (1 - P1^k)^L >= 1 - 1/e``. Probing at most ``2L`` entries
        (:meth:`neardup.index.VectorIndex.query` with ``probe_limit=True``) then
        answers with an item within ``d2`` with probability at least ``1/2 - 1/e`` when one
        within ``d1`` is stored.

        Parameters
        ----------
        num_items
            *n*, at least 2.
        sensitivity
            The family's ``(d1, d2, P1, P2)``, with ``0 < P2 < P1``.

        Examples
        --------
        Bit sampling of 256-bit strings, near at 8 bits and far at 24 (``c = 3``), 2,310
        items: ``P1 = 31/32``, ``P2 = 29/32``, ``ρ = 0.322``.

        >>> tables = Amplification.near_neighbour(2310, Sensitivity(8, 24, 31 / 32, 29 / 32))
        >>> tables.as_bands()
        (13, 79)
        """
        if not is_count(num_items) or num_items < 2:
            raise ParameterError(
                f"Amplification.near_neighbour num_items must be an int >= 2; got {num_items!r}."
            )
        p1, p2 = sensitivity.p1, sensitivity.p2
        if not 0.0 < p2 < p1:
            raise ParameterError(
                "Amplification.near_neighbour needs 0 < P2 < P1 (far items collide less than "
                f"near ones); got P1 = {p1!r}, P2 = {p2!r}."
            )
        num_rows = math.ceil(math.log(num_items) / -math.log(p2))
        num_bands = math.ceil(p1**-num_rows)
        return cls.bands(num_bands, num_rows)

    def then(self, other: Amplification) -> Amplification:
        """The construction ``self`` followed by ``other``, applied to the family it made."""
        return Amplification(self.steps + other.steps)

    @property
    def num_hashes(self) -> int:
        """Elementary hash functions the construction uses: the product of the step sizes."""
        return math.prod(size for _, size in self.steps)

    def probability(self, p: float | ArrayLike) -> float | F64Array:
        """The collision probability of the amplified family, given the elementary one ``p``.

        Vectorised: ``p`` may be an array of probabilities.

        Examples
        --------
        >>> round(float(Amplification.bands(20, 5).probability(0.8)), 4)
        0.9996
        """
        q = _probabilities(p, "Amplification.probability")
        for kind, size in self.steps:
            # OR as -expm1(b log1p(-p)): exact for the tiny p an AND leaves behind (p = 1 takes
            # log1p(-1) = -inf, and gives 1).
            with np.errstate(divide="ignore"):
                q = q**size if kind == "and" else -np.expm1(size * np.log1p(-q))
        return float(q) if q.ndim == 0 else q

    def apply(self, sensitivity: Sensitivity) -> Sensitivity:
        """The sensitivity of the amplified family: same distances, amplified probabilities."""
        return Sensitivity(
            sensitivity.d1,
            sensitivity.d2,
            float(self.probability(sensitivity.p1)),
            float(self.probability(sensitivity.p2)),
        )

    def describe(self, sensitivity: Sensitivity) -> str:
        """The steps and what they make of ``sensitivity``, for logs and summaries."""
        return f"{self}: {sensitivity} -> {self.apply(sensitivity)}"

    def as_bands(self) -> tuple[int, int]:
        """``(num_bands, num_rows)`` of an AND-then-OR construction (what families hash).

        Raises
        ------
        ParameterError
            When the construction is not one AND followed by one OR.
        """
        match self.steps:
            case (("and", num_rows), ("or", num_bands)):
                return num_bands, num_rows
        raise ParameterError(
            f"Amplification {self} is not bands (one AND then one OR); families hash bands."
        )

    def __str__(self) -> str:
        if not self.steps:
            return "the family itself"
        return " then ".join(f"{kind.upper()}({size})" for kind, size in self.steps)


def is_count(value: object) -> bool:
    """Whether ``value`` is an int >= 1 (and not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


_FAR_GRID = 1000
"""Points of the uniform grid standing for the far pairs when no sample of pairs is given."""

_BLOCK = 1 << 22
"""Probabilities evaluated at once while costing the candidate bands (bounds the memory)."""


def choose_amplification(
    p_near: float,
    *,
    recall: float,
    max_hashes: int,
    far_probabilities: ArrayLike | None = None,
    num_items: int | None = None,
) -> Amplification:
    """The bands (AND of ``r``, OR of ``b``) that reach ``recall`` at the threshold most cheaply.

    Among ``b * r <= max_hashes`` whose candidate probability ``1 - (1 - p_near^r)^b`` is at
    least ``recall``, the one of least cost::

        cost = b * n  +  n (n - 1) / 2 * mean over q of (1 - (1 - q^r)^b)

    the keys to hash and sort (one per item and band), plus the expected candidate pairs to
    verify, where the ``q`` are the elementary collision probabilities of a random sample of
    the data's pairs (``far_probabilities``: nearly all random pairs are far). Ties go to
    fewer hashes, then fewer bands.

    Parameters
    ----------
    p_near
        The elementary collision probability at the threshold (the family's
        ``collision_probability(threshold)``).
    recall
        The candidate probability wanted for a pair exactly at the threshold (pairs nearer
        are found with a higher one).
    max_hashes
        The most elementary hashes ``b * r``.
    far_probabilities
        Elementary collision probabilities of a random sample of pairs; ``None``: spread
        uniformly below ``p_near`` (see Notes).
    num_items
        *n*, the items to join; ``None``: only the candidate fraction counts (the mean above).

    Returns
    -------
    Amplification
        ``Amplification.bands(b, r)``; :meth:`Amplification.as_bands` gives ``(b, r)``.

    Warns
    -----
    NeardupWarning
        When no ``b * r <= max_hashes`` reaches ``recall``: the bands with the highest recall
        are returned, and the message says what they reach.

    Notes
    -----
    For a fixed ``r`` both terms of the cost grow with ``b``, so only the least ``b``
    reaching the recall is costed for each ``r``: one candidate per ``r``.

    Without a sample the far pairs are taken as spread uniformly over the collision
    probabilities below the threshold, so the candidate term is the false-positive area
    under the S-curve that :func:`~neardup.lsh.banding.choose_bands` weighs for shingle sets,
    and the same cost is minimised. Seed 002's rule ``r = ceil(log n / log(1 / p2))`` (with
    ``n^rho`` tables) was not taken: it needs ``p2``, the collision probability of the far
    pairs, which is exactly what is unknown without a sample; it bounds the far collisions
    of one query (for its 2L cut-off) rather than the cost of a join; and it reaches a recall
    of ``1 - 1/e``, not the one asked for.

    References
    ----------
    MMDS §3.4.2 and §3.6.3 (seed 001); seed 002, "Analysis: few far points collide".

    Examples
    --------
    >>> a = choose_amplification(0.9, recall=0.95, max_hashes=256)
    >>> a.as_bands(), round(float(a.probability(0.9)), 4)
    ((15, 16), 0.9538)
    >>> far = np.full(1000, 0.5)  # random pairs: half their elementary hashes agree
    >>> choose_amplification(0.9, recall=0.95, max_hashes=256, far_probabilities=far,
    ...                      num_items=10_000).as_bands()
    (13, 15)
    """
    p = float(_probabilities(p_near, "choose_amplification p_near"))
    if not isinstance(recall, int | float) or not 0.0 < recall < 1.0:
        raise ParameterError(f"choose_amplification recall must be in (0, 1); got {recall!r}.")
    if not is_count(max_hashes):
        raise ParameterError(
            f"choose_amplification max_hashes must be an int >= 1; got {max_hashes!r}."
        )
    if num_items is not None and (not isinstance(num_items, int) or num_items < 0):
        raise ParameterError(
            f"choose_amplification num_items must be None or an int >= 0; got {num_items!r}."
        )
    if far_probabilities is None:
        far = (np.arange(_FAR_GRID) + 0.5) * (p / _FAR_GRID)
    else:
        far = _probabilities(far_probabilities, "choose_amplification far_probabilities")
        far = far.reshape(-1)
        if far.shape[0] == 0:
            raise ParameterError("choose_amplification far_probabilities is empty.")
    values, counts = np.unique(far, return_counts=True)
    weights = counts / far.shape[0]

    rows = np.arange(1, max_hashes + 1, dtype=np.int64)
    num_bands = _least_bands(p, recall, rows)
    feasible = num_bands * rows <= max_hashes
    if not np.any(feasible):
        num_bands = max_hashes // rows  # the most bands each r allows: its highest recall
        reached = _recall(p, num_bands, rows)
        best = reached == reached.max()
        rows, num_bands = rows[best], num_bands[best]
    else:
        rows, num_bands = rows[feasible], num_bands[feasible]
    fraction = _candidate_fraction(values, weights, num_bands, rows)
    if num_items is None:
        cost = fraction
    else:
        cost = num_bands * float(num_items) + num_items * (num_items - 1) / 2 * fraction
    choice = int(np.lexsort((num_bands, num_bands * rows, cost))[0])
    b, r = int(num_bands[choice]), int(rows[choice])
    amplification = Amplification.bands(b, r)
    if not np.any(feasible):
        warnings.warn(
            f"choose_amplification: no b bands of r rows with b * r <= {max_hashes} reach "
            f"recall {recall:g} at collision probability {p:.4g}; the best, {b} bands of "
            f"{r} rows, reach {float(amplification.probability(p)):.4f}. Raise max_hashes "
            "or lower the recall (or the threshold's distance).",
            NeardupWarning,
            stacklevel=2,
        )
    return amplification


def _recall(p: float, num_bands: NDArray[np.int64], rows: NDArray[np.int64]) -> F64Array:
    """``1 - (1 - p^r)^b`` for each ``(b, r)``, as :meth:`Amplification.probability`."""
    with np.errstate(divide="ignore"):  # p = 1: log1p(-1) = -inf, recall 1
        recall: F64Array = -np.expm1(num_bands * np.log1p(-(p ** rows.astype(np.float64))))
    return recall


def _least_bands(p: float, recall: float, rows: NDArray[np.int64]) -> NDArray[np.int64]:
    """For each ``r``, the least ``b`` with ``1 - (1 - p^r)^b >= recall`` (huge if none)."""
    agree = p ** rows.astype(np.float64)
    with np.errstate(divide="ignore", over="ignore"):  # p^r underflows for long bands
        estimate = np.log1p(-recall) / np.log1p(-agree)  # 0 where agree == 1, inf where 0
    never = np.iinfo(np.int64).max // (2 * max(int(rows[-1]), 1))
    bands = np.where(np.isfinite(estimate), np.ceil(np.minimum(estimate, never)), never)
    bands = np.maximum(bands, 1).astype(np.int64)
    # The logarithms may round across an integer: settle b on the probability itself.
    short = _recall(p, bands, rows) < recall
    bands[short & (bands < never)] += 1
    fewer = (bands > 1) & (_recall(p, np.maximum(bands - 1, 1), rows) >= recall)
    bands[fewer] -= 1
    return bands


def _candidate_fraction(
    values: F64Array, weights: F64Array, num_bands: NDArray[np.int64], rows: NDArray[np.int64]
) -> F64Array:
    """For each ``(b, r)``: the weighted mean of ``1 - (1 - q^r)^b`` over the ``values`` q."""
    out = np.empty(rows.shape[0], dtype=np.float64)
    step = max(1, _BLOCK // max(values.shape[0], 1))
    for start in range(0, rows.shape[0], step):
        r = rows[start : start + step, None].astype(np.float64)
        b = num_bands[start : start + step, None].astype(np.float64)
        with np.errstate(divide="ignore"):  # q = 1: log1p(-1) = -inf, always a candidate
            candidate = -np.expm1(b * np.log1p(-(values[None, :] ** r)))
        out[start : start + step] = candidate @ weights
    return out
