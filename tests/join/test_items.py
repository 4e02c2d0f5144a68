"""Sets from ratings (MMDS §3.1.3) and imprecise features (seed 000), against plain-Python
references and the probabilities derived in neardup.join.items."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from sklearn.datasets import load_digits

from neardup._kernels.items import grid_cell_features
from neardup.errors import InputError, ParameterError
from neardup.io.itemsets import ItemRows, hash_items, read_item_rows, read_item_sets
from neardup.io.records import Ids
from neardup.join.items import bag_similarity, imprecise_features, parse_ratings, sets_from_rows
from tests.io.test_itemsets import reference_item_hash, reuters_tags


def make_rows(rows: list[tuple[str, str, float]], *, rated: bool = True) -> ItemRows:
    """ItemRows as the reader gives them, from ``(entity, item, rating)`` tuples (line = i + 2)."""
    entity_ids: list[str] = []
    index: dict[str, int] = {}
    for entity, _, _ in rows:
        if entity not in index:
            index[entity] = len(entity_ids)
            entity_ids.append(entity)
    return ItemRows(
        path=Path("ratings.csv"),
        entity_ids=Ids.of(entity_ids),
        entities=np.array([index[e] for e, _, _ in rows], dtype=np.int64),
        items=hash_items(pa.array([i for _, i, _ in rows])),
        ratings=np.array([r for _, _, r in rows], dtype=np.float64) if rated else None,
        lines=np.arange(2, len(rows) + 2, dtype=np.int64),
    )


def random_ratings(seed: int) -> list[tuple[str, str, float]]:
    """Forty customers rating some of thirty films 0..5 stars, each film at most once."""
    rng = np.random.default_rng(seed)
    rows = [
        (f"c{c}", f"film-{f}", float(rng.integers(0, 6)))
        for c in rng.permutation(40)
        for f in rng.choice(30, size=int(rng.integers(0, 12)), replace=False)
    ]
    order = rng.permutation(len(rows))
    return [rows[i] for i in order]


def as_sets(result: list[np.ndarray]) -> list[set[int]]:
    return [set(s.tolist()) for s in result]


def first_seen(rows: list[tuple[str, str, float]]) -> list[str]:
    return list(dict.fromkeys(e for e, _, _ in rows))


# --- the ratings option ---------------------------------------------------------------------


def test_parse_ratings_reads_the_four_forms() -> None:
    assert parse_ratings("set") == ("set", None, None)
    assert parse_ratings("set:3") == ("set", 3.0, None)
    assert parse_ratings("set:-1.5") == ("set", -1.5, None)
    assert parse_ratings("likes:4:2.5") == ("likes", 4.0, 2.5)
    assert parse_ratings("bag") == ("bag", None, None)


@pytest.mark.parametrize(
    "bad",
    ["sets", "set:", "set:x", "set:nan", "bag:2", "", "SET", "likes:4", "likes:2:4", "likes:3:3",
     "likes:x:1", "likes:4:-inf", "set:4:2"],
)  # fmt: skip
def test_parse_ratings_refuses_anything_else(bad: str) -> None:
    with pytest.raises(ParameterError, match=r"ratings must be 'set', 'set:<min>', .* or 'bag'"):
        parse_ratings(bad)


# --- sets and bags from rows ----------------------------------------------------------------


def test_rows_without_ratings_group_into_sets_in_first_seen_order() -> None:
    rows = random_ratings(1)
    rows += rows[:10]  # a membership given twice counts once
    got = sets_from_rows(make_rows(rows, rated=False))
    expected: dict[str, set[int]] = defaultdict(set)
    for entity, item, _ in rows:
        expected[entity].add(reference_item_hash(item))
    assert list(got.ids) == first_seen(rows)
    assert as_sets([got.sets.set_of(i) for i in range(len(got))]) == [
        expected[e] for e in first_seen(rows)
    ]
    assert all(np.all(np.diff(got.sets.set_of(i).astype(np.float64)) > 0) for i in range(len(got)))


@pytest.mark.parametrize("minimum", [None, 3.0, 4.5])
def test_set_min_keeps_the_items_rated_at_least_min(minimum: float | None) -> None:
    rows = random_ratings(2)
    ratings = "set" if minimum is None else f"set:{minimum}"
    got = sets_from_rows(make_rows(rows), ratings)
    expected: dict[str, set[int]] = {e: set() for e in first_seen(rows)}
    for entity, item, rating in rows:
        if minimum is None or rating >= minimum:
            expected[entity].add(reference_item_hash(item))
    assert list(got.ids) == list(expected)
    assert as_sets([got.sets.set_of(i) for i in range(len(got))]) == list(expected.values())
    if minimum == 4.5:
        assert any(not s for s in expected.values())  # entities left empty are kept


def test_likes_puts_liked_and_hated_elements_in_the_sets() -> None:
    # MMDS §3.1.3: "imagine two set elements for each movie, 'liked' and 'hated.' If a customer
    # rated a movie highly, put the 'liked' for that movie in the customer's set. If they gave
    # a low rating to a movie, put 'hated' for that movie in their set."
    rows = random_ratings(4)
    got = sets_from_rows(make_rows(rows), "likes:4:2")
    expected: dict[str, set[tuple[str, str]]] = {e: set() for e in first_seen(rows)}
    for entity, item, rating in rows:
        if rating >= 4:
            expected[entity].add(("liked", item))
        elif rating <= 2:
            expected[entity].add(("hated", item))
    assert list(got.ids) == list(expected)
    entities = list(expected)
    for i in range(len(entities)):
        members = got.sets.set_of(i)
        assert len(members) == len(expected[entities[i]])
        assert np.all(np.diff(members.astype(np.float64)) > 0)  # sorted, distinct
        for j in range(i + 1, len(entities)):
            a, b = expected[entities[i]], expected[entities[j]]
            shared = np.intersect1d(members, got.sets.set_of(j)).size
            assert shared == len(
                a & b
            )  # the same movie liked by one and hated by the other differs
    # Liked elements are the items themselves (what set:4 keeps); hated ones are others.
    liked = sets_from_rows(make_rows(rows), "set:4")
    for i in range(len(entities)):
        assert np.isin(liked.sets.set_of(i), got.sets.set_of(i)).all()


def test_bag_jaccard_of_the_expansions_is_the_weighted_jaccard() -> None:
    """Set Jaccard of (item, copy) expansions == sum min / sum max of the star counts, exactly."""
    rows = random_ratings(3)
    bags = sets_from_rows(make_rows(rows), "bag")
    counts: dict[str, dict[str, int]] = {e: {} for e in first_seen(rows)}
    for entity, item, rating in rows:
        counts[entity][item] = int(rating)
    entities = list(counts)
    assert list(bags.ids) == entities
    for i, a in enumerate(entities):
        assert len(bags.sets.set_of(i)) == sum(counts[a].values())
        for j in range(i + 1, len(entities)):
            b = entities[j]
            films = set(counts[a]) | set(counts[b])
            low = sum(min(counts[a].get(f, 0), counts[b].get(f, 0)) for f in films)
            high = sum(max(counts[a].get(f, 0), counts[b].get(f, 0)) for f in films)
            sa, sb = bags.sets.set_of(i), bags.sets.set_of(j)
            shared = len(np.intersect1d(sa, sb))
            union = len(sa) + len(sb) - shared
            assert Fraction(shared, union or 1) == Fraction(low, high or 1)


MMDS_BAGS = {"A": [1, 1, 1, 2], "B": [1, 1, 2, 2, 3], "C": [1, 2, 3, 4]}


def test_bag_similarity_reproduces_mmds_example_3_2_and_exercise_3_1_2() -> None:
    """MMDS §3.1.3: {a,a,a,b} vs {a,a,b,b,c} is 1/3; intersection min, union the sum of sizes."""
    rows = [
        (name, str(item), float(bag.count(item)))
        for name, bag in MMDS_BAGS.items()
        for item in sorted(set(bag))
    ]
    bags = sets_from_rows(make_rows(rows), "bag")
    for i, a in enumerate(MMDS_BAGS):
        for j, b in enumerate(MMDS_BAGS):
            if i >= j:
                continue
            x, y = MMDS_BAGS[a], MMDS_BAGS[b]
            low = sum(min(x.count(v), y.count(v)) for v in set(x) | set(y))
            mmds = low / (len(x) + len(y))
            sa, sb = bags.sets.set_of(i), bags.sets.set_of(j)
            w = len(np.intersect1d(sa, sb)) / len(np.union1d(sa, sb))
            assert bag_similarity(w) == pytest.approx(mmds, rel=1e-12)
            if (a, b) == ("A", "B"):
                assert mmds == pytest.approx(1 / 3)  # Example 3.2
    assert bag_similarity(1.0) == 0.5  # the highest bag similarity (identical bags)


def test_bag_ratings_of_zero_leave_the_item_out() -> None:
    bags = sets_from_rows(make_rows([("u", "a", 0.0), ("u", "b", 2.0), ("v", "a", 0.0)]), "bag")
    assert bags.sets.sizes().tolist() == [2, 0]


@pytest.mark.parametrize(
    ("rows", "ratings", "pieces"),
    [
        ([("u", "a", 1.0), ("u", "b", 2.5)], "bag", [":3: the rating 2.5 is not a whole number"]),
        ([("u", "a", -1.0)], "bag", [":2: the rating -1 is not a whole number >= 0", "round"]),
        (
            [("u", "a", 1.0), ("v", "a", 2.0), ("u", "a", 3.0)],
            "set:2",
            [":4: this row rates the item of line 2 again", "one rating per entity and item"],
        ),
    ],
    ids=["fraction", "negative", "twice"],
)
def test_bad_ratings_name_file_and_line(
    rows: list[tuple[str, str, float]], ratings: str, pieces: list[str]
) -> None:
    with pytest.raises(InputError) as info:
        sets_from_rows(make_rows(rows), ratings)
    message = str(info.value)
    assert message.startswith("ratings.csv:")
    for piece in pieces:
        assert piece in message


def test_ratings_modes_need_a_rating_field() -> None:
    rows = make_rows([("u", "a", 1.0)], rated=False)
    for mode in ("bag", "set:3"):
        with pytest.raises(ParameterError, match="needs a rating for each row; name the rating"):
            sets_from_rows(rows, mode)


@pytest.mark.slow
def test_reuters_rows_group_into_the_same_sets_as_the_list_form(tmp_path: Path) -> None:
    """Real data: (story, tag) rows of Reuters-21578 as CSV give each tagged story its tag set."""
    stories = reuters_tags()
    csv_path = tmp_path / "tags.csv"
    lines = ["story,tag"] + [f"{i},{t}" for i, tags in stories for t in tags]
    csv_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    grouped = sets_from_rows(read_item_rows(csv_path, entity_field="story", item_field="tag"))
    jsonl = tmp_path / "sets.jsonl"
    jsonl.write_text(
        "".join(json.dumps({"id": i, "items": tags}) + "\n" for i, tags in stories),
        encoding="utf-8",
    )
    listed = read_item_sets(jsonl, id_field="id")
    position = {story: k for k, story in enumerate(listed.ids)}
    tagged = [i for i, tags in stories if tags]
    assert list(grouped.ids) == tagged
    for k, story in enumerate(grouped.ids):
        np.testing.assert_array_equal(grouped.sets.set_of(k), listed.sets.set_of(position[story]))


# --- imprecise features ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def mean_intensities() -> np.ndarray:
    """Real numbers: the mean pixel intensity of each of sklearn's 1,797 digit images."""
    means: np.ndarray = load_digits().data.mean(axis=1)
    return means


