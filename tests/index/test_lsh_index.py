"""LSHIndex on both stores: operations, results against brute force, invariants under stress."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from neardup import (
    IdExistsError,
    IncompatibleError,
    InputError,
    LSHSpec,
    NeardupWarning,
    NormalizeSpec,
    OPHSketcher,
    ParameterError,
    SketchSpec,
    StoreError,
    band_keys,
)
from neardup.index import SCHEMA_VERSION, LSHIndex, MemoryStore, SQLiteStore, Store

StoreFactory = Callable[[], Store]


@pytest.fixture(params=["memory", "sqlite"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    if request.param == "memory":
        yield MemoryStore
    else:
        yield lambda: SQLiteStore(tmp_path / "index.ndx")


@pytest.fixture(scope="module")
def corpus(licenses: list[dict[str, object]]) -> tuple[list[str], list[str]]:
    chosen = sorted(licenses, key=lambda r: str(r["id"]))[:400]
    return [str(r["id"]) for r in chosen], [str(r["text"]) for r in chosen]


def test_add_query_get_delete_upsert(make_store: StoreFactory) -> None:
    base = "the quick brown fox jumps over the lazy dog near the quiet river bank today"
    with LSHIndex(make_store()) as index:
        index.add(["a", "b", "s"], [base, "a different text about the weather in spring", "tiny"],
                  metadata=[{"url": "http://a"}, None, None])  # fmt: skip
        assert len(index) == 3
        [matches] = index.query([base + " again"])
        assert [m.id for m in matches] == ["a"]
        assert 0.8 <= matches[0].similarity < 1.0
        assert index.query(["TINY"]) == [[index.query(["tiny"])[0][0]]]  # short: exact path
        assert index.query(["tiny"])[0][0].id == "s"
        doc = index.get("a")
        assert doc is not None
        assert doc.metadata == {"url": "http://a"}
        assert index.get("missing") is None
        with pytest.raises(IdExistsError, match="already in the index") as refused:
            index.add(["a"], ["again"])
        assert refused.value.ids == ("a",)
        index.upsert(["a"], ["now the document a says something else entirely new"])
        assert index.query([base])[0] == []
        assert index.delete(["a", "zzz"]) == ["a"]
        assert len(index) == 2
        index._check()


def test_k_and_threshold_queries(
    make_store: StoreFactory, corpus: tuple[list[str], list[str]]
) -> None:
    ids, texts = corpus
    with LSHIndex(make_store()) as index:
        index.add(ids, texts)
        results = index.query(texts[:50], k=3)
        for i, matches in enumerate(results):
            assert 1 <= len(matches) <= 3
            assert matches[0].id == ids[i] or matches[0].similarity == 1.0
            assert [m.similarity for m in matches] == sorted(
                (m.similarity for m in matches), reverse=True
            )
        loose = index.query(texts[:50], threshold=0.0)
        strict = index.query(texts[:50], threshold=0.9)
        for a, b in zip(loose, strict, strict=True):
            assert {m.id for m in b} <= {m.id for m in a}
            assert all(m.similarity >= 0.9 for m in b)
        index._check()


def test_top_k_still_works_but_warns_that_k_is_its_name(
    corpus: tuple[list[str], list[str]],
) -> None:
    ids, texts = corpus
    with LSHIndex() as index:
        index.add(ids[:100], texts[:100])
        with pytest.warns(NeardupWarning, match=r"LSHIndex\.query\(top_k=\) is deprecated"):
            assert index.query(texts[:5], top_k=2) == index.query(texts[:5], k=2)
        signatures = index._sketcher.sketch(texts[:5])
        with pytest.warns(NeardupWarning, match=r"query_signatures\(top_k=\) is deprecated"):
            old = index.query_signatures(signatures, top_k=2)
        assert old == index.query_signatures(signatures, k=2)
        with (
            pytest.warns(NeardupWarning),
            pytest.raises(ParameterError, match="give k only"),
        ):
            index.query(texts[:5], k=2, top_k=2)


def test_query_equals_brute_force_over_signatures(corpus: tuple[list[str], list[str]]) -> None:
    ids, texts = corpus
    index = LSHIndex(MemoryStore())
    index.add(ids, texts)
    sigs = index._sketcher.sketch(texts)
    bands = band_keys(sigs.values, index.num_bands, index.num_rows)
    for q in range(0, 400, 7):
        shares = (bands == bands[q]).any(axis=1) & ~sigs.is_short
        same_text = (sigs.fingerprints == sigs.fingerprints[q]).all(axis=1)
        estimate = (sigs.values == sigs.values[q]).mean(axis=1)
        estimate[same_text] = 1.0
        expected = {ids[d] for d in np.flatnonzero((shares | same_text) & (estimate >= 0.8))}
        assert {m.id for m in index.query([texts[q]])[0]} == expected


def test_results_are_the_same_on_both_stores(
    tmp_path: Path, corpus: tuple[list[str], list[str]]
) -> None:
    ids, texts = corpus
    memory = LSHIndex(MemoryStore())
    disk = LSHIndex(SQLiteStore(tmp_path / "x.ndx"))
    for index in (memory, disk):
        index.add(ids[:300], texts[:300])
        index.delete(ids[:20])
    assert memory.query(texts, k=5) == disk.query(texts, k=5)
    assert memory.check(ids[300:], texts[300:]) == disk.check(ids[300:], texts[300:])
    disk.close()


def test_check_inserts_only_new_documents_and_sees_its_own_batch(make_store: StoreFactory) -> None:
    text = "one two three four five six seven eight nine ten eleven twelve"
    with LSHIndex(make_store()) as index:
        results = index.check(
            ["x", "y", "z"], [text, text + " thirteen", "a b c d e f g h i j k l"]
        )
        assert [r.inserted for r in results] == [True, False, True]
        assert results[1].matches[0].id == "x"
        assert len(index) == 2
        index._check()


def test_a_failing_batch_leaves_nothing(make_store: StoreFactory) -> None:
    with LSHIndex(make_store()) as index:
        index.add(["a"], ["one two three four five six"])
        with pytest.raises(IdExistsError, match="already in the index"):
            index.add(["b", "a"], ["seven eight nine ten eleven twelve", "x y z w v u"])
        assert index.get("b") is None
        with pytest.raises(InputError, match="appears twice"):
            index.add(["c", "c"], ["p q r s t u", "p q r s t u"])
        assert len(index) == 1
        index._check()


@pytest.mark.slow
def test_stress_invariants_hold_after_random_operations(
    make_store: StoreFactory, corpus: tuple[list[str], list[str]]
) -> None:
    ids, texts = corpus
    rng = np.random.default_rng(3)
    present: dict[str, str] = {}
    steps = 600 if isinstance(make_store(), MemoryStore) else 150
    with LSHIndex(make_store()) as index:
        for step in range(steps):
            op = rng.integers(4)
            i = int(rng.integers(len(ids)))
            if op == 0 and ids[i] not in present:
                index.add([ids[i]], [texts[i]])
                present[ids[i]] = texts[i]
            elif op == 1 and present:
                victim = list(present)[int(rng.integers(len(present)))]
                assert index.delete([victim]) == [victim]
                del present[victim]
            elif op == 2:
                j = int(rng.integers(len(ids)))
                index.upsert([ids[i]], [texts[j]])
                present[ids[i]] = texts[j]
            else:
                for match in index.query([texts[i]], threshold=0.0)[0]:
                    assert match.id in present
            if step % 50 == 0:
                index._check()
        assert len(index) == len(present)
        for doc_id, text in present.items():
            found = {m.id for m in index.query([text])[0]}
            assert doc_id in found if text.strip() else found == set()  # empty: matches nothing
        index._check()


def test_parameters_come_from_the_header(tmp_path: Path) -> None:
    path = tmp_path / "x.ndx"
    LSHIndex.open(path, sketch=SketchSpec(num_perm=64, seed=7), lsh=LSHSpec(threshold=0.7)).close()
    with LSHIndex.open(path) as index:
        assert index.sketch_spec == SketchSpec(num_perm=64, seed=7)
        assert index.lsh_spec.threshold == 0.7
    with pytest.raises(IncompatibleError, match=r"sketch.seed \(index has 7, asked for 8\)"):
        LSHIndex.open(path, sketch=SketchSpec(num_perm=64, seed=8))


def test_an_index_of_model_tokens_refuses_words_and_their_signatures(
    tmp_path: Path, offline_tiktoken: Path
) -> None:
    path = tmp_path / "tokens.ndx"
    tokens = SketchSpec(normalize=NormalizeSpec(tokenizer="tiktoken:cl100k_base"))
    text = "the quick brown fox jumps over the lazy dog near the river bank"
    with LSHIndex.open(path, sketch=tokens) as index:
        index.add(["a"], [text])
        assert [m.id for m in index.query([text])[0]] == ["a"]
        words = OPHSketcher().sketch([text])
        with pytest.raises(IncompatibleError, match=r"normalize.tokenizer \(None != 'tiktoken"):
            index.query_signatures(words)
    with LSHIndex.open(path) as index:  # the spec comes from the header
        assert index.sketch_spec.normalize.tokenizer == "tiktoken:cl100k_base"
    with pytest.raises(IncompatibleError, match=r"sketch.normalize \(index has .*tiktoken"):
        LSHIndex.open(path, sketch=SketchSpec())


def test_foreign_corrupt_and_newer_files_are_refused(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.ndx"
    garbage.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreError, match="not an SQLite database"):
        SQLiteStore(garbage)
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(StoreError, match="not a neardup index"):
        SQLiteStore(foreign)
    newer = tmp_path / "newer.ndx"
    LSHIndex.open(newer).close()
    with sqlite3.connect(newer) as conn:
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),)
        )
    with pytest.raises(StoreError, match="written by a newer neardup"):
        SQLiteStore(newer)


def test_integrity_check_finds_tampered_postings(tmp_path: Path) -> None:
    path = tmp_path / "x.ndx"
    with LSHIndex.open(path) as index:
        index.add(
            ["a", "b"],
            ["one two three four five six seven", "eight nine ten eleven twelve thirteen"],
        )
        assert index.verify_integrity() == []
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM recent_postings WHERE band = 0")
    with LSHIndex.open(path) as index:
        assert index.verify_integrity() == [
            "postings do not match the documents' band keys: 2 missing, 0 extra",
            "postings do not match the documents' signatures: 2 missing, 0 extra",
        ]


def test_recent_postings_merge_into_the_main_table(
    tmp_path: Path, corpus: tuple[list[str], list[str]]
) -> None:
    ids, texts = corpus
    store = SQLiteStore(tmp_path / "x.ndx", merge_rows=16 * 30)  # merge every 30 documents
    with LSHIndex(store) as index:
        for start in range(0, 200, 20):
            index.add(ids[start : start + 20], texts[start : start + 20])
        conn = store._connection()
        main = conn.execute("SELECT count(*) FROM postings").fetchone()[0]
        recent = conn.execute("SELECT count(*) FROM recent_postings").fetchone()[0]
        assert main > 0
        assert recent < 16 * 30
        assert (
            int(conn.execute("SELECT value FROM meta WHERE key = 'recent_postings'").fetchone()[0])
            == recent
        )
        index.add(
            ids[200:300], texts[200:300]
        )  # 1,600 postings at once: straight to the main table
        assert conn.execute("SELECT count(*) FROM recent_postings").fetchone()[0] == recent
        index.delete(ids[:50])
        index._check()
        memory = LSHIndex(MemoryStore())
        memory.add(ids[50:300], texts[50:300])
        assert index.query(texts[:300], k=3) == memory.query(texts[:300], k=3)


def test_an_index_refuses_sketches_without_bands() -> None:
    with pytest.raises(ParameterError, match="sketch kind must be one of"):
        LSHIndex(MemoryStore(), sketch=SketchSpec(kind="bottomk"))
