"""Amplification as a value, and the choice of bands against a brute-force scan of every b x r."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neardup.errors import NeardupWarning, ParameterError
from neardup.lsh import Amplification, Sensitivity, choose_amplification


def _composed(steps: list[tuple[str, int]], p: float) -> float:
    """The plain formulas, one step at a time: AND p^r, OR 1 - (1 - p)^b."""
    for kind, size in steps:
        p = p**size if kind == "and" else 1 - (1 - p) ** size
    return p


@pytest.mark.parametrize(
    "steps",
    [
        [],
        [("and", 5)],
        [("or", 3)],
        [("and", 3), ("or", 7)],
        [("or", 2), ("and", 4), ("or", 3), ("and", 2)],
    ],
)
def test_probability_composes_the_steps_in_order(steps: list[tuple[str, int]]) -> None:
    amplification = Amplification(tuple(steps))  # type: ignore[arg-type]
    grid = np.linspace(0, 1, 41)
    expected = [_composed(steps, float(p)) for p in grid]
    assert np.allclose(amplification.probability(grid), expected, rtol=1e-12, atol=1e-15)
    for p, want in zip(grid.tolist(), expected, strict=True):
        assert amplification.probability(p) == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert amplification.num_hashes == math.prod(size for _, size in steps)


def test_then_concatenates_and_is_associative() -> None:
    a, b, c = Amplification.and_(2), Amplification.or_(3), Amplification.and_(4)
    assert a.then(b).then(c) == a.then(b.then(c))
    assert a.then(b).then(c).steps == (("and", 2), ("or", 3), ("and", 4))
    assert Amplification().then(a) == a == a.then(Amplification())
    assert Amplification().probability(0.37) == 0.37


def test_amplifications_are_frozen_hashable_values() -> None:
    bands = Amplification.bands(20, 5)
    assert bands == Amplification.and_(5).then(Amplification.or_(20))
    assert len({bands, Amplification.bands(20, 5), Amplification.bands(5, 20)}) == 2
    with pytest.raises(AttributeError):
        bands.steps = ()  # type: ignore[misc]


def test_str_prints_the_steps_and_describe_the_family() -> None:
    assert str(Amplification.bands(20, 5)) == "AND(5) then OR(20)"
    assert str(Amplification()) == "the family itself"
    family = Sensitivity(0.8, 0.4, 0.8, 0.4)  # a similarity: d1 > d2
    assert Amplification.bands(4, 4).describe(family) == (
        "AND(4) then OR(4): (0.8, 0.4, 0.8, 0.4) -> (0.8, 0.4, 0.8785, 0.0985)"
    )


def test_as_bands_reads_only_one_and_then_one_or() -> None:
    assert Amplification.bands(7, 3).as_bands() == (7, 3)
    for other in (Amplification.or_(3).then(Amplification.and_(7)), Amplification.and_(3)):
        with pytest.raises(ParameterError, match="not bands"):
            other.as_bands()


@pytest.mark.parametrize(
    "steps", [(("and", 0),), (("xor", 2),), (("or", 2.0),), (("and", True),), ("and",)]
)
def test_invalid_steps_are_refused(steps: tuple[object, ...]) -> None:
    with pytest.raises(ParameterError, match=r"Amplification.steps must be"):
        Amplification(steps)  # type: ignore[arg-type]


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan")])
def test_probability_refuses_non_probabilities(p: float) -> None:
    with pytest.raises(ParameterError, match=r"probabilities in \[0, 1\]"):
        Amplification.bands(2, 2).probability(np.array([0.5, p]))


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ((0.2, 0.6, 1.2, 0.4), "p1 must be a float in"),
        ((0.2, 0.6, 0.8, -0.1), "p2 must be a float in"),
        ((float("inf"), 0.6, 0.8, 0.4), "d1 must be a finite number"),
    ],
)
def test_invalid_sensitivities_are_refused(
    fields: tuple[float, float, float, float], match: str
) -> None:
    with pytest.raises(ParameterError, match=match):
        Sensitivity(*fields)


# --- choose_amplification ------------------------------------------------------------------


def _brute_force(
    p_near: float,
    recall: float,
    max_hashes: int,
    far: list[float],
    num_items: int | None,
) -> tuple[float, int, int]:
    """The least (cost, b * r, b) over every b x r <= max_hashes reaching the recall, by
    plain loops; cost = b n + n (n - 1) / 2 * mean(1 - (1 - q^r)^b) (without n: the mean)."""
    best: tuple[float, int, int] | None = None
    for b in range(1, max_hashes + 1):
        for r in range(1, max_hashes // b + 1):
            if 1 - (1 - p_near**r) ** b < recall:
                continue
            fraction = sum(1 - (1 - q**r) ** b for q in far) / len(far)
            if num_items is None:
                cost = fraction
            else:
                cost = b * num_items + num_items * (num_items - 1) / 2 * fraction
            if best is None or (cost, b * r, b) < best:
                best = (cost, b * r, b)
    assert best is not None
    return best


def _cost(b: int, r: int, far: list[float], num_items: int | None) -> float:
    fraction = sum(1 - (1 - q**r) ** b for q in far) / len(far)
    if num_items is None:
        return fraction
    return b * num_items + num_items * (num_items - 1) / 2 * fraction


FAR_SAMPLES = {
    # Elementary collision probabilities of random pairs: a cosine family's on real-looking
    # angles, a Hamming family's (few distinct values), and everything far.
    "cosine": (1 - np.arccos(np.random.default_rng(1).uniform(-0.2, 0.9, 300)) / np.pi).tolist(),
    "hamming": (1 - np.random.default_rng(2).binomial(64, 0.45, 300) / 64).tolist(),
    "far": [0.05] * 10,
}


@pytest.mark.parametrize("sample", sorted(FAR_SAMPLES))
@pytest.mark.parametrize(
    ("p_near", "recall", "max_hashes", "num_items"),
    [
        (0.9, 0.95, 60, 10_000),
        (0.8, 0.9, 96, 1_000_000),
        (0.7, 0.5, 40, 500),
        (0.95, 0.99, 80, None),
    ],
)
def test_choice_reaches_the_recall_within_max_hashes_at_least_cost(
    sample: str, p_near: float, recall: float, max_hashes: int, num_items: int | None
) -> None:
    far = FAR_SAMPLES[sample]
    chosen = choose_amplification(
        p_near,
        recall=recall,
        max_hashes=max_hashes,
        far_probabilities=np.array(far),
        num_items=num_items,
    )
    b, r = chosen.as_bands()
    assert chosen.num_hashes == b * r <= max_hashes
    assert chosen.probability(p_near) >= recall
    best_cost, _, _ = _brute_force(p_near, recall, max_hashes, far, num_items)
    assert _cost(b, r, far, num_items) <= best_cost * (1 + 1e-9)


def test_without_a_sample_far_pairs_spread_uniformly_below_the_threshold() -> None:
    p_near, recall, max_hashes, n = 0.85, 0.9, 64, 100_000
    chosen = choose_amplification(p_near, recall=recall, max_hashes=max_hashes, num_items=n)
    grid = ((np.arange(1000) + 0.5) * p_near / 1000).tolist()
    best_cost, _, _ = _brute_force(p_near, recall, max_hashes, grid, n)
    b, r = chosen.as_bands()
    assert _cost(b, r, grid, n) <= best_cost * (1 + 1e-9)
    assert chosen.probability(p_near) >= recall


def test_ties_go_to_fewer_hashes_then_fewer_bands() -> None:
    # No far pair ever collides: the cost is b n for every choice with one band, so the
    # fewest hashes win.
    chosen = choose_amplification(
        0.99, recall=0.9, max_hashes=100, far_probabilities=[0.0], num_items=10
    )
    assert chosen.as_bands() == (1, 1)
    # At p_near = 1 every choice is exact; without n only the candidates count, so the most
    # rows (and one band) win.
    assert choose_amplification(
        1.0, recall=0.99, max_hashes=50, far_probabilities=[0.5]
    ).as_bands() == (1, 50)


def test_a_recall_out_of_reach_warns_and_takes_the_highest() -> None:
    with pytest.warns(NeardupWarning, match=r"no b bands of r rows .* reach recall 0.9999"):
        chosen = choose_amplification(0.3, recall=0.9999, max_hashes=20)
    b, r = chosen.as_bands()
    reached = [
        1 - (1 - 0.3**rows) ** bands for bands in range(1, 21) for rows in range(1, 20 // bands + 1)
    ]
    assert chosen.probability(0.3) == pytest.approx(max(reached), rel=1e-12)
    assert (b, r) == (20, 1)


def test_the_choice_scales_to_large_max_hashes() -> None:
    far = np.random.default_rng(3).uniform(0, 0.6, 5000)
    chosen = choose_amplification(
        0.999, recall=0.95, max_hashes=65536, far_probabilities=far, num_items=10**6
    )
    assert chosen.num_hashes <= 65536
    assert chosen.probability(0.999) >= 0.95


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"p_near": 1.2}, "p_near takes probabilities"),
        ({"recall": 1.0}, "recall must be in"),
        ({"max_hashes": 0}, "max_hashes must be an int"),
        ({"num_items": -1}, "num_items must be None or an int"),
        ({"far_probabilities": []}, "far_probabilities is empty"),
        ({"far_probabilities": [0.2, 2.0]}, "far_probabilities takes probabilities"),
    ],
)
def test_invalid_choices_are_refused(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"p_near": 0.8, "recall": 0.9, "max_hashes": 64, **kwargs}
    with pytest.raises(ParameterError, match=match):
        choose_amplification(**args)  # type: ignore[arg-type]
