"""compare(): exact values equal plain Python; estimates near them on real text."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from neardup import ShingleSpec, SketchSpec
from neardup.compare import compare
from tests import reference


def test_exact_values_equal_the_reference(licenses: list[dict[str, object]]) -> None:
    a = str(licenses[200]["text"])
    b = str(licenses[201]["text"]) + " " + a[: len(a) // 2]
    spec = SketchSpec(shingle=ShingleSpec(k=3))
    result = compare(a, b, spec)
    bag_a = Counter(reference.shingles(a, spec.shingle))
    bag_b = Counter(reference.shingles(b, spec.shingle))
    shared = len(bag_a.keys() & bag_b.keys())
    assert result.jaccard == pytest.approx(shared / len(bag_a.keys() | bag_b.keys()))
    assert result.containment_a_in_b == pytest.approx(shared / len(bag_a))
    assert result.containment_b_in_a == pytest.approx(shared / len(bag_b))
    dot = sum(bag_a[s] * bag_b[s] for s in bag_a.keys() & bag_b.keys())
    norm = math.sqrt(sum(v * v for v in bag_a.values())) * math.sqrt(
        sum(v * v for v in bag_b.values())
    )
    assert result.cosine == pytest.approx(dot / norm)
    assert result.weighted_jaccard == pytest.approx(
        sum(min(bag_a[s], bag_b[s]) for s in bag_a.keys() & bag_b.keys())
        / sum(max(bag_a[s], bag_b[s]) for s in bag_a.keys() | bag_b.keys())
    )
    targets = {
        "bottomk-containment": result.containment_a_in_b,
        "weighted": result.weighted_jaccard,
    }
    for name, value in result.estimates.items():
        target = targets.get(name, result.jaccard)
        assert abs(value - target) < 0.25, name  # one seed, 128 slots (1 bit: chance-corrected)


def test_simhash_distance_is_zero_for_copies_and_large_for_strangers() -> None:
    text = "the quick brown fox jumps over the lazy dog " * 20
    assert compare(text, text).simhash_distance == 0
    assert (
        compare(text, "completely unrelated words about stock prices " * 20).simhash_distance > 10
    )
