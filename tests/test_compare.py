"""compare(): exact values equal plain Python; estimates near them on real text."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from neardup import ParameterError, ShingleSpec, SketchSpec
from neardup.compare import Comparison, compare
from neardup.pipeline import dedup
from tests import reference


def test_exact_values_equal_the_reference(licenses: list[dict[str, object]]) -> None:
    a = str(licenses[200]["text"])
    b = str(licenses[201]["text"]) + " " + a[: len(a) // 2]
    spec = SketchSpec(shingle=ShingleSpec(k=3))
    result = compare(a, b, spec, sketches={"all"})
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
    for name, value in result.estimates.items():
        target, sigma, step = _target_and_error(name, result, spec.num_perm)
        # Four standard errors of one estimate (12 estimates: 8e-4 of a false alarm for
        # unbiased sketches), plus half a step of the estimate's discreteness (for SimHash, one
        # bit of bias that hash-sign projections are allowed: tests/sketch/test_simhash.py).
        # Here J = 0.37: 4 sigma = 0.17 for the 128-slot sketches, 0.33 for 1-bit codes, 0.57
        # for the cosine of one 64-bit SimHash.
        assert abs(value - target) <= 4 * sigma + step, (name, value, target, sigma)


def _target_and_error(name: str, result: Comparison, k: int) -> tuple[float, float, float]:
    """What estimate ``name`` estimates, its standard error from ``k`` slots, and its step.

    MinHash-family slots agree with probability J, so one estimate has standard error
    ``sqrt(J (1 - J) / k)`` (MMDS §3.3.3; OPH and bottom-k sample without replacement, which
    can only lower it). A b-bit code also agrees by chance ``C = 2^-b``: the corrected
    estimate has ``sqrt(P (1 - P) / k) / (1 - C)`` with ``P = C + (1 - C) J``. Bottom-k
    containment decides about ``k`` elements of A's sketch here (A is the larger set): about
    ``sqrt(c (1 - c) / k)``. SimHash: the distance is Binomial(64, theta / pi) (Charikar), and
    the cosine ``cos(pi d / 64)`` moves by ``sin(theta) pi / 64`` per bit.
    """
    if name == "simhash":
        theta = math.acos(min(result.cosine, 1.0))
        flip = theta / math.pi
        per_bit = math.sin(theta) * math.pi / 64
        return result.cosine, per_bit * math.sqrt(64 * flip * (1 - flip)), per_bit
    target = {
        "bottomk-containment": result.containment_a_in_b,
        "weighted": result.weighted_jaccard,
    }.get(name, result.jaccard)
    if name.startswith("bbit"):
        chance = 2.0 ** -int(name.removeprefix("bbit"))
        agree = chance + (1 - chance) * target
        return target, math.sqrt(agree * (1 - agree) / k) / (1 - chance), 0.5 / k / (1 - chance)
    return target, math.sqrt(target * (1 - target) / k), 0.5 / k


def test_simhash_distance_is_zero_for_copies_and_large_for_strangers() -> None:
    text = "the quick brown fox jumps over the lazy dog " * 20
    assert compare(text, text, sketches={"simhash"}).simhash_distance == 0
    # No shared shingle: cosine 0, each bit differs with probability 1/2, the distance is
    # Binomial(64, 1/2): mean 32, standard deviation 4; 4 deviations below the mean is 16.
    stranger = compare(
        text, "completely unrelated words about stock prices " * 20, sketches={"simhash"}
    )
    assert stranger.cosine == 0.0
    assert stranger.simhash_distance >= 32 - 4 * 4


@pytest.mark.parametrize(
    ("a", "b", "is_copy"),
    [
        ("", "", False),  # no token: never grouped, not even with another empty text
        ("...!!!", "???", False),
        ("a b", "a b", True),  # words, but fewer than a shingle: grouped only as exact copies
        ("a b c d e f", "a b", False),
        ("", "one two three four five six seven", False),
    ],
)
def test_texts_without_shingles_match_nothing_as_in_dedup(a: str, b: str, is_copy: bool) -> None:
    result = compare(a, b, sketches={"all"})
    assert not result.has_shingles
    assert set(result.estimates.values()) == {0.0}
    assert result.shared_features == 0
    assert result.simhash_distance is None
    assert result.exact_copy is is_copy
    found = dedup([a, b])
    assert len(found.pairs.jaccard) == 0  # no near pair, whatever the sketches would say
    assert (len(found.exact_pairs[0]) == 1) is is_copy


def test_texts_with_shingles_keep_their_estimates() -> None:
    text = "the quick brown fox jumps over the lazy dog " * 20
    result = compare(text, text, sketches={"all"})
    assert result.has_shingles
    assert result.exact_copy
    assert set(result.estimates.values()) == {1.0}
    assert result.simhash_distance == 0


def test_kind_options_apply_to_their_estimates_without_naming_the_kind() -> None:
    a = "the quick brown fox jumps over the lazy dog and runs far away " * 5
    b = "the quick brown fox leaps over the lazy cat and walks far away " * 5
    both = {"supershingle", "simhash"}
    plain = compare(a, b, sketches=both)
    assert (plain.preset, plain.simhash_bits) == ("altavista", 64)
    wide = compare(a, b, sketches=both, simhash_bits=128)
    assert wide.simhash_bits == 128
    assert wide.simhash_distance != plain.simhash_distance
    signs = compare(a, b, sketches=both, projection="sign")
    assert signs.simhash_distance != plain.simhash_distance
    variant = compare(a, b, sketches=both, preset="altavista-variant")  # eight features, not six
    assert (variant.preset, variant.num_features, plain.num_features) == ("altavista-variant", 8, 6)
    # A spec of the kind carries its options too.
    assert compare(a, b, SketchSpec(kind="simhash", simhash_bits=128)).simhash_bits == 128
    assert compare(a, b, SketchSpec(kind="supershingle", preset="bing")).preset == "bing"


def test_tfidf_simhash_is_refused() -> None:
    with pytest.raises(ParameterError, match="no corpus to learn IDF from"):
        compare("a b c d e f", "a b c d e g", SketchSpec(kind="simhash", weighting="tfidf"))


def test_only_the_sketches_asked_for_are_made() -> None:
    a, b = "one two three four five six seven eight", "one two three four five six seven nine"
    default = compare(a, b)  # the spec's kind: OPH by default
    assert list(default.estimates) == ["oph"]
    assert (default.shared_features, default.num_features, default.preset) == (None, None, None)
    assert (default.simhash_distance, default.simhash_bits) == (None, None)
    assert list(compare(a, b, SketchSpec(kind="minhash")).estimates) == ["minhash"]
    picked = compare(a, b, sketches={"bbit", "bottomk"})
    assert list(picked.estimates) == [  # in the registry's order, whatever the asking
        "bottomk",
        "bottomk-containment",
        "bbit1",
        "bbit2",
        "bbit4",
        "bbit8",
    ]
    every = compare(a, b, sketches={"all"})
    assert {"oph", "minhash", "simhash", "supershingle", "weighted"} <= set(every.estimates)
    assert every.simhash_distance is not None
    assert every.shared_features is not None
    # Each estimate is the one made alone (nothing depends on the others made beside it).
    assert every.estimates["oph"] == default.estimates["oph"]


@pytest.mark.parametrize("sketches", [{"canonical"}, {"nonsense"}])
def test_sketches_compare_cannot_estimate_with_are_refused(sketches: set[str]) -> None:
    with pytest.raises(ParameterError, match="compare estimates with oph"):
        compare("a b c d e f", "a b c d e g", sketches=sketches)
