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
    FeaturePreset,
    acceptance_features,
    acceptance_full,
    supershingles,
)

RHO = np.linspace(0.0, 1.0, 10001)


@pytest.mark.parametrize(
    ("name", "groups", "size", "shared", "bits"),
    [
        # Seed 003: "Sketch size t = 84, divided into k = 6 groups of s = 14 samples",
        # "8 bytes fingerprints", "Threshold r = 2".
        ("altavista", 6, 14, 2, 64),
        # Seed 003: "Variant: 200 samples, divided into 8 groups of 25. Threshold r = 1."
        ("altavista-variant", 8, 25, 1, 64),
        # Seed 000: "For Bing, we shortened the 14 down to about 5, and lengthened the 2 to 4"
        # (the number of groups, six, is kept).
        ("bing", 6, 5, 4, 64),
        # Seed 003, "8 bytes are enough!": "threshold = 3 common bytes out of 8"; "On a large
        # scale we can use 7 out of 8 bytes".
        ("8bytes-small", 8, 1, 3, 8),
        ("8bytes-large", 8, 1, 7, 8),
    ],
)
def test_presets_are_the_seeds_numbers(
    name: str, groups: int, size: int, shared: int, bits: int
) -> None:
    assert PRESETS[name] == FeaturePreset(groups, size, shared, bits)


def test_preset_sizes_the_seeds_state() -> None:
    altavista, bing = PRESETS["altavista"], PRESETS["bing"]
    assert altavista.num_samples == 84  # seed 003: "Sketch size t = 84"
    assert PRESETS["altavista-variant"].num_samples == 200  # seed 003: "Variant: 200 samples"
    # Seed 003: "8 bytes fingerprints -> store 6 x 8 = 48 bytes/document".
    assert altavista.num_groups * altavista.feature_bits // 8 == 48
    # Seed 000: "if s is 6, s Choose 2 is only 15, so we can find items which match at least 2
    # runs with just 15 lookups"
    assert math.comb(altavista.num_groups, 2) == 15
    # Seed 000: Bing's change allows "a further space reduction": fewer samples, no more bytes.
    assert bing.num_samples < altavista.num_samples
    assert bing.num_groups * bing.feature_bits <= altavista.num_groups * altavista.feature_bits


@pytest.mark.parametrize("name", ["altavista", "altavista-variant", "bing"])
def test_acceptance_is_seed_003s_feature_polynomial(name: str) -> None:
    # Seed 003, "Using features": P = sum_{i=r}^{k} C(k, i) rho^(s i) (1 - rho^s)^(k - i).
    # neardup adds the chance agreement of 64-bit features (2^-64 each), which the seed leaves
    # out: at most 8 * 2^-64 < 1e-18 more, and a relative 2e-12 at rho = 0.3.
    preset = PRESETS[name]
    k, s, r = preset.num_groups, preset.group_size, preset.min_shared
    for rho in (0.0, 0.3, 0.75, 0.8, 0.9, 0.95, 0.99, 1.0):
        seed = sum(
            math.comb(k, i) * rho ** (s * i) * (1 - rho**s) ** (k - i) for i in range(r, k + 1)
        )
        assert float(acceptance_features(rho, preset)) == pytest.approx(seed, rel=1e-9, abs=1e-18)
    assert float(acceptance_features(0.9, PRESETS["altavista"])) == pytest.approx(0.41505, abs=1e-5)


def test_acceptance_full_is_seed_003s_full_sketch_polynomial() -> None:
    # Seed 003, "Using the full sketch": P = sum_{i >= threshold}^{k s} C(k s, i) rho^i
    # (1 - rho)^(k s - i); at least 76 of 84 agreeing, and at least 1 of 2.
    for rho in (0.5, 0.9, 0.95):
        seed = sum(math.comb(84, i) * rho**i * (1 - rho) ** (84 - i) for i in range(76, 85))
        assert float(acceptance_full(rho, 84, 76)) == pytest.approx(seed, rel=1e-12)
    assert float(acceptance_full(0.5, 2, 1)) == 0.75


