"""Weighted SimHash against a plain-Python reference, and its relation to cosine similarity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup import ShingleSpec, SketchSpec
from neardup.compare import compare
from neardup.sketch.simhash import SimHasher, hamming_distance
from neardup.sketch.weighted import IDFWeights
from tests import reference
from tests.strategies import words_texts

SPEC = SketchSpec(shingle=ShingleSpec(k=2), seed=5)


def _reference(text: str, hasher: SimHasher, idf: dict[int, float] | None = None) -> tuple:
    key = hasher.key.tolist()
    weights = [0.0] * 64
    for x in reference.shingle_fingerprints(text, SPEC.shingle):
        w = 1.0 if idf is None else idf.get(x, float(np.log(hasher.idf.num_docs_ + 1)))
        h = reference.fmix64(((x ^ key[0]) * key[1]) & reference.MASK)
        for j in range(64):
            weights[j] += w if h >> j & 1 else -w
    return sum(1 << j for j in range(64) if weights[j] > 0), weights


@given(st.lists(words_texts, min_size=1, max_size=4))
def test_fingerprints_and_bit_weights_equal_the_reference(texts: list[str]) -> None:
    hasher = SimHasher(SPEC)
    got = hasher.sketch(texts, keep_bit_weights=True)
    assert got.bit_weights is not None
    for d, text in enumerate(texts):
        fingerprint, weights = _reference(text, hasher)
        assert int(got.values[d]) == fingerprint
        assert np.allclose(got.bit_weights[d], weights)


def test_tf_idf_weights_equal_the_reference(licenses: list[dict[str, object]]) -> None:
    texts = [str(r["text"]) for r in licenses[:30]]
    idf = IDFWeights(SPEC).fit(texts[:20])
    hasher = SimHasher(SPEC, idf)
    got = hasher.sketch(texts[15:])
    table = dict(zip(idf.features_.tolist(), idf.idf_.tolist(), strict=True))
    for d, text in enumerate(texts[15:]):
        assert int(got.values[d]) == _reference(text, hasher, table)[0]


def test_distance_tracks_the_angle_of_the_count_vectors(licences_by_id: list[str]) -> None:
    # Charikar: P(bit differs) = angle / pi, so distance ~ Binomial(64, theta / pi). The signs
    # here are hash bits (Rademacher, not Gaussian, projections): allow one bit of bias.
    spec = SketchSpec(shingle=ShingleSpec(k=1))
    texts = [t for t in licences_by_id if len(t.split()) > 300][:81]
    errors = []
    for seed in range(5):
        values = SimHasher(SketchSpec(shingle=spec.shingle, seed=seed)).sketch(texts).values
        for i in range(0, 80, 2):
            angle = np.arccos(min(compare(texts[i], texts[i + 1], spec).cosine, 1.0))
            expected = 64 * angle / np.pi
            errors.append(int(hamming_distance(values[i], values[i + 1])) - expected)
    assert abs(np.mean(errors)) <= 1.0
    assert np.std(errors) <= 4.5  # a Binomial(64, p) has standard deviation <= 4


@pytest.fixture
def licences_by_id(licenses: list[dict[str, object]]) -> list[str]:
    """Licence texts sorted by id, so that variants sit side by side."""
    return [str(r["text"]) for r in sorted(licenses, key=lambda r: str(r["id"]))]