WIDTH = 1.0
FALSE_ALARM = 1e-3
"""Family-wise chance that a statistical test below fails on correct code (Bonferroni over
its pairs and both tails)."""


def binomial_tails(k: int, n: int, p: float) -> tuple[float, float]:
    """``P(X <= k)`` and ``P(X >= k)`` for ``X ~ Binomial(n, p)``, exactly (no normal
    approximation: many chances here are near 0 or 1)."""
    if p in (0.0, 1.0):
        certain = 0 if p == 0.0 else n
        return float(k >= certain), float(k <= certain)
    i = np.arange(n + 1)
    log_choose = np.r_[0.0, np.cumsum(np.log(n - i[1:] + 1) - np.log(i[1:]))]
    pmf = np.exp(log_choose + i * math.log(p) + (n - i) * math.log1p(-p))
    return float(pmf[: k + 1].sum()), float(pmf[k:].sum())


def assert_binomial(counts: np.ndarray, n: int, chances: np.ndarray) -> None:
    """Each count is a plausible draw of Binomial(n, chance): neither tail below
    FALSE_ALARM / (2 * pairs)."""
    alpha = FALSE_ALARM / (2 * len(counts))
    for k, p in zip(counts.tolist(), chances.tolist(), strict=True):
        lower, upper = binomial_tails(int(k), n, p)
        assert min(lower, upper) >= alpha, (k, n, p)


