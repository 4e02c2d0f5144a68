"""A persistent index of SimHash fingerprints: block-permuted tables and PSM, in SQLite or in
memory, answer as brute force does (PSM within its budget), and its flip model is fitted once,
committed with its batch and reopened."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neardup.errors import IdExistsError, IncompatibleError, ParameterError
from neardup.index import LSHIndex, MemoryStore, SQLiteStore
from neardup.index.lsh_index import FLIP_FIT_DOCUMENTS
from neardup.params import LSHSpec, Search, SketchSpec
from neardup.sketch.simhash import SimHasher, hamming_distance

H = 7


def _index(tmp_path: Path, store: str, search: Search, bits: int = 64, **lsh: object) -> LSHIndex:
    sketch = SketchSpec(kind="simhash", simhash_bits=bits)
    spec = LSHSpec(family="hamming", hamming=H if bits == 64 else 2 * H, search=search, **lsh)
    if store == "memory":
        return LSHIndex(MemoryStore(), sketch=sketch, lsh=spec)
    return LSHIndex.open(tmp_path / "simhash.ndx", sketch=sketch, lsh=spec)


def _edited(texts: list[str], seed: int) -> list[str]:
    """Each text with one word in 150 replaced (at least one): near copies, as revisions are."""
    rng = np.random.default_rng(seed)
    out = []
    for text in texts:
        words = text.split()
        for at in rng.integers(0, max(len(words), 1), size=max(1, len(words) // 150)):
            if words:
                words[at] = f"edit{rng.integers(1000)}"
        out.append(" ".join(words))
    return out


def _brute_force(
    index: LSHIndex, ids: list[str], texts: list[str], queries: list[str]
) -> list[set[tuple[str, int]]]:
    """Every stored document with a token within the index's h bits of each query text."""
    hasher = SimHasher(index.sketch_spec)
    stored, asked = hasher.sketch(texts), hasher.sketch(queries)
    distance = hamming_distance(asked.values[:, None, :], stored.values[None, :, :])
    near = (distance <= index.lsh_spec.hamming) & (stored.num_shingles > 0)[None, :]
    near &= (asked.num_shingles > 0)[:, None]
    return [
        {(ids[j], int(distance[q, j])) for j in np.flatnonzero(row)} for q, row in enumerate(near)
    ]


def _answers(index: LSHIndex, queries: list[str]) -> list[set[tuple[str, int]]]:
    found = index.query(queries)
    assert all(m.distance is not None for near in found for m in near)
    return [{(m.id, int(m.distance or 0)) for m in near} for near in found]


@pytest.mark.parametrize("store", ["memory", "sqlite"])
@pytest.mark.parametrize(
    ("search", "bits"), [("tables", 64), ("psm", 64), ("tables", 128), ("psm", 128)]
)
def test_every_fingerprint_within_h_is_found_as_brute_force_finds_it(
    tmp_path: Path, licenses: list[dict[str, object]], store: str, search: Search, bits: int
) -> None:
    records = licenses[:1200]
    ids, texts = [str(r["id"]) for r in records], [str(r["text"]) for r in records]
    queries = _edited(texts[::4], seed=1) + texts[1::40] + [""]
    with _index(tmp_path, store, search, bits) as index:  # PSM without a budget is exact
        index.add(ids, texts)
        got = _answers(index, queries)
        index._check()
    want = _brute_force(index, ids, texts, queries)
    assert sum(map(len, want)) > len(queries) // 2  # real near copies, not only exact ones
    assert got == want
    assert got[-1] == set()  # a text without a token matches nothing


