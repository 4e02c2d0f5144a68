"""Supershingles and megashingles: fungible pairs equal brute force; seed 003's acceptance
probabilities match what real documents do."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from neardup import SketchSpec, make_sketcher
from neardup.lsh.features import fungible_pairs
from neardup.sketch.features import (
    PRESETS,
    acceptance_features,
    acceptance_full,
    supershingles,
)


def test_seed_003_formulas_golden() -> None:
    # AltaVista: k = 6 groups of s = 14, r = 2; p = rho^14 per feature.
    p = 0.9**14
    expected = sum(math.comb(6, i) * p**i * (1 - p) ** (6 - i) for i in range(2, 7))
    assert float(acceptance_features(0.9, PRESETS["altavista"])) == pytest.approx(expected)
    assert float(acceptance_features(0.9, PRESETS["altavista"])) == pytest.approx(0.41505, abs=1e-5)
    assert float(acceptance_full(0.5, 2, 1)) == 0.75
    assert float(acceptance_features(1.0, PRESETS["bing"])) == 1.0
    # Both filters are sharp around rho near 0.9 and reject dissimilar pairs.
    for preset in ("altavista", "altavista-variant", "bing"):
        assert float(acceptance_features(0.5, PRESETS[preset])) < 1e-2
        assert float(acceptance_features(0.99, PRESETS[preset])) > 0.95
    # "8 bytes are enough": one-byte features collide by chance, 3 of 8 accepts ~5.6e-5 of
    # unrelated pairs, 7 of 8 almost none.
    assert float(acceptance_features(0.0, PRESETS["8bytes-small"])) == pytest.approx(
        sum(math.comb(8, i) * (1 / 256) ** i * (255 / 256) ** (8 - i) for i in range(3, 9))
    )
    assert float(acceptance_features(0.0, PRESETS["8bytes-large"])) < 1e-14


@given(
    features=hnp.arrays(
        np.uint64, st.tuples(st.integers(2, 25), st.just(6)), elements=st.integers(0, 2)
    ),
    min_shared=st.integers(1, 6),
)
def test_fungible_pairs_equal_brute_force(features: np.ndarray, min_shared: int) -> None:
    pairs, shared = fungible_pairs(features, min_shared)
    got = dict(
        zip(
            zip(pairs.first.tolist(), pairs.second.tolist(), strict=True),
            shared.tolist(),
            strict=True,
        )
    )
    expected = {}
    for a in range(features.shape[0]):
        for b in range(a + 1, features.shape[0]):
            common = int((features[a] == features[b]).sum())
            if common >= min_shared:
                expected[(a, b)] = common
    assert got == expected


@pytest.mark.parametrize("preset", ["altavista", "altavista-variant", "bing", "8bytes-small"])
def test_acceptance_formula_matches_real_document_pairs(
    preset: str,
    licence_pairs: list[tuple[str, str, float]],
) -> None:
    # k-permutation MinHash gives independent samples, as the formula assumes.
    settings = PRESETS[preset]
    texts = [t for a, b, _ in licence_pairs for t in (a, b)]
    exact = np.array([j for _, _, j in licence_pairs])
    seeds = 60
    accepted = np.zeros(len(licence_pairs))
    for seed in range(seeds):
        sigs = make_sketcher(SketchSpec(kind="minhash", num_perm=200, seed=seed)).sketch(texts)
        features = supershingles(sigs.values, settings)
        shared = (features[0::2] == features[1::2]).sum(axis=1)
        accepted += shared >= settings.min_shared
    expected = acceptance_features(exact, settings) * seeds
    variance = float(np.sum(expected / seeds * (1 - expected / seeds) * seeds))
    assert abs(accepted.sum() - expected.sum()) <= 3 * math.sqrt(variance) + 1, (
        accepted.sum(),
        expected.sum(),
    )
