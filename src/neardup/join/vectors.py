"""Similarity joins and in-memory LSH tables over vectors: LSH candidates, exact verification.

Where it sits: vectors (float rows, integer counts, packed bits) → the metric's LSH family
(:data:`neardup.kinds.METRICS`: random hyperplanes, bit sampling, Cauchy projections or unary
bit sampling, p-stable projections) amplified into band keys (:mod:`neardup.lsh.amplify`) →
pairs sharing a band's key (:func:`neardup.lsh.banding.banded_pairs`) → exact values
(:func:`neardup.join.distances.pair_values`) → the pairs within the threshold
(:class:`~neardup.join.result.JoinResult`).

:func:`vector_join` finds all close pairs of one matrix; :class:`VectorTables` holds vectors in
memory and answers batches of queries with the same families and the same exact values (the
search structure of :class:`~neardup.index.VectorIndex`, which adds ids, a file and
:class:`~neardup.lookup.Match` answers).

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
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from neardup._kernels import distances as kernels
from neardup._parallel import in_blocks
from neardup._types import F64Array, I64Array, U64Array
from neardup.errors import InputError, ParameterError
from neardup.join.banded import (
    BandProgress,
    banded_stream,
    plan_bands,
    predict,
    sample_pairs,
    sensitivity,
    warn_if_large,
)
from neardup.join.distances import VECTOR_METRICS, pair_values, within_threshold
from neardup.join.result import JoinResult, JoinStream
from neardup.kinds import METRICS, load
from neardup.lsh.amplify import Amplification
from neardup.lsh.family import VectorHasher
from neardup.params import JoinSpec

__all__ = ["VectorMatches", "VectorTables", "vector_join", "vector_stream"]

CHUNK_ROWS = 8192
"""Rows checked and hashed at once (the results do not depend on it)."""
CANDIDATE_ENTRIES = 1 << 22
"""Bucket entries a search of the tables walks at once (larger batches are split)."""


# input ----------------------------------------------------------------------------------------


def _vector_metric(spec: JoinSpec, owner: str) -> type[VectorHasher]:
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


def _hash_dtype(metric: str) -> np.dtype[Any]:
    """The dtype rows are stored and hashed in: one per metric, so join and index agree."""
    return np.dtype({"hamming": np.uint64, "l1": np.int64}.get(metric, np.float64))


def _matrix(metric: str, data: Any, dim: int | None, owner: str) -> tuple[NDArray[Any], int]:
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


def _check_chunk(
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


def _check_reachable(spec: JoinSpec, dim: int, max_value: int | None) -> None:
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


def _max_value(
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


def _chunks(num_rows: int, chunk_rows: int) -> Iterator[tuple[int, int]]:
    for start in range(0, num_rows, chunk_rows):
        yield start, min(num_rows, start + chunk_rows)


# the join -------------------------------------------------------------------------------------


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
    family = _vector_metric(spec, owner)
    rows, dim = _matrix(spec.metric, data, dim, owner)
    if not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise ParameterError(f"vector_join chunk_rows must be an int >= 1; got {chunk_rows!r}.")
    limit = _max_value(spec, family, max_value, owner)
    n = rows.shape[0]
    cosine = spec.metric == "cosine"
    active = np.ones(n, dtype=bool) if cosine else None
    largest = 0
    for start, stop in _chunks(n, chunk_rows):
        chunk = rows[start:stop]
        largest = max(largest, _check_chunk(spec.metric, chunk, start, dim, limit, owner))
        if active is not None:
            active[start:stop] = chunk.any(axis=1)
    if spec.metric == "l1" and limit is None:
        limit = max(largest, 1)
    _check_reachable(spec, dim, limit)
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
    dtype = _hash_dtype(spec.metric)

    def key_chunks() -> Iterator[U64Array]:
        for start, stop in _chunks(n, chunk_rows):
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


# the tables -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VectorMatches:
    """Stored items found for a batch of queries: parallel arrays, grouped by query.

    Attributes
    ----------
    query
        The query's row in the batch, ascending.
    item
        The stored item's number (as :meth:`VectorTables.add` returned it), ascending within
        a query.
    values
        The exact similarity or distance of the query and the item.
    num_checked
        ``int64[num_queries]``: the bucket entries each query took (an item met in several
        bands counts each time; removed items are skipped, not counted).
    """

    query: I64Array
    item: I64Array
    values: F64Array
    num_checked: I64Array

    def __len__(self) -> int:
        return int(self.query.shape[0])


def _spans(sizes: I64Array, budget: int) -> Iterator[tuple[int, int]]:
    """Runs of consecutive queries whose sizes sum to at most ``budget`` (at least one each)."""
    ends = np.cumsum(sizes)
    start = 0
    while start < sizes.shape[0]:
        base = int(ends[start - 1]) if start else 0
        stop = max(start + 1, int(np.searchsorted(ends, base + budget, side="right")))
        yield start, stop
        start = stop


class VectorTables:
    """Vectors in memory under item numbers, with one sorted table of band keys per band.

    The search structure of :class:`~neardup.index.VectorIndex`, which names items by string
    ids, keeps them in a file and answers with :class:`~neardup.lookup.Match` lists; this
    class finds, for a batch of queries, the stored items that share a band's key with each,
    and measures them exactly.

    Parameters
    ----------
    spec
        A ``cosine``, ``hamming``, ``l1`` or ``l2`` spec: the family's parameters and the
        seed. The bands are the spec's ``num_bands`` and ``num_rows`` when given; otherwise
        chosen at construction by :func:`~neardup.lsh.amplify.choose_amplification` for
        ``spec.recall`` at the threshold without a sample of the data (the far pairs taken as
        spread uniformly below the threshold's collision probability): give the bands, or take
        them from a :func:`vector_join` of representative data (its ``info``), where the data
        are known.
    dim
        The vectors' dimension (bits for ``hamming``).
    max_value
        The unary code's ``C`` (``l1`` with ``spec.family="unary"``) when ``spec.max_value`` is
        ``None``: one of them is required there.

    Notes
    -----
    Each band has a table: the keys of the stored items, sorted, with their item numbers
    (``16 b`` bytes an item). Added items wait with their keys until the next search merges
    them in (``O(b (m + k log k))`` for ``k`` added to ``m``): add in batches. Removed items are
    skipped by searches and dropped from the tables once they are half the entries; their rows
    stay (item numbers are rows and are never reused). A spec that gives the bands gives the
    same keys as in :func:`vector_join`, so a search of a stored row finds the pairs the join
    finds (the tables have no bucket cap). :meth:`search` costs ``O(b log m)`` per query plus
    ``O(dim)`` per item met; with ``probe_limit=True`` at most ``2b`` items are met.

    Examples
    --------
    >>> spec = JoinSpec(metric="l2", threshold=1.0, num_bands=8, num_rows=2, bucket_width=4.0)
    >>> tables = VectorTables(spec, dim=2)
    >>> tables.add(np.array([[0.0, 0.0], [10.0, 10.0]])).tolist()
    [0, 1]
    >>> found = tables.search(np.array([[0.5, 0.0]]), threshold=1.0)
    >>> found.item.tolist(), found.values.tolist()
    ([0], [0.5])
    """

    def __init__(self, spec: JoinSpec, dim: int, *, max_value: int | None = None) -> None:
        family = _vector_metric(spec, "VectorIndex")
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
            raise ParameterError(f"VectorIndex dim must be an int >= 1; got {dim!r}.")
        limit = _max_value(spec, family, max_value, "VectorIndex")
        if family.needs_max_value and limit is None:
            raise ParameterError(
                "VectorIndex for 'l1' with family 'unary' needs max_value (or "
                "JoinSpec.max_value): the C of the unary code, the largest count any vector may "
                "hold."
            )
        self.spec = spec
        self.dim = dim
        self.max_value = limit
        self.collision_probability = float(
            family.collision_probability(spec.threshold, spec, dim, limit)
        )
        self.num_bands, self.num_rows = plan_bands(spec, self.collision_probability, None, None)
        self.predicted_recall = float(
            Amplification.bands(self.num_bands, self.num_rows).probability(
                self.collision_probability
            )
        )
        self._hasher = family(
            spec, dim, num_bands=self.num_bands, num_rows=self.num_rows, max_value=limit
        )
        self.family = family.__name__
        """The name of the LSH family's class (what made the band keys)."""
        self.width = (dim + 63) // 64 if spec.metric == "hamming" else dim
        """Values in a stored row: ``dim``, or ``ceil(dim / 64)`` words for ``hamming``."""
        self.dtype = _hash_dtype(spec.metric)
        """The dtype of a stored row: float64, int64 (``l1``) or uint64 (``hamming``)."""
        self.clear()

    def clear(self) -> None:
        """Forget every item (and release their memory); numbering starts again at 0."""
        self._vectors: NDArray[Any] = np.empty((0, self.width), dtype=self.dtype)
        self._alive = np.empty(0, dtype=bool)
        self._size = 0
        self._num_alive = 0
        self._table_keys = np.empty((self.num_bands, 0), dtype=np.uint64)
        self._table_items = np.empty((self.num_bands, 0), dtype=np.int64)
        self._built = 0
        """Items below this number are in the tables (unless removed and dropped)."""
        self._pending: list[U64Array] = []
        """The keys of the items added since the tables were last merged, in order."""

    def __len__(self) -> int:
        return self._num_alive

    def checked(self, vectors: Any, owner: str) -> NDArray[Any]:
        """``vectors`` as rows in the stored dtype, checked (an InputError names a bad row).

        ``owner`` names the caller in the messages (``"VectorIndex.add"``).
        """
        hamming = self.spec.metric == "hamming"
        rows, _ = _matrix(self.spec.metric, vectors, self.dim if hamming else None, owner)
        if rows.shape[1] != self.width:
            raise InputError(f"{owner} needs rows of {self.width} columns; got {rows.shape[1]}.")
        for start, stop in _chunks(rows.shape[0], CHUNK_ROWS):
            _check_chunk(self.spec.metric, rows[start:stop], start, self.dim, self.max_value, owner)
        return np.ascontiguousarray(rows, dtype=self.dtype)

    def keys(self, rows: NDArray[Any]) -> U64Array:
        """``uint64[len(rows), num_bands]``: the band keys of rows that :meth:`checked` gave."""
        keys = np.empty((rows.shape[0], self.num_bands), dtype=np.uint64)
        for start, stop in _chunks(rows.shape[0], CHUNK_ROWS):
            keys[start:stop] = self._hasher.keys(rows[start:stop])
        return keys

    def vector(self, item: int) -> NDArray[Any]:
        """A copy of stored item ``item``'s row."""
        if not 0 <= item < self._size or not self._alive[item]:
            raise InputError(f"VectorTables.vector: {item} is not a stored item.")
        row: NDArray[Any] = self._vectors[item].copy()
        return row

    # writing ------------------------------------------------------------------------------

    def add(self, vectors: Any, keys: U64Array | None = None) -> I64Array:
        """Store a batch of vectors; return their item numbers (consecutive, never reused).

        ``keys``: their band keys from :meth:`keys`, when the caller has them already.
        Cost: hashing (``O(b r dim)`` a vector for most families); the tables take the new
        items at the next search.

        Raises
        ------
        InputError
            Rows of the wrong shape or dtype, or values the family cannot hash; nothing is
            stored then.
        """
        rows = self.checked(vectors, "VectorTables.add")
        if keys is None:
            keys = self.keys(rows)
        k = rows.shape[0]
        needed = self._size + k
        if needed > self._vectors.shape[0]:
            capacity = max(needed, 2 * self._vectors.shape[0], 1024)
            grown = np.empty((capacity, self.width), dtype=self.dtype)
            grown[: self._size] = self._vectors[: self._size]
            alive = np.zeros(capacity, dtype=bool)
            alive[: self._size] = self._alive[: self._size]
            self._vectors, self._alive = grown, alive
        self._vectors[self._size : needed] = rows
        self._alive[self._size : needed] = True
        if k:
            self._pending.append(keys)
        items = np.arange(self._size, needed, dtype=np.int64)
        self._size = needed
        self._num_alive += k
        return items

    def remove(self, items: Any) -> None:
        """Remove stored items by number. Cost: ``O(k)``; their table entries go later.

        Raises
        ------
        InputError
            Some numbers are not stored items (never added, or removed already); nothing is
            removed then.
        """
        numbers = np.asarray(items)
        if numbers.size and numbers.dtype.kind not in "iu":
            raise InputError(f"VectorTables.remove takes item numbers; got dtype {numbers.dtype}.")
        chosen = np.unique(numbers.astype(np.int64).reshape(-1))
        inside = (chosen >= 0) & (chosen < self._size)
        stored = np.zeros(chosen.shape[0], dtype=bool)
        stored[inside] = self._alive[chosen[inside]]
        if not stored.all():
            missing = chosen[~stored][:10].tolist()
            raise InputError(f"VectorTables.remove: not stored items: {missing}; nothing removed.")
        self._alive[chosen] = False
        self._num_alive -= int(chosen.shape[0])

    def _refresh(self) -> None:
        """Merge the pending items into the tables; drop removed items once half are dead."""
        if self._pending:
            added = np.concatenate(self._pending)
            self._pending = []
            items = np.arange(self._built, self._size, dtype=np.int64)
            live = self._alive[items]
            added, items = added[live], items[live]
            width = self._table_keys.shape[1] + items.shape[0]
            keys = np.empty((self.num_bands, width), dtype=np.uint64)
            owners = np.empty((self.num_bands, width), dtype=np.int64)
            for band in range(self.num_bands):
                order = np.argsort(added[:, band], kind="stable")
                new_keys = added[order, band]
                at = np.searchsorted(self._table_keys[band], new_keys, side="right")
                keys[band] = np.insert(self._table_keys[band], at, new_keys)
                owners[band] = np.insert(self._table_items[band], at, items[order])
            self._table_keys, self._table_items = keys, owners
            self._built = self._size
        entries = self._table_items.shape[1]
        if entries - self._num_alive > entries // 2:
            live = self._alive[self._table_items]  # every band keeps the same items
            shape = (self.num_bands, self._num_alive)
            self._table_keys = self._table_keys[live].reshape(shape)
            self._table_items = self._table_items[live].reshape(shape)

    # reading ------------------------------------------------------------------------------

    def _candidates(self, rows: NDArray[Any], limit: int) -> tuple[I64Array, I64Array, I64Array]:
        """``(query, item, num_checked)``: the distinct live items each query meets."""
        keys = self.keys(rows)
        self._refresh()
        num_queries = rows.shape[0]
        lo = np.empty((num_queries, self.num_bands), dtype=np.int64)
        hi = np.empty((num_queries, self.num_bands), dtype=np.int64)
        for band in range(self.num_bands):
            lo[:, band] = np.searchsorted(self._table_keys[band], keys[:, band], side="left")
            hi[:, band] = np.searchsorted(self._table_keys[band], keys[:, band], side="right")
        sizes = (hi - lo).sum(axis=1)
        if limit >= 0:
            sizes = np.minimum(sizes, limit)
        checked = np.empty(num_queries, dtype=np.int64)
        queries: list[I64Array] = []
        items: list[I64Array] = []
        for start, stop in _spans(sizes, CANDIDATE_ENTRIES):
            offsets = np.zeros(stop - start + 1, dtype=np.int64)
            np.cumsum(sizes[start:stop], out=offsets[1:])
            found = np.empty(stop - start, dtype=np.int64)
            out = np.empty(int(offsets[-1]), dtype=np.int64)
            run = partial(
                kernels.table_candidates,
                self._table_items,
                lo[start:stop],
                hi[start:stop],
                self._alive,
                limit,
                offsets,
                out,
                found,
                checked[start:stop],
            )
            in_blocks(run, stop - start)
            rank = np.arange(out.shape[0]) - np.repeat(offsets[:-1], sizes[start:stop])
            items.append(out[rank < np.repeat(found, sizes[start:stop])])
            queries.append(np.repeat(np.arange(start, stop, dtype=np.int64), found))
        if not queries:
            return np.empty(0, np.int64), np.empty(0, np.int64), checked
        return np.concatenate(queries), np.concatenate(items), checked

    def search(
        self,
        vectors: Any,
        *,
        threshold: float | None,
        probe_limit: bool = False,
        owner: str = "VectorTables.search",
    ) -> VectorMatches:
        """The stored items sharing a band's key with each query, within ``threshold``.

        Parameters
        ----------
        vectors
            A batch of queries, rows as :meth:`add` takes.
        threshold
            A similarity (``cosine``: items at or above it) or distance (at or below);
            ``None``: every item met, however far.
        probe_limit
            Seed 002's probe: stop each query once ``2L`` bucket entries are taken (``L`` =
            ``num_bands``; an item met in several bands counts each time), band after band.
        owner
            Names the caller in the messages about bad rows.

        Returns
        -------
        VectorMatches
            Matches by query, items ascending within each.

        Notes
        -----
        A stored item within the threshold is found when it shares a band's key with the
        query: with probability ``predicted_recall`` at ``spec.threshold``, more nearer.

        The guarantee of ``probe_limit`` (seed 002, "Analysis"): let the family be
        (c, r, P1, P2)-sensitive, ``num_rows`` ``k = log n / log(1/P2)`` (so a far item, beyond
        ``c r``, shares one band's key with probability at most ``P2^k = 1/n``) and
        ``num_bands`` ``L = n^ρ``, ``ρ = log(1/P1) / log(1/P2)`` (so an item within ``r``
        shares one band with probability at least ``n^-ρ``). Query with ``threshold = c r``.
        If some stored item lies within ``r``, it shares some band with probability at least
        ``1 - (1 - n^-ρ)^L >= 1 - 1/e``; far entries met number ``L`` in expectation, so by
        Markov's inequality fewer than ``2L`` with probability at least ``1/2``. When both
        hold, the first ``2L`` entries taken hold an item not far (within ``c r``), or are
        all the entries, the near item among them: the answer then holds an item within
        ``c r``, with probability at least ``1 - 1/e - 1/2 = 1/2 - 1/e ≈ 0.13`` (several
        indexes with other seeds raise it). The walk costs ``O(L log n + L dim)`` a query.
        :meth:`~neardup.lsh.amplify.Amplification.near_neighbour` gives these bands.
        """
        if not isinstance(probe_limit, bool):
            raise ParameterError(f"probe_limit must be a bool; got {probe_limit!r}.")
        rows = self.checked(vectors, owner)
        query, item, checked = self._candidates(rows, 2 * self.num_bands if probe_limit else -1)
        values = self._values(rows, query, item)
        if threshold is None:
            return VectorMatches(query, item, values, checked)
        close = within_threshold(self.spec.metric, values, threshold)
        return VectorMatches(query[close], item[close], values[close], checked)

    def _values(self, rows: NDArray[Any], query: I64Array, item: I64Array) -> F64Array:
        if query.shape[0] == 0:
            return np.empty(0, dtype=np.float64)
        stored = self._vectors[: self._size]
        return pair_values(self.spec.metric, rows, query, item, right=stored)

    def _check(self) -> None:
        """Assert every internal invariant (tests call it between operations)."""
        n, b = self._size, self.num_bands
        assert self._vectors.shape[0] == self._alive.shape[0] >= n
        assert not self._alive[n:].any()
        assert self._num_alive == int(self._alive[:n].sum())
        assert self._built + sum(p.shape[0] for p in self._pending) == n
        assert all(p.shape[1] == b and p.dtype == np.uint64 for p in self._pending)
        keys, items = self._table_keys, self._table_items
        assert keys.shape == items.shape
        assert keys.shape[0] == b
        present = np.zeros(n, dtype=bool)
        present[items[0]] = True
        assert np.unique(items[0]).shape[0] == items.shape[1], "an item twice in a band"
        assert np.all(items < self._built)
        live_built = self._alive[: self._built]
        assert np.all(present[: self._built][live_built]), "a stored item missing from a table"
        expected = self.keys(self._vectors[: self._built])
        for band in range(b):
            assert np.array_equal(np.sort(items[band]), np.sort(items[0]))
            same = keys[band, 1:] == keys[band, :-1]
            assert np.all(keys[band, 1:] >= keys[band, :-1]), "a table out of key order"
            assert np.all(items[band, 1:][same] > items[band, :-1][same]), "items out of order"
            assert np.array_equal(keys[band], expected[items[band], band]), "a key changed"
        if self._pending:
            pending = np.concatenate(self._pending)
            assert np.array_equal(pending, self.keys(self._vectors[self._built : n]))
