"""Broder's feature filter: supershingles, megashingles, and their acceptance probabilities.

A MinHash sketch of ``t = k * s`` samples is cut into ``k`` groups of ``s`` samples; each group
is fingerprinted into a *feature* (a supershingle). Two documents are *fungible* when they share
at least ``r`` features: with ``r = 1`` candidates come from one lookup per feature, with
``r >= 2`` from the C(k, 2) *megashingles* (hashes of feature pairs). Seed 003 ("the filtering
mechanism") gives the probability that two documents of resemblance rho are accepted, with the
full sketch and with features; :func:`acceptance_full` and :func:`acceptance_features` compute
them for plotting and for choosing parameters. The pairs themselves are found by
:func:`neardup.lsh.features.fungible_pairs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np

from neardup._types import F64Array, U64Array
from neardup.errors import ParameterError
from neardup.hashing.bands import band_keys

__all__ = [
    "PRESETS",
    "FeaturePreset",
    "acceptance_features",
    "acceptance_full",
    "supershingles",
]


@dataclass(frozen=True, slots=True)
class FeaturePreset:
    """Feature-filter parameters.

    ``num_groups`` features of ``group_size`` samples each, fingerprints of ``feature_bits``
    bits; two documents are fungible at ``min_shared`` common features.
    """

    num_groups: int
    group_size: int
    min_shared: int
    feature_bits: int = 64

    @property
    def num_samples(self) -> int:
        """Sketch samples the features are made from (``k * s``)."""
        return self.num_groups * self.group_size


PRESETS: dict[str, FeaturePreset] = {
    # AltaVista, seed 003: "Sketch size t = 84, divided into k = 6 groups of s = 14 samples",
    # "Threshold r = 2" (its formula sums from i = r: at least 2 common features).
    "altavista": FeaturePreset(num_groups=6, group_size=14, min_shared=2),
    # Seed 003: "Variant: 200 samples, divided into 8 groups of 25. Threshold r = 1."
    "altavista-variant": FeaturePreset(num_groups=8, group_size=25, min_shared=1),
    # Seed 000: "For Bing, we shortened the 14 down to about 5, and lengthened the 2 to 4": the
    # six groups of AltaVista, of 5 samples, at least 4 matching.
    "bing": FeaturePreset(num_groups=6, group_size=5, min_shared=4),
    # Seed 003, "8 bytes are enough!": "threshold = 3 common bytes out of 8" ("Works only on
    # small scale"); "On a large scale we can use 7 out of 8 bytes". One byte per sample.
    "8bytes-small": FeaturePreset(num_groups=8, group_size=1, min_shared=3, feature_bits=8),
    "8bytes-large": FeaturePreset(num_groups=8, group_size=1, min_shared=7, feature_bits=8),
}


def acceptance_full(rho: float | F64Array, num_samples: int, min_agreeing: int) -> F64Array:
    """P(at least ``min_agreeing`` of ``num_samples`` independent samples agree).

    Seed 003: ``sum_{i=min}^{t} C(t, i) rho^i (1 - rho)^(t - i)``.

    Examples
    --------
    >>> float(acceptance_full(0.5, 2, 1))
    0.75
    """
    r = np.asarray(rho, dtype=np.float64)
    return np.asarray(
        sum(comb(num_samples, i) * r**i * (1 - r) ** (num_samples - i)
            for i in range(min_agreeing, num_samples + 1)),
        dtype=np.float64,
    )  # fmt: skip


def acceptance_features(rho: float | F64Array, preset: FeaturePreset) -> F64Array:
    """P(at least ``min_shared`` of ``num_groups`` features agree) at resemblance ``rho``.

    A feature agrees when its ``group_size`` samples all agree (``rho^s``), or, for short
    fingerprints, by chance (``2^-bits``). Seed 003:
    ``sum_{i=r}^{k} C(k, i) p^i (1 - p)^(k - i)`` with ``p = rho^s`` for 64-bit features.

    Examples
    --------
    >>> round(float(acceptance_features(0.9, PRESETS["altavista"])), 4)
    0.4151
    """
    r = np.asarray(rho, dtype=np.float64)
    chance = 2.0**-preset.feature_bits
    p = r**preset.group_size + (1 - r**preset.group_size) * chance
    k = preset.num_groups
    return np.asarray(
        sum(comb(k, i) * p**i * (1 - p) ** (k - i) for i in range(preset.min_shared, k + 1)),
        dtype=np.float64,
    )


def supershingles(values: U64Array, preset: FeaturePreset) -> U64Array:
    """``uint64[num_docs, num_groups]``: the features (fingerprints of groups of samples).

    ``values`` is a MinHash signature matrix with at least ``preset.num_samples`` columns.
    """
    if preset.num_samples > values.shape[1]:
        raise ParameterError(
            f"the preset needs {preset.num_samples} samples; the signatures have "
            f"{values.shape[1]} (raise num_perm)."
        )
    features = band_keys(values, preset.num_groups, preset.group_size)
    if preset.feature_bits < 64:
        features &= np.uint64((1 << preset.feature_bits) - 1)
    return features
