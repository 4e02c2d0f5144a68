"""The kernel writers produce the bytes ``json.dumps`` produces, line for line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from neardup.io import results
from neardup.io.records import Ids
from neardup.io.results import cluster_line, exact_pair_line, near_pair_line

IDS = st.lists(
    st.text(
        alphabet=st.characters(codec="utf-8")
        | st.sampled_from(['"', "\\", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f"])
        # lone surrogates, as ids read from file names or JSON escapes hold them
        | st.sampled_from(["\ud800", "\udbff", "\udc80", "\udcff", "\udfff", "\ud7ff", "\ue000"]),
        max_size=12,
    ),
    min_size=1,
    max_size=30,
)
ESTIMATES = st.one_of(
    st.floats(0, 1),
    st.integers(0, 128).map(lambda k: k / 128),  # signature estimates: exact ties at 6 digits
    st.tuples(st.integers(1, 500), st.integers(1, 500)).map(lambda t: min(t) / max(t)),
    st.sampled_from([1e-7, 9.99e-5, 1e-4, -0.015625, 0.0078125, 0.8888885]),
)
JACCARDS = ESTIMATES | st.just(float("nan"))  # NaN: not computed (written as null)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=IDS, data=st.data())
def test_clusters_lines_are_what_json_dumps_writes(
    tmp_path_factory: pytest.TempPathFactory, ids: list[str], data: st.DataObject
) -> None:
    n = len(ids)
    labels = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n)))
    keep = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    similarity = np.array(data.draw(st.lists(JACCARDS, min_size=n, max_size=n)))
    least = np.array(data.draw(st.lists(JACCARDS, min_size=n, max_size=n)))
    path = tmp_path_factory.mktemp("out") / "clusters.jsonl"
    results.write_clusters(path, Ids.of(ids), labels, keep, similarity, least)
    expected = "".join(
        cluster_line(ids[d], ids[int(labels[d])], bool(keep[d]), similarity[d], least[d])
        for d in range(n)
    ).encode("utf-8")  # valid UTF-8: lone surrogates are written as escapes
    assert path.read_bytes() == expected


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=IDS, data=st.data())
@example(ids=["a", "b"], data=None)
def test_pairs_lines_are_what_json_dumps_writes(
    tmp_path_factory: pytest.TempPathFactory, ids: list[str], data: st.DataObject | None
) -> None:
    n = len(ids)
    pairs = st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=20)
    exact = data.draw(pairs) if data is not None else [(0, 1)]
    near = data.draw(pairs) if data is not None else [(0, 1)]
    values = (
        data.draw(st.lists(st.tuples(ESTIMATES, JACCARDS), min_size=len(near)))
        if data is not None
        else [(0.8984375, float("nan"))]
    )[: len(near)]
    path = tmp_path_factory.mktemp("out") / "pairs.jsonl"
    results.write_pairs(
        path,
        Ids.of(ids),
        (
            np.array([a for a, _ in exact], dtype=np.int64),
            np.array([b for _, b in exact], dtype=np.int64),
        ),
        (
            np.array([a for a, _ in near], dtype=np.int64),
            np.array([b for _, b in near], dtype=np.int64),
            np.array([e for e, _ in values], dtype=np.float64),
            np.array([j for _, j in values], dtype=np.float64),
        ),
    )
    expected = [exact_pair_line(ids[a], ids[b]) for a, b in exact] + [
        near_pair_line(ids[a], ids[b], e, j) for (a, b), (e, j) in zip(near, values, strict=True)
    ]
    assert path.read_bytes() == "".join(expected).encode("utf-8")


def test_similarities_round_exactly_as_python_rounds(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    values = np.concatenate(
        [
            np.arange(129) / 128,
            rng.random(20_000),
            np.array([p / q for q in range(1, 300) for p in range(1, q + 1)]),
        ]
    )
    values = np.concatenate(  # distances: past 1, up to the kernel's bound and beyond it
        [
            values,
            1 + rng.random(5_000) * 1e3,
            rng.random(5_000) * 2.0**33,
            np.arange(129, 9999, 2) / 128,
            [0.0, -0.0],  # a cosine can be -0.0: Python writes the sign
        ]
    )
    texts, sizes = results._format_numbers(values[:, None])
    written = [bytes(texts[i, 0, : sizes[i, 0]]).decode() for i in range(values.shape[0])]
    assert written == [repr(round(float(v), 6)) for v in values]


def test_long_ids_are_formatted_in_bounded_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(results, "CHUNK_LINES", 7)
    monkeypatch.setattr(results, "CHUNK_BYTES", 300)
    buffers: list[int] = []
    for name in ("cluster_lines", "pair_lines"):
        kernel = getattr(results.kernels, name)

        def spy(*args: object, kernel: object = kernel) -> None:
            buffers.append(args[-4].shape[0])  # type: ignore[attr-defined]
            kernel(*args)  # type: ignore[operator]

        monkeypatch.setattr(results.kernels, name, spy)
    ids = [f"{i}:" + "é" * (i * 37 % 200) for i in range(60)]  # lines of 40 to 450 bytes
    rng = np.random.default_rng(2)
    labels, keep = rng.integers(0, 60, size=60), rng.random(60) < 0.5
    similarity = rng.random(60)
    results.write_clusters(
        tmp_path / "clusters.jsonl", Ids.of(ids), labels, keep, similarity, similarity / 2
    )
    expected = "".join(
        cluster_line(ids[d], ids[labels[d]], bool(keep[d]), similarity[d], similarity[d] / 2)
        for d in range(60)
    )
    assert (tmp_path / "clusters.jsonl").read_text() == expected
    a, b = rng.integers(0, 60, size=(2, 50))
    estimates = rng.random(50)
    results.write_pairs(
        tmp_path / "pairs.jsonl", Ids.of(ids), (a[:5], b[:5]), (a, b, estimates, estimates)
    )
    expected = "".join(exact_pair_line(ids[i], ids[j]) for i, j in zip(a[:5], b[:5], strict=True))
    expected += "".join(
        near_pair_line(ids[i], ids[j], e, e) for i, j, e in zip(a, b, estimates, strict=True)
    )
    assert (tmp_path / "pairs.jsonl").read_text() == expected
    longest_line = max(len(line.encode()) for line in expected.splitlines(keepends=True))
    assert len(buffers) > 9 + 1 + 8  # more calls than the cap of 7 lines alone makes
    assert max(buffers) <= max(300, longest_line)


def test_pairs_with_cosine_are_what_json_dumps_writes(tmp_path: Path) -> None:
    """``minhash+embedding``'s lines: the cosine after the estimate, ``found_by`` last; the
    identical texts' cosine 1 and found by both."""
    rng = np.random.default_rng(4)
    ids = [f"d{i}" + '\n"é' * (i % 3) for i in range(30)]
    a, b = rng.integers(0, 30, size=(2, 40))
    estimate = np.where(rng.random(40) < 0.3, np.nan, rng.random(40))
    similarity, cosine = rng.random(40), rng.random(40)
    found = rng.integers(0, 3, size=40).astype(np.int8)
    path = tmp_path / "pairs.jsonl"
    results.write_pairs(
        path, Ids.of(ids), (a[:4], b[:4]), (a, b, estimate, similarity), cosine=(cosine, found)
    )
    expected = [
        exact_pair_line(ids[i], ids[j], with_cosine=True) for i, j in zip(a[:4], b[:4], strict=True)
    ]
    expected += [
        near_pair_line(
            ids[i], ids[j], estimate[n], similarity[n],
            cosine=(cosine[n], results.FOUND_BY[found[n]]),
        )
        for n, (i, j) in enumerate(zip(a, b, strict=True))
    ]  # fmt: skip
    assert path.read_text() == "".join(expected)
    first = json.loads(expected[0])
    assert (first["cosine"], first["found_by"], list(first)[-1]) == (1.0, "both", "found_by")


def test_clusters_with_cosine_are_what_json_dumps_writes(tmp_path: Path) -> None:
    """``minhash+embedding``'s cluster lines: the cosine to the representative last."""
    rng = np.random.default_rng(6)
    ids = [f"d{i}" + '\t"é' * (i % 2) for i in range(40)]
    labels, keep = rng.integers(0, 40, size=40), rng.random(40) < 0.4
    similarity, cosine = rng.random(40), np.where(rng.random(40) < 0.2, np.nan, rng.random(40))
    path = tmp_path / "clusters.jsonl"
    results.write_clusters(path, Ids.of(ids), labels, keep, similarity, similarity / 3, cosine)
    expected = "".join(
        cluster_line(
            ids[d], ids[labels[d]], bool(keep[d]), similarity[d], similarity[d] / 3, cosine[d]
        )
        for d in range(40)
    )
    assert path.read_text() == expected
    assert list(json.loads(expected.splitlines()[0]))[-1] == "cosine"
