"""Weighted SimHash against seed 004's text (tests/reference.py), its sign rule (W_j >= 0) and the
refusal of files made by the old one, and its relation to cosine similarity."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from neardup import ShingleSpec, SketchSpec
from neardup.compare import compare
from neardup.errors import IncompatibleError, ParameterError
from neardup.hamming import HammingIndex
from neardup.params import Projection
from neardup.sketch import IDFWeights, make_sketcher
from neardup.sketch.simhash import SimHasher, estimate_cosine, hamming_distance
from tests import reference
from tests.strategies import words_texts

SPEC = SketchSpec(kind="simhash", shingle=ShingleSpec(k=2), seed=5)


def _reference(
    text: str, hasher: SimHasher, idf: dict[int, float] | None = None
) -> tuple[list[int], list[float]]:
    """Seed 004's SimHash of ``text`` (tests/reference.py), with the hasher's random keys."""
    spec = hasher.spec
    missing = hasher.idf.missing_idf_ if hasher.idf is not None else 1.0
    features = reference.feature_weights(
        reference.shingle_fingerprints(text, spec.shingle), idf, missing
    )
    return reference.simhash(
        features, hasher.keys.tolist(), spec.simhash_bits, gaussian=spec.projection == "gaussian"
    )


@pytest.mark.parametrize("changes", [{}, {"simhash_bits": 128}, {"projection": "sign"}], ids=str)
@settings(max_examples=25, deadline=None)
@given(texts=st.lists(words_texts, min_size=1, max_size=4))
def test_fingerprints_and_bit_weights_equal_the_reference(
    changes: dict[str, object], texts: list[str]
) -> None:
    hasher = SimHasher(SketchSpec.from_dict({**SPEC.to_dict(), **changes}))
    signatures, bit_weights = hasher.sketch_with_bit_weights(texts)
    assert np.array_equal(hasher.sketch(texts).values, signatures.values)
    for d, text in enumerate(texts):
        values, weights = _reference(text, hasher)
        assert signatures.values[d].tolist() == values
        assert np.allclose(bit_weights[d], weights)


def _bits(words: np.ndarray) -> np.ndarray:
    """Bit ``64 m + j`` of a fingerprint: bit ``j`` of its word ``m``."""
    return ((words[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)).ravel()


def test_a_bit_whose_weight_is_exactly_zero_is_set() -> None:
    # Seed 004, Algorithm 1: "bits of simhash with non-negative W_j are set to 1". Two features
    # of weight 1 give W_j = 0 exactly where their hash bits differ, so a document of the two
    # has the OR of the two one-feature fingerprints (a rule of W_j > 0 gives their AND).
    spec = SketchSpec(kind="simhash", shingle=ShingleSpec(k=1), projection="sign", seed=3)
    hasher = SimHasher(spec)
    texts = ["alpha", "beta", "alpha beta", "beta alpha alpha beta"]
    signatures, weights = hasher.sketch_with_bit_weights(texts)
    alpha, beta, both, twice = signatures.values
    assert int(np.bitwise_count(alpha ^ beta).sum()) > 10  # there are such bits
    assert np.array_equal(both, alpha | beta)
    assert np.array_equal(twice, alpha | beta)
    assert np.array_equal(weights[2] == 0, _bits(alpha ^ beta) == 1)
    assert _reference("alpha beta", hasher)[0] == (alpha | beta).tolist()


@pytest.mark.parametrize("projection", ["sign", "gaussian"])
def test_a_document_without_a_shingle_is_all_ones(projection: str) -> None:
    # No feature: every W_j is 0, so every bit is 1 (the empty text, and one word with k = 2).
    hasher = SimHasher(SketchSpec.from_dict({**SPEC.to_dict(), "projection": projection}))
    signatures, weights = hasher.sketch_with_bit_weights(["", "word"])
    assert signatures.values.tolist() == [[2**64 - 1]] * 2
    assert not weights.any()
    assert _reference("", hasher)[0] == [2**64 - 1]


def test_an_index_saved_under_the_old_sign_rule_is_refused(tmp_path: Path) -> None:
    # Files written before the seed's rule (W_j >= 0) have no "sketch_scheme" in their
    # provenance: their fingerprints differ wherever some W_j was 0, so they must be rebuilt.
    index = HammingIndex(SPEC)
    index.add(["a", "b"], ["the cat sat on the mat", "a dog barked at the moon"])
    path = tmp_path / "index.npz"
    index.save(path)
    assert HammingIndex.load(path).info() == index.info()
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    header = json.loads(str(arrays["parameters"]))
    assert header["provenance"]["sketch_scheme"] == "simhash-v2"
    del header["provenance"]["sketch_scheme"]
    np.savez(path, **{**arrays, "parameters": np.array(json.dumps(header))})
    with pytest.raises(IncompatibleError, match=r"sketch_scheme \(None != 'simhash-v2'\).*rebuild"):
        HammingIndex.load(path)


def test_tf_idf_weights_equal_the_reference(licenses: list[dict[str, object]]) -> None:
    texts = [str(r["text"]) for r in licenses[:30]]
    spec = SketchSpec.from_dict({**SPEC.to_dict(), "weighting": "tfidf"})
    idf = IDFWeights(spec).fit(texts[:20])
    hasher = SimHasher(spec, idf)
    got = hasher.sketch(texts[15:])
    table = dict(zip(idf.features_.tolist(), idf.idf_.tolist(), strict=True))
    for d, text in enumerate(texts[15:]):
        assert got.values[d].tolist() == _reference(text, hasher, table)[0]


def test_idf_learned_in_batches_equals_idf_learned_at_once(
    licenses: list[dict[str, object]],
) -> None:
    texts = [str(r["text"]) for r in licenses[:50]]
    whole = IDFWeights(SPEC).fit(texts)
    batched = IDFWeights(SPEC).fit_batches([texts[:7], texts[7:30], texts[30:]])
    assert np.array_equal(whole.features_, batched.features_)
    assert np.array_equal(whole.idf_, batched.idf_)
    assert whole.describe() == batched.describe()
    assert IDFWeights(SPEC).fit(texts[:49]).describe()["sha256"] != whole.describe()["sha256"]


def test_weighting_and_idf_must_agree() -> None:
    with pytest.raises(ParameterError, match="needs a fitted IDFWeights"):
        SimHasher(SketchSpec.from_dict({**SPEC.to_dict(), "weighting": "tfidf"}))
    with pytest.raises(ParameterError, match="needs a fitted IDFWeights"):
        SimHasher(SPEC, IDFWeights(SPEC).fit(["a b c"]))
    with pytest.raises(ParameterError, match="used by simhash, canonical only"):
        make_sketcher(SketchSpec(), IDFWeights(SPEC).fit(["a b c"]))


@pytest.mark.parametrize(("projection", "bias"), [("sign", 1.0), ("gaussian", 0.75)])
def test_distance_tracks_the_angle_of_the_count_vectors(
    licences_by_id: list[str], projection: Projection, bias: float
) -> None:
    # Charikar: P(bit differs) = angle / pi, so distance ~ Binomial(64, theta / pi). Gaussian
    # hyperplanes make that exact (mean error over 30 seeds: standard error about 0.25 bits);
    # hash signs (Rademacher projections) are allowed one bit.
    spec = SketchSpec(kind="simhash", shingle=ShingleSpec(k=1), projection=projection)
    texts = [t for t in licences_by_id if len(t.split()) > 300][:81]
    angles = np.array([
        np.arccos(min(compare(texts[i], texts[i + 1], spec).cosine, 1.0)) for i in range(0, 80, 2)
    ])  # fmt: skip
    errors = []
    for seed in range(30):
        values = SimHasher(SketchSpec.from_dict({**spec.to_dict(), "seed": seed})).sketch(texts)
        distance = reference.hamming(values.values[0:80:2], values.values[1:81:2])
        errors.append(distance - 64 * angles / np.pi)
    assert abs(np.mean(errors)) <= bias
    assert np.std(errors) <= 4.5  # a Binomial(64, p) has standard deviation <= 4


@settings(max_examples=30, deadline=None)
@given(
    rows=hnp.arrays(
        np.uint64,
        st.tuples(st.integers(0, 6), st.sampled_from([1, 2])),
        elements=st.integers(0, 2**64 - 1),
    )
)
def test_hamming_distance_equals_the_reference(rows: np.ndarray) -> None:
    other = rows[::-1].copy()
    assert hamming_distance(rows, other).tolist() == reference.hamming(rows, other).tolist()
    assert hamming_distance(rows, rows).tolist() == [0] * rows.shape[0]


def test_estimate_cosine_inverts_the_expected_distance() -> None:
    cosines = np.array([1.0, 0.99, 0.9, 0.5, 0.0])
    distances = 128 * np.arccos(cosines) / np.pi
    assert np.allclose(estimate_cosine(distances, 128), cosines)


@pytest.fixture
def licences_by_id(licenses: list[dict[str, object]]) -> list[str]:
    """Licence texts sorted by id, so that variants sit side by side."""
    return [str(r["text"]) for r in sorted(licenses, key=lambda r: str(r["id"]))]
