"""The vector index: vectors under string ids, the near ones found by a join metric's LSH family.

Where it sits: a batch of vectors (the rows :mod:`neardup.join.vectors` reads, by metric) →
the band keys of the metric's family → :class:`~neardup.join.vector_tables.VectorTables` in memory,
which every query searches → the exact values of the items met → a list of
:class:`~neardup.lookup.Match` per query. It speaks the vocabulary of every index
(:class:`~neardup.lookup.NearIndex`): ``add``, ``upsert``, ``delete``, ``get``,
``query(vectors, threshold=, k=)``, ``info``, ``close``.

An index made by :meth:`VectorIndex.open` also keeps every vector in a file: each batch is
written in one SQLite transaction before the tables change, so a batch survives a crash of the
process (``kill -9``) once ``add`` returns, and a crash inside it leaves none of it; opening
the file again reads every vector back into the tables (hashing them again: ``O(n b r dim)``).
The file is the index's durable record and the tables its search structure: one process
writes a file at a time (another process's writes are seen when the file is opened again).

The file is an :class:`~neardup.index.sqlite.SQLiteStore` (schema, WAL mode and crash safety
documented there) whose header is this index's. One vector is one ``documents`` row::

    id            the vector's id
    fingerprint   BLAKE2b-128 of the signature's bytes (verify_integrity recomputes it)
    signature     the vector's row, little-endian: dim float64 (cosine, l2), dim int64
                  (l1), or ceil(dim / 64) uint64 words, bit j of word j // 64 (hamming)
    num_shingles  dim
    metadata      JSON text or NULL
    keys          its num_bands band keys, uint64, each posted in postings (band, key, doc)

The header (JSON, in ``meta``): ``kind`` ``"neardup-vector-index"``, ``format_version``,
``spec`` (:meth:`~neardup.params.JoinSpec.to_dict`), ``dim``, ``max_value``, ``num_bands``
and ``num_rows`` (chosen once, at creation), ``family`` (the LSH family's class) and
``created_with`` (the neardup version). An index opened later uses them, and refuses
explicit parameters that differ.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from neardup._faults import crash_point
from neardup._types import U64Array
from neardup._version import __version__
from neardup.errors import IncompatibleError, InputError, ParameterError, StoreError
from neardup.index.sqlite import SQLiteStore
from neardup.index.store import DocumentRows, Store, StoredDocument, metadata_json
from neardup.join.vector_tables import VectorTables
from neardup.kinds import METRICS
from neardup.lookup import Match, check_ids, check_k, closed_error, ids_exist, ranked
from neardup.params import JoinSpec
from neardup.sketch.signatures import differences

__all__ = ["HEADER_KIND", "IndexedVector", "VectorIndex"]

HEADER_KIND = "neardup-vector-index"
FORMAT_VERSION = 1
"""The version of the header and row layout above; a newer file is refused."""
REPAIR_ADVICE = "restore it from a copy, or build it again (VectorIndex.open, then add the vectors)"
"""What to do about a damaged vector index file: the end of every such :class:`StoreError`."""
CHECK_ROWS = 1000
"""Stored vectors hashed at once by :meth:`VectorIndex.verify_integrity`."""


@dataclass(frozen=True, slots=True)
class IndexedVector:
    """What the index holds about an item: its vector and metadata (:meth:`VectorIndex.get`)."""

    id: str
    vector: NDArray[Any]
    """A copy of the stored row, in the index's dtype."""
    metadata: Any

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "vector", "metadata"}``, the vector as a list, as the service answers.

        Examples
        --------
        >>> IndexedVector("a", np.array([0.5, 1.0]), None).to_dict()
        {'id': 'a', 'vector': [0.5, 1.0], 'metadata': None}
        """
        return {"id": self.id, "vector": self.vector.tolist(), "metadata": self.metadata}


class VectorIndex:
    """Vectors under string ids, searchable in batches for the stored ones near each query.

    In memory; :meth:`open` makes (or opens) one kept in a file as well.

    Parameters
    ----------
    spec
        A ``cosine``, ``hamming``, ``l1`` or ``l2`` spec: the default threshold of
        :meth:`query`, the family's parameters and the seed. The bands are the spec's
        ``num_bands`` and ``num_rows`` when given; otherwise chosen at construction by
        :func:`~neardup.lsh.amplify.choose_amplification` for ``spec.recall`` at the threshold
        without a sample of the data (the far pairs taken as spread uniformly below the
        threshold's collision probability): give the bands, or take them from a
        :func:`~neardup.join.vectors.vector_join` of representative data (its ``info``),
        where the data are known.
    dim
        The vectors' dimension (bits for ``hamming``).
    max_value
        The unary code's ``C`` (``l1`` with ``spec.family="unary"``) when ``spec.max_value`` is
        ``None``: one of them is required there.

    Notes
    -----
    The rows each metric takes are :mod:`neardup.join.vectors`'s: finite reals for
    ``cosine`` and ``l2``, non-negative integer counts for ``l1``, bits packed into uint64
    words for ``hamming``. A query finds a stored vector within the threshold when they share
    a band's key: with probability ``predicted_recall`` at ``spec.threshold``, more when
    nearer; every match is measured exactly (the :class:`~neardup.lookup.Match` has the
    cosine as ``similarity``, or the distance as ``distance``). Costs are those of
    :class:`~neardup.join.vector_tables.VectorTables`: hashing, ``O(b r dim)`` a vector; a query
    ``O(b log n)`` plus ``O(dim)`` per item met; with a file, one transaction per batch
    (``b`` posting inserts a vector). Memory: the vectors, ``16 b`` bytes each for the
    tables, and the rows of deleted or replaced vectors until the index is opened again.
    Thread-safe: one call runs at a time.

    Examples
    --------
    >>> spec = JoinSpec(metric="l2", threshold=1.0, num_bands=8, num_rows=2, bucket_width=4.0)
    >>> with VectorIndex(spec, dim=2) as index:
    ...     index.add(["origin", "far"], np.array([[0.0, 0.0], [10.0, 10.0]]))
    ...     index.query(np.array([[0.5, 0.0]]))
    [[Match(id='origin', similarity=None, distance=0.5)]]
    """

    def __init__(self, spec: JoinSpec, dim: int, *, max_value: int | None = None) -> None:
        self._tables = VectorTables(spec, dim, max_value=max_value)
        self.spec = spec
        self.dim = dim
        self.max_value = self._tables.max_value
        self.num_bands, self.num_rows = self._tables.num_bands, self._tables.num_rows
        self.width = self._tables.width
        """Values in a row: ``dim``, or ``ceil(dim / 64)`` uint64 words for ``hamming``."""
        self.dtype = self._tables.dtype
        """What a row is stored as: float64 (``cosine``, ``l2``), int64 (``l1``) or uint64."""
        self.collision_probability = self._tables.collision_probability
        """One elementary hash's collision probability at ``spec.threshold``."""
        self.predicted_recall = self._tables.predicted_recall
        """The chance the bands make a pair exactly at ``spec.threshold`` a candidate."""
        self.header: dict[str, Any] = {
            "kind": HEADER_KIND,
            "format_version": FORMAT_VERSION,
            "spec": spec.to_dict(),
            "dim": dim,
            "max_value": self.max_value,
            "num_bands": self.num_bands,
            "num_rows": self.num_rows,
            "family": self._tables.family,
            "created_with": __version__,
        }
        """How the index was made: written into its file, checked when it is opened."""
        self._store: Store | None = None
        self._ids: list[str | None] = []
        """The id of each item number of the tables (None once deleted or replaced)."""
        self._items: dict[str, int] = {}
        self._metadata: dict[int, str] = {}
        """The JSON text of each item's metadata (items without any are left out)."""
        self._lock = threading.RLock()
        self._closed = False

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        spec: JoinSpec | None = None,
        dim: int | None = None,
        max_value: int | None = None,
        create: bool | None = None,
    ) -> VectorIndex:
        """The vector index file at ``path`` (an :class:`~neardup.index.SQLiteStore`).

        Parameters
        ----------
        path
            The index file.
        spec, dim, max_value
            As for :class:`VectorIndex`: required to create an index. For an existing one,
            leave them out (the header's are used); given and different, they raise
            :class:`~neardup.errors.IncompatibleError` naming the fields.
        create
            ``None`` (default): open the index, or create it where no file exists. ``False``:
            open an existing index only (nothing is ever created or changed when that fails).
            ``True``: create a new index; ``path`` must not exist.

        Raises
        ------
        StoreError
            ``path`` is not what ``create`` asks for (see :class:`~neardup.index.SQLiteStore`),
            holds another kind of index, a newer format, or a damaged header or vector.
        ParameterError
            The parameters of a new index are invalid or missing; no file is left behind.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "vectors.ndx"
        >>> spec = JoinSpec(metric="cosine", threshold=0.9, num_bands=16, num_rows=4)
        >>> with VectorIndex.open(path, spec=spec, dim=3) as index:
        ...     index.add(["x", "y"], np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))
        >>> with VectorIndex.open(path) as index:  # the parameters come from the file
        ...     [[best]] = index.query(np.array([[2.0, 0.1, 0.0]]), k=1)
        ...     len(index), best.id, round(best.similarity, 4)
        (2, 'x', 0.9988)
        """
        made = None
        if create is not False and spec is not None and dim is not None:
            made = cls(spec, dim, max_value=max_value)  # refuses bad parameters before a file
        elif create is True:
            raise ParameterError(
                f"VectorIndex.open: give spec and dim to create an index at {path}."
            )
        store = SQLiteStore(path, create=create)
        try:
            header = store.read_header()
            if header is None:
                if create is False:
                    raise StoreError(
                        f"{path}: an index without a header (its creation was interrupted): "
                        "delete it and create it again"
                    )
                if made is None:
                    raise ParameterError(
                        f"VectorIndex.open: no index at {path} yet; give spec and dim to make one."
                    )
                store.write_header(made.header)
                index = made
            else:
                index = cls._reopened(Path(path), header, spec, dim, max_value)
            index._attach(store)
            return index
        except BaseException:
            if store.created:
                store.remove()
            else:
                store.close()
            raise

    @classmethod
    def _reopened(
        cls,
        path: Path,
        header: dict[str, Any],
        spec: JoinSpec | None,
        dim: int | None,
        max_value: int | None,
    ) -> VectorIndex:
        """The index an existing file's header describes; refuses other parameters given."""
        if header.get("kind") != HEADER_KIND:
            raise StoreError(
                f"{path}: not a neardup vector index (header kind {header.get('kind')!r})"
            )
        version = header.get("format_version")
        if isinstance(version, int) and version > FORMAT_VERSION:
            raise StoreError(
                f"{path}: a vector index of format version {version}; this neardup reads "
                f"versions up to {FORMAT_VERSION}: upgrade neardup"
            )
        try:
            if version != FORMAT_VERSION:
                raise ValueError(f"format version {version!r}")
            stored = JoinSpec.from_dict(header["spec"])
            bands = replace(
                stored, num_bands=int(header["num_bands"]), num_rows=int(header["num_rows"])
            )
            index = cls(bands, header["dim"], max_value=header["max_value"])
            family = str(header["family"])
        except (KeyError, TypeError, ValueError) as exc:  # ParameterError is a ValueError
            raise StoreError(
                f"{path}: the index header is damaged ({exc}): {REPAIR_ADVICE}"
            ) from None
        have = {"spec": stored.to_dict(), "dim": index.dim, "max_value": index.max_value}
        asked = {
            "spec": have["spec"] if spec is None else spec.to_dict(),
            "dim": index.dim if dim is None else dim,
            "max_value": index.max_value if max_value is None else max_value,
        }
        diffs = differences(have, asked)
        if family != index._tables.family:
            diffs.append(f"family ({family!r} != {index._tables.family!r})")
        if diffs:
            raise IncompatibleError(
                f"{path}: the index was made with other parameters: {'; '.join(diffs)} "
                "(the index's first)"
            )
        index.spec, index.header = stored, header
        return index

    def _attach(self, store: Store) -> None:
        """Keep ``store`` as the durable record, and read every vector in it into the tables."""
        ids: list[str] = []
        rows: list[NDArray[Any]] = []
        metadata: list[str | None] = []
        for doc in store.all_documents():
            rows.append(self._row_of(doc, store))
            ids.append(doc.id)
            metadata.append(doc.metadata)
        matrix = np.stack(rows) if rows else np.empty((0, self.width), self.dtype)
        try:
            self._tables.checked(matrix, "its stored vectors")
        except InputError as exc:  # a value the family cannot hash: damaged bytes
            raise StoreError(
                f"{_where(store)}the index file is damaged ({exc}): {REPAIR_ADVICE}"
            ) from None
        self._remember(ids, matrix, None, metadata)
        self._store = store

    def _row_of(self, doc: StoredDocument, store: Store) -> NDArray[Any]:
        """A stored document's vector, in the tables' dtype (a StoreError when misshapen)."""
        if doc.signature.shape != (self.width,):
            raise StoreError(
                f"{_where(store)}the index file is damaged (vector {doc.id!r} has "
                f"{doc.signature.shape[0]} words, not {self.width}): {REPAIR_ADVICE}"
            )
        row: NDArray[Any] = doc.signature.view(self.dtype)
        return row

    def __enter__(self) -> VectorIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the file, if any, and release the vectors; later calls raise StoreError."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._store is not None:
                self._store.close()
            self._tables.clear()
            self._ids, self._items, self._metadata = [], {}, {}

    @contextmanager
    def _using(self) -> Iterator[None]:
        """One call at a time, on an index that is not closed."""
        with self._lock:
            if self._closed:
                raise closed_error("VectorIndex")
            yield

    def __len__(self) -> int:
        with self._using():
            return len(self._items)

    # writing ------------------------------------------------------------------------------

    def add(self, ids: Sequence[str], vectors: Any, metadata: Sequence[Any] | None = None) -> None:
        """Add new vectors, all or none; an id already stored is an error.

        ``metadata``: a JSON-serialisable value per vector, or None. Cost: hashing, and with a
        file one transaction of ``num_bands`` posting inserts a vector; the tables take the
        new vectors at the next query.

        Raises
        ------
        IdExistsError
            Some ids are already stored (its ``ids`` lists them); nothing was added.
            :meth:`upsert` replaces such vectors.
        InputError
            An id is not a non-empty string or appears twice; rows of the wrong shape or dtype,
            or values the family cannot hash. Nothing is added then.
        """
        self._write(ids, vectors, metadata, replace=False, owner="VectorIndex.add")

    def upsert(
        self, ids: Sequence[str], vectors: Any, metadata: Sequence[Any] | None = None
    ) -> None:
        """Add vectors, replacing stored ones with the same ids, all or none (as :meth:`add`)."""
        self._write(ids, vectors, metadata, replace=True, owner="VectorIndex.upsert")

    def delete(self, ids: Sequence[str]) -> list[str]:
        """Remove vectors; return the ids that were stored, each once, in the order given.

        Cost: with a file, ``num_bands`` primary-key deletes a vector; the tables skip the
        removed items, and drop them once they are half the entries.
        """
        with self._using():
            present = list(dict.fromkeys(i for i in ids if i in self._items))
            if self._store is not None and present:
                with self._store.transaction():
                    self._store.delete(present)
            self._forget(present)
            return present

    def _write(
        self,
        ids: Sequence[str],
        vectors: Any,
        metadata: Sequence[Any] | None,
        *,
        replace: bool,
        owner: str,
    ) -> None:
        with self._using():
            rows = self._tables.checked(vectors, owner)
            if rows.shape[0] != len(ids):
                raise ParameterError(f"{owner}: got {rows.shape[0]} vectors for {len(ids)} ids.")
            if metadata is not None and len(metadata) != len(ids):
                raise ParameterError(
                    f"{owner}: got {len(metadata)} metadata entries for {len(ids)} ids."
                )
            check_ids(ids)
            ids = list(ids)
            texts = [metadata_json(m) for m in metadata] if metadata is not None else None
            if not replace and (clash := [i for i in ids if i in self._items]):
                raise ids_exist(clash, "nothing of this batch was added")
            keys = self._tables.keys(rows)
            if self._store is not None:
                self._save(ids, rows, keys, texts or [None] * len(ids), replace=replace)
            if replace:
                self._forget([i for i in ids if i in self._items])
            self._remember(ids, rows, keys, texts)

    def _save(
        self,
        ids: list[str],
        rows: NDArray[Any],
        keys: U64Array,
        metadata: list[str | None],
        *,
        replace: bool,
    ) -> None:
        """Write a batch to the file in one transaction (replacing stored ids, or refusing)."""
        store = self._store
        assert store is not None
        batch = DocumentRows(
            ids=ids,
            fingerprints=_fingerprints(rows),
            signatures=rows.view(np.uint64),
            num_shingles=np.full(len(ids), self.dim, dtype=np.int64),
            keys=keys,
            metadata=metadata,
        )
        with store.transaction():
            present = store.docs_of(ids)
            if replace:
                store.delete(list(present))
            elif present:
                raise ids_exist([i for i in ids if i in present], "nothing of this batch was added")
            store.insert(batch)
            crash_point("vector-batch-inserted")

    def _remember(
        self,
        ids: list[str],
        rows: NDArray[Any],
        keys: U64Array | None,
        metadata: Sequence[str | None] | None,
    ) -> None:
        """Put stored vectors into the tables under their ids."""
        items = self._tables.add(rows, keys).tolist()
        assert items == list(range(len(self._ids), len(self._ids) + len(ids)))
        self._ids.extend(ids)
        self._items.update(zip(ids, items, strict=True))
        if metadata is not None:
            self._metadata.update(
                (item, text) for item, text in zip(items, metadata, strict=True) if text is not None
            )

    def _forget(self, ids: list[str]) -> None:
        """Take stored vectors out of the tables (their rows stay until the index is reopened)."""
        items = [self._items.pop(doc_id) for doc_id in ids]
        for item in items:
            self._ids[item] = None
            self._metadata.pop(item, None)
        if items:
            self._tables.remove(np.array(items, dtype=np.int64))

    # reading ------------------------------------------------------------------------------

    def get(self, doc_id: str) -> IndexedVector | None:
        """The stored vector and metadata of ``doc_id``, or None. Cost: a dict lookup."""
        with self._using():
            item = self._items.get(doc_id)
            if item is None:
                return None
            text = self._metadata.get(item)
            try:
                metadata = None if text is None else json.loads(text)
            except ValueError as exc:
                raise StoreError(
                    f"{_where(self._store)}vector {doc_id!r}: its metadata is not valid JSON "
                    f"({exc}): the index is damaged: {REPAIR_ADVICE}"
                ) from None
            return IndexedVector(doc_id, self._tables.vector(item), metadata)

    def query(
        self,
        vectors: Any,
        *,
        threshold: float | None = None,
        k: int | None = None,
        probe_limit: bool = False,
    ) -> list[list[Match]]:
        """The stored vectors near each query, best first (then by id), among those met.

        Parameters
        ----------
        vectors
            A batch of queries, rows as :meth:`add` takes.
        threshold
            A cosine (items at or above it) or a distance (``hamming``, ``l1``, ``l2``: items
            at or below it); ``spec.threshold`` when ``None``, unless ``k`` alone is given.
        k
            At most this many a query. Alone: the ``k`` best of the items that share a band
            with the query, however far (approximate: an item sharing none is never ranked).
        probe_limit
            Seed 002's probe: stop each query once ``2 num_bands`` bucket entries are taken
            (:meth:`~neardup.join.vector_tables.VectorTables.search` states its guarantee).

        Returns
        -------
        list[list[Match]]
            Per query, each :class:`~neardup.lookup.Match` with the exact cosine as
            ``similarity``, or the exact distance as ``distance``.
        """
        with self._using():
            check_k(k)
            limit = None if threshold is None and k is not None else self._threshold(threshold)
            found = self._tables.search(
                vectors, threshold=limit, probe_limit=probe_limit, owner="VectorIndex.query"
            )
            is_similarity = METRICS[self.spec.metric].measure == "similarity"
            ends = np.searchsorted(found.query, np.arange(found.num_checked.shape[0] + 1))
            names = [self._ids[i] for i in found.item.tolist()]
            values = found.values.tolist()
            out: list[list[Match]] = []
            for lo, hi in zip(ends[:-1].tolist(), ends[1:].tolist(), strict=True):
                matches = [
                    Match(name, value, None) if is_similarity else Match(name, None, value)
                    for name, value in zip(names[lo:hi], values[lo:hi], strict=True)
                    if name is not None
                ]
                out.append(ranked(matches, k))
            return out

    def _threshold(self, threshold: float | None) -> float:
        if threshold is None:
            return self.spec.threshold
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise ParameterError(f"threshold must be a number; got {threshold!r}.")
        if not math.isfinite(threshold):
            raise ParameterError(f"threshold must be a finite number; got {threshold!r}.")
        return float(threshold)

    def info(self) -> dict[str, Any]:
        """The document count, the measure (the metric), the header and, for a file, its size."""
        with self._using():
            out: dict[str, Any] = {
                "documents": len(self._items),
                "measure": self.spec.metric,
                "header": dict(self.header),
            }
            size = getattr(self._store, "file_bytes", None)
            if size is not None:
                num_bytes = size()
                out["bytes"] = num_bytes
                out["bytes_per_document"] = round(num_bytes / max(out["documents"], 1), 1)
            return out

    # integrity ----------------------------------------------------------------------------

    def verify_integrity(self) -> list[str]:
        """Every inconsistency of the file (empty when sound, and for an index in memory).

        SQLite's integrity check and the store's own (every posting against the stored keys);
        then each stored vector: its size, its bytes against their fingerprint, values the
        family can hash, its metadata, and its band keys computed again against the postings;
        and the ids stored against those this index holds. Cost: a full scan, hashing every
        vector.

        Raises
        ------
        StoreError
            The file is damaged where the scan cannot go on (SQLite reports it malformed).
        """
        with self._using():
            store = self._store
            if store is None:
                return []
            problems: list[str] = []
            check_file = getattr(store, "integrity_problems", None)
            if check_file is not None:
                problems.extend(check_file())
            expected: list[tuple[int, int, int]] = []
            stored: set[str] = set()
            chunk: list[StoredDocument] = []
            for doc in store.all_documents():
                stored.add(doc.id)
                problem = self._row_problem(doc)
                if problem is not None:
                    problems.append(f"vector {doc.id!r}: {problem}")
                else:
                    chunk.append(doc)
                if len(chunk) == CHECK_ROWS:
                    expected.extend(self._postings_of(chunk, problems))
                    chunk = []
            expected.extend(self._postings_of(chunk, problems))
            band, key, doc_number = store.all_postings()
            actual = zip(band.tolist(), key.tolist(), doc_number.tolist(), strict=True)
            if sorted(actual) != sorted(expected):
                problems.append("postings do not match the vectors' band keys")
            if stored != set(self._items):
                problems.append(
                    f"the file holds {len(stored - set(self._items)):,} ids this index does not "
                    f"and lacks {len(set(self._items) - stored):,} it holds (did another process "
                    "write it? open it again)"
                )
            return problems

    def _row_problem(self, doc: StoredDocument) -> str | None:
        """What is wrong with a stored vector's row, size, fingerprint or metadata, if anything."""
        if doc.signature.shape != (self.width,):
            return f"{doc.signature.shape[0]} words, not {self.width}"
        if doc.num_shingles != self.dim:
            return f"dimension {doc.num_shingles}, not {self.dim}"
        if doc.fingerprint != _fingerprints(doc.signature[None, :])[0].astype("<u8").tobytes():
            return "its bytes do not match their fingerprint"
        if doc.metadata is not None:
            try:
                json.loads(doc.metadata)
            except ValueError:
                return "metadata that is not JSON"
        return None

    def _postings_of(
        self, docs: list[StoredDocument], problems: list[str]
    ) -> list[tuple[int, int, int]]:
        """The postings ``(band, key, doc)`` the vectors' band keys name, computed again."""
        postings: list[tuple[int, int, int]] = []
        for doc in docs:
            vector = doc.signature.view(self.dtype)[None, :]
            try:
                row = self._tables.checked(vector, f"vector {doc.id!r}")
            except InputError as exc:
                problems.append(str(exc))
                continue
            keys = self._tables.keys(row)[0]
            postings.extend((b, int(k), doc.doc) for b, k in enumerate(keys.tolist()))
        return postings

    def _check(self) -> None:
        """Assert every internal invariant, and the file's integrity (for tests)."""
        with self._using():
            self._tables._check()
            assert len(self._tables) == len(self._items)
            assert all(self._ids[item] == doc_id for doc_id, item in self._items.items())
            assert sum(doc_id is not None for doc_id in self._ids) == len(self._items)
            assert set(self._metadata) <= set(self._items.values())
            problems = self.verify_integrity()
            assert not problems, problems


def _fingerprints(rows: NDArray[Any]) -> U64Array:
    """``uint64[n, 2]``: BLAKE2b-128 of each row's bytes, as two little-endian words."""
    out = np.empty((rows.shape[0], 2), dtype=np.uint64)
    for i in range(rows.shape[0]):
        digest = hashlib.blake2b(np.ascontiguousarray(rows[i]).tobytes(), digest_size=16).digest()
        out[i] = np.frombuffer(digest, dtype="<u8")
    return out


def _where(store: Store | None) -> str:
    """``"PATH: "`` for a store in a file, else nothing: the start of a message."""
    path = getattr(store, "path", None)
    return "" if path is None else f"{path}: "
