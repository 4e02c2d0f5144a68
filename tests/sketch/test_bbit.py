"""b-bit MinHash: packing equals the reference, estimates are unbiased on real text pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neardup import (
    CandidatePairs,
    OPHSketcher,
    ParameterError,
    SketchSpec,
    band_keys,
    candidate_pairs,
    make_sketcher,
)
from neardup.sketch.bbit import _BBIT_KEY, bbit_estimate, chance_agreement, pack_bbit
from tests import reference
from tests.conftest import NUM_PERM

WIDTHS = [1, 2, 4, 8]


@pytest.mark.parametrize("num_bits", WIDTHS)
def test_codes_are_the_documented_bits_of_each_winner(num_bits: int) -> None:
    sigs = OPHSketcher(SketchSpec(num_perm=37)).sketch(
        ["one two three four five six seven", "a b c d e f g h i"]
    )
    packed = pack_bbit(sigs, num_bits)
    assert packed.bytes_per_document == math.ceil(37 * num_bits / 8)
    expected = [
        [reference.fmix64(int(v) ^ int(_BBIT_KEY)) & ((1 << num_bits) - 1) for v in row]
        for row in sigs.values.tolist()
    ]
    assert packed.codes().tolist() == expected
    pairs = CandidatePairs(first=np.array([0]), second=np.array([1]))
    matches = sum(a == b for a, b in zip(*expected, strict=True))
    chance = chance_agreement(num_bits)
    raw = (matches / 37 - chance) / (1 - chance)
    assert bbit_estimate(packed, pairs, unbiased=True)[0] == pytest.approx(raw)
    assert bbit_estimate(packed, pairs)[0] == pytest.approx(max(raw, 0.0))


def test_only_widths_that_divide_a_byte() -> None:
    with pytest.raises(ParameterError, match=r"num_bits must be one of \(1, 2, 4, 8\)"):
        pack_bbit(OPHSketcher().sketch(["a b c d e f"]), 3)


@pytest.mark.parametrize("num_bits", WIDTHS)
def test_bbit_estimates_are_unbiased_with_the_theoretical_spread(
    num_bits: int,
    licence_pairs: list[tuple[str, str, float]],
) -> None:
    texts = [t for a, b, _ in licence_pairs for t in (a, b)]
    first = np.arange(0, len(texts), 2, dtype=np.int64)
    pairs = CandidatePairs(first=first, second=first + 1)
    seeds = 150
    runs = np.stack(
        [
            bbit_estimate(
                pack_bbit(make_sketcher(SketchSpec(seed=s)).sketch(texts), num_bits),
                pairs,
                unbiased=True,
            )
            for s in range(seeds)
        ]
    )
    exact = np.array([j for _, _, j in licence_pairs])
    chance = chance_agreement(num_bits)
    agree = chance + (1 - chance) * exact
    sigma = np.sqrt(agree * (1 - agree) / NUM_PERM) / (1 - chance)
    error = runs.mean(axis=0) - exact
    # Each pair within 4 standard errors (30 pairs tested at once); the pooled error within 3.
    assert np.all(np.abs(error) <= 4 * sigma / math.sqrt(seeds)), error / (sigma / math.sqrt(seeds))
    pooled = math.sqrt(float(np.sum(sigma**2))) / len(exact) / math.sqrt(seeds)
    assert abs(float(error.mean())) <= 3 * pooled
    # Spread: the mean over 30 pairs of each pair's sample variance (150 seeds) over sigma^2
    # has standard deviation sqrt(2 / 149 / 30) = 0.021. Codes of OPH winners agree like
    # OPH's slots, sampled without replacement: at most 1 + 4 * 0.021 = 1.085; OPH itself
    # measures 0.92 (tests/stats/test_estimators.py), less 4 * 0.021 is 0.84: at least 0.8.
    ratio = float(np.mean(runs.var(axis=0, ddof=1) / sigma**2))
    assert 0.8 <= ratio <= 1 + 4 * math.sqrt(2 / (seeds - 1) / len(exact)), ratio


def test_lsh_over_packed_codes_finds_the_near_copy(licenses: list[dict[str, object]]) -> None:
    texts = [str(r["text"]) for r in licenses[:300]]
    texts.append(texts[10] + " with one more sentence at the very end of it")
    packed = pack_bbit(OPHSketcher().sketch(texts), 8)
    pairs = candidate_pairs(band_keys(packed.codes(), 16, 8))
    assert (10, 300) in set(zip(pairs.first.tolist(), pairs.second.tolist(), strict=True))
