"""The exact containment join: equal to a brute force, oriented, exact at the threshold.

Containment of ``A`` in ``B`` is ``|A ∩ B| / |A|`` (Broder 1997); each pair is reported once,
its contained member first: the one :func:`containment_order` puts first (the smaller set, or
the smaller of the sizes given; of two equal, the later).
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup import Shingler
from neardup.errors import ParameterError
from neardup.join.sets import containment_join, set_join
from neardup.lsh.containment import exact_containment_pairs
from neardup.params import JoinSpec, ShingleSpec
from neardup.text.shingle import ShingleSets
from tests.join.test_sets import THRESHOLDS, as_sets


def brute_force(
    sets: list[frozenset[int]], threshold: float, sizes: list[int] | None = None
) -> dict[tuple[int, int], float]:
    """Every pair by its definition: the member with the smaller key (ties: the later) first."""
    key = [len(s) for s in sets] if sizes is None else sizes
    out = {}
    for a, b in combinations(range(len(sets)), 2):
        inner, outer = (b, a) if (key[b], -b) < (key[a], -a) else (a, b)
        if sets[inner] and len(sets[inner] & sets[outer]) / len(sets[inner]) >= threshold:
            out[inner, outer] = len(sets[inner] & sets[outer]) / len(sets[inner])
    return out


def found(
    sets: ShingleSets, threshold: float, sizes: object = None
) -> dict[tuple[int, int], float]:
    first, second, values, _ = exact_containment_pairs(sets, threshold, sizes)  # type: ignore[arg-type]
    return dict(
        zip(zip(first.tolist(), second.tolist(), strict=True), values.tolist(), strict=True)
    )


@given(
    sets=st.lists(st.frozensets(st.integers(0, 9), max_size=9), max_size=14),
    threshold=st.sampled_from(THRESHOLDS),
    data=st.data(),
)
def test_equals_brute_force_on_small_sets(
    sets: list[frozenset[int]], threshold: float, data: st.DataObject
) -> None:
    assert found(as_sets(sets), threshold) == brute_force(sets, threshold)
    # Any order of who is contained (dedup passes the texts' lengths).
    sizes = data.draw(st.lists(st.integers(0, 4), min_size=len(sets), max_size=len(sets)))
    assert found(as_sets(sets), threshold, np.array(sizes)) == brute_force(sets, threshold, sizes)


def test_equals_brute_force_on_sets_inside_larger_sets() -> None:
    # Small sets planted in sets 2 to 20 times as large, with a few items changed: long
    # containers, where the positional filter and the gallop of the count matter.
    rng = np.random.default_rng(0)
    sets: list[frozenset[int]] = []
    for _ in range(40):
        inner = set(rng.integers(0, 5000, rng.integers(3, 60)).tolist())
        outer = set(inner) | set(rng.integers(0, 5000, len(inner) * rng.integers(2, 20)).tolist())
        for x in list(outer)[: rng.integers(0, 4)]:
            outer.discard(x)
        sets += [frozenset(inner), frozenset(outer)]
    flat = as_sets(sets)
    for threshold in (1.0, 0.9, 0.8, 0.5):
        truth = brute_force(sets, threshold)
        assert len(truth) >= 20
        assert found(flat, threshold) == truth


def test_a_pair_exactly_at_the_threshold_is_kept() -> None:
    # 9 of 10 items: 0.9 in float64, although (1 - 0.9) * 10 is 0.9999999999999998.
    inner = frozenset(range(10))
    sets = [inner, frozenset(range(1, 30))]
    assert found(as_sets(sets), 0.9) == {(0, 1): 0.9}
    assert found(as_sets(sets), math.nextafter(0.9, 1.0)) == {}


def test_containment_join_is_oriented_and_says_how() -> None:
    sets = [frozenset(range(40)), frozenset(range(8)), frozenset(range(100, 110))]
    result = set_join(as_sets(sets), JoinSpec(metric="containment", threshold=0.8))
    assert (result.first.tolist(), result.second.tolist(), result.values.tolist()) == (
        [1],
        [0],
        [1.0],
    )
    assert result.metric == "containment"
    assert result.info["family"] == "containment"
    assert result.info["predicted_recall"] == 1.0


def test_licence_texts_contain_the_shorter_licences_as_the_inverted_index_counts(
    licenses: list[dict[str, object]],
) -> None:
    texts = [str(r["text"]) for r in licenses]
    sets = Shingler(ShingleSpec(unit="word", k=5)).shingle_sets(texts)
    result = containment_join(sets, 0.9)
    # The truth by an inverted index: for each set, the count of its items in every other.
    holders: dict[int, list[int]] = {}
    for s in range(len(sets)):
        for h in sets.hashes[sets.offsets[s] : sets.offsets[s + 1]].tolist():
            holders.setdefault(h, []).append(s)
    sizes = sets.sizes()
    truth = {}
    for s in range(len(sets)):
        counts: dict[int, int] = {}
        for h in sets.hashes[sets.offsets[s] : sets.offsets[s + 1]].tolist():
            for other in holders[h]:
                counts[other] = counts.get(other, 0) + 1
        for other, shared in counts.items():
            inner_first = (sizes[s], -s) < (sizes[other], -other)
            if other != s and inner_first and shared / sizes[s] >= 0.9:
                truth[s, other] = shared / sizes[s]
    assert len(truth) > 300
    pairs = zip(result.first.tolist(), result.second.tolist(), strict=True)
    got = dict(zip(pairs, result.values.tolist(), strict=True))
    assert got == truth


@pytest.mark.parametrize("threshold", [0.0, 1.5, float("nan")])
def test_a_threshold_outside_0_1_is_refused(threshold: float) -> None:
    with pytest.raises(ParameterError, match=r"threshold must be a float in \(0, 1\]"):
        exact_containment_pairs(as_sets([frozenset({1})]), threshold)
