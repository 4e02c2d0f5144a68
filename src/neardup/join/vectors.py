"""Similarity joins over vectors: LSH candidates, exact verification.

Where it sits: vectors (float rows, integer counts, packed bits) → the metric's LSH family
(:data:`neardup.kinds.METRICS`: random hyperplanes, bit sampling, Cauchy projections or unary
bit sampling, p-stable projections) amplified into band keys (:mod:`neardup.lsh.amplify`) →
pairs sharing a band's key (:func:`neardup.lsh.banding.banded_pairs`) → exact values
(:func:`neardup.join.distances.pair_values`) → the pairs within the threshold
(:class:`~neardup.join.result.JoinResult`).

:func:`vector_join` finds all close pairs of one matrix (:func:`vector_stream`, of a file of
vectors read in chunks); :class:`~neardup.join.vector_tables.VectorTables` holds vectors in
memory and answers batches of queries with the same families and the same exact values. The
input is checked by :mod:`neardup.join.vector_input`.

Input, by metric (the family's own input):

* ``cosine``, ``l2``: real rows ``(n, dim)`` (floats, or integers read as floats), finite.
* ``l1``: non-negative integer rows ``(n, dim)``; by the unary code, in ``[0, C]``, ``C`` =
  ``max_value``.
* ``hamming``: bit strings packed 64 to a ``uint64`` word, ``(n, ceil(dim / 64))``, bit ``j``
  is bit ``j % 64`` (least significant first) of word ``j // 64``; bits past ``dim`` zero.

A pair is close when its exact value (float64, :func:`~neardup.join.distances.pair_values`) is
at least the threshold for ``cosine``, at most it for the distances: a pair exactly at the
threshold is close. A zero vector has no direction, so its cosine is undefined:
:func:`~neardup.join.distances.pair_values` gives it 0 with every vector, and
:func:`vector_join` leaves it out (it never pairs, at any threshold; ``info`` counts them).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from neardup._types import F64Array, U64Array
from neardup.errors import ParameterError
from neardup.join.banded import (
    BandProgress,
    banded_stream,
    plan_bands,
    predict,
    sample_pairs,
    sensitivity,
    warn_if_large,
)
from neardup.join.distances import pair_values, within_threshold
from neardup.join.result import JoinResult, JoinStream
from neardup.join.vector_input import (
    CHUNK_ROWS,
    check_chunk,
    check_reachable,
    chunks,
    hash_dtype,
    matrix,
    unary_limit,
    vector_metric,
)
from neardup.lsh.family import VectorHasher
from neardup.params import JoinSpec

__all__ = ["vector_join", "vector_stream"]


def _sample(
    spec: JoinSpec, family: type[VectorHasher], rows: NDArray[Any], dim: int, limit: int | None
) -> tuple[F64Array, F64Array]:
    """Exact values and elementary collision probabilities of the sampled pairs."""
    first, second = sample_pairs(rows.shape[0], spec.seed)
    values = pair_values(spec.metric, rows, first, second)
    return values, np.asarray(family.collision_probability(values, spec, dim, limit), np.float64)


def vector_join(
    data: Any,
    spec: JoinSpec,
    *,
    dim: int | None = None,
    max_value: int | None = None,
    chunk_rows: int = CHUNK_ROWS,
    work_dir: Path | None = None,
    memory_bytes: int | None = None,
) -> JoinResult:
    """All pairs of rows within ``spec.threshold``: LSH candidates, verified exactly.

    Parameters
    ----------
    data
        The rows (see the module docstring for each metric's input).
    spec
        A ``cosine``, ``hamming``, ``l1`` or ``l2`` spec: the threshold, the recall wanted at
        it, or ``num_bands`` and ``num_rows`` themselves, ``max_hashes``, ``max_bucket_size``
        and the seed.
    dim
        The number of bits of ``hamming`` rows (required there); elsewhere, if given, the
        number of columns.
    max_value
        The unary code's ``C`` (``l1`` with ``spec.family="unary"``) when ``spec.max_value``
        is ``None`` (they must agree when both are given); neither: the largest count in the
        data.
    chunk_rows
        Rows checked and hashed at once; the result does not depend on it.
    work_dir
        Where the band keys are spilled, one file per band; ``None`` keeps them in memory.
    memory_bytes
        The working memory of candidate chunks and close pairs (:mod:`neardup.join.banded`);
        with ``work_dir``, close pairs beyond it are spilled there. ``None``: chunks of
        :data:`~neardup.join.banded.VERIFY_PAIRS`, every close pair in memory. The pairs never
        depend on it.

    Returns
    -------
    JoinResult
        The close pairs ``first < second``, sorted, with their exact values. ``info``:
        ``family`` (the class name), ``num_bands``, ``num_rows``, ``collision_probability``
        (of one elementary hash at the threshold), ``predicted_recall`` (the banded
        probability at the threshold, ``1 - (1 - p^r)^b``), ``sampled_pairs``,
        ``num_candidates`` (bucket pairs measured: a pair once per band it shares a key in),
        ``num_pairs``, ``num_giant_buckets``, ``largest_bucket``, ``prediction`` (the
        candidates and close pairs expected from the sample, see
        :func:`~neardup.join.banded.predict`), ``num_zero_vectors`` (and
        ``first_zero_vector``, where there is one) for ``cosine``, and ``max_value`` for
        ``l1`` by the unary code.

    Raises
    ------
    ParameterError
        A metric other than the four, ``dim`` / ``max_value`` that do not fit the data, or a
        threshold every pair is within (cosine -1; a Hamming or L1 distance no pair exceeds).

    Warns
    -----
    NeardupWarning
        More than
        :data:`~neardup.join.banded.LARGE_JOIN` pairs to measure (with a threshold that cuts
        them); bands that cannot reach the recall.
    InputError
        Rows of the wrong shape or dtype, NaN or infinite values, negative counts or counts
        past ``max_value``, bits set past ``dim``.

    Notes
    -----
    The steps (:mod:`neardup.join.banded`): (1) check every row, a chunk at a time; (2)
    unless the spec gives the bands, measure random pairs (seeded by ``spec.seed``), turn their
    values into elementary collision probabilities and let
    :func:`~neardup.lsh.amplify.choose_amplification` pick the cheapest ``b`` bands of ``r``
    hashes reaching ``spec.recall`` at the threshold; (3) hash ``chunk_rows`` rows at a time
    into band keys, appended to :class:`~neardup.io.spill.KeyColumns`; (4) find the pairs
    sharing a band's key one band at a time (a bucket past ``spec.max_bucket_size`` pairs each
    member with the ``max_bucket_size - 1`` before it); (5) measure the candidates a chunk
    at a time and keep the close ones. With ``cosine``, zero vectors never become candidates.

    Memory, besides ``data``: the band keys, ``8 n b`` bytes (on disk with ``work_dir``; then
    one band, ``8 n`` bytes, plus its sort, about ``40 n``), one chunk of hashing (the
    family's working memory, a few times ``8 chunk_rows (dim + b r)`` bytes), one chunk of
    candidate pairs and the close pairs (24 bytes each; with ``memory_bytes`` and
    ``work_dir``, bounded by it and spilled beyond). The candidates are never all held. A
    pair that is close is found with probability ``predicted_recall`` or more (exactly at
    the threshold; more when nearer); every pair returned is close.

    References
    ----------
    Seed 002 (Chakrabarti's LSH slides): the families and their analysis; MMDS §3.4 and
    §3.6-3.7 (seed 001): banding and amplification.

    Examples
    --------
    >>> rows = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]])
    >>> result = vector_join(rows, JoinSpec(metric="cosine", threshold=0.95))
    >>> list(zip(result.first.tolist(), result.second.tolist()))
    [(0, 1)]
    >>> round(float(result.values[0]), 4)
    0.9939
    """
    return vector_stream(
        data,
        spec,
        dim=dim,
        max_value=max_value,
        chunk_rows=chunk_rows,
        work_dir=work_dir,
        memory_bytes=memory_bytes,
    ).result()


def vector_stream(
    data: Any,
    spec: JoinSpec,
    *,
    dim: int | None = None,
    max_value: int | None = None,
    chunk_rows: int = CHUNK_ROWS,
    work_dir: Path | None = None,
    memory_bytes: int | None = None,
    progress: BandProgress | None = None,
) -> JoinStream:
    """:func:`vector_join`'s pairs as a :class:`~neardup.join.result.JoinStream` (its arguments).

    ``progress``: told the bands done (:func:`~neardup.join.banded.banded_stream`).
    """
    owner = "vector_join"
    family = vector_metric(spec, owner)
    rows, dim = matrix(spec.metric, data, dim, owner)
    if not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise ParameterError(f"vector_join chunk_rows must be an int >= 1; got {chunk_rows!r}.")
    limit = unary_limit(spec, family, max_value, owner)
    n = rows.shape[0]
    cosine = spec.metric == "cosine"
    active = np.ones(n, dtype=bool) if cosine else None
    largest = 0
    for start, stop in chunks(n, chunk_rows):
        chunk = rows[start:stop]
        largest = max(largest, check_chunk(spec.metric, chunk, start, dim, limit, owner))
        if active is not None:
            active[start:stop] = chunk.any(axis=1)
    if spec.metric == "l1" and limit is None:
        limit = max(largest, 1)
    check_reachable(spec, dim, limit)
    info: dict[str, Any] = {"family": family.__name__}
    if active is not None:
        num_zero = n - int(np.count_nonzero(active))
        info["num_zero_vectors"] = num_zero
        if num_zero:
            info["first_zero_vector"] = int(np.argmin(active))
    p_near = float(family.collision_probability(spec.threshold, spec, dim, limit))
    values, sample = _sample(spec, family, rows, dim, limit)
    num_bands, num_rows = plan_bands(spec, p_near, sample, n)
    prediction = predict(sample, num_bands, num_rows, n)

    def at_threshold(t: float) -> int:
        other = replace(spec, threshold=t)
        q = np.asarray(family.collision_probability(values, other, dim, limit), np.float64)
        p = float(family.collision_probability(t, other, dim, limit))
        return predict(q, *plan_bands(other, p, q, n), n)["measured_pairs"]

    warn_if_large(spec, prediction["measured_pairs"], at_threshold)
    hasher = family(spec, dim, num_bands=num_bands, num_rows=num_rows, max_value=limit)
    dtype = hash_dtype(spec.metric)

    def key_chunks() -> Iterator[U64Array]:
        for start, stop in chunks(n, chunk_rows):
            yield hasher.keys(np.ascontiguousarray(rows[start:stop], dtype=dtype))

    close = within_threshold(spec.metric, values, spec.threshold)
    total = n * (n - 1) // 2
    info["sampled_pairs"] = int(sample.shape[0])
    info["prediction"] = {
        **prediction,
        "pairs": round(total * float(close.mean())) if close.shape[0] else 0,
    }
    if family.needs_max_value:
        info["max_value"] = limit
    return banded_stream(
        spec,
        n,
        key_chunks(),
        lambda first, second: pair_values(spec.metric, rows, first, second),
        num_bands=num_bands,
        num_rows=num_rows,
        p_near=p_near,
        active=active,
        work_dir=work_dir,
        info=info,
        family=sensitivity(spec, p_near, values, sample),
        memory_bytes=memory_bytes,
        progress=progress,
    )
