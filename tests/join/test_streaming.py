"""The bounded join: candidates in chunks, close pairs in spilled runs, the same pairs.

The join measures each band's bucket pairs a bounded chunk at a time and keeps the close ones
in :class:`~neardup.io.spill.PairRuns`; whatever the budget, the pairs and their values equal
those of the plain algorithm (every band's candidates gathered, deduplicated, then measured).
"""

from __future__ import annotations

import warnings
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest

from neardup.errors import NeardupWarning, ParameterError, offered_options
from neardup.io.spill import PAIR_BYTES, PairRuns
from neardup.join.banded import plan_bands, predict, warn_if_large
from neardup.join.distances import pair_values, within_threshold
from neardup.join.sets import set_join
from neardup.join.vectors import vector_join
from neardup.kinds import METRICS, load
from neardup.lsh.banding import bucket_pair_chunks, candidate_pairs
from neardup.params import JoinSpec
from neardup.text.shingle import ShingleSets


def _random_pairs(rng: np.random.Generator, n: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = rng.integers(0, n, size), rng.integers(0, n, size)
    keep = a != b
    return np.minimum(a, b)[keep], np.maximum(a, b)[keep]


@pytest.mark.parametrize("spill", [False, True])
@pytest.mark.parametrize("capacity", [1, 7, 10_000])
def test_pair_runs_give_back_every_pair_once_sorted(
    spill: bool, capacity: int, tmp_path: Path
) -> None:
    rng = np.random.default_rng(capacity)
    n = 60
    runs = PairRuns(n, tmp_path if spill else None, memory_bytes=capacity * PAIR_BYTES)
    codes = []
    for _ in range(15):
        first, second = _random_pairs(rng, n, 40)
        runs.add(first, second, first * 0.5 + second / 64)
        codes.append(first * n + second)
    expected = np.unique(np.concatenate(codes))
    chunks = list(runs.chunks())
    first = np.concatenate([c[0] for c in chunks])
    second = np.concatenate([c[1] for c in chunks])
    values = np.concatenate([c[2] for c in chunks])
    assert np.array_equal(first * n + second, expected)
    assert np.array_equal(values, first * 0.5 + second / 64)
    if capacity == 10_000:
        assert runs.num_runs == 1  # made when read
    else:
        assert runs.num_runs > 1
    if spill:
        assert len(list(tmp_path.glob("pairs-*.i64"))) >= runs.num_runs
    runs.close()
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("cap", [2, 3, 1000])
@pytest.mark.parametrize("chunk_pairs", [1, 5, 1 << 20])
def test_bucket_chunks_are_the_buckets_pairs_in_order(cap: int, chunk_pairs: int) -> None:
    rng = np.random.default_rng(cap * 31 + chunk_pairs)
    sizes = np.array([2, 7, 3, 1, 12, 2])
    sizes = sizes[sizes >= 2]
    bounds = np.zeros(sizes.shape[0] + 1, dtype=np.int64)
    np.cumsum(sizes, out=bounds[1:])
    members = np.sort(rng.choice(1000, size=int(bounds[-1]), replace=False)).astype(np.int64)
    for b in range(sizes.shape[0]):  # ascending within each bucket, as equal_key_groups gives
        members[bounds[b] : bounds[b + 1]].sort()
    # Each member with those before it in its bucket (the cap - 1 just before it in a giant one).
    expected = [
        (int(members[i]), int(members[j]))
        for start, end in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
        for j in range(start + 1, end)
        for i in range(max(start, j - cap + 1) if end - start > cap else start, j)
    ]
    chunks = list(bucket_pair_chunks(members, bounds, cap, chunk_pairs))
    got = zip(
        np.concatenate([c[0] for c in chunks]).tolist(),
        np.concatenate([c[1] for c in chunks]).tolist(),
        strict=True,
    )
    assert list(got) == expected
    assert all(c[0].shape[0] <= chunk_pairs + cap - 1 for c in chunks)


def _plain_join(rows: np.ndarray, spec: JoinSpec, num_bands: int, num_rows: int) -> tuple:
    """The join as it was: every band's candidates at once, deduplicated, then measured."""
    family = load(METRICS[spec.metric].family)
    keys = family(spec, rows.shape[1], num_bands=num_bands, num_rows=num_rows).keys(rows)
    active = rows.any(axis=1)
    found = candidate_pairs(keys, active=active, max_bucket_size=spec.max_bucket_size)
    values = pair_values(spec.metric, rows, found.first, found.second)
    close = within_threshold(spec.metric, values, spec.threshold)
    return found.first[close], found.second[close], values[close]


@pytest.mark.parametrize("max_bucket_size", [2, 1000])
def test_a_tiny_budget_spills_and_gives_the_plain_joins_pairs(
    max_bucket_size: int, tmp_path: Path
) -> None:
    rows = np.random.default_rng(5).standard_normal((1500, 8))
    spec = JoinSpec(metric="cosine", threshold=0.7, max_bucket_size=max_bucket_size, seed=3)
    capped = max_bucket_size == 2  # the cap leaves pairs out, and the joins say so
    with pytest.warns(NeardupWarning, match="not measured") if capped else nullcontext():
        whole = vector_join(rows, spec)
    with pytest.warns(NeardupWarning, match="not measured") if capped else nullcontext():
        tiny = vector_join(rows, spec, work_dir=tmp_path, memory_bytes=4096)
    b, r = whole.info["num_bands"], whole.info["num_rows"]
    first, second, values = _plain_join(rows, spec, b, r)
    assert len(whole) > 1000
    for result in (whole, tiny):
        assert np.array_equal(result.first, first)
        assert np.array_equal(result.second, second)
        assert np.array_equal(result.values, values)
    assert tiny.info["spilled_runs"] > 10
    assert whole.info["spilled_runs"] == 0
    assert {k: v for k, v in tiny.info.items() if k != "spilled_runs"} == {
        k: v for k, v in whole.info.items() if k != "spilled_runs"
    }
    if max_bucket_size == 2:
        assert whole.info["num_giant_buckets"] > 0


def test_candidates_count_bucket_pairs_once_per_band_and_are_predicted() -> None:
    rows = np.random.default_rng(9).standard_normal((3000, 16))
    spec = JoinSpec(metric="cosine", threshold=0.5)
    result = vector_join(rows, spec)
    info = result.info
    family = load(METRICS["cosine"].family)
    keys = family(spec, 16, num_bands=info["num_bands"], num_rows=info["num_rows"]).keys(rows)
    distinct = candidate_pairs(keys)
    assert info["num_candidates"] >= len(distinct)  # a pair once for each band it shares
    per_band = sum(len(candidate_pairs(keys[:, [band]])) for band in range(info["num_bands"]))
    assert info["num_candidates"] == per_band
    predicted = info["prediction"]
    # The prediction averages over 4,000 sampled pairs: within 15% here.
    assert predicted["measured_pairs"] == pytest.approx(per_band, rel=0.15)
    assert predicted["candidate_pairs"] == pytest.approx(len(distinct), rel=0.15)


def test_the_set_join_streams_alike(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    base = rng.choice(10_000, size=(300, 20))
    base[150:] = base[:150]
    base[150:, :3] = rng.choice(10_000, size=(150, 3))
    hashes = [np.unique(row).astype(np.uint64) for row in base]
    offsets = np.zeros(301, dtype=np.int64)
    np.cumsum([h.shape[0] for h in hashes], out=offsets[1:])
    sets = ShingleSets(hashes=np.concatenate(hashes), offsets=offsets)
    spec = JoinSpec(metric="jaccard", threshold=0.5)
    whole = set_join(sets, spec)
    tiny = set_join(sets, spec, work_dir=tmp_path, memory_bytes=2000)
    assert len(whole) >= 100
    assert np.array_equal(whole.first, tiny.first)
    assert np.array_equal(whole.second, tiny.second)
    assert np.array_equal(whole.values, tiny.values)


def test_a_cosine_of_minus_one_admits_every_pair_and_is_refused() -> None:
    rows = np.random.default_rng(0).standard_normal((50, 4))
    with pytest.raises(ParameterError, match="--threshold"):
        vector_join(rows, JoinSpec(metric="cosine", threshold=-1.0))


def test_a_threshold_every_pair_meets_is_honoured_completely() -> None:
    rows = np.random.default_rng(0).standard_normal((200, 32))
    result = vector_join(rows, JoinSpec(metric="cosine", threshold=-0.99))
    assert len(result) == 200 * 199 // 2


def test_zero_vectors_never_pair_at_any_threshold() -> None:
    rows = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [2.0, 1.0], [-1.0, 0.5]])
    result = vector_join(rows, JoinSpec(metric="cosine", threshold=-0.9, num_bands=64, num_rows=1))
    pairs = set(zip(result.first.tolist(), result.second.tolist(), strict=True))
    assert pairs == {(1, 3), (1, 4), (3, 4)}
    assert result.info["num_zero_vectors"] == 2
    assert result.info["first_zero_vector"] == 0


