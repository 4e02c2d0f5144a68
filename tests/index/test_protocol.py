"""One protocol, three indexes: ``LSHIndex``, ``HammingIndex`` and ``VectorIndex`` keep the same
promises about ids, writes, queries, ``info``, ``close`` and their files.

Each kind is built on the same twenty bundled licence texts, chosen far apart from each other
(5-word shingle Jaccard below 0.3, cosine of their hashed word counts below 0.8): texts for the
LSH and Hamming indexes, those word counts as vectors for the vector index (under cosine and
under L2). A near copy of a text has one more word at its end; of a vector, one more word counted.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import neardup
from neardup import (
    HammingIndex,
    IdExistsError,
    InputError,
    JoinSpec,
    LSHIndex,
    Match,
    NearIndex,
    ParameterError,
    SketchSpec,
    StoreError,
    VectorIndex,
)
from tests.reference import jaccard

NUM_ITEMS = 20
DIM = 256
IDS = [f"doc-{i:02d}" for i in range(NUM_ITEMS)]


@dataclass(frozen=True)
class Kind:
    """How to build and feed one kind of index."""

    name: str
    make: Callable[[Path | None], NearIndex[Any]]
    """A new, empty index: in memory (``None``), or kept in the file at the path."""
    reopen: Callable[[NearIndex[Any], Path], NearIndex[Any]]
    """The index read back from its file, after ``make(path)``'s index was closed (or saved)."""
    items: Callable[[list[int]], Any]
    """The chosen texts (or vectors) of these numbers, as one batch."""
    near: Callable[[list[int]], Any]
    """A near copy of each."""
    strict: float
    """A threshold only an identical item reaches."""


def score(match: Match) -> float:
    """Higher is nearer: the similarity, or the distance negated."""
    if match.similarity is not None:
        return match.similarity
    assert match.distance is not None
    return -match.distance


def reaches(match: Match, threshold: float) -> bool:
    if match.similarity is not None:
        return match.similarity >= threshold
    assert match.distance is not None
    return match.distance <= threshold


@pytest.fixture(scope="module")
def chosen(licenses: list[dict[str, object]]) -> tuple[list[str], np.ndarray]:
    """Twenty licence texts far from each other, and their hashed word counts."""
    texts: list[str] = []
    shingles: list[set[tuple[str, ...]]] = []
    vectors: list[np.ndarray] = []
    for record in licenses:
        text = str(record["text"])
        words = re.findall(r"\w+", text.lower())
        if len(words) < 150:
            continue
        grams = {tuple(words[i : i + 5]) for i in range(len(words) - 4)}
        counts = np.bincount([zlib.crc32(w.encode()) % DIM for w in words], minlength=DIM)
        unit = counts / np.linalg.norm(counts)
        if all(jaccard(grams, g) < 0.3 for g in shingles) and all(
            float(unit @ v) / float(np.linalg.norm(v)) < 0.8 for v in vectors
        ):
            texts.append(text)
            shingles.append(grams)
            vectors.append(counts.astype(np.float64))
        if len(texts) == NUM_ITEMS:
            return texts, np.array(vectors)
    pytest.skip("the bundled licences hold fewer than twenty texts far apart")


def _text_kinds(texts: list[str]) -> list[Kind]:
    def items(numbers: list[int]) -> list[str]:
        return [texts[i] for i in numbers]

    def near(numbers: list[int]) -> list[str]:
        return [texts[i] + " indeed" for i in numbers]

    def lsh(path: Path | None) -> NearIndex[Any]:
        return LSHIndex() if path is None else LSHIndex.open(path, create=True)

    def lsh_again(index: NearIndex[Any], path: Path) -> NearIndex[Any]:
        index.close()
        return LSHIndex.open(path, create=False)

    spec = SketchSpec(kind="simhash")

    def hamming(path: Path | None) -> NearIndex[Any]:
        return HammingIndex(spec, max_distance=7)

    def hamming_again(index: NearIndex[Any], path: Path) -> NearIndex[Any]:
        assert isinstance(index, HammingIndex)
        index.save(path)
        index.close()
        return HammingIndex.load(path, spec)

    return [
        Kind("lsh", lsh, lsh_again, items, near, strict=1.0),
        Kind("hamming", hamming, hamming_again, items, near, strict=1.0),
    ]


