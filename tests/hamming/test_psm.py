"""PSM against seed 004's text: VOSH and the lookups against a plain-Python transcription
(tests/hamming/seed_psm.py), exactness at the full budget against BPHS, batch mode, flip models."""

from __future__ import annotations

import json
from itertools import combinations, pairwise
from math import erfc, sqrt
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.errors import IncompatibleError, ParameterError, StoreError
from neardup.hamming import (
    BlockPermutedIndex,
    FlipModel,
    PSMIndex,
    SortedRuns,
    psm_batch_query,
    vosh_masks,
)
from neardup.hamming.psm import all_sets
from tests.hamming import seed_psm

BITS = np.arange(64, dtype=np.uint64)


def _sets(masks: np.ndarray) -> list[frozenset[int]]:
    return [frozenset(i for i in range(64) if int(m) >> i & 1) for m in masks]


def test_produce_children_builds_the_trees_of_figure_2() -> None:
    """Seed 004's Figure 2 (h = 2 and 3) and Algorithm 2, and every set exactly once."""
    assert seed_psm.produce_children((1, 2), 64) == [(1, 3)]
    assert seed_psm.produce_children((1, 3), 64) == [(1, 4), (2, 3)]
    assert seed_psm.produce_children((1, 4), 64) == [(1, 5)]  # gap 3: no right child
    assert seed_psm.produce_children((2, 4), 64) == [(2, 5), (3, 4)]
    assert seed_psm.produce_children((1, 2, 4), 64) == [(1, 2, 5), (1, 3, 4)]
    assert seed_psm.produce_children((1, 3, 4), 64) == [(1, 3, 5), (2, 3, 4)]
    assert seed_psm.produce_children((63, 64), 64) == []
    for b, h in ((7, 1), (7, 2), (9, 3), (8, 4)):
        seen, todo = [], [tuple(range(1, h + 1))]
        while todo:
            node = todo.pop()
            seen.append(node)
            todo.extend(seed_psm.produce_children(node, b))
        assert sorted(seen) == list(combinations(range(1, b + 1), h))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.integers(1, 400))
def test_vosh_follows_the_seed_and_is_most_probable_first(seed: int, h: int, k: int) -> None:
    p = np.random.default_rng(seed).uniform(0.001, 0.5, size=64)
    sets = _sets(vosh_masks(p, h, k))
    assert sets == seed_psm.vosh_order(p.tolist(), h, k)
    log_odds = np.log(p) - np.log1p(-p)
    scores = [sum(log_odds[i] for i in s) for s in sets]
    assert all(a >= b - 1e-9 for a, b in pairwise(scores))
    if h <= 2:  # the first k are the k most probable of all sets of <= h bits
        everything = [0.0] + [sum(log_odds[list(c)]) for m in range(1, h + 1)
                              for c in combinations(range(64), m)]  # fmt: skip
        best = sorted(everything, reverse=True)[: len(sets)]
        assert np.allclose(sorted(scores, reverse=True), best)


def _planted(seed: int, n: int = 3000, queries: int = 300) -> tuple[np.ndarray, ...]:
    """Stored fingerprints (one stored 11 times), queries 0..3 bits from stored ones."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    values[n // 2 : n // 2 + 10] = values[0]
    found = values[:queries].copy()
    for i in range(queries):
        for bit in rng.choice(64, size=i % 4, replace=False):
            found[i] ^= np.uint64(1) << np.uint64(bit)
    return values, found, rng.uniform(0.01, 0.5, size=(queries, 64))


@pytest.mark.parametrize("header_bits", [0, 3, 11])
@pytest.mark.parametrize("first_only", [False, True])
def test_psm_equals_the_transcription_of_the_seed(header_bits: int, first_only: bool) -> None:
    values, queries, p = _planted(header_bits, n=1500, queries=120)
    index = PSMIndex(values, header_bits=header_bits)
    stored = [int(v) for v in values]
    for budget in (1, 7, all_sets(header_bits, 3)):
        got = index.query(queries, p, max_distance=3, budget=budget, first_only=first_only)
        for q in range(queries.shape[0]):
            rows, lookups = seed_psm.psm_online(stored, int(queries[q]), p[q].tolist(),
                                                header_bits, 3, budget, first_only)  # fmt: skip
            assert got.row[got.query == q].tolist() == sorted(rows)
            assert got.attempts[q] == lookups


def test_the_full_budget_is_exact_and_first_match_finds_one_when_any() -> None:
    values, queries, p = _planted(7)
    for h in (0, 2, 3):
        everything = PSMIndex(values).query(queries, p, max_distance=h)
        query, row = BlockPermutedIndex(values, max_distance=h, num_blocks=h + 2).query(queries)
        assert everything.query.tolist() == query.tolist()
        assert everything.row.tolist() == row.tolist()
    assert everything.found_per_query()[0] == 11
    assert (everything.attempts == all_sets(12, 3)).all()  # t = log2(3000), rounded
    first = PSMIndex(values).query(queries, p, first_only=True)
    has = everything.found_per_query() > 0
    assert ((first.found_per_query() > 0) == has).all()
    assert first.found_per_query().max() == 1
    assert (first.attempts[has] <= everything.attempts[has]).all()


def test_the_exact_search_needs_every_set_of_the_header_only() -> None:
    """The issue's count: sum_{i <= 3} C(23, i) = 2,048 sets at t = 23, against 43,745 over 64."""
    assert all_sets(23, 3) == 2048
    assert all_sets(64, 3) == 43_745


