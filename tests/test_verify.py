"""Verification: exact Jaccard and signature agreement against plain Python sets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup import (
    CandidatePairs,
    OPHSketcher,
    ParameterError,
    Shingler,
    ShingleSpec,
    SketchSpec,
    estimate_jaccard,
    exact_jaccard,
)
from neardup._kernels.verify import number_distinct, pair_chunks, size_bounded
from tests import reference
from tests.reference_allpairs import all_pairs_above, brute_force_pairs
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


@given(
    batch=st.lists(words_texts, min_size=2, max_size=8),
    floor=st.sampled_from([0.2, 0.5, 0.8, 0.9, 1.0]),
)
def test_a_floor_leaves_unmeasured_only_pairs_below_it(batch: list[str], floor: float) -> None:
    # |A & B| / |A | B| <= min / max of the sizes: a pair so bounded below the floor is NaN,
    # every other is measured as without a floor.
    sets = Shingler(ShingleSpec(k=2)).shingle_sets(batch)
    first, second = np.triu_indices(len(batch), 1)
    pairs = CandidatePairs(first=first.astype(np.int64), second=second.astype(np.int64))
    exact = exact_jaccard(sets, pairs)
    floored = exact_jaccard(sets, pairs, floor)
    sizes = sets.sizes()
    low = np.minimum(sizes[first], sizes[second])
    high = np.maximum(sizes[first], sizes[second])
    bounded = (high > 0) & (low / np.maximum(high, 1) < floor)
    assert np.isnan(floored).tolist() == bounded.tolist()
    assert (exact[bounded] < floor).all()
    assert floored[~bounded].tolist() == exact[~bounded].tolist()


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
    shingle = ShingleSpec(k=1)
    sets = Shingler(shingle).shingle_sets(batch)
    # Brute force over the plain-Python shingles (strings: no hashing at all).
    brute = brute_force_pairs([set(reference.shingles(t, shingle)) for t in batch], threshold)
    assert all_pairs_above(sets, threshold) == pytest.approx(brute)
    assert all_pairs_above([sets.set_of(d).tolist() for d in range(len(batch))], threshold) == (
        pytest.approx(brute)
    )


@pytest.mark.parametrize(("threshold", "at_least"), [(0.3, 100), (0.8, 20)])
def test_all_pairs_of_real_text_by_index_and_by_brute_force(
    licenses: list[dict[str, object]], threshold: float, at_least: int
) -> None:
    # Licences in id order (variants side by side), each under 4,000 characters: 300 texts,
    # 44,850 pairs, dozens of them similar.
    ordered = sorted(licenses, key=lambda r: str(r["id"]))
    texts = [str(r["text"]) for r in ordered if 0 < len(str(r["text"])) < 4000][:300]
    shingle = ShingleSpec()
    brute = brute_force_pairs([set(reference.shingles(t, shingle)) for t in texts], threshold)
    assert len(brute) >= at_least
    sets = Shingler(shingle).shingle_sets(texts)
    assert all_pairs_above(sets, threshold) == pytest.approx(brute)
    # neardup's own exact Jaccard agrees on every pair found.
    first, second = (np.array(side, dtype=np.int64) for side in zip(*brute, strict=True))
    got = exact_jaccard(sets, CandidatePairs(first=first, second=second))
    assert got.tolist() == pytest.approx(list(brute.values()))


@pytest.mark.parametrize(
    ("first", "second", "message"),
    [
        ([0, 1], [1], r"one length; got first \(2,\), second \(1,\)"),
        ([0], [3], r"pairs.second holds a document number outside 0..2 \(min 3, max 3\)"),
        ([-1], [1], r"pairs.first holds a document number outside 0..2"),
    ],
)
def test_pairs_that_do_not_fit_the_documents_are_refused(
    first: list[int], second: list[int], message: str
) -> None:
    """The kernels index rows unchecked: bad pairs must be refused before them, not crash."""
    sets = Shingler(ShingleSpec(k=1)).shingle_sets(["a b", "b c", "c d"])
    signatures = OPHSketcher(SketchSpec(kind="oph", num_perm=16)).sketch(["a b", "b c", "c d"])
    pairs = CandidatePairs(first=np.array(first, np.int64), second=np.array(second, np.int64))
    with pytest.raises(ParameterError, match=message):
        exact_jaccard(sets, pairs)
    with pytest.raises(ParameterError, match=message):
        estimate_jaccard(signatures, pairs)


def test_pair_chunks_count_a_made_set_by_its_shingles_and_else_the_text() -> None:
    # Three documents of 100 text bytes; document 1's set is made (10 shingles: 80 bytes).
    first, second = np.array([0, 0, 1]), np.array([1, 2, 2])
    sizes = np.full(3, 100, dtype=np.int64)

    def cut(set_sizes: np.ndarray, unread: np.ndarray | None = None) -> list[int]:
        mark = np.full(3, -1, dtype=np.int64)
        skipped = np.empty(0, dtype=bool) if unread is None else unread
        return pair_chunks(first, second, sizes, set_sizes, 0, 4, 900, mark, skipped).tolist()

    unmade = np.full(3, -1, dtype=np.int32)
    # Text costs 4 bytes a byte: 400 a document, 800 a pair; a budget of 900 holds one pair.
    assert cut(unmade) == [0, 1, 2, 3]
    # Documents 0 and 1 now cost 400 + 80, and all three 880: one chunk.
    assert cut(np.array([-1, 10, -1], dtype=np.int32)) == [0, 3]
    # No set sizes at all (an empty array): the text's cost, as unmade.
    assert cut(np.empty(0, dtype=np.int32)) == [0, 1, 2, 3]
    # A pair left unread costs nothing: pairs 0 and 1 fit the budget together.
    assert cut(unmade, np.array([False, True, False])) == [0, 2, 3]


def test_size_bounded_pairs_are_those_a_floor_leaves_unmeasured() -> None:
    rng = np.random.default_rng(7)
    set_sizes = rng.integers(-1, 60, size=500).astype(np.int32)  # -1: not made yet
    set_sizes[:5] = 0
    first, second = rng.integers(0, 500, size=(2, 5000))
    first[:3], second[:3] = 0, np.array([1, 2, 7])  # two empty sets; one empty with another
    for floor in (0.5, 0.8, 0.95):
        out = np.empty(first.shape[0], dtype=bool)
        size_bounded(set_sizes, first, second, floor, out)
        a, b = set_sizes[first].astype(np.int64), set_sizes[second].astype(np.int64)
        low, high = np.minimum(a, b), np.maximum(a, b)
        expected = (low >= 0) & (high > 0) & (low / np.maximum(high, 1) < floor)
        assert out.tolist() == expected.tolist()
    assert not out[:2].any()


@given(docs=st.lists(st.integers(0, 199), max_size=300))
def test_number_distinct_numbers_the_distinct_documents_as_first_seen(docs: list[int]) -> None:
    given_docs = np.array(docs, dtype=np.int64)
    mark = np.full(200, -1, dtype=np.int64)
    distinct = np.empty(len(docs), dtype=np.int64)
    local = np.empty(len(docs), dtype=np.int64)
    count = number_distinct(given_docs, mark, distinct, local)
    assert distinct[:count].tolist() == list(dict.fromkeys(docs))
    assert distinct[local].tolist() == docs
    assert (mark == -1).all()  # the scratch as it was
