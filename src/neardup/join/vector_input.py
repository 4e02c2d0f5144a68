"""The input of a vector join or table, checked: its metric, its matrix, its rows, its reach.

Each metric's input is described in :mod:`neardup.join.vectors`; a bad one is refused with
the row and what to do, before any hashing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from neardup.errors import InputError, ParameterError
from neardup.join.distances import VECTOR_METRICS
from neardup.kinds import METRICS, load
from neardup.lsh.family import VectorHasher
from neardup.params import JoinSpec

CHUNK_ROWS = 8192
"""Rows checked and hashed at once (the results do not depend on it)."""


def vector_metric(spec: JoinSpec, owner: str) -> type[VectorHasher]:
    """The family class of a vector metric (a ParameterError for any other metric)."""
    if spec.metric not in VECTOR_METRICS:
        raise ParameterError(
            f"{owner} joins vectors: JoinSpec.metric must be one of "
            f"{', '.join(map(repr, VECTOR_METRICS))}; got {spec.metric!r}."
        )
    family = METRICS[spec.metric].family_named(spec.family)
    assert family is not None
    cls: type[VectorHasher] = load(family)
    return cls


def hash_dtype(metric: str) -> np.dtype[Any]:
    """The dtype rows are stored and hashed in: one per metric, so join and index agree."""
    return np.dtype({"hamming": np.uint64, "l1": np.int64}.get(metric, np.float64))


def matrix(metric: str, data: Any, dim: int | None, owner: str) -> tuple[NDArray[Any], int]:
    """``data`` as a 2-D array the metric reads, and the vectors' dimension."""
    rows = np.asarray(data)
    if rows.ndim != 2:
        raise InputError(f"{owner} needs a 2-D array (items by columns); got shape {rows.shape}.")
    if metric == "hamming":
        if rows.dtype != np.uint64:
            raise InputError(
                f"{owner} for 'hamming' needs bits packed into uint64 words; got {rows.dtype}."
            )
        if dim is None:
            raise ParameterError(f"{owner} for 'hamming' needs dim, the number of bits.")
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
            raise ParameterError(f"{owner} dim must be an int >= 1; got {dim!r}.")
        if (dim + 63) // 64 != rows.shape[1]:
            raise InputError(
                f"{owner}: {dim} bits take {(dim + 63) // 64} uint64 words a row; got rows of "
                f"{rows.shape[1]} words."
            )
        return rows, dim
    kinds = "iub" if metric == "l1" else "fiub"
    if rows.dtype.kind not in kinds:
        wanted = "non-negative integer counts" if metric == "l1" else "real numbers"
        raise InputError(f"{owner} for {metric!r} needs {wanted}; got dtype {rows.dtype}.")
    if rows.dtype.kind == "b":
        rows = rows.view(np.uint8)
    if dim is not None and dim != rows.shape[1]:
        raise ParameterError(f"{owner} dim is {dim}, but the rows have {rows.shape[1]} columns.")
    if rows.shape[1] < 1:
        raise InputError(f"{owner} needs rows of at least one column; got shape {rows.shape}.")
    return rows, rows.shape[1]


def check_chunk(
    metric: str, chunk: NDArray[Any], start: int, dim: int, max_value: int | None, owner: str
) -> int:
    """Refuse values the family cannot hash (rows numbered from ``start``); the largest value."""
    if metric == "hamming":
        if dim % 64:
            spare = chunk[:, -1] >> np.uint64(dim % 64)
            bad = np.flatnonzero(spare)
            if bad.shape[0]:
                raise InputError(
                    f"{owner}: row {start + int(bad[0])} has bits set past bit {dim - 1}; "
                    "bits past dim must be zero."
                )
        return 0
    if chunk.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(chunk).all(axis=1))
        if bad.shape[0]:
            raise InputError(f"{owner}: row {start + int(bad[0])} holds NaN or infinity.")
    if metric != "l1" or chunk.shape[0] == 0:
        return 0
    low = chunk.min(axis=1)
    bad = np.flatnonzero(low < 0)
    if bad.shape[0]:
        raise InputError(f"{owner}: row {start + int(bad[0])} holds a negative count.")
    high = chunk.max(axis=1)
    if max_value is not None:
        bad = np.flatnonzero(high > max_value)
        if bad.shape[0]:
            raise InputError(
                f"{owner}: row {start + int(bad[0])} holds {int(high[bad[0]])}, past "
                f"max_value {max_value} (the C of the unary code); raise --max-value, or leave it "
                "out to use the data's largest value."
            )
    return int(high.max())


def check_reachable(spec: JoinSpec, dim: int, max_value: int | None) -> None:
    """Refuse a threshold every pair is within (a join of all pairs is no near-neighbour join).

    A distance no pair can exceed (``hamming``, ``l1``), or the cosine -1 (no pair is below
    it, and no random hyperplane separates less than all of a pair at -1).
    """
    if spec.metric == "cosine" and spec.threshold <= -1.0:
        raise ParameterError(
            f"JoinSpec.threshold {spec.threshold:g} admits every pair of vectors (no cosine is "
            "below -1): raise --threshold."
        )
    largest = {"hamming": dim, "l1": dim * (max_value or 0)}.get(spec.metric)
    if largest is not None and spec.threshold >= largest:
        raise ParameterError(
            f"JoinSpec.threshold {spec.threshold:g} is at least the largest {spec.metric} "
            f"distance of these items ({largest}): every pair would be within it; lower "
            "--threshold."
        )


def unary_limit(
    spec: JoinSpec, family: type[VectorHasher], max_value: int | None, owner: str
) -> int | None:
    """``C`` for the unary code from the spec or the argument (which must agree); else None."""
    if max_value is None:
        return spec.max_value
    if not family.needs_max_value:
        raise ParameterError(
            f"{owner} max_value applies to metric 'l1' with family 'unary' only (the C of its "
            f"code); got metric {spec.metric!r} with {family.__name__}."
        )
    if not isinstance(max_value, int) or max_value < 1:
        raise ParameterError(f"{owner} max_value must be an int >= 1; got {max_value!r}.")
    if spec.max_value is not None and spec.max_value != max_value:
        raise ParameterError(
            f"{owner} max_value={max_value} differs from JoinSpec.max_value={spec.max_value}."
        )
    return max_value


def chunks(num_rows: int, chunk_rows: int) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of each run of ``chunk_rows`` rows (the last one shorter)."""
    for start in range(0, num_rows, chunk_rows):
        yield start, min(num_rows, start + chunk_rows)
