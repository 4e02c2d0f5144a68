"""Exact distances of vector pairs against plain-Python formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup.errors import ParameterError
from neardup.join.distances import pair_values, within_threshold


@st.composite
def rows_and_pairs(
    draw: st.DrawFn, values: st.SearchStrategy[float]
) -> tuple[list[list[float]], list[int], list[int]]:
    """A few rows of equal width and pairs of their row numbers (self-pairs included)."""
    num_rows = draw(st.integers(1, 6))
    dim = draw(st.integers(1, 9))
    rows = draw(
        st.lists(st.lists(values, min_size=dim, max_size=dim), min_size=num_rows, max_size=num_rows)
    )
    index = st.integers(0, num_rows - 1)
    pairs = draw(st.lists(st.tuples(index, index), max_size=12))
    return rows, [a for a, _ in pairs], [b for _, b in pairs]


def cosine_reference(x: list[float], y: list[float]) -> float:
    dot = norm_x = norm_y = 0.0
    for a, b in zip(x, y, strict=True):  # an explicit loop: sum() may compensate
        dot += a * b
        norm_x += a * a
        norm_y += b * b
    if norm_x == 0.0 or norm_y == 0.0:
        return 0.0
    cosine = dot / (math.sqrt(norm_x) * math.sqrt(norm_y))
    slack = (len(x) + 3) * 2.0**-52  # within the sums' rounding error of ±1 is ±1
    return 1.0 if cosine > 1.0 - slack else -1.0 if cosine < slack - 1.0 else cosine


def l1_reference(x: list[float], y: list[float]) -> float:
    total = 0.0
    for a, b in zip(x, y, strict=True):
        total += abs(a - b)
    return total


def l2_reference(x: list[float], y: list[float]) -> float:
    total = 0.0
    for a, b in zip(x, y, strict=True):
        total += (a - b) * (a - b)
    return math.sqrt(total)


SMALL_INTS = st.integers(-4, 4).map(float)
FLOATS = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@given(case=rows_and_pairs(st.one_of(SMALL_INTS, FLOATS)))
def test_cosine_equals_the_formula(case: tuple[list[list[float]], list[int], list[int]]) -> None:
    rows, first, second = case
    got = pair_values("cosine", np.array(rows), first, second)
    want = [cosine_reference(rows[a], rows[b]) for a, b in zip(first, second, strict=True)]
    # The same float64 operations in the same order: equal to the last bit.
    assert got.tolist() == want
    assert np.all(np.abs(got) <= 1.0)


@given(case=rows_and_pairs(st.one_of(st.integers(0, 16).map(float), FLOATS)))
def test_l1_and_l2_equal_the_formulas(
    case: tuple[list[list[float]], list[int], list[int]],
) -> None:
    rows, first, second = case
    pairs = list(zip(first, second, strict=True))
    l1 = pair_values("l1", np.array(rows), first, second)
    l2 = pair_values("l2", np.array(rows), first, second)
    assert l1.tolist() == [l1_reference(rows[a], rows[b]) for a, b in pairs]
    assert l2.tolist() == [l2_reference(rows[a], rows[b]) for a, b in pairs]


@given(case=rows_and_pairs(st.integers(0, 16).map(float)))
def test_l1_of_integer_rows_is_exact(
    case: tuple[list[list[float]], list[int], list[int]],
) -> None:
    rows, first, second = case
    counts = np.array(rows, dtype=np.uint8)  # integer rows are read in their own dtype
    got = pair_values("l1", counts, first, second)
    assert got.tolist() == [
        sum(abs(int(x) - int(y)) for x, y in zip(rows[a], rows[b], strict=True))
        for a, b in zip(first, second, strict=True)
    ]


def pack(bits: list[int]) -> list[int]:
    """Bits packed 64 to a word, bit j as bit j % 64 of word j // 64, in plain Python."""
    words = [0] * ((len(bits) + 63) // 64)
    for j, bit in enumerate(bits):
        words[j // 64] |= bit << (j % 64)
    return words


@given(
    case=rows_and_pairs(st.just(0.0)),
    width=st.integers(1, 200),
    data=st.data(),
)
def test_hamming_counts_the_differing_bits(
    case: tuple[list[list[float]], list[int], list[int]], width: int, data: st.DataObject
) -> None:
    rows, first, second = case
    bits = [data.draw(st.lists(st.integers(0, 1), min_size=width, max_size=width)) for _ in rows]
    packed = np.array([pack(b) for b in bits], dtype=np.uint64)
    got = pair_values("hamming", packed, first, second)
    want = [
        sum(x != y for x, y in zip(bits[a], bits[b], strict=True))
        for a, b in zip(first, second, strict=True)
    ]
    assert got.tolist() == want


def test_a_zero_vector_has_cosine_zero_with_everything_itself_included() -> None:
    rows = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])
    assert pair_values("cosine", rows, [0, 0, 1], [0, 1, 1]).tolist() == [0.0, 0.0, 1.0]


