"""Containment queries of the persistent index: which stored documents contain a text.

With ``containment_sample=1`` every shingle is kept and the answers equal the definition
``|S(q) ∩ S(d)| / |S(q)|`` over real licence texts planted in longer hosts; with ``m > 1`` the
share of the text's sampled shingles a document holds estimates it within its sampling error.
The samples live with the documents: deleted, replaced and reopened with them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from neardup.errors import IncompatibleError, ParameterError, StoreError
from neardup.index import LSHIndex, MemoryStore
from tests.integration.conftest import run
from tests.planted import Planted, plant_containment, shingle_set


@pytest.fixture(scope="module")
def planted(licenses: list[dict[str, object]]) -> Planted:
    return plant_containment([str(r["text"]) for r in licenses], 40, num_others=80, seed=5)


def _ids(planted: Planted) -> list[str]:
    return [f"d{i}" for i in range(len(planted.texts))]


def _truth(planted: Planted, threshold: float) -> list[dict[str, float]]:
    sets = [shingle_set(t) for t in planted.texts]
    return [
        {
            f"d{j}": len(q & d) / len(q)
            for j, d in enumerate(sets)
            if q and len(q & d) / len(q) >= threshold
        }
        for q in sets
    ]


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_a_full_sample_answers_exactly(planted: Planted, tmp_path: Path, store: str) -> None:
    index = (
        LSHIndex(MemoryStore(), containment_sample=1)
        if store == "memory"
        else LSHIndex.open(tmp_path / "c.ndx", containment_sample=1)
    )
    with index:
        index.add(_ids(planted), planted.texts)
        found = index.query(planted.texts, measure="containment", threshold=0.8)
        truth = _truth(planted, 0.8)
        assert [{m.id: m.similarity for m in ms} for ms in found] == [
            pytest.approx(t, abs=1e-12) for t in truth
        ]
        assert sum(map(len, truth)) >= len(planted.texts) + 40  # itself and its host at least
        for inner, host in planted.pairs_at(0.8):
            assert f"d{host}" in {m.id for m in found[inner]}
        # Best first, then by id; k alone cuts the list of every holder.
        every = index.query(planted.texts, measure="containment", threshold=0.0)
        top = index.query(planted.texts, measure="containment", k=2)
        assert top == [ms[:2] for ms in every]
        assert all(ms == sorted(ms, key=lambda m: (-m.similarity, m.id)) for ms in every)
        assert index.verify_integrity() == []


def test_samples_are_deleted_replaced_and_kept_with_their_documents(
    planted: Planted, tmp_path: Path
) -> None:
    path = tmp_path / "c.ndx"
    ids = _ids(planted)
    inner, host = min(planted.pairs_at(0.8))
    with LSHIndex.open(path, containment_sample=1) as index:
        index.add(ids, planted.texts)
        assert index.delete([ids[host]]) == [ids[host]]
        assert ids[host] not in {
            m.id for m in index.query([planted.texts[inner]], measure="containment")[0]
        }
        assert index.verify_integrity() == []
        index.upsert([ids[host]], [planted.texts[host]])
    with LSHIndex.open(path) as reopened:
        assert reopened.containment_sample == 1
        matches = reopened.query([planted.texts[inner]], measure="containment")[0]
        assert ids[host] in {m.id for m in matches}
        assert reopened.verify_integrity() == []
    with pytest.raises(IncompatibleError, match="containment_sample"):
        LSHIndex.open(path, containment_sample=4)


def test_deleting_from_memory_removes_every_sample_posting(planted: Planted) -> None:
    store = MemoryStore()
    with LSHIndex(store, containment_sample=1) as index:
        index.add(_ids(planted), planted.texts)
        _, _, before = store.all_postings()
        assert index.delete(["d0", "d1"]) == ["d0", "d1"]
        _, _, after = store.all_postings()
    # Documents 1 and 2 (numbered from 1 in insertion order) had postings; none is left.
    assert {1, 2} <= set(before.tolist())
    assert not {1, 2} & set(after.tolist())
    assert before.shape[0] - after.shape[0] > 2 * index.num_bands  # samples went too


def test_a_damaged_sample_rate_in_the_header_is_reported(tmp_path: Path) -> None:
    store = MemoryStore()
    LSHIndex(store, containment_sample=2).close()
    store.write_header({**(store.read_header() or {}), "containment_sample": "two"})
    with pytest.raises(StoreError, match="the index header is damaged"):
        LSHIndex(store)


def test_a_sparse_sample_estimates_within_its_sampling_error(planted: Planted) -> None:
    m = 4
    with LSHIndex(MemoryStore(), containment_sample=m) as index:
        index.add(_ids(planted), planted.texts)
        found = index.query(planted.texts, measure="containment", threshold=0.0)
    for inner, host in sorted(planted.pairs_at(0.8)):
        true = planted.containment[inner, host]
        size = len(shingle_set(planted.texts[inner])) / m  # the sample's expected size
        estimate = {x.id: x.similarity for x in found[inner]}.get(f"d{host}", 0.0)
        # Sampling without replacement: the standard deviation is below sqrt(c (1 - c) / s).
        assert abs(estimate - true) <= 5 * math.sqrt(true * (1 - true) / size) + 2 / size


def test_an_index_without_a_sample_refuses_containment_queries() -> None:
    with LSHIndex(MemoryStore()) as index:
        index.add(["a"], ["the quick brown fox jumps over the lazy dog by the river"])
        with pytest.raises(ParameterError, match="keeps no containment sample"):
            index.query(["the quick brown fox"], measure="containment")
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ParameterError, match="containment_sample must be None or an int"):
            LSHIndex(MemoryStore(), containment_sample=bad)  # type: ignore[arg-type]


def test_the_command_line_creates_adds_and_queries_containment(
    planted: Planted, tmp_path: Path
) -> None:
    path = tmp_path / "c.ndx"
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "".join(
            json.dumps({"id": i, "text": t}) + "\n"
            for i, t in zip(_ids(planted), planted.texts, strict=True)
        )
    )
    created = run("index", "create", str(path), "--containment-sample", "1")
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["header"]["containment_sample"] == 1
    assert run("index", "add", str(path), str(corpus)).returncode == 0
    inner, host = min(planted.pairs_at(0.8))
    query = tmp_path / "q.jsonl"
    query.write_text(json.dumps({"id": "q", "text": planted.texts[inner]}) + "\n")
    answer = run("index", "query", str(path), str(query), "--measure", "containment")
    assert answer.returncode == 0, answer.stderr
    (line,) = [json.loads(x) for x in answer.stdout.splitlines()]
    assert line["query"] == "q"
    assert {m["id"] for m in line["matches"]} >= {f"d{inner}", f"d{host}"}
    plain = tmp_path / "plain.ndx"
    assert run("index", "create", str(plain)).returncode == 0
    refused = run("index", "query", str(plain), str(query), "--measure", "containment")
    assert refused.returncode != 0
    assert "keeps no containment sample" in refused.stderr
