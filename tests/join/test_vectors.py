"""The vector join, its tables and the vector index against brute force on real data.

Truth comes from plain NumPy over every pair (normalised dot products, integer sums, bit
counts of unpacked bits), never from neardup's kernels. Candidates for the restricted
references come from equal band keys compared in NumPy.
"""

from __future__ import annotations

import math
import re
import zlib
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_digits

from neardup import Match, VectorIndex
from neardup.errors import InputError, NeardupWarning, ParameterError, StoreError
from neardup.join.vector_tables import VectorTables
from neardup.join.vectors import vector_join
from neardup.kinds import METRICS, load
from neardup.lsh import BitSampler
from neardup.lsh.amplify import Amplification, Sensitivity
from neardup.params import JoinSpec
from tests.conftest import read_rfcs

TF_DIM = 256


@pytest.fixture(scope="module")
def licence_tf(licenses: list[dict[str, object]]) -> np.ndarray:
    """Word counts of the 2,310 bundled licence texts, hashed (CRC-32) into 256 buckets."""
    buckets: dict[str, int] = {}
    out = np.zeros((len(licenses), TF_DIM))
    for row, record in enumerate(licenses):
        words = re.findall(r"\w+", str(record["text"]).lower())
        hashed = [buckets.setdefault(w, zlib.crc32(w.encode()) % TF_DIM) for w in words]
        out[row] = np.bincount(hashed, minlength=TF_DIM)
    return out


@pytest.fixture(scope="module")
def licence_bits(licence_tf: np.ndarray) -> np.ndarray:
    """The sign bits of the centred, normalised TF vectors, packed as the join takes them."""
    norms = np.linalg.norm(licence_tf, axis=1, keepdims=True)
    unit = licence_tf / np.where(norms == 0, 1.0, norms)
    bits = (unit - unit.mean(axis=0)) > 0
    return pack(bits)


@pytest.fixture(scope="module")
def digits() -> np.ndarray:
    """sklearn's bundled 8x8 digits: 1,797 rows of 64 counts in [0, 16]."""
    return load_digits().data.astype(np.int64)