def _vector_kinds(vectors: np.ndarray) -> list[Kind]:
    specs = {
        "vector-cosine": (
            JoinSpec(metric="cosine", threshold=0.95, num_bands=20, num_rows=6),
            1.0 - 1e-9,
        ),
        "vector-l2": (
            JoinSpec(metric="l2", threshold=4.0, num_bands=20, num_rows=4, bucket_width=16.0),
            0.0,
        ),
    }
    kinds = []
    for name, (spec, strict) in specs.items():

        def make(path: Path | None, spec: JoinSpec = spec) -> NearIndex[Any]:
            if path is None:
                return VectorIndex(spec, DIM)
            return VectorIndex.open(path, spec=spec, dim=DIM, create=True)

        def again(index: NearIndex[Any], path: Path) -> NearIndex[Any]:
            index.close()
            return VectorIndex.open(path, create=False)

        def items(numbers: list[int]) -> np.ndarray:
            return vectors[numbers].reshape(len(numbers), DIM)

        def near(numbers: list[int]) -> np.ndarray:
            copies = items(numbers).copy()
            copies[:, 7] += 1.0
            return copies

        kinds.append(Kind(name, make, again, items, near, strict=strict))
    return kinds


KIND_NAMES = ["lsh", "hamming", "vector-cosine", "vector-l2"]


@pytest.fixture(params=KIND_NAMES)
def kind(request: pytest.FixtureRequest, chosen: tuple[list[str], np.ndarray]) -> Kind:
    texts, vectors = chosen
    kinds = {k.name: k for k in [*_text_kinds(texts), *_vector_kinds(vectors)]}
    return kinds[request.param]


@pytest.fixture
def full(kind: Kind) -> Iterator[NearIndex[Any]]:
    """An index in memory holding every chosen item under ``IDS``."""
    with kind.make(None) as index:
        index.add(IDS, kind.items(list(range(NUM_ITEMS))))
        yield index


ALL = list(range(NUM_ITEMS))


def test_every_index_speaks_the_protocol_and_is_exported_at_the_top(kind: Kind) -> None:
    with kind.make(None) as index:
        assert isinstance(index, NearIndex)
        assert getattr(neardup, type(index).__name__) is type(index)
        assert len(index) == 0
        assert index.query(kind.items([0])) == [[]]


def test_a_stored_item_finds_itself_alone_and_first(kind: Kind, full: NearIndex[Any]) -> None:
    found = full.query(kind.items(ALL))
    assert [[m.id for m in matches] for matches in found] == [[i] for i in IDS]
    for matches in found:
        assert reaches(matches[0], kind.strict)
    assert len(full) == NUM_ITEMS


def test_near_copies_are_found_best_first_then_by_id(kind: Kind, full: NearIndex[Any]) -> None:
    full.upsert(["twin"], kind.items([3]))  # as near as doc-03: the tie goes by id
    found = full.query(kind.near([3, 5]))
    assert [m.id for m in found[0]] == ["doc-03", "twin"]
    assert score(found[0][0]) == score(found[0][1])
    assert [m.id for m in found[1]] == ["doc-05"]
    for matches in found:
        assert [score(m) for m in matches] == sorted((score(m) for m in matches), reverse=True)
        assert all(isinstance(m, Match) and isinstance(m.id, str) for m in matches)


def test_a_match_holds_a_similarity_or_a_distance(kind: Kind, full: NearIndex[Any]) -> None:
    match = full.query(kind.items([0]))[0][0]
    fields = {"lsh": {"similarity"}, "hamming": {"similarity", "distance"},
              "vector-cosine": {"similarity"}, "vector-l2": {"distance"}}  # fmt: skip
    assert set(match.to_dict()) == {"id"} | fields[kind.name]


def test_ids_must_be_non_empty_strings_unique_in_their_batch(kind: Kind) -> None:
    with kind.make(None) as index:
        for ids in ([""], [7], ["a", "a"]):
            with pytest.raises(InputError):
                index.add(ids, kind.items([0] * len(ids)))
            with pytest.raises(InputError):
                index.upsert(ids, kind.items([0] * len(ids)))
        with pytest.raises(ParameterError, match="for 2 ids"):
            index.add(["a", "b"], kind.items([0]))
        assert len(index) == 0


def test_add_refuses_a_stored_id_and_then_adds_nothing(kind: Kind) -> None:
    with kind.make(None) as index:
        index.add(["a", "b"], kind.items([0, 1]))
        with pytest.raises(IdExistsError, match=r"1 id already in the index \('a'\)") as info:
            index.add(["c", "a"], kind.items([2, 3]))
        assert info.value.ids == ("a",)
        assert index.get("c") is None
        assert len(index) == 2
        assert [m.id for m in index.query(kind.items([0]))[0]] == ["a"]  # a is unchanged


