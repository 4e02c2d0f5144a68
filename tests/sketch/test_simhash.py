"""Weighted SimHash against a plain-Python reference, and its relation to cosine similarity."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from neardup import ShingleSpec, SketchSpec
from neardup.compare import compare
from neardup.errors import ParameterError
from neardup.sketch import IDFWeights, make_sketcher
from neardup.sketch.simhash import SimHasher, estimate_cosine, hamming_distance
from tests import reference
from tests.strategies import words_texts

SPEC = SketchSpec(kind="simhash", shingle=ShingleSpec(k=2), seed=5)
GOLDEN = 0x9E3779B97F4A7C15


def _gaussians(h: int) -> list[float]:
    """The 64 normals of shingle hash ``h``: 16-bit quantiles, as the kernel draws them."""
    out = []
    for m in range(16):
        r = reference.fmix64(h ^ ((m + 1) * GOLDEN & reference.MASK))
        out += [NormalDist().inv_cdf(((r >> (16 * t) & 0xFFFF) + 0.5) / 65536) for t in range(4)]
    return out


def _reference(
    text: str, hasher: SimHasher, idf: dict[int, float] | None = None
) -> tuple[list[int], list[float]]:
    """Fingerprint words and per-bit weights, one shingle occurrence at a time."""
    spec = hasher.spec
    keys = hasher.keys.tolist()
    words = spec.simhash_bits // 64
    weights = [0.0] * spec.simhash_bits
    for x in reference.shingle_fingerprints(text, spec.shingle):
        w = 1.0 if idf is None else idf.get(x, float(np.log(hasher.idf.num_docs_ + 1)))
        for word in range(words):
            h = reference.fmix64(((x ^ keys[2 * word]) * keys[2 * word + 1]) & reference.MASK)
            if spec.projection == "gaussian":
                for j, g in enumerate(_gaussians(h)):
                    weights[64 * word + j] += w * g
            else:
                for j in range(64):
                    weights[64 * word + j] += w if h >> j & 1 else -w
    values = [sum(1 << j for j in range(64) if weights[64 * word + j] > 0) for word in range(words)]
    return values, weights


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
    with pytest.raises(ParameterError, match="simhash only"):
        make_sketcher(SketchSpec(), IDFWeights(SPEC).fit(["a b c"]))


@pytest.mark.parametrize(("projection", "bias"), [("sign", 1.0), ("gaussian", 0.75)])
def test_distance_tracks_the_angle_of_the_count_vectors(
    licences_by_id: list[str], projection: str, bias: float
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
    assert np.allclose(estimate_cosine(distances, 128), cosines)  # type: ignore[arg-type]


@pytest.fixture
def licences_by_id(licenses: list[dict[str, object]]) -> list[str]:
    """Licence texts sorted by id, so that variants sit side by side."""
    return [str(r["text"]) for r in sorted(licenses, key=lambda r: str(r["id"]))]