def test_unreachable_recall_names_only_options_a_user_has() -> None:
    spec = JoinSpec(metric="jaccard", threshold=0.001, max_hashes=64)
    with pytest.warns(NeardupWarning) as caught:
        plan_bands(spec, 0.001, None, None)
    (message,) = [str(w.message) for w in caught]
    assert "max_hashes" not in message
    assert "--threshold" in message
    assert "--recall" in message
    assert "--bands" in message
    with offered_options({"--threshold"}), pytest.warns(NeardupWarning) as caught:
        plan_bands(spec, 0.001, None, None)
    (message,) = [str(w.message) for w in caught]
    assert "--threshold" in message
    assert "--recall" not in message
    assert "--bands" not in message


def test_a_large_join_is_foretold_with_a_threshold_that_cuts_it() -> None:
    spec = JoinSpec(metric="jaccard", threshold=0.3)
    sample = np.random.default_rng(1).uniform(0.0, 0.6, 4000)
    n = 200_000

    def at(t: float) -> int:
        bands = plan_bands(JoinSpec(metric="jaccard", threshold=t), t, sample, n)
        return predict(sample, *bands, n)["measured_pairs"]

    measured = at(0.3)
    with pytest.warns(NeardupWarning, match=r"--threshold 0\.\d+ would cut them") as caught:
        suggested = warn_if_large(spec, measured, at, limit=measured // 10)
    assert suggested is not None
    assert suggested > 0.3
    assert at(suggested) <= measured // 10
    assert f"{measured:,}" in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_if_large(spec, measured, at, limit=measured) is None
