"""Numba kernels of a transformer encoder's forward pass: the steps between its matrix products.

The products themselves (``x W^T``, attention's ``Q K^T`` and ``P V``) go to NumPy's BLAS; these
kernels do the element-wise and row-wise steps in place, in float32 as the model's weights are.
Each is serial: the encoder runs whole batches in threads (BLAS on one thread each), where
parallel kernels between multi-threaded products made the cores wait on each other.
"""

from __future__ import annotations

import math

from numba import float32, njit


@njit(cache=True, nogil=True)
def layer_norm_rows(x, gamma, beta, eps):  # type: ignore[no-untyped-def]
    """Normalise each row of ``x`` (2-D, float32) in place (BERT's LayerNorm).

    ``(x - mean) / sqrt(var + eps)``, scaled by ``gamma`` and shifted by ``beta`` (Ba et al.
    2016); the mean and variance are summed in float64.

    Cost: O(rows x width).
    """
    rows, width = x.shape
    for i in range(rows):
        total = 0.0
        for j in range(width):
            total += x[i, j]
        mean = total / width
        spread = 0.0
        for j in range(width):
            d = x[i, j] - mean
            spread += d * d
        scale = 1.0 / math.sqrt(spread / width + eps)
        for j in range(width):
            x[i, j] = (x[i, j] - mean) * scale * gamma[j] + beta[j]


@njit(cache=True, nogil=True, fastmath=True)
def gelu_rows(x):  # type: ignore[no-untyped-def]
    """``v Φ(v)`` in place over a 2-D float32 array: BERT's ``hidden_act = "gelu"``.

    The exact GELU of Hendrycks & Gimpel 2016, ``Φ(v) = (1 + erf(v / √2)) / 2``.

    ``erf`` by Abramowitz & Stegun 7.1.26 (absolute error under 1.5e-7, float32's own
    rounding at 1), a polynomial in ``1 / (1 + p|z|)`` times ``exp(-z²)``: it vectorises,
    where the C library's double ``erf`` took 4 times as long. Cost: O(size).
    """
    rows, width = x.shape
    for i in range(rows):
        for j in range(width):
            v = x[i, j]
            z = abs(v) * float32(0.7071067811865476)
            t = float32(1.0) / (float32(1.0) + float32(0.3275911) * z)
            poly = float32(1.061405429) * t - float32(1.453152027)
            poly = poly * t + float32(1.421413741)
            poly = poly * t - float32(0.284496736)
            poly = poly * t + float32(0.254829592)
            erf = float32(1.0) - poly * t * math.exp(-z * z)
            x[i, j] = float32(0.5) * v * (float32(1.0) + (erf if v >= 0 else -erf))


@njit(cache=True, nogil=True, fastmath=True)
def masked_softmax(scores, lengths):  # type: ignore[no-untyped-def]
    """Softmax in place over the last axis of ``scores`` (batch, heads, queries, keys).

    Batch row ``b`` attends to its first ``lengths[b]`` keys only (the rest are padding: 0).

    Cost: O(size).
    """
    batch, heads, queries, keys = scores.shape
    for b in range(batch):
        n = lengths[b]
        for h in range(heads):
            for q in range(queries):
                top = scores[b, h, q, 0]
                for k in range(1, n):
                    top = max(top, scores[b, h, q, k])
                total = float32(0.0)
                for k in range(n):
                    e = math.exp(scores[b, h, q, k] - top)
                    scores[b, h, q, k] = e
                    total += e
                inverse = float32(1.0) / total
                for k in range(n):
                    scores[b, h, q, k] *= inverse
                for k in range(n, keys):
                    scores[b, h, q, k] = float32(0.0)