def _pairs(means: np.ndarray, num_pairs: int) -> tuple[np.ndarray, np.ndarray]:
    """Neighbouring images' means, and their distances over the cell width."""
    x, y = means[:num_pairs], means[1 : num_pairs + 1]
    return np.stack([x, y], axis=1).reshape(-1), np.abs(x - y) / WIDTH


def test_one_grid_shares_a_cell_with_chance_one_minus_delta_over_w(
    mean_intensities: np.ndarray,
) -> None:
    """Each of D columns repeats the value under its own random shift, so the cells a pair
    shares are Binomial(D, p) with p = max(0, 1 - delta / w)."""
    values, ratio = _pairs(mean_intensities, 200)
    assert ratio.min() < 0.1
    assert ratio.max() > 1.0
    columns = 2000
    sets = imprecise_features(
        np.repeat(values[:, None], columns, axis=1), cell_width=WIDTH, num_grids=1, seed=11
    )
    shared = np.array(
        [len(np.intersect1d(sets.set_of(2 * k), sets.set_of(2 * k + 1))) for k in range(200)]
    )
    assert_binomial(shared, columns, np.maximum(0.0, 1.0 - ratio))


def test_some_of_g_grids_shares_a_cell_with_chance_one_minus_ratio_to_the_g(
    mean_intensities: np.ndarray,
) -> None:
    """Over 150 seeds (independent shifts), a pair shares a cell in at least one of g = 3 grids
    Binomial(150, 1 - min(1, delta / w)^3) times, and shares Binomial(450, 1 - delta / w)
    cells in all (three independent grids a seed)."""
    values, ratio = _pairs(mean_intensities, 200)
    grids, seeds = 3, 150
    some = np.zeros(200, dtype=np.int64)
    count = np.zeros(200, dtype=np.int64)
    for seed in range(seeds):
        cells = imprecise_features(values[:, None], cell_width=WIDTH, num_grids=grids, seed=seed)
        rows = cells.hashes.reshape(400, grids)
        equal = rows[0::2, :, None] == rows[1::2, None, :]
        some += equal.any(axis=(1, 2))
        count += equal.sum(axis=(1, 2))
    assert_binomial(some, seeds, 1.0 - np.minimum(1.0, ratio) ** grids)
    assert_binomial(count, seeds * grids, np.maximum(0.0, 1.0 - ratio))


