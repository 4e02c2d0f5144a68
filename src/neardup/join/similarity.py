"""One entry to every join: the metric's input kind picks the join that runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neardup.join.result import JoinResult
from neardup.kinds import METRICS
from neardup.params import JoinSpec

__all__ = ["similarity_join"]


def similarity_join(
    data: Any, spec: JoinSpec, *, dim: int | None = None, work_dir: Path | None = None
) -> JoinResult:
    """All pairs of items within ``spec.threshold`` under ``spec.metric``, verified exactly.

    Parameters
    ----------
    data
        What the metric compares (:data:`neardup.kinds.METRICS`): a float matrix (``cosine``,
        ``l2``), a non-negative integer matrix (``l1``), packed bits (``hamming``, with ``dim``
        the number of bits), a :class:`~neardup.text.shingle.ShingleSets` of item hashes
        (``jaccard``), or a :class:`~neardup._types.Batch` of UTF-8 strings (``edit``).
    spec
        The metric, threshold and family parameters.
    dim
        The bit count of packed bit strings (``hamming``); the matrix width otherwise.
    work_dir
        Where LSH joins spill their band keys, one file per band (``None``: in memory).
    """
    kind = METRICS[spec.metric].input
    if kind == "sets":
        from neardup.join.sets import set_join

        return set_join(data, spec, work_dir=work_dir)
    if kind == "strings":
        from neardup.join.edit import edit_join

        found: JoinResult = edit_join(data, spec)
        return found
    from neardup.join.vectors import vector_join

    return vector_join(data, spec, dim=dim, work_dir=work_dir)
