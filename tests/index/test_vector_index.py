"""The vector index's file: it records how the index was made, refuses what does not fit it,
and reports damage; the service's ``open_index`` tells it from an LSH index."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from neardup import (
    IdExistsError,
    IncompatibleError,
    JoinSpec,
    LSHIndex,
    Match,
    ParameterError,
    StoreError,
    VectorIndex,
)
from neardup.index import open_index

SPEC = JoinSpec(metric="cosine", threshold=0.9, num_bands=16, num_rows=4)
ROWS = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 0.0]])


def _made(path: Path, spec: JoinSpec = SPEC, dim: int = 3) -> None:
    with VectorIndex.open(path, spec=spec, dim=dim, create=True) as index:
        index.add(["x", "y", "z", "xy"], ROWS, [{"n": 1}, None, [1, "two"], None])


def test_an_index_reopened_takes_its_parameters_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "vectors.ndx"
    _made(path)
    with VectorIndex.open(path) as index:
        assert (index.spec, index.dim, index.num_bands, index.num_rows) == (SPEC, 3, 16, 4)
        assert index.info()["header"]["kind"] == "neardup-vector-index"
        assert index.info()["bytes"] > 0
        x, z = index.get("x"), index.get("z")
        assert x is not None
        assert x.metadata == {"n": 1}
        assert z is not None
        assert z.to_dict() == {"id": "z", "vector": [0.0, 0.0, 1.0], "metadata": [1, "two"]}
        [[best]] = index.query(np.array([[2.0, 0.1, 0.0]]), k=1)
        assert (best.id, best.distance) == ("x", None)
        assert best.similarity == pytest.approx(2 / np.sqrt(4.01))
        with pytest.raises(IdExistsError):
            index.add(["x"], ROWS[:1])
        assert index.verify_integrity() == []
        index._check()
    with VectorIndex.open(path, spec=SPEC, dim=3, create=False) as index:  # the same: fine
        assert len(index) == 4


def test_other_parameters_another_kind_or_a_missing_file_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "vectors.ndx"
    _made(path)
    other = JoinSpec(metric="cosine", threshold=0.8, num_bands=16, num_rows=4, seed=7)
    with pytest.raises(IncompatibleError, match=r"spec\.seed \(42 != 7\); spec\.threshold") as e:
        VectorIndex.open(path, spec=other)
    assert "dim" not in str(e.value)
    with pytest.raises(IncompatibleError, match=r"dim \(3 != 4\)"):
        VectorIndex.open(path, dim=4)
    with pytest.raises(StoreError, match="already exists"):
        VectorIndex.open(path, spec=SPEC, dim=3, create=True)
    with pytest.raises(StoreError, match="no index at"):
        VectorIndex.open(tmp_path / "missing.ndx", create=False)
    with pytest.raises(ParameterError, match="give spec and dim"):
        VectorIndex.open(tmp_path / "new.ndx")
    with pytest.raises(ParameterError, match="give spec and dim"):
        VectorIndex.open(tmp_path / "new.ndx", spec=SPEC, create=True)
    with pytest.raises(ParameterError, match="dim must be an int >= 1"):
        VectorIndex.open(tmp_path / "new.ndx", spec=SPEC, dim=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vectors.ndx"]  # nothing left behind
    texts = tmp_path / "texts.ndx"
    LSHIndex.open(texts).close()
    with pytest.raises(StoreError, match=r"not a neardup vector index .*'neardup-lsh-index'"):
        VectorIndex.open(texts)
    with pytest.raises(StoreError, match=r"not a neardup LSH index .*'neardup-vector-index'"):
        LSHIndex.open(path)
    with open_index(path) as vectors, open_index(texts) as lsh:
        assert isinstance(vectors, VectorIndex)
        assert isinstance(lsh, LSHIndex)
    with pytest.raises(StoreError, match="no index at"):
        open_index(tmp_path / "missing.ndx")


def _set_header(path: Path, header: dict[str, object]) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'header'", (json.dumps(header),))
    conn.close()


def _read_header(path: Path) -> dict[str, object]:
    conn = sqlite3.connect(path)
    try:
        value = conn.execute("SELECT value FROM meta WHERE key = 'header'").fetchone()[0]
    finally:
        conn.close()
    header: dict[str, object] = json.loads(value)
    return header


def test_a_newer_or_damaged_header_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "vectors.ndx"
    _made(path)
    header = _read_header(path)
    _set_header(path, {**header, "format_version": 2})
    with pytest.raises(StoreError, match="format version 2; this neardup reads versions up to 1"):
        VectorIndex.open(path)
    _set_header(path, {**header, "dim": "three"})
    with pytest.raises(StoreError, match="the index header is damaged"):
        VectorIndex.open(path)
    _set_header(path, {**header, "family": "SomethingElse"})
    with pytest.raises(
        IncompatibleError, match=r"family \('SomethingElse' != 'HyperplaneHasher'\)"
    ):
        VectorIndex.open(path)


def test_damage_to_a_stored_vector_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "vectors.ndx"
    _made(path)
    conn = sqlite3.connect(path)
    with conn:  # one byte of y's vector changed, its fingerprint left as it was
        (blob,) = conn.execute("SELECT signature FROM documents WHERE id = 'y'").fetchone()
        changed = bytearray(blob)
        changed[0] ^= 0x01
        conn.execute("UPDATE documents SET signature = ? WHERE id = 'y'", (bytes(changed),))
        conn.execute(
            "DELETE FROM recent_postings WHERE (band, key, doc) = "
            "(SELECT band, key, doc FROM recent_postings LIMIT 1)"
        )
    conn.close()
    with VectorIndex.open(path) as index:
        problems = index.verify_integrity()
    assert any("vector 'y': its bytes do not match their fingerprint" in p for p in problems)
    assert any("postings" in p for p in problems)
    conn = sqlite3.connect(path)
    with conn:  # a NaN where a number was: the family cannot hash it
        nan = np.array([np.nan, 0.0, 0.0]).tobytes()
        conn.execute("UPDATE documents SET signature = ? WHERE id = 'x'", (nan,))
    conn.close()
    with pytest.raises(StoreError, match=r"the index file is damaged .*NaN"):
        VectorIndex.open(path)


def test_another_process_s_writes_show_when_the_file_is_opened_again(tmp_path: Path) -> None:
    path = tmp_path / "vectors.ndx"
    _made(path)
    with VectorIndex.open(path) as first, VectorIndex.open(path) as second:
        second.add(["w"], np.array([[0.0, 1.0, 1.0]]))
        assert first.get("w") is None
        assert any("did another process write it?" in p for p in first.verify_integrity())
        with pytest.raises(IdExistsError):
            first.add(["w"], np.array([[1.0, 2.0, 3.0]]))  # the file refuses it all the same
    with VectorIndex.open(path) as again:
        assert again.get("w") is not None


@pytest.mark.parametrize(
    ("spec", "dim", "rows"),
    [
        (
            JoinSpec(metric="hamming", threshold=3, num_bands=8, num_rows=8),
            70,
            np.array([[2**64 - 1, 0b1], [5, 0]], dtype=np.uint64),
        ),
        (
            JoinSpec(metric="l1", threshold=3, num_bands=8, num_rows=4, family="unary"),
            2,
            np.array([[0, 16], [3, 4]], dtype=np.int64),
        ),
    ],
)
def test_integer_vectors_round_trip_bit_for_bit(
    tmp_path: Path, spec: JoinSpec, dim: int, rows: np.ndarray
) -> None:
    path = tmp_path / "vectors.ndx"
    max_value = 16 if spec.metric == "l1" else None
    with VectorIndex.open(path, spec=spec, dim=dim, max_value=max_value) as index:
        index.add(["a", "b"], rows)
        before = index.query(rows)
    with VectorIndex.open(path) as index:
        assert index.max_value == max_value
        stored = index.get("a")
        assert stored is not None
        assert stored.vector.dtype == rows.dtype
        assert np.array_equal(stored.vector, rows[0])
        assert index.query(rows) == before
        assert before[0][0] == Match("a", None, 0.0)
        assert index.verify_integrity() == []
