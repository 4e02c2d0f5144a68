"""Numba kernel for weighted MinHash: Ioffe's improved consistent weighted sampling (ICWS)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64

from neardup._kernels.mix import fmix64


@njit(cache=True, nogil=True, inline="always")
def _uniform(feature: np.uint64, sample: int, stream: int, seed: np.uint64) -> float:
    """A uniform in (0, 1) that depends only on (feature, sample, stream, seed)."""
    h = fmix64(fmix64(feature ^ seed) + uint64(sample * 8 + stream) * uint64(0x9E3779B97F4A7C15))
    return ((h >> uint64(11)) + 0.5) / 9007199254740992.0  # 2^53


@njit(cache=True, nogil=True, parallel=True)
def icws_samples(features, weights, offsets, num_samples, seed, out):  # type: ignore[no-untyped-def]
    """ICWS: ``out[d, i]`` = a hash of the sample ``(k*, t_k*)`` drawn for document ``d``.

    For each feature ``k`` of weight ``S_k > 0`` and sample ``i``: ``r, c ~ Gamma(2, 1)``,
    ``beta ~ U(0, 1)`` (derived from ``(k, i, seed)``, so consistent across documents),
    ``t = floor(ln S_k / r + beta)``, ``y = exp(r (t - beta))``, ``a = c / (y exp(r))``; the
    sample is the feature of least ``a`` with its ``t``. Two documents draw the same sample with
    probability equal to their weighted Jaccard ``sum min / sum max`` (Ioffe, ICDM 2010).
    Cost: O(features * num_samples). A document without positive weight keeps 0s.
    """
    for d in prange(offsets.shape[0] - 1):
        start, end = offsets[d], offsets[d + 1]
        for i in range(num_samples):
            best = np.inf
            chosen = uint64(0)
            for j in range(start, end):
                weight = weights[j]
                if weight <= 0.0:
                    continue
                feature = features[j]
                r = -np.log(_uniform(feature, i, 0, seed) * _uniform(feature, i, 1, seed))
                c = -np.log(_uniform(feature, i, 2, seed) * _uniform(feature, i, 3, seed))
                beta = _uniform(feature, i, 4, seed)
                t = np.floor(np.log(weight) / r + beta)
                y = np.exp(r * (t - beta))
                a = c / (y * np.exp(r))
                if a < best:
                    best = a
                    chosen = fmix64(feature ^ uint64(np.int64(t) * 0x632BE59BD9B4E019))
            out[d, i] = chosen