def test_the_recall_knob_stops_at_the_share_of_probability_asked() -> None:
    values, queries, p = _planted(3)
    index = PSMIndex(values, header_bits=12)
    attempts = [index.query(queries, p, recall=r).attempts for r in (0.5, 0.8, 0.95)]
    assert (attempts[0] <= attempts[1]).all()
    assert (attempts[1] <= attempts[2]).all()
    assert attempts[2].max() < all_sets(12, 3)
    # The sets tried hold the share asked of the header's sets, and one set fewer would not.
    header = p[0, 52:]
    odds = header / (1 - header)
    sets = seed_psm.vosh_order(header.tolist(), 3, all_sets(12, 3))
    mass = np.array([np.prod(odds[list(s)]) for s in sets])
    tried = int(attempts[1][0])
    assert mass[:tried].sum() >= 0.8 * mass.sum() > mass[: tried - 1].sum()


@pytest.mark.parametrize("chunk_rows", [97, 1000, None])
def test_batch_mode_answers_as_online_and_appends_the_batch(
    tmp_path: Path, chunk_rows: int | None
) -> None:
    values, queries, p = _planted(5)
    runs = SortedRuns.create(tmp_path / "h", values[:2000])
    runs.append(values[2000:])  # two runs, the second numbered on
    exact = PSMIndex(values).query(queries, p)
    batch = psm_batch_query(tmp_path / "h", queries, p, chunk_rows=chunk_rows)
    assert batch.query.tolist() == exact.query.tolist()
    assert batch.row.tolist() == exact.row.tolist()
    first = psm_batch_query(runs, queries, p, first_only=True, chunk_rows=chunk_rows)
    assert ((first.found_per_query() > 0) == (exact.found_per_query() > 0)).all()
    assert first.found_per_query().max() == 1
    # PSMF drops a query from Q at its first match: later chunks are not searched for it.
    assert first.attempts.sum() < batch.attempts.sum()
    # After the batch, Q is sorted and appended: the next batch finds it.
    psm_batch_query(runs, queries[:10], p[:10], append=True, chunk_rows=chunk_rows)
    again = psm_batch_query(tmp_path / "h", queries[:10], p[:10], max_distance=0)
    assert len(SortedRuns(tmp_path / "h")) == 3010
    assert all(3000 + q in again.row[again.query == q].tolist() for q in range(10))


def test_sorted_runs_survive_an_append_cut_short(tmp_path: Path) -> None:
    runs = SortedRuns.create(tmp_path / "h", np.array([5, 1], np.uint64))
    with open(tmp_path / "h" / "fingerprints.u64", "ab") as file:  # data written, runs.json not
        file.write(b"\x07" * 24)
    assert [v.tolist() for v, _ in SortedRuns(tmp_path / "h").chunks(10)] == [[1, 5]]
    runs.append(np.array([3], np.uint64))
    assert [v.tolist() for v, _ in SortedRuns(tmp_path / "h").chunks(10)] == [[1, 5], [3]]
    (tmp_path / "h" / "rows.i64").write_bytes(b"")
    with pytest.raises(StoreError, match="damaged"):
        SortedRuns(tmp_path / "h")
    with pytest.raises(StoreError, match="no sorted fingerprint runs"):
        SortedRuns(tmp_path / "missing")


