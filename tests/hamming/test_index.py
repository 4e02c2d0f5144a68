"""The in-memory Hamming index answers as brute force does, through adds, deletes and rebuilds,
and saves to a file that records (and enforces) how its fingerprints were made."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import HammingIndex, IDFWeights, Match, ShingleSpec, Signatures, SketchSpec
from neardup.errors import (
    IdExistsError,
    IncompatibleError,
    InputError,
    NeardupWarning,
    ParameterError,
    StoreError,
)
from neardup.hamming import index as index_module
from neardup.params import Search
from tests import reference

SPEC = SketchSpec(kind="simhash", shingle=ShingleSpec(k=1))


def _signatures(rows: np.ndarray, spec: SketchSpec) -> Signatures:
    """Fingerprint rows as the signatures ``SimHasher.sketch`` would make."""
    n = rows.shape[0]
    return Signatures(
        values=rows,
        num_shingles=np.ones(n, np.int64),
        fingerprints=np.zeros((n, 2), np.uint64),
        spec=spec,
    )


def _brute_force(
    stored: dict[str, np.ndarray], query: np.ndarray, h: int, bits: int
) -> list[Match]:
    found = [(int(reference.hamming(row, query)), doc_id) for doc_id, row in stored.items()]
    return [
        Match(id=doc_id, similarity=float(np.cos(np.pi * d / bits)), distance=d)
        for d, doc_id in sorted(found)
        if d <= h
    ]


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    bits=st.sampled_from([64, 128]),
    h=st.integers(0, 4),
    search=st.sampled_from(["tables", "psm"]),
)
def test_adds_removes_and_queries_equal_brute_force(
    seed: int, bits: int, h: int, search: Search
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(index_module, "MIN_REBUILD", 8)  # rebuild often
        patch.setattr(index_module, "SCAN_CELLS", 16)  # scan the tail a few queries at a time
        _exercise(seed, bits, h, search)


def _exercise(seed: int, bits: int, h: int, search: Search) -> None:
    rng = np.random.default_rng(seed)
    words = bits // 64
    spec = SketchSpec.from_dict({**SPEC.to_dict(), "simhash_bits": bits})
    index = HammingIndex(spec, max_distance=h, search=search)  # PSM: every flip set, exact
    stored: dict[str, np.ndarray] = {}
    base = rng.integers(0, 2**64, size=(6, words), dtype=np.uint64)
    for step in range(12):
        rows = base[rng.integers(0, 6, size=10)]
        for row in rows:
            for bit in rng.choice(bits, size=rng.integers(0, h + 2), replace=False):
                row[bit // 64] ^= np.uint64(1) << np.uint64(bit % 64)
        ids = [f"{step}-{i}" for i in range(10)]
        index.add_signatures(ids, _signatures(rows, spec))
        stored.update(zip(ids, rows, strict=True))
        gone = [doc_id for doc_id in stored if rng.random() < 0.15]
        assert index.delete([*gone, "never-added", *gone[:1]]) == gone
        for doc_id in gone:
            del stored[doc_id]
        index._check()
        assert len(index) == len(stored)
        queries = _signatures(base ^ np.uint64(1), spec)
        got = index.query_signatures(queries)
        assert got == [_brute_force(stored, q, h, bits) for q in queries.values]
        assert index.query_signatures(queries, max_distance=h + 1) == [
            _brute_force(stored, q, h + 1, bits) for q in queries.values
        ]
        assert index.query_signatures(queries, k=2) == [m[:2] for m in got]
        one_bit = float(np.cos(np.pi / bits))  # the cosine one bit apart estimates
        assert index.query_signatures(queries, threshold=one_bit) == [
            [m for m in matches if m.distance is not None and m.distance <= 1] for matches in got
        ]


def test_texts_in_and_near_copies_out(licenses: list[dict[str, object]]) -> None:
    texts = [str(r["text"]) for r in licenses[:200]]
    longest = int(np.argmax([len(t) for t in texts]))  # three more words move few bits
    with HammingIndex(SPEC, max_distance=3) as index:
        index.add([f"d{i}" for i in range(200)], texts)
        matches = index.query([texts[longest], texts[longest] + " one more line"])
    assert matches[0][0] == Match(id=f"d{longest}", similarity=1.0, distance=0)
    assert f"d{longest}" in [m.id for m in matches[1]]
    assert all(m.similarity == np.cos(np.pi * m.distance / 64) for m in matches[1])


def test_top_k_still_works_but_warns_that_k_is_its_name(
    licenses: list[dict[str, object]],
) -> None:
    texts = [str(r["text"]) for r in licenses[:100]]
    with HammingIndex(SPEC, max_distance=20) as index:
        index.add([f"d{i}" for i in range(100)], texts)
        with pytest.warns(NeardupWarning, match=r"HammingIndex\.query\(top_k=\) is deprecated"):
            assert index.query(texts[:5], top_k=2) == index.query(texts[:5], k=2)
        signatures = index._hasher.sketch(texts[:5])
        with pytest.warns(NeardupWarning, match=r"query_signatures\(top_k=\) is deprecated"):
            old = index.query_signatures(signatures, top_k=2)
        assert old == index.query_signatures(signatures, k=2)
        assert max(map(len, old)) == 2
        with pytest.warns(NeardupWarning), pytest.raises(ParameterError, match="give k only"):
            index.query(texts[:5], k=2, top_k=2)


def test_a_psm_index_fits_its_flip_model_and_keeps_it(
    licenses: list[dict[str, object]], tmp_path: Path
) -> None:
    texts = [str(r["text"]) for r in licenses[:600]]
    ids = [f"d{i}" for i in range(600)]
    edited = [" ".join(t.split()[1:]) for t in texts[:100]]  # the first word dropped
    exact = HammingIndex(SPEC, max_distance=3)
    exact.add(ids, texts)
    truth = exact.query(edited)
    index = HammingIndex(SPEC, max_distance=3, search="psm", budget=8)
    index.add(ids, texts)
    assert index.flips is not None
    found = index.query(edited)
    assert all(set(f) <= set(t) for f, t in zip(found, truth, strict=True))  # never a false hit
    reached = sum(len(f) for f in found) / sum(len(t) for t in truth)
    assert reached > 0.8, reached  # 8 of the 176 sets of <= 3 of 10 header bits
    index.save(tmp_path / "psm.npz")
    loaded = HammingIndex.load(tmp_path / "psm.npz", SPEC)
    assert (loaded.search, loaded.budget) == ("psm", 8)
    assert loaded.flips is not None
    assert np.array_equal(loaded.flips.changes, index.flips.changes)
    assert loaded.query(edited) == found
    with np.load(tmp_path / "psm.npz") as data:
        arrays = {name: data[name] for name in data.files}
    header = json.loads(str(arrays["parameters"]))
    header["flips"]["version"] = 0
    arrays["parameters"] = np.array(json.dumps(header))
    np.savez(tmp_path / "old.npz", **arrays)
    with pytest.raises(IncompatibleError, match=r"old\.npz.*fit the model again"):
        HammingIndex.load(tmp_path / "old.npz", SPEC)


def test_psm_parameters_it_cannot_search_are_refused_at_once() -> None:
    with pytest.raises(ParameterError, match=r"max_distance <= 8.*search='tables'"):
        HammingIndex(SPEC, max_distance=9, search="psm")
    wide = SketchSpec.from_dict({**SPEC.to_dict(), "simhash_bits": 128})
    HammingIndex(wide, max_distance=17, search="psm")  # 8 bits per half
    with pytest.raises(ParameterError, match="max_distance <= 17"):
        HammingIndex(wide, max_distance=18, search="psm")
    with pytest.raises(ParameterError, match="budget of at least 1"):
        HammingIndex(SPEC, search="psm", budget=0)


def _fingerprint(index: HammingIndex, doc_id: str) -> np.ndarray:
    stored = index.get(doc_id)
    assert stored is not None
    assert stored.id == doc_id
    return stored.fingerprint


def test_upsert_replaces_and_get_returns_the_fingerprint() -> None:
    index = HammingIndex(SPEC)
    index.add(["a", "b"], ["some words here", "other words there"])
    before = _fingerprint(index, "a")
    assert before.shape == (1,)
    stored = index.get("a")
    assert stored is not None
    assert stored.to_dict() == {"id": "a", "fingerprint": before.tolist()}
    index.upsert(["a", "c"], ["other words there", "some words here"])
    assert len(index) == 3
    assert np.array_equal(_fingerprint(index, "c"), before)
    assert np.array_equal(_fingerprint(index, "a"), _fingerprint(index, "b"))
    assert index.get("gone") is None
    assert [m.id for m in index.query(["other words there"])[0]][:2] == ["a", "b"]  # then by id
    index._check()


def test_ids_are_checked_as_the_lsh_index_checks_them() -> None:
    index = HammingIndex(SPEC)
    index.add(["a"], ["some words here"])
    with pytest.raises(IdExistsError, match=r"1 id already in the index \('a'\)") as info:
        index.add(["b", "a"], ["x y z", "p q r"])
    assert info.value.ids == ("a",)
    with pytest.raises(InputError, match="'c' appears twice in one batch"):
        index.add(["c", "c"], ["x y z", "p q r"])
    with pytest.raises(InputError, match="non-empty strings"):
        index.upsert([""], ["x y z"])
    with pytest.raises(ParameterError, match="got 1 texts for 2 ids"):
        index.add(["d", "e"], ["x y z"])
    assert len(index) == 1
    with pytest.raises(ParameterError, match="rows of 1 uint64"):
        index.add_signatures(["z"], _signatures(np.zeros((1, 2), np.uint64), SPEC))
    with pytest.raises(ParameterError, match="k must be None or an int >= 1"):
        index.query(["x y z"], k=0)
    with pytest.raises(ParameterError, match=r"threshold must be a float in \[0, 1\]"):
        index.query(["x y z"], threshold=1.5)
    other = SketchSpec.from_dict({**SPEC.to_dict(), "seed": 1})
    with pytest.raises(IncompatibleError, match=r"seed \(1 != 42\) \(the signatures' first\)"):
        index.query_signatures(_signatures(np.zeros((1, 1), np.uint64), other))
    assert len(index) == 1


def test_save_and_load_keep_fingerprints_and_idf(
    tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    texts = [str(r["text"]) for r in licenses[:100]]
    spec = SketchSpec.from_dict({**SPEC.to_dict(), "weighting": "tfidf", "simhash_bits": 128})
    idf = IDFWeights(spec).fit(texts)
    index = HammingIndex(spec, max_distance=4, idf=idf)
    index.add([f"d{i}" for i in range(100)], texts)
    index.delete(["d3"])
    path = tmp_path / "simhash.npz"
    index.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["simhash.npz"]  # no temporary left
    loaded = HammingIndex.load(path, spec)
    assert loaded.info() == index.info()
    assert loaded.info() == {"documents": 99, "measure": "cosine", "header": index.header}
    assert loaded.header["idf"]["num_docs"] == 100
    assert len(loaded) == 99
    assert "d3" not in loaded
    assert loaded.query(texts[:5]) == index.query(texts[:5])
    with pytest.raises(IncompatibleError, match="made with") as info:
        HammingIndex.load(path, SketchSpec.from_dict({**spec.to_dict(), "seed": 1}))
    assert str(info.value).endswith(
        f"other parameters: seed ({spec.seed} != 1) (the index's first)"
    )


def test_a_missing_foreign_or_damaged_file_is_a_store_error(tmp_path: Path) -> None:
    """The damage that is a StoreError for an LSH index is one for a Hamming index too."""
    with pytest.raises(StoreError, match=r"no index at .*missing\.npz"):
        HammingIndex.load(tmp_path / "missing.npz")
    with pytest.raises(StoreError, match="cannot read the index file"):
        HammingIndex.load(tmp_path)
    for name, content in [("junk.npz", b"not a zip"), ("empty.npz", b"")]:
        (tmp_path / name).write_bytes(content)
        with pytest.raises(StoreError, match=rf"{name}: not a neardup Hamming index"):
            HammingIndex.load(tmp_path / name)
    np.save(tmp_path / "array.npy", np.zeros(3))
    with pytest.raises(StoreError, match="one NumPy array, not an archive"):
        HammingIndex.load(tmp_path / "array.npy")
    np.savez(tmp_path / "other.npz", parameters=np.array('{"format": "something else"}'))
    with pytest.raises(StoreError, match=r"other\.npz: not a neardup Hamming index$"):
        HammingIndex.load(tmp_path / "other.npz")
    with pytest.raises(StoreError, match=r"cannot write the index file .*check the directory"):
        HammingIndex().save(tmp_path / "no-such-directory" / "index.npz")

    index = HammingIndex(SPEC)
    index.add([f"d{i}" for i in range(50)], [f"document number {i} of fifty" for i in range(50)])
    path = tmp_path / "index.npz"
    index.save(path)
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2])
    with pytest.raises(StoreError, match=r"index\.npz: not a neardup Hamming index, or a damaged"):
        HammingIndex.load(path)
    for offset in range(len(good)):  # each byte flipped in turn: refused, or harmless
        damaged = bytearray(good)
        damaged[offset] ^= 0x5A
        path.write_bytes(bytes(damaged))
        try:
            loaded = HammingIndex.load(path)
        except StoreError:
            continue
        assert loaded.info() == index.info()
        assert all(
            np.array_equal(_fingerprint(loaded, i), _fingerprint(index, i)) for i in index._ids
        )

    values = np.zeros((2, 1), np.uint64)
    header = {**index.header, "file_version": 2}
    np.savez(path, parameters=np.array(json.dumps(header)), ids=np.array(["a"]), values=values)
    with pytest.raises(StoreError, match="file version 2; this neardup reads version 1"):
        HammingIndex.load(path)
    header = {**index.header, "max_distance": "seven"}
    np.savez(path, parameters=np.array(json.dumps(header)), ids=np.array(["a"]))
    with pytest.raises(StoreError, match=r"index\.npz: the index file is damaged"):
        HammingIndex.load(path)
    np.savez(
        path, parameters=np.array(json.dumps(index.header)), ids=np.array(["a", "a"]), values=values
    )
    with pytest.raises(StoreError, match=r"the index file is damaged .*'a' appears twice"):
        HammingIndex.load(path)