def test_upsert_replaces_stored_ids_and_adds_new_ones(kind: Kind) -> None:
    with kind.make(None) as index:
        index.add(["a", "b"], kind.items([0, 1]))
        index.upsert(["a", "c"], kind.items([1, 2]))
        assert len(index) == 3
        assert [[m.id for m in ms] for ms in index.query(kind.items([0, 1, 2]))] == [
            [],  # nothing holds the old a any more
            ["a", "b"],
            ["c"],
        ]
        index.upsert([], kind.items([]))
        assert len(index) == 3


def test_delete_returns_the_stored_ids_once_in_order_and_ignores_the_others(
    kind: Kind, full: NearIndex[Any]
) -> None:
    assert full.delete(["doc-04", "no-such-id", "doc-01", "doc-04"]) == ["doc-04", "doc-01"]
    assert full.delete(["doc-04"]) == []
    assert full.get("doc-04") is None
    assert len(full) == NUM_ITEMS - 2
    found = full.query(kind.items(ALL))
    assert [m.id for ms in found for m in ms] == [i for i in IDS if i not in ("doc-01", "doc-04")]
    full.add(["doc-04"], kind.items([4]))  # a deleted id is free again
    assert [m.id for m in full.query(kind.items([4]))[0]] == ["doc-04"]


def test_get_gives_a_record_of_the_id_or_none(kind: Kind, full: NearIndex[Any]) -> None:
    assert full.get("no-such-id") is None
    record = full.get("doc-07")
    assert record is not None
    assert record.id == "doc-07"
    described = record.to_dict()
    assert described["id"] == "doc-07"
    json.dumps(described)


def test_threshold_keeps_what_reaches_it_and_k_keeps_the_best(
    kind: Kind, full: NearIndex[Any]
) -> None:
    queries = kind.near(ALL)
    default = full.query(queries)
    strict = full.query(queries, threshold=kind.strict)
    for loose, tight in zip(default, strict, strict=True):
        assert all(reaches(m, kind.strict) for m in tight)
        assert tight == [m for m in loose if reaches(m, kind.strict)]
    # k alone: the k best of the candidates, whatever their measure.
    unbounded = full.query(queries, k=NUM_ITEMS)
    best = full.query(queries, k=1)
    for loose, every, one in zip(default, unbounded, best, strict=True):
        assert {m.id for m in loose} <= {m.id for m in every}
        assert one == every[:1]
        assert one[0] == loose[0]
    # Both: what reaches the threshold, at most k.
    assert full.query(queries, threshold=kind.strict, k=1) == [m[:1] for m in strict]
    for k in (0, -1, True, 1.5, "2"):
        with pytest.raises(ParameterError, match="k must be"):
            full.query(queries, k=k)


def test_info_says_the_count_the_measure_and_how_it_was_made(
    kind: Kind, full: NearIndex[Any]
) -> None:
    info = full.info()
    assert info["documents"] == NUM_ITEMS == len(full)
    assert info["measure"] == {"lsh": "jaccard", "hamming": "cosine"}.get(kind.name, kind.name[7:])
    assert isinstance(info["header"], dict)
    json.dumps(info)


def test_a_closed_index_refuses_every_call_but_close(kind: Kind) -> None:
    with kind.make(None) as index:
        index.add(["a"], kind.items([0]))
    calls: list[Callable[[], object]] = [
        lambda: index.add(["b"], kind.items([1])),
        lambda: index.upsert(["a"], kind.items([1])),
        lambda: index.delete(["a"]),
        lambda: index.get("a"),
        lambda: index.query(kind.items([0])),
        index.info,
        lambda: len(index),
    ]
    for call in calls:
        with pytest.raises(StoreError, match="is closed: open the index again"):
            call()
    index.close()  # closing again is harmless


def test_what_is_stored_survives_its_file(kind: Kind, tmp_path: Path) -> None:
    path = tmp_path / "index.ndx"
    index = kind.make(path)
    index.add(IDS[:12], kind.items(ALL[:12]))
    index.upsert(["doc-00", "extra"], kind.items([15, 16]))
    index.delete(["doc-05"])
    queries = kind.near(ALL)
    before = index.query(queries)
    info = index.info()
    records = {i: index.get(i) for i in [*IDS, "extra"]}
    with kind.reopen(index, path) as again:
        assert again.query(queries) == before
        assert len(again) == 12
        assert again.info()["header"] == info["header"]
        for doc_id, record in records.items():
            stored = again.get(doc_id)
            assert (stored is None) == (record is None)
            if stored is not None and record is not None:
                assert json.dumps(stored.to_dict()) == json.dumps(record.to_dict())
        again.add(["later"], kind.items([19]))  # and it takes more
        assert [m.id for m in again.query(kind.items([19]))[0]] == ["later"]
