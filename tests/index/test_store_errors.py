"""The index's edges: paths that are no index, damaged and locked files, id conflicts, empty
texts, and the recall warning below the index's threshold. Real SQLite files throughout."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from neardup import (
    IdExistsError,
    IncompatibleError,
    InputError,
    LSHSpec,
    OPHSketcher,
    ParameterError,
    SketchSpec,
    StoreError,
    bands_rows,
    s_curve,
)
from neardup.index import (
    LSHIndex,
    MemoryStore,
    SQLiteStore,
    Store,
    recall_at,
    threshold_warning,
)

NEARDUP = Path(sys.executable).parent / "neardup"
TEXT = "the quick brown fox jumps over the lazy dog near the quiet river bank today"


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return MemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "x.ndx")


def test_an_id_conflict_is_bad_data_naming_the_ids(store: Store) -> None:
    with LSHIndex(store) as index:
        index.add(["a", "b"], [TEXT, "another text about something else entirely"])
        with pytest.raises(IdExistsError) as refused:
            index.add(["c", "b", "a"], ["new one here", "x y z", "p q r"])
        assert refused.value.ids == ("b", "a")
        assert str(refused.value) == (
            "2 ids already in the index ('b', 'a'); nothing of this batch was added"
        )
        assert isinstance(refused.value, InputError)  # bad data: exit 1
        assert isinstance(refused.value, ValueError)
        assert not isinstance(refused.value, ParameterError)
        assert index.get("c") is None
        with pytest.raises(IdExistsError, match="check needs new ids"):
            index.check(["a"], [TEXT])


def test_add_new_keeps_stored_documents_and_reports_their_ids(store: Store) -> None:
    with LSHIndex(store) as index:
        index.add(["a"], [TEXT])
        present = index.add_new(
            ["b", "a", "c"],
            ["a second text that is new", "a replacement that must not land", "third one"],
            metadata=[{"n": 1}, {"n": 2}, None],
        )
        assert present == ["a"]
        assert len(index) == 3
        assert index.query([TEXT])[0][0].id == "a"  # the stored text was kept
        assert index.query(["a replacement that must not land"])[0] == []
        doc = index.get("b")
        assert doc is not None
        assert doc.metadata == {"n": 1}
        assert index.add_new(["a", "b"], ["x", "y"]) == ["a", "b"]
        assert len(index) == 3
        assert index.existing_ids(["z", "c", "a"]) == ["c", "a"]
        index._check()


def test_repeated_and_empty_ids_are_bad_data(store: Store) -> None:
    with LSHIndex(store) as index:
        with pytest.raises(InputError, match="appears twice in one batch"):
            index.add_new(["d", "d"], ["one", "two"])
        with pytest.raises(InputError, match="non-empty strings"):
            index.add([""], ["text"])
        assert len(index) == 0


def test_empty_documents_and_queries_match_nothing(store: Store) -> None:
    with LSHIndex(store) as index:
        index.add(
            ["empty", "blank", "short", "long"],
            ["", " \n\t  ", "two words", TEXT],
        )
        for text in ("", "   ", "\n"):
            assert index.query([text], threshold=0.0) == [[]]
            assert index.query([text], k=10) == [[]]
        assert [m.id for m in index.query(["two words"], k=10)[0]] == ["short"]
        assert {m.id for m in index.query([TEXT], threshold=0.0)[0]} == {"long"}
        results = index.check(["empty-2", "long-2"], ["", TEXT])
        assert [(r.inserted, r.matches) for r in results[:1]] == [(True, [])]
        assert results[1].inserted is False
        assert index.get("empty-2") is not None
        index._check()


def test_open_create_false_never_creates(tmp_path: Path) -> None:
    path = tmp_path / "x.ndx"
    with pytest.raises(StoreError, match="no index at"):
        LSHIndex.open(path, create=False)
    assert list(tmp_path.iterdir()) == []


def test_open_create_true_refuses_an_existing_path(tmp_path: Path) -> None:
    path = tmp_path / "x.ndx"
    LSHIndex.open(path, create=True).close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="already exists"):
        LSHIndex.open(path, create=True)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("sketch", "lsh"),
    [
        (SketchSpec(kind="bottomk"), None),
        (SketchSpec(num_perm=64), LSHSpec(num_bands=16, num_rows=8)),  # 128 slots of 64
    ],
)
def test_invalid_parameters_leave_no_file(
    tmp_path: Path, sketch: SketchSpec | None, lsh: LSHSpec | None
) -> None:
    with pytest.raises(ParameterError):
        LSHIndex.open(tmp_path / "x.ndx", sketch=sketch, lsh=lsh, create=True)
    assert list(tmp_path.iterdir()) == []


def test_a_missing_directory_is_named(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"the directory .*no/such does not exist"):
        LSHIndex.open(tmp_path / "no" / "such" / "x.ndx")
    assert list(tmp_path.iterdir()) == []


def test_an_empty_file_is_not_turned_into_an_index(tmp_path: Path) -> None:
    path = tmp_path / "x.ndx"
    path.touch()
    with pytest.raises(StoreError, match="an empty file"):
        LSHIndex.open(path)  # even where a missing file would be created
    assert path.read_bytes() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.ndx"]


def test_a_foreign_sqlite_file_is_not_switched_to_wal(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.commit()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="an SQLite database, but not a neardup index"):
        LSHIndex.open(path)
    assert path.read_bytes() == before  # journal mode unchanged (header bytes 18-19)


@pytest.mark.subprocess
def test_opening_an_index_keeps_the_locks_of_other_connections(tmp_path: Path) -> None:
    """Opening must not read the file outside SQLite: closing any descriptor of it would drop
    this process's POSIX locks, and another process would then delete the write-ahead log
    under a live connection ("database disk image is malformed")."""
    path = tmp_path / "x.ndx"
    with LSHIndex.open(path) as index:
        index.add(["a"], [TEXT])
    with closing(sqlite3.connect(path)) as held:
        assert held.execute("SELECT count(*) FROM documents").fetchone() == (1,)
        LSHIndex.open(path, create=False).close()  # a second open and close in this process
        records = tmp_path / "in.jsonl"
        records.write_text(
            "".join(json.dumps({"id": f"d{i}", "text": f"{TEXT} {i}"}) + "\n" for i in range(50))
        )
        added = subprocess.run(
            [str(NEARDUP), "index", "add", str(path), str(records)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert added.returncode == 0, added.stderr
        assert held.execute("SELECT count(*) FROM documents").fetchone() == (51,)


def test_a_locked_index_says_so_and_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "x.ndx"
    LSHIndex.open(path).close()
    with closing(sqlite3.connect(path, isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")  # another writer holds the lock
        with LSHIndex(SQLiteStore(path, timeout_s=0.05)) as index:
            with pytest.raises(StoreError) as refused:
                index.add(["a"], [TEXT])
            message = str(refused.value)
            assert message.startswith(f"{path}: the index is locked by another process")
            assert "wait for its write to finish" in message
            assert index.query([TEXT]) == [[]]  # readers are not blocked
        writer.execute("ROLLBACK")


def test_a_damaged_header_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "x.ndx"
    LSHIndex.open(path).close()
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(
            "UPDATE meta SET value = '{\"kind\": \"neardup-lsh-index\", ' WHERE key = 'header'"
        )
        conn.commit()
    with pytest.raises(StoreError, match=r"damaged \(the header is not valid JSON"):
        LSHIndex.open(path, create=False)
    with closing(sqlite3.connect(path)) as conn:
        header = {"kind": "neardup-lsh-index", "sketch": {"num_perm": "many"}, "lsh": {}}
        conn.execute("UPDATE meta SET value = ? WHERE key = 'header'", (json.dumps(header),))
        conn.commit()
    with pytest.raises(StoreError, match="the index header is damaged"):
        LSHIndex.open(path, create=False)


def test_damaged_rows_are_store_errors_and_reported_by_the_check(tmp_path: Path) -> None:
    path = tmp_path / "x.ndx"
    with LSHIndex.open(path) as index:
        index.add(["a", "b"], [TEXT, "another text about the weather in spring"], [{"n": 1}, None])
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE documents SET metadata = '{not json' WHERE id = 'a'")
        conn.execute("UPDATE documents SET signature = x'0102' WHERE id = 'b'")
        conn.execute("UPDATE sqlite_sequence SET seq = 0 WHERE name = 'documents'")
        conn.commit()
    with LSHIndex.open(path, create=False) as index:
        with pytest.raises(StoreError, match="metadata is not valid JSON"):
            index.get("a")
        with pytest.raises(StoreError, match="values of the wrong types"):
            index.query(["another text about the weather in spring"])
        with pytest.raises(StoreError, match="wrong types"):
            index.verify_integrity()
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE documents SET signature = zeroblob(1016) WHERE id = 'b'")
        conn.commit()
    with LSHIndex.open(path, create=False) as index:
        with pytest.raises(StoreError, match="has a signature of 127 slots"):
            index.query(["another text about the weather in spring"])
        assert "document 'b': signature of 127 slots" in index.verify_integrity()
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE documents SET signature = zeroblob(1024) WHERE id = 'b'")
        conn.commit()
    with LSHIndex.open(path, create=False) as index:
        problems = index.verify_integrity()
    assert "the document counter 0 is below document 2" in problems
    assert "document 'a': metadata that is not JSON" in problems
    assert "postings do not match the documents' signatures: 16 missing, 16 extra" in problems


def test_recall_and_the_warning_follow_the_s_curve() -> None:
    with LSHIndex(MemoryStore(), lsh=LSHSpec(threshold=0.8)) as index:
        header = index.header
    assert (header["num_bands"], header["num_rows"]) == (16, 8)
    for similarity in (0.0, 0.3, 0.6, 0.69, 0.8, 1.0):
        assert recall_at(header, similarity) == pytest.approx(s_curve(similarity, 16, 8))
    assert threshold_warning(header, 0.8) is None
    assert threshold_warning(header, 0.95) is None
    warning = threshold_warning(header, 0.69)
    assert warning is not None
    assert f"with probability {s_curve(0.69, 16, 8):.2f} only" in warning
    own = bands_rows(LSHSpec(threshold=0.69), 128)
    assert f"an index built for 0.69 finds one with probability {s_curve(0.69, *own):.2f}" in (
        warning
    )
    assert "neardup index create --threshold 0.69" in warning
    assert "finds one" not in (threshold_warning(header, 0.0) or "")  # no index is built for 0


def test_signatures_of_another_spec_are_refused_naming_what_differs() -> None:
    with LSHIndex(MemoryStore()) as index:
        other = OPHSketcher(SketchSpec(seed=7)).sketch(["a text of some words here"])
        with pytest.raises(IncompatibleError) as info:
            index.query_signatures(other)
    assert str(info.value).endswith("seed (7 != 42) (the signatures' first)")
