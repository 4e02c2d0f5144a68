"""The seeds' worked figures of amplification: MMDS §3.6.3's tables and families, seed 002's
bit sampling and L2 families."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neardup.lsh import Amplification, BitSampler, PStableHasher, Sensitivity
from neardup.params import JoinSpec

AND_OR = Amplification.and_(4).then(Amplification.or_(4))
OR_AND = Amplification.or_(4).then(Amplification.and_(4))

# MMDS §3.6.3 (Example 3.21): the table of 1 - (1 - p^4)^4, printed to four decimals.
AND_OR_TABLE = [
    (0.2, 0.0064),
    (0.3, 0.0320),
    (0.4, 0.0985),
    (0.5, 0.2275),
    (0.6, 0.4260),
    (0.7, 0.6666),
    (0.8, 0.8785),
    (0.9, 0.9860),
]

# The table of (1 - (1 - p)^4)^4 (MMDS Fig. 3.12: a 4-way OR, then a 4-way AND).
OR_AND_TABLE = [
    (0.1, 0.0140),
    (0.2, 0.1215),
    (0.3, 0.3334),
    (0.4, 0.5740),
    (0.5, 0.7725),
    (0.6, 0.9015),
    (0.7, 0.9680),
    (0.8, 0.9936),
]


@pytest.mark.parametrize(("p", "printed"), AND_OR_TABLE)
def test_mmds_four_way_and_then_or_table(p: float, printed: float) -> None:
    assert round(float(AND_OR.probability(p)), 4) == printed
    assert Amplification.bands(num_bands=4, num_rows=4) == AND_OR


@pytest.mark.parametrize(("p", "printed"), OR_AND_TABLE)
def test_mmds_four_way_or_then_and_table(p: float, printed: float) -> None:
    assert round(float(OR_AND.probability(p)), 4) == printed


def test_the_tables_are_the_books_formulas() -> None:
    p = np.array([p for p, _ in AND_OR_TABLE + OR_AND_TABLE])
    half = len(AND_OR_TABLE)
    assert np.allclose(AND_OR.probability(p[:half]), 1 - (1 - p[:half] ** 4) ** 4, rtol=1e-13)
    assert np.allclose(OR_AND.probability(p[half:]), (1 - (1 - p[half:]) ** 4) ** 4, rtol=1e-13)


def _rounded(s: Sensitivity) -> tuple[float, float, float, float]:
    return (s.d1, s.d2, round(s.p1, 4), round(s.p2, 4))


def test_mmds_and_or_family() -> None:
    # "(0.2, 0.6, 0.8, 0.4)-sensitive ... becomes (0.2, 0.6, 0.8785, 0.0985)-sensitive".
    family = Sensitivity(0.2, 0.6, 0.8, 0.4)
    assert _rounded(AND_OR.apply(family)) == (0.2, 0.6, 0.8785, 0.0985)
    assert AND_OR.num_hashes == 16
    assert str(AND_OR.apply(family)) == "(0.2, 0.6, 0.8785, 0.0985)"


def test_mmds_or_and_family() -> None:
    # The same family under the OR-AND construction: (0.2, 0.6, 0.9936, 0.5740).
    family = Sensitivity(0.2, 0.6, 0.8, 0.4)
    assert _rounded(OR_AND.apply(family)) == (0.2, 0.6, 0.9936, 0.5740)
    assert OR_AND.describe(family) == (
        "OR(4) then AND(4): (0.2, 0.6, 0.8, 0.4) -> (0.2, 0.6, 0.9936, 0.574)"
    )


def _and_or(p: float) -> float:
    return 1 - (1 - p**4) ** 4


def _or_and(p: float) -> float:
    return (1 - (1 - p) ** 4) ** 4


def test_cascade_of_and_or_then_or_and() -> None:
    # Cascading the two constructions on a (0.2, 0.8, 0.8, 0.2)-sensitive family: 256 functions.
    family = Sensitivity(0.2, 0.8, 0.8, 0.2)
    cascade = AND_OR.then(OR_AND)
    assert cascade.num_hashes == 256
    got = cascade.apply(family)
    assert got.p1 == pytest.approx(_or_and(_and_or(0.8)), rel=1e-12)  # 0.99913
    assert got.p2 == pytest.approx(_or_and(_and_or(0.2)), rel=1e-12)  # 4.09e-7
    # With the OR-AND construction applied to the elementary functions first, the figures
    # MMDS prints for the cascade: a (0.2, 0.8, 0.9999996, 0.0008715)-sensitive family.
    book = OR_AND.then(AND_OR).apply(family)
    assert (round(book.p1, 7), round(book.p2, 7)) == (0.9999996, 0.0008715)
    assert book.p2 == pytest.approx(_and_or(_or_and(0.2)), rel=1e-12)


def test_seed_002_bit_sampling_family() -> None:
    # "Single bit sampling hash family satisfies c = 2, r = N/3, P1 = 2/3, P2 = 1/3".
    n = 300
    spec = JoinSpec(metric="hamming", threshold=n // 3)
    p1 = BitSampler.collision_probability(n / 3, spec, n)
    p2 = BitSampler.collision_probability(2 * n / 3, spec, n)
    assert (p1, p2) == pytest.approx((2 / 3, 1 / 3), abs=1e-15)
    family = Sensitivity(n / 3, 2 * n / 3, p1, p2)
    assert str(family) == "(100, 200, 0.6667, 0.3333)"
    # Its general form: (r, c r, 1 - r/N, 1 - c r/N).
    for r, c in [(10, 3), (50, 1.5)]:
        assert BitSampler.collision_probability(r, spec, n) == pytest.approx(1 - r / n)
        assert BitSampler.collision_probability(c * r, spec, n) == pytest.approx(1 - c * r / n)
    # Amplified by k = 4 bits per table and L = 4 tables, far pairs rarely collide.
    amplified = Amplification.bands(num_bands=4, num_rows=4).apply(family)
    assert amplified.p1 == pytest.approx(_and_or(2 / 3), rel=1e-12)
    assert amplified.p2 == pytest.approx(_and_or(1 / 3), rel=1e-12)


def _datar_integral(c: float, w: float) -> float:
    """Datar et al.'s p(c) = ∫_0^w (1/c) f(t/c) (1 - t/w) dt, f the density of |N(0, 1)|,
    by the midpoint rule on 200,000 steps (error far below 1e-8)."""
    steps = 200_000
    t = (np.arange(steps) + 0.5) * (w / steps)
    density = 2 / math.sqrt(2 * math.pi) * np.exp(-((t / c) ** 2) / 2) / c
    return float(np.sum(density * (1 - t / w)) * (w / steps))


@pytest.mark.parametrize("a", [0.5, 1.0, 7.0])
def test_seed_002_l2_family_is_a_half_2a_one_half_one_third_sensitive(a: float) -> None:
    # "we have a (d1 = a/2, d2 = 2a, p1 = 1/2, p2 = 1/3)-LSH" for buckets of width a.
    spec = JoinSpec(metric="l2", threshold=a / 2, bucket_width=a)
    near = np.linspace(1e-9, a / 2, 50)
    far = np.linspace(2 * a, 50 * a, 50)
    assert np.all(PStableHasher.collision_probability(near, spec, 10) >= 1 / 2)
    assert np.all(PStableHasher.collision_probability(far, spec, 10) <= 1 / 3)
    # The Gaussian projection's exact figures at the two ends: 0.6095 and 0.1954.
    p1 = PStableHasher.collision_probability(a / 2, spec, 10)
    p2 = PStableHasher.collision_probability(2 * a, spec, 10)
    assert (round(p1, 4), round(p2, 4)) == (0.6095, 0.1954)


@pytest.mark.parametrize("c", [0.01, 0.3, 1.0, 2.5, 40.0])
def test_l2_collision_probability_is_datars_integral(c: float) -> None:
    spec = JoinSpec(metric="l2", threshold=1.0, bucket_width=1.0)
    assert PStableHasher.collision_probability(c, spec, 3) == pytest.approx(
        _datar_integral(c, 1.0), abs=1e-8
    )