def test_features_are_sorted_deterministic_and_follow_the_seed(
    mean_intensities: np.ndarray,
) -> None:
    digits = load_digits().data[:50]
    a = imprecise_features(digits, cell_width=3.0, num_grids=4, seed=5)
    b = imprecise_features(digits, cell_width=3.0, num_grids=4, seed=5)
    c = imprecise_features(digits, cell_width=3.0, num_grids=4, seed=6)
    assert a.hashes.tobytes() == b.hashes.tobytes()
    assert a.offsets.tolist() == b.offsets.tolist()
    assert a.hashes.tobytes() != c.hashes.tobytes()
    assert a.sizes().tolist() == [64 * 4] * 50
    assert all(np.all(a.set_of(i)[1:] > a.set_of(i)[:-1]) for i in range(50))
    assert mean_intensities.shape == (1797,)


MASK = 2**64 - 1


def _fmix64(x: int) -> int:
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & MASK
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & MASK
    return x ^ (x >> 33)


def test_cell_features_follow_the_documented_hash_in_plain_python() -> None:
    """fmix64(fmix64((j * g + k) ^ CELL_SALT) + cell * GOLDEN), cell = floor((x + u) / w)."""
    rng = np.random.default_rng(4)
    vectors = rng.normal(0.0, 3.0, size=(6, 3))
    shifts = rng.uniform(0.0, 0.7, size=(2, 3))
    out = np.empty((6, 6), dtype=np.uint64)
    grid_cell_features(vectors, shifts, 0.7, out, 0, vectors.shape[0])
    for i in range(6):
        expected = []
        for j in range(3):
            for k in range(2):
                cell = math.floor((vectors[i, j] + shifts[k, j]) / 0.7)
                key = _fmix64((j * 2 + k) ^ 0x2545F4914F6CDD1D)
                expected.append(_fmix64((key + (cell & MASK) * 0x9E3779B97F4A7C15) & MASK))
        assert out[i].tolist() == sorted(expected)
    assert (np.floor((vectors[:, :, None] + shifts.T[None]) / 0.7) < 0).any()  # negative cells


