"""In-memory LSH tables over vectors: batches of queries answered with exact values.

The same families and exact values as :func:`neardup.join.vectors.vector_join`; the search
structure of :class:`~neardup.index.VectorIndex`, which adds ids, a file and
:class:`~neardup.lookup.Match` answers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from neardup._kernels import distances as kernels
from neardup._parallel import in_blocks
from neardup._types import F64Array, I64Array, U64Array
from neardup.errors import InputError, ParameterError
from neardup.join.banded import (
    plan_bands,
)
from neardup.join.distances import pair_values, within_threshold
from neardup.join.vector_input import (
    CHUNK_ROWS,
    check_chunk,
    chunks,
    hash_dtype,
    matrix,
    unary_limit,
    vector_metric,
)
from neardup.lsh.amplify import Amplification
from neardup.params import JoinSpec

__all__ = ["VectorMatches", "VectorTables"]

CANDIDATE_ENTRIES = 1 << 22
"""Bucket entries a search of the tables walks at once (larger batches are split)."""


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
        family = vector_metric(spec, "VectorIndex")
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
            raise ParameterError(f"VectorIndex dim must be an int >= 1; got {dim!r}.")
        limit = unary_limit(spec, family, max_value, "VectorIndex")
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
        self.dtype = hash_dtype(spec.metric)
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
        rows, _ = matrix(self.spec.metric, vectors, self.dim if hamming else None, owner)
        if rows.shape[1] != self.width:
            raise InputError(f"{owner} needs rows of {self.width} columns; got {rows.shape[1]}.")
        for start, stop in chunks(rows.shape[0], CHUNK_ROWS):
            check_chunk(self.spec.metric, rows[start:stop], start, self.dim, self.max_value, owner)
        return np.ascontiguousarray(rows, dtype=self.dtype)

    def keys(self, rows: NDArray[Any]) -> U64Array:
        """``uint64[len(rows), num_bands]``: the band keys of rows that :meth:`checked` gave."""
        keys = np.empty((rows.shape[0], self.num_bands), dtype=np.uint64)
        for start, stop in chunks(rows.shape[0], CHUNK_ROWS):
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