def test_flip_probabilities_follow_the_distribution_of_weight_changes() -> None:
    """For Gaussian changes ``Y ~ N(0, s^2)``: ``p(w) = P(Y > |w|) = erfc(|w| / (s √2)) / 2``."""
    rng = np.random.default_rng(1)
    w = rng.normal(size=(20_000, 64))
    copies = w + rng.normal(scale=0.5, size=w.shape)
    model = FlipModel.from_pairs(w, copies)

    def rms_scaled(x: np.ndarray) -> np.ndarray:
        return x / np.sqrt(np.mean(x**2, axis=1, keepdims=True))

    sigma = float(np.std(rms_scaled(w) - rms_scaled(copies)))
    probe = np.ones((1, 64))
    probe[0, :8] = [0.0, 0.1, 0.2, 0.4, 0.8, 1.2, 1.6, 2.0]
    p = model.probabilities(probe)[0, :8]
    scaled = probe[0, :8] / np.sqrt(np.mean(probe**2))
    expected = [0.5 * erfc(x / (sigma * sqrt(2))) for x in scaled]
    assert np.allclose(p, expected, atol=0.01)
    assert (np.diff(p) < 0).all()


def test_a_model_of_no_change_gives_the_least_probability_everywhere() -> None:
    model = FlipModel.from_random_pairs(np.ones((3, 64)))  # identical documents
    weights = np.zeros((1, 64))
    weights[0, 0] = 1e-5
    assert (model.probabilities(weights) == 1e-9).all()


def test_a_flip_model_is_fitted_from_the_collection_and_stored(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    w = rng.normal(size=(4000, 64))
    w[2000:] = w[:2000] + rng.normal(scale=0.2, size=(2000, 64))  # 2,000 near copies
    values = (w > 0).astype(np.uint64) @ (np.uint64(1) << BITS)  # bit j = W_j >= 0 (almost)
    model = FlipModel.fit(values, w, max_distance=3)
    assert model.source == "near-pairs"
    assert model.pairs >= 200
    alone = FlipModel.fit(values[:2000], w[:2000], max_distance=3)
    assert alone.source == "random-pairs"
    assert model.changes[512] < alone.changes[512]  # near copies change their weights less
    stored = json.loads(json.dumps(model.to_dict()))
    assert np.array_equal(FlipModel.from_dict(stored).changes, model.changes)
    with pytest.raises(IncompatibleError, match="fit the model again"):
        FlipModel.from_dict({**stored, "version": 0})


def test_bad_search_parameters_are_refused() -> None:
    index = PSMIndex(np.arange(10, dtype=np.uint64))
    with pytest.raises(ParameterError, match="max_distance"):
        index.query(np.arange(2, dtype=np.uint64), max_distance=9)
    with pytest.raises(ParameterError, match="one row of 64 per query"):
        index.query(np.arange(2, dtype=np.uint64), np.full((3, 64), 0.1))
    with pytest.raises(ParameterError, match="header_bits"):
        PSMIndex(np.arange(10, dtype=np.uint64), header_bits=33)


def test_the_specs_know_how_many_bits_psm_flips() -> None:
    from neardup._kernels.vosh import MAX_SET_BITS
    from neardup.params import PSM_MAX_FLIPS

    assert PSM_MAX_FLIPS == MAX_SET_BITS


def test_weight_levels_keep_the_signs_and_the_volatile_bits() -> None:
    """Seed 004 keeps only the volatile bits' information: 4 bits a bit, which still say, for
    each fingerprint, which bits are likeliest to flip."""
    from neardup.hamming.flips import (
        LEVEL_STEP,
        FlipModel,
        flip_levels,
        normalised,
        weights_from_levels,
    )

    rng = np.random.default_rng(3)
    w = rng.normal(size=(2000, 128)) * rng.uniform(0.1, 50, size=(2000, 1))
    bits = (w >= 0).reshape(2000, 2, 64)
    values = (bits.astype(np.uint64) << np.arange(64, dtype=np.uint64)).sum(axis=2, dtype=np.uint64)
    back = weights_from_levels(values, flip_levels(w))
    assert np.array_equal(back >= 0, w >= 0)
    exact = np.abs(normalised(w))
    inside = exact < 15 * LEVEL_STEP
    assert np.all(np.abs(np.abs(back) - exact)[inside] <= LEVEL_STEP / 2)
    model = FlipModel.from_random_pairs(w)
    p, q = model.probabilities(w), model.probabilities(back)
    top = np.argmax(p, axis=1)
    assert np.array_equal(q[np.arange(2000), top], q.max(axis=1))  # still the likeliest (ties)
    assert float(np.mean(np.abs(p - q))) < 0.02  # and the probabilities near the exact ones
