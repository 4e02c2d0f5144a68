"""Numba kernel for weighted MinHash: Ioffe's improved consistent weighted sampling (ICWS)."""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._kernels.mix import fmix64


@njit(cache=True, nogil=True, inline="always")
def _uniform(feature_key: np.uint64, sample: int, stream: int) -> float:
    """A uniform in (0, 1) that depends only on (feature, sample, stream, seed).

    ``feature_key`` is ``fmix64(feature ^ seed)``, computed once per feature.
    """
    h = fmix64(feature_key + uint64(sample * 8 + stream) * uint64(0x9E3779B97F4A7C15))
    return ((h >> uint64(11)) + 0.5) / 9007199254740992.0  # 2^53


@njit(cache=True, nogil=True)
def icws_samples(features, weights, offsets, num_samples, seed, out, lo, hi):  # type: ignore[no-untyped-def]
    """ICWS: ``out[d, i]`` = a hash of the sample ``(k*, t_k*)`` drawn for document ``d``.

    For the documents ``lo .. hi - 1``. For each feature ``k`` of weight ``S_k > 0`` and
    sample ``i``: ``r, c ~ Gamma(2, 1)``, ``beta ~ U(0, 1)`` (derived from ``(k, i, seed)``, so
    consistent across documents), ``t = floor(ln S_k / r + beta)``, ``y = exp(r (t - beta))``,
    ``a = c / (y exp(r))``; the sample is the feature of least ``a`` with its ``t``. Two
    documents draw the same sample with probability equal to their weighted Jaccard
    ``sum min / sum max`` (Ioffe, ICDM 2010).
    Features are the outer loop, so ``ln S_k`` and the feature's hash are computed once; ``a``
    is compared through ``ln a = ln c - r (t - beta + 1)``, one logarithm instead of two
    exponentials. Cost: O(features * num_samples). A document without positive weight keeps 0s.
    """
    best = np.empty(num_samples, dtype=np.float64)
    chosen = np.empty(num_samples, dtype=np.uint64)
    for d in range(lo, hi):
        for i in range(num_samples):
            best[i] = np.inf
            chosen[i] = 0
        for j in range(offsets[d], offsets[d + 1]):
            weight = weights[j]
            if weight <= 0.0:
                continue
            feature = features[j]
            log_weight = np.log(weight)
            key = fmix64(feature ^ seed)
            for i in range(num_samples):
                r = -np.log(_uniform(key, i, 0) * _uniform(key, i, 1))
                c = -np.log(_uniform(key, i, 2) * _uniform(key, i, 3))
                beta = _uniform(key, i, 4)
                t = np.floor(log_weight / r + beta)
                log_a = np.log(c) - r * (t - beta + 1.0)
                if log_a < best[i]:
                    best[i] = log_a
                    chosen[i] = fmix64(feature ^ uint64(np.int64(t) * 0x632BE59BD9B4E019))
        for i in range(num_samples):
            out[d, i] = chosen[i]
