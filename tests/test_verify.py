"""Verification: exact Jaccard and signature agreement against plain Python sets."""

from __future__ import annotations

import numpy as np
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
