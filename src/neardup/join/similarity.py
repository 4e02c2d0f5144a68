"""One entry to every join: the metric's input kind picks the join that runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from neardup.join.result import JoinResult, JoinStream
from neardup.kinds import METRICS
from neardup.params import JoinSpec

if TYPE_CHECKING:  # the families load on first use
    from neardup.join.banded import BandProgress

__all__ = ["similarity_join", "similarity_stream"]


def similarity_join(
    data: Any,
    spec: JoinSpec,
    *,
    dim: int | None = None,
    work_dir: Path | None = None,
    memory_bytes: int | None = None,
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
        Where LSH joins spill their band keys, one file per band, and, with ``memory_bytes``,
        their close pairs beyond it (``None``: in memory).
    memory_bytes
        LSH joins: the working memory of candidate chunks and close pairs
        (:mod:`neardup.join.banded`); ``None``: fixed chunks, every close pair in memory. The
        pairs never depend on it.
    """
    return similarity_stream(
        data, spec, dim=dim, work_dir=work_dir, memory_bytes=memory_bytes
    ).result()


def similarity_stream(
    data: Any,
    spec: JoinSpec,
    *,
    dim: int | None = None,
    work_dir: Path | None = None,
    memory_bytes: int | None = None,
    progress: BandProgress | None = None,
) -> JoinStream:
    """:func:`similarity_join`'s pairs read back a chunk at a time (the command line's path).

    With ``work_dir`` and ``memory_bytes``, an LSH join holds neither its candidates nor its
    close pairs whole: :meth:`JoinStream.chunks` merges the close pairs from the work
    directory (which must outlive the reading). ``progress`` is told the bands an LSH join
    has done, and how many it has (the exact joins tell nothing).
    """
    kind = METRICS[spec.metric].input
    if kind == "sets":
        from neardup.join.sets import set_stream

        return set_stream(
            data, spec, work_dir=work_dir, memory_bytes=memory_bytes, progress=progress
        )
    if kind == "strings":
        from neardup.join.edit import edit_join

        found: JoinResult = edit_join(data, spec)
        return JoinStream.of(found)
    from neardup.join.vectors import vector_stream

    return vector_stream(
        data, spec, dim=dim, work_dir=work_dir, memory_bytes=memory_bytes, progress=progress
    )