def test_imprecise_features_are_frozen_for_a_fixed_seed() -> None:
    """Golden: the shifts drawn from the seed and the cell hash never change silently."""
    sets = imprecise_features(np.array([[0.5, -1.25]]), cell_width=1.0, num_grids=2, seed=0)
    assert [hex(h) for h in sets.hashes.tolist()] == [
        "0x318f9c89c3b1b3b9",
        "0x6da8ebf984e8a7f4",
        "0xa55a8650378d063c",
        "0xf4aa7626012e7756",
    ]


def test_values_a_cell_width_apart_never_share_and_equal_values_always_do() -> None:
    x = np.array([[-3.7, 0.0, 1e6], [-3.7 + 2.5, -2.5, 1e6 - 2.5], [-3.7, 0.0, 1e6]])
    sets = imprecise_features(x, cell_width=2.5, num_grids=16, seed=1)
    assert len(np.intersect1d(sets.set_of(0), sets.set_of(1))) == 0
    np.testing.assert_array_equal(sets.set_of(0), sets.set_of(2))
    assert len(imprecise_features(np.zeros((0, 3)), cell_width=1.0, num_grids=2)) == 0


@pytest.mark.parametrize(
    ("vectors", "kwargs", "error", "match"),
    [
        (np.array([[1.0, np.nan]]), {}, InputError, "row 0, column 1 is nan"),
        (np.array([[1e300]]), {}, InputError, "too large for cells of width 1"),
        (np.array([1.0, 2.0]), {}, ParameterError, "2-D array of real numbers"),
        (np.array([["a"]]), {}, ParameterError, "2-D array of real numbers"),
        (np.ones((1, 1)), {"cell_width": 0.0}, ParameterError, "cell_width must be a float > 0"),
        (
            np.ones((1, 1)),
            {"num_grids": 0},
            ParameterError,
            r"num_grids must be an int in \[1, 1024\]",
        ),
        (np.ones((1, 1)), {"seed": -1}, ParameterError, "seed must be an int"),
    ],
    ids=["nan", "huge", "1-d", "strings", "width", "grids", "seed"],
)
def test_imprecise_features_refuse_bad_arguments(
    vectors: np.ndarray, kwargs: dict[str, float], error: type[Exception], match: str
) -> None:
    arguments: dict[str, float] = {"cell_width": 1.0, "num_grids": 2, **kwargs}
    with pytest.raises(error, match=match):
        imprecise_features(vectors, **arguments)  # type: ignore[arg-type]