def test_values_do_not_depend_on_the_order_of_a_pair_or_the_batch() -> None:
    rng = np.random.default_rng(5)
    rows = rng.normal(size=(50, 33))
    first, second = rng.integers(0, 50, 400), rng.integers(0, 50, 400)
    for metric in ("cosine", "l1", "l2"):
        forward = pair_values(metric, rows, first, second)
        backward = pair_values(metric, rows, second, first)
        assert np.array_equal(forward, backward)  # bit for bit
        one_by_one = [
            pair_values(metric, rows, [a], [b])[0] for a, b in zip(first, second, strict=True)
        ]
        assert np.array_equal(forward, one_by_one)


def test_a_query_batch_is_measured_against_stored_rows() -> None:
    stored = np.array([[1.0, 0.0], [0.0, 2.0]])
    queries = np.array([[0.0, 5.0]])
    got = pair_values("cosine", queries, [0, 0], [0, 1], right=stored)
    assert got.tolist() == [0.0, 1.0]


def test_float32_rows_are_measured_in_float64() -> None:
    rows = np.array([[0.1, 0.2], [0.3, 0.7]], dtype=np.float32)
    got = pair_values("l2", rows, [0], [1])
    want = math.dist(rows[0].astype(np.float64), rows[1].astype(np.float64))
    assert got[0] == pytest.approx(want, rel=1e-15)


def test_a_pair_exactly_at_the_threshold_is_close() -> None:
    rows = np.array([[3.0, 4.0], [4.0, 3.0], [0.0, 0.0]])
    # 24 / (5 * 5) and sqrt(25) are exact in float64.
    cosine = pair_values("cosine", rows, [0], [1])
    assert within_threshold("cosine", cosine, 0.96).tolist() == [True]
    assert within_threshold("cosine", cosine, float(np.nextafter(0.96, 1.0))).tolist() == [False]
    l2 = pair_values("l2", rows, [0], [2])
    assert within_threshold("l2", l2, 5.0).tolist() == [True]
    assert within_threshold("l2", l2, float(np.nextafter(5.0, 0.0))).tolist() == [False]


@pytest.mark.parametrize(
    ("metric", "data", "first", "second", "message"),
    [
        ("jaccard", np.zeros((2, 2)), [0], [1], "metric must be one of"),
        ("hamming", np.zeros((2, 2)), [0], [1], "packed uint64 words"),
        ("l2", np.zeros(4), [0], [1], "2-D array"),
        ("l2", np.zeros((2, 2)), [0], [2], r"row numbers in \[0, 2\)"),
        ("l2", np.zeros((2, 2)), [0, 1], [1], "equal lengths"),
        ("l1", np.array([["a", "b"]]), [0], [0], "must be numeric"),
    ],
)
def test_bad_arguments_are_refused(
    metric: str, data: np.ndarray, first: list[int], second: list[int], message: str
) -> None:
    with pytest.raises(ParameterError, match=message):
        pair_values(metric, data, first, second)


def test_copies_and_scaled_copies_have_cosine_exactly_one() -> None:
    rows = np.random.default_rng(11).normal(size=(1000, 64)).astype(np.float32)
    both = np.concatenate([rows, rows * np.float32(3)])
    items = np.arange(1000)
    assert (pair_values("cosine", both, items, items) == 1.0).all()
    assert (pair_values("cosine", both, items, items + 1000) == 1.0).all()
    assert (pair_values("cosine", -both, items, items + 1000) == 1.0).all()
    assert (pair_values("cosine", both, items, items + 1000, right=-both) == -1.0).all()
    assert (pair_values("cosine", both, items[:-1], items[1:]) < 0.9).all()