def test_seed_000s_numbers_for_altavista() -> None:
    one_group = FeaturePreset(num_groups=1, group_size=14, min_shared=1)
    # "If p is on the order of 0.95, then p^14 is around 0.5; if p is closer to 0.9, p^14 is
    # around 0.2" (to the one digit the seed gives).
    assert round(float(acceptance_features(0.95, one_group)), 1) == 0.5
    assert round(float(acceptance_features(0.9, one_group)), 1) == 0.2
    # "the probability of two or more groups is 1-(1-p^k)^s - s(1-p^k)^(s-1) p^k" (seed 000
    # names the group size k and the number of groups s).
    altavista = PRESETS["altavista"]
    p, s = RHO**altavista.group_size, altavista.num_groups
    seed = 1 - (1 - p) ** s - s * (1 - p) ** (s - 1) * p
    assert np.allclose(acceptance_features(RHO, altavista), seed, rtol=0, atol=1e-12)
    # "effective at identifying only things which are at least 0.75 similar, and not missing
    # much which is 0.95 or more similar": the seed gives no number; read as under 1% accepted
    # below 0.75 and under 15% missed from 0.95 (the curve: 0.45% and 12%).
    assert float(acceptance_features(0.75, altavista)) < 0.01
    assert float(acceptance_features(0.95, altavista)) > 0.85


def _resemblance_at(level: float, preset: FeaturePreset) -> float:
    """The resemblance whose acceptance is ``level`` (acceptance rises with rho): bisection."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if float(acceptance_features(mid, preset)) < level else (lo, mid)
    return lo


def _max_gap(a: FeaturePreset, b: FeaturePreset) -> float:
    return float(np.max(np.abs(acceptance_features(RHO, a) - acceptance_features(RHO, b))))


def test_bing_has_roughly_the_quality_of_altavista() -> None:
    # Seed 000: Bing's 6 x 5, >= 4 gives "roughly the same quality" as AltaVista's 6 x 14, >= 2.
    # Read as the same filter to within 0.02 of resemblance: (1) both accept half the pairs at
    # resemblances within 0.02 of each other (0.909 and 0.896); (2) the acceptance curves are
    # nowhere further apart than AltaVista's curve is from itself moved by 0.02 along rho,
    # max |A(rho) - A(rho - 0.02)| = 0.197 (0.02 times its steepest slope, about 10), while the
    # largest gap is 0.135, at rho = 0.87.
    altavista, bing = PRESETS["altavista"], PRESETS["bing"]
    assert abs(_resemblance_at(0.5, bing) - _resemblance_at(0.5, altavista)) <= 0.02
    curve = acceptance_features(RHO, altavista)
    shifted = acceptance_features(np.clip(RHO - 0.02, 0.0, 1.0), altavista)
    bound = float(np.max(np.abs(curve - shifted)))
    assert _max_gap(bing, altavista) <= bound
    # Keeping AltaVista's six groups is what makes it so: of 1 to 30 groups of 5 samples with 4
    # matching, six is the count closest to AltaVista's curve, and 25 (the former preset) is
    # nowhere near it.
    gaps = {k: _max_gap(FeaturePreset(k, 5, 4), altavista) for k in range(4, 31)}
    assert min(gaps, key=gaps.__getitem__) == 6
    assert gaps[25] > bound


def test_seed_003s_8_bytes_presets() -> None:
    # "threshold = 3 common bytes out of 8": one-byte features agree by chance (1/256), so 3 of
    # 8 accepts ~5.6e-5 of unrelated pairs ("Works only on small scale"); 7 of 8 almost none.
    small, large = PRESETS["8bytes-small"], PRESETS["8bytes-large"]
    assert float(acceptance_features(0.0, small)) == pytest.approx(
        sum(math.comb(8, i) * (1 / 256) ** i * (255 / 256) ** (8 - i) for i in range(3, 9))
    )
    assert float(acceptance_features(0.0, large)) < 1e-14

    # "Filter is not so sharp": 7 of 8 rises from 10% to 90% acceptance over a wider range of
    # resemblance than AltaVista's 84-sample filter (0.34 against 0.11).
    def width(preset: FeaturePreset) -> float:
        return _resemblance_at(0.9, preset) - _resemblance_at(0.1, preset)

    assert width(large) > 2 * width(PRESETS["altavista"])
    # Every preset rejects dissimilar pairs and accepts near-copies of real filters.
    for name in ("altavista", "altavista-variant", "bing"):
        assert float(acceptance_features(0.5, PRESETS[name])) < 1e-2
        assert float(acceptance_features(0.99, PRESETS[name])) > 0.95


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
