"""The item-set joins, exact (prefix filtering) and MinHash LSH, against brute force.

Truth comes from tests/reference_allpairs.py: Python set operations over every pair for small
inputs, and the inverted-index count (Bayardo et al.) on real corpora; the filters' lengths from
MMDS §3.9's formulas evaluated in exact rational arithmetic.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup import Shingler
from neardup._kernels.prefix import (
    index_prefix_length,
    min_overlap,
    min_partner_size,
    possibly_shared,
    probe_prefix_length,
)
from neardup.errors import InputError, ParameterError
from neardup.join.result import JoinResult
from neardup.join.sets import prefix_join, set_join
from neardup.lsh.amplify import Amplification
from neardup.lsh.banding import s_curve
from neardup.lsh.sets import SetHasher
from neardup.params import JoinSpec, ShingleSpec
from neardup.sketch.signatures import EMPTY_SLOT
from neardup.text.shingle import ShingleSets
from tests.conftest import read_rfcs
from tests.reference_allpairs import all_pairs_above, brute_force_pairs

SPREAD = 0x9E3779B97F4A7C15
"""Small item numbers are spread over 64 bits (times this odd constant, mod 2^64), so the
sets' hashes look like real fingerprints and their value order is not the numbers' order."""


def as_sets(sets: list[set[int]] | list[frozenset[int]]) -> ShingleSets:
    """Integer sets as ShingleSets of spread 64-bit hashes, sorted within each set."""
    parts = [sorted((x * SPREAD) % 2**64 for x in s) for s in sets]
    hashes = np.array([x for part in parts for x in part], dtype=np.uint64)
    offsets = np.cumsum([0] + [len(part) for part in parts]).astype(np.int64)
    return ShingleSets(hashes=hashes, offsets=offsets)


def pairs_of(result: JoinResult) -> dict[tuple[int, int], float]:
    return dict(
        zip(
            zip(result.first.tolist(), result.second.tolist(), strict=True),
            result.values.tolist(),
            strict=True,
        )
    )


def check_shape(result: JoinResult) -> None:
    """Pairs first < second, sorted and distinct; the counts in info agree."""
    assert np.all(result.first < result.second)
    codes = result.first * (int(result.second.max(initial=0)) + 1) + result.second
    assert np.all(np.diff(codes) > 0)
    assert result.metric == "jaccard"
    assert result.info["num_pairs"] == len(result)
    assert result.info["num_candidates"] >= len(result)


# the filters: MMDS §3.9's worked examples and formulas -----------------------------------------


def test_length_filter_is_mmds_example() -> None:
    # MMDS §3.9.3: at J = 0.9 a string of length 9 is compared only with strings of length up
    # to 9 / 0.9 = 10. Here: a set of size 10 meets sets of size 9 and more, one of 11 does not.
    assert min_partner_size(10, 0.9) == 9
    assert min_partner_size(11, 0.9) == 10


def test_prefix_lengths_are_mmds_example_despite_float_rounding() -> None:
    # MMDS §3.9.4: p = floor((1 - J) L) + 1 symbols are indexed; at J = 0.9 that is 1 for
    # L <= 9, 2 for 10 <= L <= 19 and 3 from 20 on. In float64 (1 - 0.9) * 10 is
    # 0.9999999999999998, so the formula taken literally would give 1 at L = 10 and lose the
    # pair of 9 shared out of 10.
    assert math.floor((1 - 0.9) * 10) + 1 == 1
    assert [probe_prefix_length(n, 0.9) for n in (1, 9, 10, 19, 20, 29, 30)] == [
        1,
        1,
        2,
        2,
        3,
        3,
        4,
    ]


@pytest.mark.parametrize(
    "j", [Fraction(9, 10), Fraction(4, 5), Fraction(7, 10), Fraction(2, 3), Fraction(1, 2),
          Fraction(1, 3), Fraction(1, 10), Fraction(1)],
)  # fmt: skip
def test_filter_lengths_equal_the_formulas_in_exact_arithmetic(j: Fraction) -> None:
    t = float(j)
    for n in range(1, 300):
        # Length filter: a smaller partner needs |y| / |x| >= J.
        assert min_partner_size(n, t) == math.ceil(j * n)
        # Probe prefix (MMDS §3.9.4): floor((1 - J) n) + 1.
        assert probe_prefix_length(n, t) == math.floor((1 - j) * n) + 1
        # Index prefix (PPJoin's mid-prefix): n - ceil(2J / (1 + J) n) + 1.
        assert index_prefix_length(n, t) == n - math.ceil(2 * j / (1 + j) * n) + 1
        for m in range(1, n + 1, 7):
            # Least overlap: ceil(J / (1 + J) (|x| + |y|)), or min + 1 when out of reach.
            expected = math.ceil(j / (1 + j) * (n + m))
            assert min_overlap(n, m, t) == min(expected, m + 1)


def test_pairs_exactly_at_the_threshold_are_kept() -> None:
    sets = [
        set(range(10)),
        set(range(9)),
        {0, 1},
        {0, 1, 2},
        set(range(20, 30)),
        set(range(21, 30)),
    ]
    for threshold, pair in ((0.9, (0, 1)), (2 / 3, (2, 3))):
        for result in (
            prefix_join(as_sets(sets), threshold),
            set_join(as_sets(sets), JoinSpec(metric="jaccard", threshold=threshold, seed=3)),
        ):
            assert pair in pairs_of(result)
    assert (0, 1) not in pairs_of(prefix_join(as_sets(sets), math.nextafter(0.9, 1.0)))


@given(
    values=st.lists(st.integers(0, 2**64 - 1) | st.integers(0, 30), max_size=60),
    bits=st.integers(5, 12),
)
def test_possibly_shared_marks_every_repeated_value(values: list[int], bits: int) -> None:
    marked = possibly_shared(np.array(values, dtype=np.uint64), bits)
    repeated = {v for v in values if values.count(v) > 1}
    assert all(marked[i] for i, v in enumerate(values) if v in repeated)


def test_possibly_shared_rarely_marks_a_lone_value() -> None:
    values = np.arange(1000, dtype=np.uint64) * np.uint64(SPREAD)  # distinct
    # 1,000 values in 2^16 slots: a value shares its slot with probability about 1.5%.
    assert possibly_shared(values, 16).mean() < 0.05


# the exact join against brute force -----------------------------------------------------------

THRESHOLDS = [1.0, 0.999, 0.9, 0.8, 0.75, 2 / 3, 0.6, 0.5, 1 / 3, 0.1]


@given(
    sets=st.lists(st.frozensets(st.integers(0, 7), max_size=8), max_size=14),
    threshold=st.sampled_from(THRESHOLDS),
    depth=st.sampled_from([0, 1, 2, 3]),
)
def test_prefix_join_equals_brute_force_on_small_sets(
    sets: list[frozenset[int]], threshold: float, depth: int
) -> None:
    result = prefix_join(as_sets(sets), threshold, suffix_depth=depth)
    check_shape(result)
    assert pairs_of(result) == brute_force_pairs(sets, threshold)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_prefix_join_equals_brute_force_on_families_of_near_duplicates(seed: int) -> None:
    # Larger sets (up to 120 of 300 items), each a few edits from one of 8 bases: long
    # prefixes and suffixes, many pairs near every threshold, every suffix filter depth.
    rng = np.random.default_rng(seed)
    bases = [set(rng.integers(0, 300, rng.integers(5, 120)).tolist()) for _ in range(8)]
    sets = []
    for _ in range(60):
        s = set(bases[rng.integers(0, 8)])
        for x in list(s)[: rng.integers(0, 6)]:
            s.discard(x)
        sets.append(s | set(rng.integers(0, 300, rng.integers(0, 6)).tolist()))
    flat = as_sets(sets)
    for threshold in (1.0, 0.95, 0.9, 0.8, 0.7, 0.5):
        truth = brute_force_pairs(sets, threshold)
        assert threshold > 0.8 or len(truth) >= 20, "the families should give pairs"
        for depth in (0, 2, 4):
            assert pairs_of(prefix_join(flat, threshold, suffix_depth=depth)) == truth


@pytest.fixture(scope="module")
def licence_sets(licenses: list[dict[str, object]]) -> ShingleSets:
    """Word 3-shingle sets of the 2,310 bundled licence texts."""
    return Shingler(ShingleSpec(unit="word", k=3)).shingle_sets([str(r["text"]) for r in licenses])


@pytest.mark.parametrize("threshold", [0.9, 0.8, pytest.param(0.5, marks=pytest.mark.slow)])
def test_prefix_join_equals_the_inverted_index_count_on_licences(
    licence_sets: ShingleSets, threshold: float
) -> None:
    result = prefix_join(licence_sets, threshold)
    check_shape(result)
    truth = all_pairs_above(licence_sets, threshold)
    assert len(truth) > 300
    assert pairs_of(result) == truth
    assert result.info["family"] == "prefix"
    assert result.info["predicted_recall"] == 1.0


def test_suffix_filter_only_removes_candidates(licence_sets: ShingleSets) -> None:
    plain = prefix_join(licence_sets, 0.8, suffix_depth=0)
    filtered = prefix_join(licence_sets, 0.8, suffix_depth=2)
    assert pairs_of(plain) == pairs_of(filtered)
    assert filtered.info["num_candidates"] < plain.info["num_candidates"]


@pytest.mark.slow
def test_prefix_join_equals_the_inverted_index_count_on_rfcs() -> None:
    texts = read_rfcs()
    sets = Shingler(ShingleSpec(unit="word", k=3)).shingle_sets([texts[n] for n in sorted(texts)])
    below = all_pairs_above(sets, 0.8)  # the truth at 0.9 is its pairs of 0.9 and more
    for threshold in (0.9, 0.8):
        truth = {pair: j for pair, j in below.items() if j >= threshold}
        assert len(truth) >= 40
        assert pairs_of(prefix_join(sets, threshold)) == truth


def test_empty_sets_and_lone_sets_give_no_pairs() -> None:
    empty = as_sets([set(), set(), set()])
    for threshold in (1.0, 0.9):
        assert len(prefix_join(empty, threshold)) == 0
        assert len(set_join(empty, JoinSpec(metric="jaccard", threshold=threshold))) == 0
    assert len(prefix_join(as_sets([{1, 2}]), 0.5)) == 0
    assert len(prefix_join(as_sets([]), 0.5)) == 0


def test_offsets_need_not_start_at_zero() -> None:
    sets = as_sets([{9}, {1, 2, 3}, {1, 2, 3, 4}, {5}])
    part = ShingleSets(hashes=sets.hashes, offsets=sets.offsets[1:4])  # sets 1 and 2 only
    assert pairs_of(prefix_join(part, 0.75)) == {(0, 1): 0.75}
    assert pairs_of(set_join(part, JoinSpec(metric="jaccard", threshold=0.75))) == {(0, 1): 0.75}


# the LSH join ---------------------------------------------------------------------------------


@pytest.mark.parametrize("threshold", [0.9, 0.8])
def test_lsh_join_is_precise_and_reaches_its_predicted_recall(
    licence_sets: ShingleSets, threshold: float
) -> None:
    spec = JoinSpec(metric="jaccard", threshold=threshold, recall=0.9, seed=11)
    result = set_join(licence_sets, spec)
    check_shape(result)
    truth = all_pairs_above(licence_sets, threshold)
    found = pairs_of(result)
    # Precision 1: every pair is true, with its exact value.
    assert all(truth[pair] == value for pair, value in found.items())
    info = result.info
    assert info["family"] == "minhash"
    assert info["num_giant_buckets"] == 0  # no bucket was cut, so the S-curve applies
    assert info["predicted_recall"] == pytest.approx(
        Amplification.bands(info["num_bands"], info["num_rows"]).probability(threshold)
    )
    assert info["predicted_recall"] >= 0.9
    # Recall: pair i is found with probability P_i = 1 - (1 - J_i^r)^b (MMDS §3.4.2). Treating
    # the pairs as independent, the count found has mean sum P_i and variance
    # sum P_i (1 - P_i); it must be no less than the mean by four standard deviations.
    p = np.asarray(s_curve(np.array(list(truth.values())), info["num_bands"], info["num_rows"]))
    assert len(found) >= p.sum() - 4 * math.sqrt(float((p * (1 - p)).sum()))
    # The weaker statement of the spec: every true pair is found with probability at least
    # P = predicted_recall (the S-curve at the threshold), so the recall is at least P less
    # four standard deviations of a binomial proportion, sqrt(P (1 - P) / n).
    recall = info["predicted_recall"]
    assert len(found) / len(truth) >= recall - 4 * math.sqrt(recall * (1 - recall) / len(truth))


def test_exact_spec_runs_the_prefix_join(licence_sets: ShingleSets) -> None:
    result = set_join(licence_sets, JoinSpec(metric="jaccard", threshold=0.85, exact=True))
    assert result.info["family"] == "prefix"
    assert pairs_of(result) == pairs_of(prefix_join(licence_sets, 0.85))


def test_lsh_join_is_the_same_in_memory_and_spilled(
    licence_sets: ShingleSets, tmp_path: Path
) -> None:
    spec = JoinSpec(metric="jaccard", threshold=0.7, num_bands=12, num_rows=4, seed=5)
    whole = set_join(licence_sets, spec)
    spilled = set_join(licence_sets, spec, work_dir=tmp_path)
    assert pairs_of(whole) == pairs_of(spilled)
    assert len(whole) > 1000
    assert whole.info == spilled.info
    assert (whole.info["num_bands"], whole.info["num_rows"]) == (12, 4)  # as given
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"keys-{b}.u64" for b in range(12))


# the MinHash family ---------------------------------------------------------------------------


def test_one_minhash_slot_agrees_with_probability_the_jaccard(
    licence_pairs: list[tuple[str, str, float]],
) -> None:
    num_bands = 512
    spec = JoinSpec(metric="jaccard", threshold=0.5, seed=9)
    hasher = SetHasher(spec, num_bands=num_bands, num_rows=1)
    shingler = Shingler()
    for left, right, jaccard in licence_pairs:
        keys = hasher.keys(shingler.shingle_sets([left, right]))
        agree = float(np.mean(keys[0] == keys[1]))
        # One band of one row agrees with probability J: the mean of 512 has standard
        # deviation sqrt(J (1 - J) / 512); allow four (plus 1/512 for the bias of linear
        # permutations).
        assert abs(agree - jaccard) <= 4 * math.sqrt(jaccard * (1 - jaccard) / num_bands) + 1 / 512
        assert SetHasher.collision_probability(jaccard, spec, 0) == jaccard


def test_keys_depend_on_seed_and_sets_only(licence_sets: ShingleSets) -> None:
    spec = JoinSpec(metric="jaccard", threshold=0.8, seed=4)
    hasher = SetHasher(spec, num_bands=6, num_rows=3)
    sets = ShingleSets(hashes=licence_sets.hashes, offsets=licence_sets.offsets[:301])
    keys = hasher.keys(sets)
    halves = [
        ShingleSets(hashes=sets.hashes, offsets=sets.offsets[:151]),
        ShingleSets(hashes=sets.hashes, offsets=sets.offsets[150:]),
    ]
    assert np.array_equal(keys, np.concatenate([hasher.keys(h) for h in halves]))
    assert np.array_equal(keys, SetHasher(spec, num_bands=6, num_rows=3).keys(sets))
    other = SetHasher(JoinSpec(metric="jaccard", threshold=0.8, seed=5), num_bands=6, num_rows=3)
    nonempty = sets.sizes() > 0
    assert not np.any(other.keys(sets)[nonempty] == keys[nonempty])


def test_empty_sets_get_empty_keys() -> None:
    keys = SetHasher(JoinSpec(metric="jaccard"), num_bands=3, num_rows=2).keys(
        as_sets([set(), {1, 2}, set()])
    )
    assert np.all(keys[[0, 2]] == EMPTY_SLOT)
    assert not np.any(keys[1] == EMPTY_SLOT)


# what is refused ------------------------------------------------------------------------------


def test_bad_input_and_parameters_are_refused() -> None:
    unsorted = ShingleSets(hashes=np.array([1, 2, 5, 4], np.uint64), offsets=np.array([0, 2, 4]))
    repeated = ShingleSets(hashes=np.array([3, 3], np.uint64), offsets=np.array([0, 2]))
    spec = JoinSpec(metric="jaccard", threshold=0.5)
    for bad in (unsorted, repeated):
        with pytest.raises(InputError, match=r"set \d holds hashes that are not sorted"):
            prefix_join(bad, 0.5)
        with pytest.raises(InputError, match="not sorted"):
            set_join(bad, spec)
    with pytest.raises(InputError, match="needs a ShingleSets"):
        prefix_join([[1, 2]], 0.5)  # type: ignore[arg-type]
    wrong_type = ShingleSets(hashes=np.array([1, 2], np.int64), offsets=np.array([0, 2]))
    with pytest.raises(InputError, match="uint64"):
        set_join(wrong_type, spec)
    past_end = ShingleSets(hashes=np.array([1, 2], np.uint64), offsets=np.array([0, 3]))
    with pytest.raises(InputError, match="offsets"):
        prefix_join(past_end, 0.5)
    with pytest.raises(ParameterError, match=r"similarity in \(0, 1\]; got 0.0"):
        JoinSpec(metric="jaccard", threshold=0.0)
    with pytest.raises(ParameterError, match="at 0 every pair"):
        prefix_join(as_sets([{1}]), 0.0)
    with pytest.raises(ParameterError, match=r"threshold must be a float in \(0, 1\]"):
        prefix_join(as_sets([{1}]), 1.5)
    with pytest.raises(ParameterError, match="suffix_depth"):
        prefix_join(as_sets([{1}]), 0.5, suffix_depth=9)
    with pytest.raises(ParameterError, match="must be 'jaccard'"):
        set_join(as_sets([{1}]), JoinSpec(metric="cosine"))
    with pytest.raises(ParameterError, match="hashes metric 'jaccard'"):
        SetHasher(JoinSpec(metric="cosine"), num_bands=2, num_rows=2)
    with pytest.raises(ParameterError, match="num_rows must be an int >= 1"):
        SetHasher(spec, num_bands=2, num_rows=0)
    with pytest.raises(ParameterError, match=r"Jaccard similarity must be in \[0, 1\]"):
        SetHasher.collision_probability(1.5, spec, 0)
