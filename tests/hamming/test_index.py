"""The in-memory Hamming index answers as brute force does, through adds, removes and rebuilds,
and saves to a file that records (and enforces) how its fingerprints were made."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import HammingIndex, HammingMatch, IDFWeights, ShingleSpec, SketchSpec
from neardup.errors import IdExistsError, IncompatibleError, InputError, ParameterError
from neardup.hamming import index as index_module

SPEC = SketchSpec(kind="simhash", shingle=ShingleSpec(k=1))


def _brute_force(stored: dict[str, np.ndarray], query: np.ndarray, h: int) -> list[HammingMatch]:
    found = [
        HammingMatch(id=doc_id, distance=int(np.bitwise_count(row ^ query).sum()))
        for doc_id, row in stored.items()
    ]
    order = list(stored)
    found = [m for m in found if m.distance <= h]
    return sorted(found, key=lambda m: (m.distance, order.index(m.id)))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), bits=st.sampled_from([64, 128]), h=st.integers(0, 4))
def test_adds_removes_and_queries_equal_brute_force(seed: int, bits: int, h: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(index_module, "MIN_REBUILD", 8)  # rebuild often
        patch.setattr(index_module, "SCAN_CELLS", 16)  # scan the tail a few queries at a time
        _exercise(seed, bits, h)


def _exercise(seed: int, bits: int, h: int) -> None:
    rng = np.random.default_rng(seed)
    words = bits // 64
    spec = SketchSpec.from_dict({**SPEC.to_dict(), "simhash_bits": bits})
    index = HammingIndex(spec, max_distance=h)
    stored: dict[str, np.ndarray] = {}
    base = rng.integers(0, 2**64, size=(6, words), dtype=np.uint64)
    for step in range(12):
        rows = base[rng.integers(0, 6, size=10)]
        for row in rows:
            for bit in rng.choice(bits, size=rng.integers(0, h + 2), replace=False):
                row[bit // 64] ^= np.uint64(1) << np.uint64(bit % 64)
        ids = [f"{step}-{i}" for i in range(10)]
        index.add_fingerprints(ids, rows)
        stored.update(zip(ids, rows, strict=True))
        gone = [doc_id for doc_id in stored if rng.random() < 0.15]
        assert index.remove([*gone, "never-added"]) == gone
        for doc_id in gone:
            del stored[doc_id]
        index._check()
        assert len(index) == len(stored)
        queries = base ^ np.uint64(1)
        got = index.query_fingerprints(queries)
        assert got == [_brute_force(stored, q, h) for q in queries]
        assert index.query_fingerprints(queries, max_distance=h + 1) == [
            _brute_force(stored, q, h + 1) for q in queries
        ]


def test_texts_in_and_near_copies_out(licenses: list[dict[str, object]]) -> None:
    texts = [str(r["text"]) for r in licenses[:200]]
    longest = int(np.argmax([len(t) for t in texts]))  # three more words move few bits
    with HammingIndex(SPEC, max_distance=3) as index:
        index.add([f"d{i}" for i in range(200)], texts)
        matches = index.query([texts[longest], texts[longest] + " one more line"])
    assert matches[0][0] == HammingMatch(id=f"d{longest}", distance=0)
    assert f"d{longest}" in [m.id for m in matches[1]]


def test_ids_are_unique() -> None:
    index = HammingIndex(SPEC)
    index.add(["a"], ["some words here"])
    with pytest.raises(IdExistsError, match="'a'"):
        index.add(["b", "a"], ["x y z", "p q r"])
    with pytest.raises(IdExistsError, match="repeated"):
        index.add(["c", "c"], ["x y z", "p q r"])
    assert len(index) == 1
    with pytest.raises(ParameterError, match="rows of 1 uint64"):
        index.add_fingerprints(["z"], np.zeros((1, 2), np.uint64))


def test_save_and_load_keep_fingerprints_and_idf(
    tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    texts = [str(r["text"]) for r in licenses[:100]]
    spec = SketchSpec.from_dict({**SPEC.to_dict(), "weighting": "tfidf", "simhash_bits": 128})
    idf = IDFWeights(spec).fit(texts)
    index = HammingIndex(spec, max_distance=4, idf=idf)
    index.add([f"d{i}" for i in range(100)], texts)
    index.remove(["d3"])
    path = tmp_path / "simhash.npz"
    index.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["simhash.npz"]  # no temporary left
    loaded = HammingIndex.load(path, spec)
    assert loaded.parameters() == index.parameters()
    assert loaded.parameters()["idf"]["num_docs"] == 100
    assert len(loaded) == 99
    assert "d3" not in loaded
    assert loaded.query(texts[:5]) == index.query(texts[:5])
    with pytest.raises(IncompatibleError, match="made with") as info:
        HammingIndex.load(path, SketchSpec.from_dict({**spec.to_dict(), "seed": 1}))
    assert str(info.value).endswith(
        f"other parameters: seed ({spec.seed} != 1) (the index's first)"
    )
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(InputError, match=r"junk\.npz.*not a neardup Hamming index"):
        HammingIndex.load(tmp_path / "junk.npz")
