"""Verification: exact Jaccard and signature agreement against plain Python sets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup import (
    CandidatePairs,
    OPHSketcher,
    Shingler,
    ShingleSpec,
    SketchSpec,
    estimate_jaccard,
    exact_jaccard,
)
from tests import reference
from tests.reference_allpairs import all_pairs_above
from tests.strategies import words_texts


@given(batch=st.lists(words_texts, min_size=2, max_size=6))
def test_exact_jaccard_equals_python_sets(batch: list[str]) -> None:
    shingle = ShingleSpec(k=2)
    sets = Shingler(shingle).shingle_sets(batch)
    n = len(batch)
    first, second = np.triu_indices(n, 1)
    got = exact_jaccard(
        sets, CandidatePairs(first=first.astype(np.int64), second=second.astype(np.int64))
    )
    for value, a, b in zip(got.tolist(), first.tolist(), second.tolist(), strict=True):
        expected = reference.jaccard(
            set(reference.shingles(batch[a], shingle)), set(reference.shingles(batch[b], shingle))
        )
        assert value == expected


def test_estimate_is_the_fraction_of_agreeing_slots() -> None:
    sigs = OPHSketcher(SketchSpec(num_perm=64)).sketch(
        ["a b c d e f g h i j", "a b c d e f g h i k"]
    )
    pairs = CandidatePairs(first=np.array([0]), second=np.array([1]))
    assert estimate_jaccard(sigs, pairs)[0] == np.mean(sigs.values[0] == sigs.values[1])


@given(
    batch=st.lists(words_texts, min_size=2, max_size=8),
    threshold=st.sampled_from([0.3, 0.5, 0.8, 1.0]),
)
def test_prefix_filtered_all_pairs_equals_brute_force(batch: list[str], threshold: float) -> None:
    sets = Shingler(ShingleSpec(k=1)).shingle_sets(batch)
    brute = {}
    for a in range(len(batch)):
        for b in range(a + 1, len(batch)):
            j = reference.jaccard(set(sets.set_of(a).tolist()), set(sets.set_of(b).tolist()))
            if j >= threshold and len(sets.set_of(a)) and len(sets.set_of(b)):
                brute[(a, b)] = j
    assert all_pairs_above(sets, threshold) == pytest.approx(brute)