def pack(bits: np.ndarray) -> np.ndarray:
    """Bits packed 64 to a word, bit j as bit j % 64 (least significant first) of word j // 64."""
    n, width = bits.shape
    words = np.zeros((n, (width + 63) // 64), dtype=np.uint64)
    for j in range(width):
        words[:, j // 64] |= bits[:, j].astype(np.uint64) << np.uint64(j % 64)
    return words


def all_values(metric: str, data: np.ndarray, dim: int | None = None) -> np.ndarray:
    """The exact value of every pair, as a full matrix, in plain NumPy."""
    if metric == "cosine":
        norms = np.sqrt((data * data).sum(axis=1))
        unit = data / np.where(norms == 0, 1.0, norms)[:, None]
        return unit @ unit.T
    if metric == "hamming":
        assert dim is not None
        bits = np.unpackbits(data.view(np.uint8), axis=1, bitorder="little")[:, :dim]
        ones = bits.astype(np.int64)
        return (ones @ (1 - ones).T + (1 - ones) @ ones.T).astype(np.float64)
    out = np.empty((data.shape[0], data.shape[0]))
    for start in range(0, data.shape[0], 128):
        diff = data[start : start + 128, None, :] - data[None, :, :]
        if metric == "l1":
            out[start : start + 128] = np.abs(diff).sum(axis=-1)
        else:  # integer squares sum exactly; the square root is correctly rounded
            out[start : start + 128] = np.sqrt((diff * diff).sum(axis=-1))
    return out


def close(metric: str, values: np.ndarray, threshold: float) -> np.ndarray:
    if METRICS[metric].measure == "similarity":
        return values >= threshold
    return values <= threshold


def recall_floor(predicted: float, num_true: int) -> float:
    """The least recall consistent with ``predicted``: four binomial standard deviations below.

    Each close pair becomes a candidate with probability at least ``predicted`` (the S-curve
    at the threshold; nearer pairs have more), so the fraction found has mean at least
    ``predicted`` and, over ``num_true`` pairs counted as independent trials, standard
    deviation at most ``sqrt(predicted (1 - predicted) / num_true)``; four of them below the
    mean is a one-sided normal tail of 3e-5.
    """
    return predicted - 4 * math.sqrt(predicted * (1 - predicted) / num_true)


CASES = [
    # (metric, data fixture, threshold, close pairs in the data at least, family)
    ("cosine", "licence_tf", 0.95, 5000, None),
    pytest.param("hamming", "licence_bits", 16, 2000, None, marks=pytest.mark.slow),
    ("l1", "digits", 80, 3000, None),
    pytest.param("l1", "digits", 80, 3000, "unary", id="l1-unary"),
    ("l2", "digits", 18.0, 3000, None),
]


@pytest.mark.parametrize(("metric", "fixture", "threshold", "num_true", "family"), CASES)
def test_join_finds_only_close_pairs_and_reaches_its_predicted_recall(
    metric: str,
    fixture: str,
    threshold: float,
    num_true: int,
    family: str | None,
    request: pytest.FixtureRequest,
) -> None:
    data = request.getfixturevalue(fixture)
    dim = TF_DIM if metric == "hamming" else None
    spec = JoinSpec(metric=metric, threshold=threshold, recall=0.9, family=family)
    result = vector_join(data, spec, dim=dim)

    values = all_values(metric, data, dim)
    first, second = np.triu_indices(data.shape[0], 1)
    truth = close(metric, values[first, second], threshold)
    assert truth.sum() >= num_true  # enough pairs for the recall bound to mean something

    # Precision 1: every pair is close, with its exact value (the cosine up to the rounding of
    # NumPy's normalised product, a few ulps).
    assert np.all(result.first < result.second)
    assert np.all(np.diff(result.first * data.shape[0] + result.second) > 0)  # sorted, distinct
    assert np.allclose(result.values, values[result.first, result.second], rtol=0, atol=1e-12)
    assert np.all(close(metric, result.values, threshold))
    # Recall: at least the S-curve's prediction at the threshold, less the binomial tolerance.
    info = result.info
    assert info["num_giant_buckets"] == 0  # no bucket was cut, so the S-curve applies
    amplification = Amplification.bands(info["num_bands"], info["num_rows"])
    hasher = load(METRICS[metric].family_named(family))
    p = hasher.collision_probability(threshold, spec, dim or data.shape[1], info.get("max_value"))
    assert info["predicted_recall"] == pytest.approx(amplification.probability(p))
    assert info["predicted_recall"] >= 0.9
    assert len(result) >= recall_floor(info["predicted_recall"], int(truth.sum())) * truth.sum()
    assert info["num_pairs"] == len(result)
    assert info["num_candidates"] >= len(result)
    assert info["family"] == hasher.__name__


def test_the_same_spec_gives_the_same_pairs_whatever_the_chunks(
    digits: np.ndarray, tmp_path: Path
) -> None:
    spec = JoinSpec(metric="l2", threshold=15.0, seed=7)
    whole = vector_join(digits, spec)
    again = vector_join(digits, spec)
    chunked = vector_join(digits, spec, chunk_rows=97, work_dir=tmp_path)
    assert len(whole) > 100
    for other in (again, chunked):
        assert np.array_equal(whole.first, other.first)
        assert np.array_equal(whole.second, other.second)
        assert np.array_equal(whole.values, other.values)
        assert whole.info == other.info
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"keys-{band}.u64" for band in range(whole.info["num_bands"])
    )


def close_pair_keys(counts: np.ndarray, threshold: float) -> np.ndarray:
    """``first * n + second`` of every pair of rows within L1 ``threshold``, by brute force."""
    n, keys, rows = counts.shape[0], [], counts.astype(np.int32)
    for start in range(0, n, 64):
        block = np.abs(rows[start : start + 64, None, :] - rows[None, :, :]).sum(axis=-1)
        a, b = np.nonzero(block <= threshold)
        a += start
        keys.append(a[a < b] * n + b[a < b])
    return np.concatenate(keys)


def test_l1_projections_reach_their_predicted_recall_on_heavy_tailed_counts(
    licence_tf: np.ndarray,
) -> None:
    # Word counts of real texts: a bin of one licence holds up to 685 words, the median
    # licence 340 words in all. The unary code is as wide as the largest count, so a pair at
    # the threshold and one far past it differ in a sliver of it; Cauchy projections see only
    # the distances.
    counts = licence_tf.astype(np.int64)
    truth = close_pair_keys(counts, 40)
    assert truth.shape[0] > 5000
    results = {
        family: vector_join(counts, JoinSpec(metric="l1", threshold=40, family=family))
        for family in ("cauchy", "unary")
    }
    cauchy = results["cauchy"]
    assert cauchy.info["family"] == "CauchyHasher"
    assert "max_value" not in cauchy.info
    assert cauchy.info["bucket_pairs_skipped"] == 0
    found = np.isin(truth, cauchy.first * counts.shape[0] + cauchy.second).mean()
    assert found >= recall_floor(cauchy.info["predicted_recall"], truth.shape[0])
    # The unary code pairs four times the candidates for the same pairs.
    assert results["unary"].info["num_candidates"] > 4 * cauchy.info["num_candidates"]


@pytest.mark.slow
def test_l1_projections_hold_their_recall_where_the_unary_code_loses_pairs_to_the_cap() -> None:
    rfcs = read_rfcs(limit=3000)
    if not rfcs:
        pytest.skip("the RFC corpus is not in ../shared/data")
    counts = np.zeros((len(rfcs), 64), dtype=np.int64)
    for row, text in enumerate(rfcs.values()):
        words = text.lower().split()
        counts[row] = np.bincount([zlib.crc32(w.encode()) % 64 for w in words], minlength=64)
    truth = close_pair_keys(counts, 400)
    n = counts.shape[0]
    cauchy = vector_join(counts, JoinSpec(metric="l1", threshold=400))
    recall = np.isin(truth, cauchy.first * n + cauchy.second).mean()
    assert recall >= cauchy.info["predicted_recall"]
    assert cauchy.info["bucket_pairs_skipped"] == 0
    # The unary code (C = the largest count, over 8,000) settles on a few long bands whose
    # all-zero keys gather the short RFCs past the cap: it loses a fifth of the pairs, and says so.
    with pytest.warns(NeardupWarning, match="were not measured, so the recall may fall short"):
        unary = vector_join(counts, JoinSpec(metric="l1", threshold=400, family="unary"))
    assert unary.info["bucket_pairs_skipped"] > 0
    assert np.isin(truth, unary.first * n + unary.second).mean() < 0.9


def test_another_seed_draws_other_hashes(digits: np.ndarray) -> None:
    one = vector_join(digits, JoinSpec(metric="l1", threshold=60, seed=1))
    two = vector_join(digits, JoinSpec(metric="l1", threshold=60, seed=2))
    assert one.info["num_candidates"] != two.info["num_candidates"]


# Pairs exactly at the threshold: exact values (3-4-5 triangles, 24/25 = 0.96, one bit) and
# families that make them candidates nearly surely (32 bands of one hash: a miss has
# probability (1 - p)^32 < 1e-25 for p >= 0.84).
BOUNDARY = [
    ("cosine", np.array([[3.0, 4.0], [4.0, 3.0]]), 0.96, None, {}),
    ("l2", np.array([[0.0, 0.0], [3.0, 4.0]]), 5.0, None, {"bucket_width": 200.0}),
    ("l1", np.array([[0, 0], [2, 3]]), 5.0, None, {"bucket_width": 200.0}),
    ("l1", np.array([[0, 0], [2, 3]]), 5.0, None, {"family": "unary", "max_value": 16}),
    ("hamming", np.array([[0b1], [0b0]], dtype=np.uint64), 1.0, 64, {}),
]


@pytest.mark.parametrize(("metric", "data", "threshold", "dim", "extra"), BOUNDARY)
def test_a_pair_exactly_at_the_threshold_is_found_and_one_just_past_it_is_not(
    metric: str, data: np.ndarray, threshold: float, dim: int | None, extra: dict[str, float]
) -> None:
    spec = JoinSpec(metric=metric, threshold=threshold, num_bands=32, num_rows=1, **extra)
    at = vector_join(data, spec, dim=dim)
    assert (at.first.tolist(), at.second.tolist(), at.values.tolist()) == ([0], [1], [threshold])
    if METRICS[metric].integral:
        return  # whole-number thresholds: nothing lies between 1 and the next one down, 0
    step = 1.0 if METRICS[metric].measure == "similarity" else -1.0
    past = float(np.nextafter(threshold, threshold + step))
    spec = JoinSpec(metric=metric, threshold=past, num_bands=32, num_rows=1, **extra)
    assert len(vector_join(data, spec, dim=dim)) == 0


@pytest.mark.parametrize("num_items", [0, 1])
def test_fewer_than_two_items_join_to_no_pairs(num_items: int) -> None:
    result = vector_join(np.zeros((num_items, 3)), JoinSpec(metric="l2", threshold=1.0))
    assert len(result) == 0
    assert result.info["num_candidates"] == 0


def test_zero_vectors_are_never_paired_at_a_positive_cosine() -> None:
    rows = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    result = vector_join(rows, JoinSpec(metric="cosine", threshold=0.5))
    assert list(zip(result.first.tolist(), result.second.tolist(), strict=True)) == [(2, 3)]


@pytest.mark.parametrize(
    ("metric", "data", "kwargs", "error", "message"),
    [
        ("cosine", np.array([[1.0, np.nan], [1.0, 0.0]]), {}, InputError, "row 0 holds NaN"),
        ("l2", np.array([[1.0, 2.0], [np.inf, 0.0]]), {}, InputError, "row 1 holds NaN"),
        ("cosine", np.array([["ab", "cd"]]), {}, InputError, "needs real numbers"),
        ("cosine", np.zeros(3), {}, InputError, "2-D array"),
        ("l1", np.array([[0, 1], [-1, 2]]), {}, InputError, "row 1 holds a negative count"),
        ("l1", np.array([[0.5, 1.0]]), {}, InputError, "non-negative integer counts"),
        ("l1", np.array([[0, 9]]), {"max_value": 8}, ParameterError, "family 'unary' only"),
        ("hamming", np.array([[1]], dtype=np.uint64), {}, ParameterError, "needs dim"),
        ("hamming", np.array([[1 << 5]], dtype=np.uint64), {"dim": 4}, InputError, "past bit 3"),
        ("hamming", np.array([[1, 1]], dtype=np.uint64), {"dim": 64}, InputError, "1 uint64"),
        ("hamming", np.array([[1]], dtype=np.int64), {"dim": 64}, InputError, "uint64 words"),
        ("l2", np.zeros((2, 3)), {"dim": 4}, ParameterError, "rows have 3 columns"),
        ("l2", np.zeros((2, 3)), {"max_value": 4}, ParameterError, "family 'unary' only"),
        ("jaccard", np.zeros((2, 3)), {}, ParameterError, "must be one of 'cosine'"),
    ],
)
def test_bad_input_is_refused(
    metric: str,
    data: np.ndarray,
    kwargs: dict[str, int],
    error: type[Exception],
    message: str,
) -> None:
    threshold = 0.5 if METRICS[metric].measure == "similarity" else 1.0
    with pytest.raises(error, match=message):
        vector_join(data, JoinSpec(metric=metric, threshold=threshold), **kwargs)


def test_max_value_of_the_spec_and_the_argument_must_agree() -> None:
    spec = JoinSpec(metric="l1", threshold=2, family="unary", max_value=8)
    with pytest.raises(ParameterError, match=r"differs from JoinSpec\.max_value=8"):
        vector_join(np.zeros((2, 2), dtype=np.int64), spec, max_value=9)
    result = vector_join(np.array([[0, 1], [0, 2]]), spec, max_value=8)
    assert result.info["max_value"] == 8
    with pytest.raises(InputError, match="past max_value 8"):
        vector_join(np.array([[0, 9]]), spec)


# the index -------------------------------------------------------------------------------


def band_candidates(keys: np.ndarray, query_keys: np.ndarray) -> np.ndarray:
    """``bool[queries, items]``: which items share at least one band's key with each query."""
    return (query_keys[:, None, :] == keys[None, :, :]).any(axis=-1)


def names(count: int, start: int = 0) -> list[str]:
    """Ids that sort as their numbers do: ``"0000"``, ``"0001"``, ..."""
    return [f"{i:04d}" for i in range(start, start + count)]


def test_index_queries_find_the_pairs_the_join_finds(licence_tf: np.ndarray) -> None:
    joined = vector_join(licence_tf, JoinSpec(metric="cosine", threshold=0.95))
    spec = JoinSpec(
        metric="cosine",
        threshold=0.95,
        num_bands=joined.info["num_bands"],
        num_rows=joined.info["num_rows"],
    )
    with VectorIndex(spec, TF_DIM) as index:
        index.add(names(1000), licence_tf[:1000])
        index.add(names(len(licence_tf) - 1000, 1000), licence_tf[1000:])  # merged at the query
        found = index.query(licence_tf)
        index._check()
    got: dict[tuple[int, int], float] = {}
    for query, matches in enumerate(found):
        for match in matches:
            assert match.distance is None
            assert match.similarity is not None
            if int(match.id) != query:
                pair = (min(query, int(match.id)), max(query, int(match.id)))
                assert got.setdefault(pair, match.similarity) == match.similarity  # both ways
    want = dict(
        zip(
            zip(joined.first.tolist(), joined.second.tolist(), strict=True),
            joined.values.tolist(),
            strict=True,
        )
    )
    assert got == want
    others = sum(int(m.id) != query for query, matches in enumerate(found) for m in matches)
    assert others == 2 * len(joined)  # each pair both ways round


def test_table_searches_equal_brute_force_over_the_candidates_through_adds_and_removes(
    digits: np.ndarray,
) -> None:
    # Random batches of adds, removes and searches; after each step the invariants hold, and a
    # search returns exactly the live items sharing a band key with it within the threshold.
    spec = JoinSpec(
        metric="l1", threshold=60, num_bands=6, num_rows=12, family="unary", max_value=16
    )
    hasher = load(METRICS["l1"].family_named("unary"))(
        spec, 64, num_bands=6, num_rows=12, max_value=16
    )
    rng = np.random.default_rng(3)
    stored: list[np.ndarray] = []
    alive: list[bool] = []
    tables = VectorTables(spec, 64)
    for step in range(40):
        action = rng.choice(["add", "remove", "query"], p=[0.4, 0.25, 0.35])
        if action == "add":
            rows = digits[rng.integers(0, digits.shape[0], rng.integers(0, 60))]
            items = tables.add(rows)
            assert items.tolist() == list(range(len(stored), len(stored) + rows.shape[0]))
            stored.extend(rows)
            alive.extend([True] * rows.shape[0])
        elif action == "remove" and any(alive):
            live = np.flatnonzero(alive)
            gone = rng.choice(live, size=min(live.shape[0], int(rng.integers(1, 30))))
            tables.remove(gone)
            for item in gone:
                alive[item] = False
        elif stored:
            queries = digits[rng.integers(0, digits.shape[0], 25)]
            found = tables.search(queries, threshold=60)
            matrix = np.array(stored)
            meet = band_candidates(hasher.keys(matrix), hasher.keys(queries))
            meet &= np.array(alive)[None, :]
            distance = np.abs(queries[:, None, :] - matrix[None, :, :]).sum(axis=-1)
            q, i = np.nonzero(meet & (distance <= 60))
            assert found.query.tolist() == q.tolist(), step
            assert found.item.tolist() == i.tolist(), step
            assert found.values.tolist() == distance[q, i].tolist()
            # Without the probe, every entry of the query's buckets is counted.
            per_band = hasher.keys(queries)[:, None, :] == hasher.keys(matrix)[None]
            entries = (per_band & np.array(alive)[None, :, None]).sum(axis=(1, 2))
            assert found.num_checked.tolist() == entries.tolist()
        tables._check()
        assert len(tables) == sum(alive)


def test_index_queries_equal_brute_force_through_adds_upserts_and_deletes(
    digits: np.ndarray,
) -> None:
    # Random batches of adds, upserts, deletes and queries by id: a query returns the live
    # vectors sharing a band key with it within the threshold, nearest first, then by id.
    spec = JoinSpec(metric="l1", threshold=60, num_bands=6, num_rows=12, family="cauchy")
    hasher = load(METRICS["l1"].family_named("cauchy"))(spec, 64, num_bands=6, num_rows=12)
    rng = np.random.default_rng(5)
    stored: dict[str, np.ndarray] = {}
    with VectorIndex(spec, 64) as index:
        for step in range(30):
            action = rng.choice(["add", "upsert", "delete", "query"], p=[0.3, 0.2, 0.2, 0.3])
            chosen = digits[rng.integers(0, digits.shape[0], rng.integers(1, 40))]
            if action == "add":
                ids = names(len(chosen), 1000 * step)
                index.add(ids, chosen)
                stored.update(zip(ids, chosen, strict=True))
            elif action == "upsert":
                ids = sorted(
                    {str(i) for i in rng.choice([*stored, "new-a", "new-b"], size=len(chosen))}
                )
                index.upsert(ids, chosen[: len(ids)])
                stored.update(zip(ids, chosen[: len(ids)], strict=True))
            elif action == "delete":
                gone = [i for i in stored if rng.random() < 0.2]
                assert index.delete([*gone, "never-added"]) == gone
                for doc_id in gone:
                    del stored[doc_id]
            elif stored:
                queries = digits[rng.integers(0, digits.shape[0], 20)]
                ids = sorted(stored)
                matrix = np.array([stored[i] for i in ids])
                meet = band_candidates(hasher.keys(matrix), hasher.keys(queries))
                distance = np.abs(queries[:, None, :] - matrix[None, :, :]).sum(axis=-1)
                expected = [
                    [
                        Match(ids[i], None, float(distance[q, i]))
                        for i in sorted(
                            np.flatnonzero(meet[q] & (distance[q] <= 60)).tolist(),
                            key=lambda i: (distance[q, i], ids[i]),
                        )
                    ]
                    for q in range(queries.shape[0])
                ]
                assert index.query(queries) == expected, step
            index._check()
            assert len(index) == len(stored)


def test_topk_is_brute_force_topk_over_the_candidates(digits: np.ndarray) -> None:
    data = digits.astype(np.float64)
    spec = JoinSpec(metric="l2", threshold=15.0, num_bands=10, num_rows=6)
    hasher = load(METRICS["l2"].family)(spec, 64, num_bands=10, num_rows=6)
    stored, queries = data[:1500], data[1500:]
    with VectorIndex(spec, 64) as index:
        index.add(names(1500), stored)
        top = index.query(queries, k=5)
    meet = band_candidates(hasher.keys(stored), hasher.keys(queries))
    distance = np.sqrt(((queries[:, None, :] - stored[None, :, :]) ** 2).sum(axis=-1))
    for q in range(queries.shape[0]):
        items = np.flatnonzero(meet[q])
        best = sorted(items.tolist(), key=lambda i: (distance[q, i], i))[:5]
        assert [int(m.id) for m in top[q]] == best
        assert all(m.similarity is None for m in top[q])
        got = [m.distance for m in top[q]]
        assert np.allclose(got, distance[q, best], rtol=1e-15)
    assert sum(len(m) for m in top) > 4 * queries.shape[0]  # most queries meet five or more


def test_probe_stops_after_2L_entries_and_still_finds_planted_duplicates(
    digits: np.ndarray,
) -> None:
    # Seed 002's setting for r = 15, c = 2 with buckets 4r wide: P1 = p(15) = 0.80 and
    # P2 = p(30) = 0.61, k = ceil(log n / log(1/P2)) = 16 rows and L = n^rho = 29 bands for the
    # n = 1,797 stored. The 50 planted duplicates share every band with their query, so the
    # walk meets each in band 0 unless 58 entries of that bucket come first.
    data = digits.astype(np.float64)
    rng = np.random.default_rng(11)
    queries = data[1500:]
    planted = rng.choice(queries.shape[0], 50, replace=False)
    stored = np.concatenate([data[:1500], queries[planted]])
    order = rng.permutation(stored.shape[0])
    spec = JoinSpec(metric="l2", threshold=15.0, num_bands=29, num_rows=16)
    family = load(METRICS["l2"].family)
    assert family.collision_probability(15.0, spec, 64) == pytest.approx(0.80, abs=0.005)
    assert family.collision_probability(30.0, spec, 64) == pytest.approx(0.61, abs=0.005)
    tables = VectorTables(spec, 64)
    tables.add(stored[order])
    probed = tables.search(queries, threshold=30.0, probe_limit=True)
    full = tables.search(queries, threshold=30.0)
    assert probed.num_checked.max() <= 2 * 29
    assert full.num_checked.max() > 2 * 29  # the cut-off bites on this data
    assert np.all(probed.num_checked == np.minimum(full.num_checked, 2 * 29))
    position = np.empty_like(order)
    position[order] = np.arange(order.shape[0])  # where each stored row went
    twins = set(zip(planted.tolist(), position[1500 + np.arange(50)].tolist(), strict=True))
    found = set(zip(probed.query.tolist(), probed.item.tolist(), strict=True))
    assert twins <= found
    # The probe's matches are a subset of the full query's.
    assert found <= set(zip(full.query.tolist(), full.item.tolist(), strict=True))
    # The index's queries take the same probe.
    with VectorIndex(spec, 64) as index:
        index.add(names(len(order)), stored[order])
        matches = index.query(queries, threshold=30.0, probe_limit=True)
    assert {(q, int(m.id)) for q, near in enumerate(matches) for m in near} == found


def test_seed_002s_probe_tables_keep_their_guarantee_on_real_bit_strings(
    licence_bits: np.ndarray,
) -> None:
    # Seed 002, "Analysis": "Set k = log n / log(1/P2), so that P2^k = 1/n"; "Over all L
    # tables, the expected number of far points that collide with q is at most L"; "By Markov
    # inequality, the number of far, colliding points is at most 2L with probability at least
    # 1/2"; "Set L = n^rho, then the probability of a near point colliding is at least 1 - 1/e".
    n, near, far = licence_bits.shape[0], 8, 24  # r = 8 bits, c = 3
    family = Sensitivity(near, far, 1 - near / TF_DIM, 1 - far / TF_DIM)
    num_bands, num_rows = Amplification.near_neighbour(n, family).as_bands()
    rho = math.log(1 / family.p1) / math.log(1 / family.p2)
    assert family.p2**num_rows <= 1 / n
    assert num_bands >= n**rho
    spec = JoinSpec(metric="hamming", threshold=far, num_bands=num_bands, num_rows=num_rows)
    # Queries: 400 stored licences with 4 of their bits flipped, each near its original.
    rng = np.random.default_rng(11)
    originals = rng.choice(n, 400, replace=False)
    bits = np.unpackbits(licence_bits.view(np.uint8), axis=1, bitorder="little")[:, :TF_DIM]
    flipped = bits[originals].copy()
    for row in flipped:
        row[rng.choice(TF_DIM, near // 2, replace=False)] ^= 1
    queries = pack(flipped)
    keys = BitSampler(spec, TF_DIM, num_bands=num_bands, num_rows=num_rows).keys(licence_bits)
    query_keys = BitSampler(spec, TF_DIM, num_bands=num_bands, num_rows=num_rows).keys(queries)
    shared = query_keys[:, None, :] == keys[None, :, :]  # (query, item, band)
    distances = (flipped[:, None, :] != bits[None, :, :]).sum(axis=-1)
    # Near points collide: each original shares a band with its query, 1 - 1/e at least.
    assert shared[np.arange(400), originals].any(axis=1).mean() >= 1 - 1 / math.e
    # Few far points collide: at most L far entries a query on average (duplicates counted),
    # more than 2L for at most half of the queries.
    far_entries = (shared & (distances >= far)[:, :, None]).sum(axis=(1, 2))
    assert far_entries.mean() <= num_bands
    assert (far_entries > 2 * num_bands).mean() <= 1 / 2
    # The probe: at most 2L entries taken, an item within cr answered with probability at
    # least 1/2 - 1/e (here every query is).
    found = VectorTables(spec, TF_DIM)
    found.add(licence_bits)
    found = found.search(queries, threshold=far, probe_limit=True)
    assert found.num_checked.max() <= 2 * num_bands
    assert np.unique(found.query).shape[0] / 400 >= 1 / 2 - 1 / math.e
    assert np.all(found.values <= far)


def test_index_refuses_what_it_cannot_take() -> None:
    with pytest.raises(ParameterError, match="needs max_value"):
        VectorIndex(JoinSpec(metric="l1", threshold=3, family="unary"), 4)
    with pytest.raises(ParameterError, match="dim must be an int >= 1"):
        VectorIndex(JoinSpec(metric="l2", threshold=3.0), 0)
    index = VectorIndex(JoinSpec(metric="l2", threshold=3.0, num_bands=2, num_rows=2), 3)
    index.add(["a", "b"], np.zeros((2, 3)))
    with pytest.raises(InputError, match=r"VectorIndex\.add needs rows of 3 columns; got 2"):
        index.add(["c"], np.zeros((1, 2)))
    with pytest.raises(ParameterError, match="got 2 vectors for 1 ids"):
        index.add(["c"], np.zeros((2, 3)))
    with pytest.raises(InputError, match=r"VectorIndex\.upsert: row 1 holds NaN or infinity"):
        index.upsert(["a", "c"], np.array([[0.0, 0, 0], [np.nan, 0, 0]]))
    with pytest.raises(ParameterError, match="metadata must be JSON-serialisable"):
        index.add(["c"], np.zeros((1, 3)), [{1, 2}])
    with pytest.raises(ParameterError, match="threshold must be a finite number"):
        index.query(np.zeros((1, 3)), threshold=math.inf)
    with pytest.raises(ParameterError, match="probe_limit must be a bool"):
        index.query(np.zeros((1, 3)), probe_limit=1)  # type: ignore[arg-type]
    assert len(index) == 2  # nothing of the refused batches was stored
    assert index.get("c") is None
    index.close()
    with pytest.raises(StoreError, match="closed"):
        index.query(np.zeros((1, 3)))
    tables = VectorTables(JoinSpec(metric="l2", threshold=3.0, num_bands=2, num_rows=2), 3)
    tables.add(np.zeros((2, 3)))
    with pytest.raises(InputError, match=r"not stored items: \[2\]"):
        tables.remove([0, 2])
    assert len(tables) == 2  # nothing removed
    tables.remove([1])
    with pytest.raises(InputError, match=r"not stored items: \[1\]"):
        tables.remove([1])


def test_index_chooses_bands_for_the_recall_without_data() -> None:
    spec = JoinSpec(metric="hamming", threshold=8, recall=0.9)
    index = VectorIndex(spec, 128)
    assert index.num_bands * index.num_rows <= spec.max_hashes
    assert index.predicted_recall >= 0.9
    assert index.collision_probability == pytest.approx(1 - 8 / 128)


def test_pairs_a_bucket_cap_leaves_out_are_counted_and_said() -> None:
    # 60 copies of one vector and 40 of its opposite fill two buckets in every band: a cap of
    # 10 measures 45 + 50 * 9 = 495 of the first's 1,770 pairs and 45 + 30 * 9 = 315 of the
    # second's 780, the same ones in every band.
    vectors = np.vstack([np.ones((60, 16)), -np.ones((40, 16))]).astype(np.float32)
    spec = JoinSpec(metric="cosine", threshold=0.9, num_bands=4, num_rows=8, max_bucket_size=10)
    with pytest.warns(NeardupWarning, match=r"pairs of 8 buckets larger than 10 items .* not"):
        capped = vector_join(vectors, spec)
    assert capped.info["bucket_pairs_skipped"] == 4 * ((1770 - 495) + (780 - 315))
    assert len(capped) == 495 + 315
    whole = vector_join(vectors, JoinSpec(**{**spec.to_dict(), "max_bucket_size": 100}))
    assert whole.info["bucket_pairs_skipped"] == 0
    assert len(whole) == 1770 + 780
