"""``dedup`` by embeddings: vectors of an encoder, cosine candidates, the same clusters."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

import neardup
from neardup import DedupConfig, EmbeddingSpec, LSHSpec
from neardup.errors import InputError, ParameterError


class TableEncoder:
    """A fixed vector per text, as a user's encoder object would give (and what it was asked)."""

    def __init__(self, table: dict[str, Sequence[float]]) -> None:
        self.table = table
        self.asked: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.asked.extend(texts)
        return np.array([self.table[text] for text in texts])


def _config(threshold: float, **rest: object) -> DedupConfig:
    return DedupConfig(embedding=EmbeddingSpec(), lsh=LSHSpec(threshold=threshold), **rest)


def test_pairs_clusters_and_vectors_of_a_users_encoder() -> None:
    """Pairs at the cosine threshold, measured exactly; each distinct text encoded once; an exact
    copy shares its group's vector and an empty text has none."""
    encoder = TableEncoder(
        {"a cat sat": [1.0, 0.1, 0.0], "a cat sits": [1.0, 0.2, 0.0], "stocks fell": [0, 0, 1.0]}
    )
    texts = ["a cat sat", "a cat sits", "stocks fell", "a cat sat", ""]
    result = neardup.dedup(texts, config=_config(0.9, pairs="all"), encoder=encoder)
    assert sorted(encoder.asked) == ["a cat sat", "a cat sits", "stocks fell"]
    assert result.clusters.labels.tolist() == [0, 0, 2, 0, 4]
    assert result.clusters.keep.tolist() == [True, False, True, False, True]
    assert (result.pairs.first.tolist(), result.pairs.second.tolist()) == ([0], [1])
    cosine = (1 + 0.02) / np.sqrt(1.01 * 1.04)
    assert result.pairs.jaccard[0] == pytest.approx(cosine, abs=1e-6)
    assert result.clusters.similarity[1] == pytest.approx(cosine, abs=1e-6)
    assert [a.tolist() for a in result.exact_pairs] == [[0], [3]]
    assert result.vectors is not None
    np.testing.assert_array_equal(result.vectors[3], result.vectors[0])
    assert not result.vectors[4].any()
    assert result.summary.measure == "cosine"


def test_every_close_pair_of_planted_vectors_is_found() -> None:
    """Against brute force on 400 random directions with 60 planted near copies: no pair below
    the threshold, and every pair at cosine 0.97 or more found (the bands are chosen for recall
    0.95 at the threshold 0.9; a pair that near is found with probability above 0.999)."""
    rng = np.random.default_rng(7)
    base = rng.normal(size=(340, 48))
    copies = base[:60] + rng.normal(scale=0.12, size=(60, 48))
    vectors = np.vstack([base, copies])
    texts = [f"t{i}" for i in range(len(vectors))]
    encoder = TableEncoder(dict(zip(texts, vectors.tolist(), strict=True)))
    result = neardup.dedup(texts, config=_config(0.9, pairs="all"), encoder=encoder)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosine = unit @ unit.T
    found = set(zip(result.pairs.first.tolist(), result.pairs.second.tolist(), strict=True))
    assert all(cosine[a, b] >= 0.9 for a, b in found)
    truth = {(a, b) for a, b in combinations(range(len(texts)), 2) if cosine[a, b] >= 0.97}
    assert len(truth) >= 50
    assert truth <= found
    np.testing.assert_allclose(result.pairs.jaccard, [cosine[a, b] for a, b in sorted(found)])


def test_center_clusters_do_not_chain() -> None:
    """A ~ B ~ C with A and C apart: one component, two centre clusters (the same rule as the
    shingle methods)."""
    angle = np.deg2rad(20)  # cos 20° = 0.94 between neighbours; 40° = 0.77 from A to C
    table = {f"d{i}": [np.cos(i * angle), np.sin(i * angle)] for i in range(3)}
    chained = neardup.dedup(list(table), config=_config(0.9), encoder=TableEncoder(table))
    assert chained.clusters.labels.tolist() == [0, 0, 0]
    centred = neardup.dedup(
        list(table), config=_config(0.9, cluster="center"), encoder=TableEncoder(table)
    )
    assert centred.clusters.labels.tolist() == [0, 0, 2]