def test_psm_with_a_budget_finds_most_of_what_the_tables_find(
    tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    """Seed 004: VOSH's first buckets hold most near copies; 32 of them keep >= 95% here."""
    ids, texts = [str(r["id"]) for r in licenses], [str(r["text"]) for r in licenses]
    queries = _edited(texts[::3], seed=2) + _edited(texts[1::3], seed=3)
    with _index(tmp_path, "sqlite", "tables") as tables:
        tables.add(ids, texts)
        truth = _answers(tables, queries)
    (tmp_path / "simhash.ndx").unlink()
    with _index(tmp_path, "sqlite", "psm", psm_budget=32) as psm:
        psm.add(ids, texts)
        assert psm.flips is not None  # fitted on the batch: the queries are ordered by it
        found = _answers(psm, queries)
    true_pairs = sum(map(len, truth))
    assert all(f <= t for f, t in zip(found, truth, strict=True))  # nothing beyond h bits
    assert true_pairs > 500
    assert sum(map(len, found)) >= 0.95 * true_pairs


def test_the_flip_model_is_fitted_on_the_first_large_batch_and_reopened(
    tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    ids, texts = [str(r["id"]) for r in licenses], [str(r["text"]) for r in licenses]
    with _index(tmp_path, "sqlite", "psm", psm_budget=8) as index:
        index.add(ids[:10], texts[:10])
        assert index.flips is None  # too few documents to fit on
        with pytest.raises(IdExistsError):  # the batch that fits fails: the model goes with it
            index.add(ids[:FLIP_FIT_DOCUMENTS], texts[:FLIP_FIT_DOCUMENTS])
        assert index.flips is None
        index.delete([ids[0]])  # a later small write saves nothing of the failed batch
        index.add(ids[:1], texts[:1])
        assert index.flips is None
        assert "flips" not in index.store.read_header()  # type: ignore[operator]
        index.add(ids[10:], texts[10:])
        fitted = index.flips
        assert fitted is not None
        info = index.info()
    assert info["header"]["flips"]["source"] in ("near-pairs", "random-pairs")
    assert "quantiles" not in info["header"]["flips"]
    with LSHIndex.open(tmp_path / "simhash.ndx", create=False) as reopened:
        assert reopened.flips is not None
        np.testing.assert_array_equal(reopened.flips.changes, fitted.changes)
        assert reopened.query([texts[5]])[0][0].id == ids[5]
        reopened._check()


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_deletes_upserts_and_check_keep_the_postings_in_step(
    tmp_path: Path, licenses: list[dict[str, object]], store: str
) -> None:
    ids, texts = [str(r["id"]) for r in licenses[:300]], [str(r["text"]) for r in licenses[:300]]
    with _index(tmp_path, store, "psm") as index:
        index.add(ids, texts)
        assert index.delete([ids[0], "absent"]) == [ids[0]]
        assert all(m.id != ids[0] for m in index.query([texts[0]])[0])
        index.upsert([ids[1]], [texts[2]])  # now a copy of document 2
        assert {m.id for m in index.query([texts[2]])[0]} >= {ids[1], ids[2]}
        results = index.check(["new-a", "new-b"], [texts[3], "a wholly new text"])
        assert not results[0].inserted
        assert results[0].matches[0].id == ids[3]
        assert results[1].inserted
        assert index.get("new-b") is not None
        twins = index.check(["twin-1", "twin-2"], ["a text of its own, twice over"] * 2)
        assert [r.inserted for r in twins] == [True, False]  # the batch's own earlier document
        assert twins[1].matches[0].id == "twin-1"
        with pytest.raises(ParameterError, match="threshold"):
            index.check(["new-c"], ["x"], threshold=1.5)
        index._check()


def test_search_parameters_are_fixed_for_the_index_life(tmp_path: Path) -> None:
    _index(tmp_path, "sqlite", "tables").close()
    with LSHIndex.open(tmp_path / "simhash.ndx") as index:
        assert index.header["hamming_blocks"] == 9  # chosen at creation, for the index's life
        assert index.num_bands == 36  # C(9, 2) tables
    with pytest.raises(IncompatibleError, match="search"):
        LSHIndex.open(
            tmp_path / "simhash.ndx",
            sketch=SketchSpec(kind="simhash"),
            lsh=LSHSpec(family="hamming", hamming=H, search="psm"),
        )


def test_a_budget_beyond_every_bucket_searches_them_all(
    tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    ids, texts = [str(r["id"]) for r in licenses[:400]], [str(r["text"]) for r in licenses[:400]]
    with _index(tmp_path, "memory", "psm", psm_budget=2**31 - 1) as huge:
        huge.add(ids, texts)
        with _index(tmp_path, "memory", "psm") as exact:
            exact.add(ids, texts)
            assert _answers(huge, texts[::7]) == _answers(exact, texts[::7])


def test_refused_settings_name_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="TF-IDF"):
        LSHIndex(MemoryStore(), sketch=SketchSpec(kind="simhash", weighting="tfidf"))
    with pytest.raises(ParameterError, match="--search psm flips at most 8 bits"):
        LSHIndex.open(
            tmp_path / "x.ndx",
            sketch=SketchSpec(kind="simhash"),
            lsh=LSHSpec(family="hamming", hamming=9, search="psm"),
        )
    assert not (tmp_path / "x.ndx").exists()
    with pytest.raises(ParameterError, match="psm_budget applies to PSM"):
        LSHSpec(family="hamming", search="tables", psm_budget=8)
    with pytest.raises(ParameterError, match="hamming_blocks applies to the tables"):
        LSHSpec(family="hamming", search="psm", hamming_blocks=9)


def test_a_query_measures_what_the_index_measures(licenses: list[dict[str, object]]) -> None:
    texts = [str(r["text"]) for r in licenses[:50]]
    ids = [str(i) for i in range(50)]
    simhash = _index(Path(), "memory", "tables")
    minhash = LSHIndex(MemoryStore(), sketch=SketchSpec(kind="oph"))
    for index in (simhash, minhash):
        index.add(ids, texts)
    assert (simhash.measure, minhash.measure) == ("cosine", "jaccard")
    assert simhash.info()["measure"] == "cosine"
    own = simhash.query(texts[:3])
    assert simhash.query(texts[:3], measure="cosine") == own
    assert [near[0].id for near in own] == ids[:3]
    assert minhash.query(texts[:3], measure="jaccard") == minhash.query(texts[:3])
    with pytest.raises(ParameterError, match=r"this index measures cosine \(simhash sketches\)"):
        simhash.query(texts[:1], measure="jaccard")
    with pytest.raises(ParameterError, match=r"this index measures jaccard \(oph sketches\)"):
        minhash.query(texts[:1], measure="cosine")


def test_both_stores_scan_the_same_postings(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 2**64, size=(400, 3), dtype=np.uint64)
    keys[:50, 0] = keys[50:100, 0]  # repeated keys
    memory, sqlite = MemoryStore(), SQLiteStore(tmp_path / "s.ndx", create=True)
    ranges_band = rng.integers(0, 3, size=200)
    width = np.uint64(1) << rng.integers(0, 63, size=200).astype(np.uint64)
    low = (rng.integers(0, 2**64, size=200, dtype=np.uint64) // width) * width
    high = low + (width - np.uint64(1))
    from neardup.index.store import DocumentRows

    rows = DocumentRows(
        ids=[str(i) for i in range(400)],
        fingerprints=np.zeros((400, 2), np.uint64),
        signatures=keys,
        num_shingles=np.ones(400, np.int64),
        keys=keys,
        metadata=[None] * 400,
    )
    answers = []
    for store in (memory, sqlite):
        store.write_header({"num_bands": 3})
        with store.transaction():
            store.insert(rows)
        found = store.scan(ranges_band, low, high)
        answers.append(sorted(zip(*(a.tolist() for a in found), strict=True)))
    sqlite.close()
    assert answers[0] == answers[1]
    expected = sum(
        int(((keys[:, b] >= lo) & (keys[:, b] <= hi)).sum())
        for b, lo, hi in zip(ranges_band.tolist(), low.tolist(), high.tolist(), strict=True)
    )
    assert len(answers[0]) == expected > 0
