"""Exact similarities and distances of pairs of vectors: what a vector join verifies with.

The last step of a join over vectors (:func:`neardup.join.vectors.vector_join`) and of every
query of :class:`~neardup.index.VectorIndex`: candidate pairs from the LSH family are
measured exactly, and a pair is kept when :func:`within_threshold` says so.

How each metric reads its rows:

* ``cosine``: float rows; ``x·y / (|x| |y|)`` in [-1, 1]. A zero vector has no direction: its
  similarity to every vector, itself included, is 0 (so at a threshold above 0 it is never a
  near duplicate of anything; the join's input check can refuse it instead).
* ``l1``: integer (or float) rows; ``sum |x_i - y_i|``.
* ``l2``: float rows; ``sqrt(sum (x_i - y_i)^2)``.
* ``hamming``: bit strings packed 64 to a ``uint64`` word (bit ``j`` is bit ``j % 64``, least
  significant first, of word ``j // 64``); the number of differing bits.

Every value is computed in float64 from the stored values, coordinates summed in order, so the
same pair gives the same bits whichever way round, in whichever batch, on any number of threads.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from neardup._kernels import distances as kernels
from neardup._parallel import in_blocks
from neardup._types import BoolArray, F64Array, I64Array
from neardup.errors import ParameterError
from neardup.kinds import METRICS

__all__ = ["VECTOR_METRICS", "pair_values", "within_threshold"]

VECTOR_METRICS = tuple(
    name for name, metric in METRICS.items() if metric.input in ("vectors", "counts", "bits")
)
"""The :data:`~neardup.kinds.METRICS` measured between rows of a matrix."""

_KERNELS = {
    "cosine": kernels.cosine_pairs,
    "hamming": kernels.hamming_pairs,
    "l1": kernels.l1_pairs,
    "l2": kernels.l2_pairs,
}


def _rows(metric: str, data: Any, name: str) -> np.ndarray[Any, Any]:
    """``data`` as a C-contiguous 2-D array of a dtype the metric's kernel reads."""
    array = np.asarray(data)
    if array.ndim != 2:
        raise ParameterError(f"pair_values {name} must be a 2-D array; got {array.ndim} dims.")
    if metric == "hamming":
        if array.dtype != np.uint64:
            raise ParameterError(
                f"pair_values {name} for 'hamming' must be packed uint64 words; "
                f"got dtype {array.dtype}."
            )
        return np.ascontiguousarray(array)
    if array.dtype.kind not in "fiub":
        raise ParameterError(
            f"pair_values {name} for {metric!r} must be numeric; got dtype {array.dtype}."
        )
    if array.dtype.kind == "b":
        array = array.view(np.uint8)
    elif array.dtype == np.float16:
        array = array.astype(np.float32)
    return np.ascontiguousarray(array)


def _items(values: Any, size: int, name: str) -> I64Array:
    """Row numbers as a contiguous int64 array, each in ``[0, size)``."""
    items = np.ascontiguousarray(values, dtype=np.int64)
    if items.ndim != 1:
        raise ParameterError(f"pair_values {name} must be 1-D row numbers.")
    if items.shape[0] and (int(items.min()) < 0 or int(items.max()) >= size):
        raise ParameterError(
            f"pair_values {name} must be row numbers in [0, {size}); "
            f"got values in [{int(items.min())}, {int(items.max())}]."
        )
    return items


def pair_values(
    metric: str, data: Any, first: Any, second: Any, *, right: Any | None = None
) -> F64Array:
    """``float64[n]``: the exact similarity or distance of each pair of rows.

    Parameters
    ----------
    metric
        One of :data:`VECTOR_METRICS`.
    data
        ``(num_items, dim)`` rows (packed ``uint64`` words for ``hamming``).
    first, second
        Pair ``p`` is row ``first[p]`` of ``data`` and row ``second[p]`` of ``right``.
    right
        The rows ``second`` numbers (a query batch against stored items); ``data`` when
        ``None``. It must have as many columns as ``data``.

    Returns
    -------
    F64Array
        Cosine similarity, or the L1, L2 or Hamming distance (whole numbers for Hamming).

    Raises
    ------
    ParameterError
        For an unknown metric, rows of the wrong shape or dtype, or row numbers out of range.

    Notes
    -----
    Cost O(n · dim), pairs in parallel. Exact distances of seed 002 (Chakrabarti's LSH slides:
    Hamming, L1, L2, and the angle of random hyperplanes).

    Examples
    --------
    >>> rows = np.array([[3.0, 4.0], [4.0, 3.0], [0.0, 0.0]])
    >>> pair_values("cosine", rows, [0, 0, 2], [1, 2, 2]).tolist()
    [0.96, 0.0, 0.0]
    >>> pair_values("l2", rows, [0], [2]).tolist()
    [5.0]
    >>> bits = np.array([[0b1011], [0b0110]], dtype=np.uint64)
    >>> pair_values("hamming", bits, [0], [1]).tolist()
    [3.0]
    """
    if metric not in VECTOR_METRICS:
        raise ParameterError(
            f"pair_values metric must be one of {', '.join(map(repr, VECTOR_METRICS))}; "
            f"got {metric!r}."
        )
    left = _rows(metric, data, "data")
    other = left if right is None else _rows(metric, right, "right")
    if other.shape[1] != left.shape[1]:
        raise ParameterError(
            f"pair_values right must have {left.shape[1]} columns like data; got {other.shape[1]}."
        )
    if other.dtype != left.dtype:  # one kernel specialisation reads both
        common = np.result_type(left.dtype, other.dtype)
        left, other = left.astype(common), other.astype(common)
    first_items = _items(first, left.shape[0], "first")
    second_items = _items(second, other.shape[0], "second")
    if first_items.shape[0] != second_items.shape[0]:
        raise ParameterError(
            f"pair_values first and second must have equal lengths; got "
            f"{first_items.shape[0]} and {second_items.shape[0]}."
        )
    out = np.empty(first_items.shape[0], dtype=np.float64)
    if out.shape[0]:
        run = partial(_KERNELS[metric], left, other, first_items, second_items, out)
        in_blocks(run, out.shape[0])
    return out


def within_threshold(metric: str, values: F64Array, threshold: float) -> BoolArray:
    """Which values are close: ``>= threshold`` for a similarity, ``<= threshold`` for a distance.

    The comparison is exact, on the float64 values :func:`pair_values` returns: a pair exactly at
    the threshold is kept.

    Examples
    --------
    >>> within_threshold("l2", np.array([4.0, 5.0, 6.0]), 5.0).tolist()
    [True, True, False]
    >>> within_threshold("cosine", np.array([0.96, 0.5]), 0.96).tolist()
    [True, False]
    """
    if METRICS[metric].measure == "similarity":
        kept: BoolArray = values >= threshold
    else:
        kept = values <= threshold
    return kept