def test_what_the_method_refuses() -> None:
    """Each refusal names what to drop or add."""
    with pytest.raises(ParameterError, match="needs a model"):
        neardup.dedup(["a b"], config=DedupConfig(embedding=EmbeddingSpec()))
    with pytest.raises(ParameterError, match=r"config\.embedding is None"):
        neardup.dedup(["a b"], encoder=TableEncoder({}))
    with pytest.raises(ParameterError, match="cosine exactly"):
        DedupConfig(embedding=EmbeddingSpec(), verify="signature")
    with pytest.raises(ParameterError, match="containment"):
        DedupConfig(embedding=EmbeddingSpec(), lsh=LSHSpec(family="containment"), keep="longest")
    with pytest.raises(ParameterError, match="must return one numeric row per text"):
        neardup.dedup(["a b", "c d"], config=_config(0.9), encoder=OneRowEncoder())


class OneRowEncoder:
    """An encoder that gives one row whatever it is asked."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.ones((1, 4))


def _word_shingles(text: str, k: int = 5) -> set[tuple[str, ...]]:
    words = text.split()
    return {tuple(words[i : i + k]) for i in range(len(words) - k + 1)}


def test_either_measure_joins_and_each_pair_says_which() -> None:
    """``minhash+embedding`` against brute force: base texts of random words, word-level edits
    (shingle copies whose vectors are far apart) and rewrites (other words, planted vectors near
    their base's). Every reported pair reaches a threshold, its Jaccard is the word 5-shingles'
    and its cosine the vectors'; ``found_by`` says which reached; every clear pair is found."""
    rng = np.random.default_rng(11)
    vocabulary = [f"w{i}" for i in range(3000)]
    base = [" ".join(rng.choice(vocabulary, size=40)) for _ in range(80)]
    edited = [" ".join([*text.split()[:-1], "changed"]) for text in base[:20]]  # Jaccard 35/37
    rewritten = [" ".join(rng.choice(vocabulary, size=40)) for _ in range(20)]
    texts = base + edited + rewritten
    vectors = rng.normal(size=(len(texts), 32))
    vectors[100:120] = vectors[20:40] + rng.normal(scale=0.1, size=(20, 32))  # rewrites of 20..39
    vectors[15:20] = vectors[95:100] + rng.normal(scale=0.1, size=(5, 32))  # edited and close too
    encoder = TableEncoder(dict(zip(texts, vectors.tolist(), strict=True)))
    config = DedupConfig(embedding=EmbeddingSpec(with_shingles=True), pairs="all")
    result = neardup.dedup(texts, config=config, encoder=encoder)

    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosine = unit @ unit.T
    sets = [_word_shingles(text) for text in texts]

    def jaccard(a: int, b: int) -> float:
        return len(sets[a] & sets[b]) / len(sets[a] | sets[b])

    pairs = result.pairs
    assert pairs.cosine is not None
    found = list(zip(pairs.first.tolist(), pairs.second.tolist(), strict=True))
    assert len(set(found)) == len(found)  # no pair twice
    np.testing.assert_allclose(pairs.jaccard, [jaccard(a, b) for a, b in found])
    np.testing.assert_allclose(pairs.cosine, [cosine[a, b] for a, b in found], atol=1e-6)
    by = [("shingles", "embedding", "both")[code] for code in pairs.found_by(config).tolist()]
    truth = {
        (a, b): (jaccard(a, b) >= 0.8, cosine[a, b] >= 0.9)
        for a, b in combinations(range(len(texts)), 2)
    }
    expected_by = {(True, False): "shingles", (False, True): "embedding", (True, True): "both"}
    assert dict(zip(found, by, strict=True)) == {pair: expected_by[truth[pair]] for pair in found}
    clear = {(a, b) for (a, b), _ in truth.items() if jaccard(a, b) >= 0.9 or cosine[a, b] >= 0.97}
    assert len(clear) >= 35
    assert clear <= set(found)
    assert sorted(set(by)) == ["both", "embedding", "shingles"]
    assert result.summary.measure == "jaccard"
    labels = result.clusters.labels
    assert result.clusters.cosine is not None
    np.testing.assert_allclose(
        result.clusters.cosine[100:120], cosine[100:120, 20:40].diagonal(), atol=1e-6
    )
    assert labels[100:120].tolist() == list(range(20, 40))
    assert labels[80:100].tolist() == list(range(20))


def test_what_the_combined_mode_refuses() -> None:
    """Two measures: no centre clusters, no signature-only verification, a Jaccard sketch."""
    with pytest.raises(ParameterError, match="--cluster center"):
        DedupConfig(embedding=EmbeddingSpec(with_shingles=True), cluster="center")
    with pytest.raises(ParameterError, match="Jaccard and cosine exactly"):
        DedupConfig(embedding=EmbeddingSpec(with_shingles=True), verify="none")
    with pytest.raises(ParameterError, match="measures cosine"):
        DedupConfig(
            embedding=EmbeddingSpec(with_shingles=True), sketch=neardup.SketchSpec(kind="simhash")
        )
    with pytest.raises(ParameterError, match="cosine_threshold applies with shingles"):
        EmbeddingSpec(cosine_threshold=0.8)


def test_vectors_made_elsewhere_come_by_id_from_a_parquet_table(tmp_path: Path) -> None:
    """Rows in any order, extra ids aside: the same run as with the encoder; a missing or
    repeated id, a missing column and ragged vectors are refused, naming what."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = ["a cat sat", "a cat sits", "stocks fell", "a cat sat", "bread rises"]
    table = {
        "a cat sat": [1.0, 0.1, 0.0],
        "a cat sits": [1.0, 0.2, 0.0],
        "stocks fell": [0.0, 0.0, 1.0],
        "bread rises": [0.0, 1.0, 0.1],
    }
    ids = [f"d{i}" for i in range(len(texts))]
    config = _config(0.9, pairs="all")
    expected = neardup.dedup(texts, ids, config, encoder=TableEncoder(table))
    order = [4, 2, 0, 3, 1]
    path = tmp_path / "vectors.parquet"
    rows = {
        "id": [ids[i] for i in order] + ["other"],
        "embedding": [table[texts[i]] for i in order] + [[9.0, 9.0, 9.0]],
    }
    pq.write_table(pa.table(rows), path)
    given = DedupConfig(
        embedding=EmbeddingSpec(embeddings=str(path)), lsh=LSHSpec(threshold=0.9), pairs="all"
    )
    result = neardup.dedup(texts, ids, given)
    np.testing.assert_array_equal(result.clusters.labels, expected.clusters.labels)
    np.testing.assert_array_equal(result.pairs.first, expected.pairs.first)
    np.testing.assert_allclose(result.pairs.jaccard, expected.pairs.jaccard)
    broken = {
        "missing": ({"id": ids[:4], "embedding": [table[t] for t in texts[:4]]}, "no vector for 1"),
        "twice": (
            {"id": [*ids, "d0"], "embedding": [table[t] for t in [*texts, texts[0]]]},
            "'d0' has more than one row",
        ),
        "column": ({"id": ids, "vector": [table[t] for t in texts]}, "no column 'embedding'"),
        "ragged": (
            {"id": ids, "embedding": [table[t][: 2 + (i % 2)] for i, t in enumerate(texts)]},
            "one length",
        ),
    }
    for name, (columns, message) in broken.items():
        bad = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table(columns), bad)
        spec = EmbeddingSpec(embeddings=str(bad))
        with pytest.raises(InputError, match=message):
            neardup.dedup(texts, ids, DedupConfig(embedding=spec, lsh=LSHSpec(threshold=0.9)))
