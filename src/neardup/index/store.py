"""Where an :class:`~neardup.index.LSHIndex` keeps its documents and band postings.

A store is a small protocol with two real implementations: :class:`MemoryStore` (dicts, for
tests and short-lived use) and :class:`~neardup.index.sqlite.SQLiteStore` (an embedded file).

Documents are numbered by the store (``doc``), and a number is never reused: a row, once
written, never changes, so a reader may cache it by number. Replacing a document deletes the
old row and writes a new one.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from neardup._types import I64Array, U64Array
from neardup.errors import ParameterError

__all__ = [
    "DocumentRows",
    "MemoryStore",
    "Store",
    "StoredDocument",
    "metadata_json",
    "posting_bands",
]


def metadata_json(value: Any) -> str | None:
    """A document's metadata as the JSON text a store keeps (``None`` stays ``None``).

    Raises
    ------
    ParameterError
        The value cannot be written as JSON (a set, NaN, an object).

    Examples
    --------
    >>> metadata_json({"url": "https://example.org"}), metadata_json(None)
    ('{"url": "https://example.org"}', None)
    """
    if value is None:
        return None
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"document metadata must be JSON-serialisable; {exc}.") from None


def posting_bands(sizes: Sequence[int] | I64Array, num_bands: int) -> I64Array:
    """The band of every stored key of documents holding ``sizes`` keys, one after another.

    A document's keys are its ``num_bands`` band keys (band ``j`` for the ``j``-th), then the
    shingles of its containment sample, all in the band numbered ``num_bands``.

    Examples
    --------
    >>> posting_bands([3, 2], 2).tolist()
    [0, 1, 2, 0, 1]
    """
    counts = np.asarray(sizes, dtype=np.int64)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    bands: I64Array = np.minimum(np.arange(int(counts.sum())) - starts, num_bands)
    return bands


@dataclass(frozen=True, slots=True)
class DocumentRows:
    """A batch of documents to store, with their band keys and containment samples."""

    ids: Sequence[str]
    fingerprints: U64Array
    """``uint64[n, 2]``: the 128-bit exact fingerprints."""
    signatures: U64Array
    """``uint64[n, num_perm]``."""
    num_shingles: I64Array
    keys: U64Array
    """``uint64[n, num_bands]``: band keys; short documents (no shingle) get no postings."""
    metadata: Sequence[str | None]
    """JSON text per document, or None."""
    samples: Sequence[U64Array] = ()
    """Per document, the shingles of its containment sample (posted in band ``num_bands``);
    empty when the index keeps none."""

    def __len__(self) -> int:
        return len(self.ids)

    def keys_of(self, i: int) -> U64Array:
        """Document ``i``'s stored keys: band keys, then sample (none without a shingle)."""
        if self.num_shingles[i] <= 0:
            return np.empty(0, dtype=np.uint64)
        keys: U64Array = self.keys[i]
        return np.concatenate([keys, self.samples[i]]) if self.samples else keys


@dataclass(frozen=True, slots=True)
class StoredDocument:
    """One stored document, as a store returns it."""

    doc: int
    id: str
    fingerprint: bytes
    signature: U64Array
    num_shingles: int
    metadata: str | None


class Store(Protocol):
    """The storage an index runs on. Every write happens inside :meth:`transaction`."""

    def read_header(self) -> dict[str, Any] | None:
        """The header written at creation, or None for a new, empty store."""

    def write_header(self, header: dict[str, Any]) -> None:
        """Write the header once, at creation."""

    def replace_header(self, header: dict[str, Any]) -> None:
        """Replace the header, as part of the transaction it is written in."""

    def transaction(self) -> Any:
        """A context manager: the writes inside it are all kept, or none (on an exception)."""

    def insert(self, rows: DocumentRows) -> None:
        """Store new documents and their postings (ids must not be stored yet)."""

    def delete(self, ids: Sequence[str]) -> list[str]:
        """Remove documents and their postings; return the ids that were stored."""

    def docs_of(self, ids: Sequence[str]) -> dict[str, int]:
        """The document numbers of the given ids that are stored."""

    def candidates(self, keys: U64Array, fingerprint: U64Array) -> list[int]:
        """Documents sharing a band key (``keys[band]``) or the exact fingerprint."""

    def holders(self, keys: U64Array, band: int) -> dict[int, int]:
        """For each document holding some of ``keys`` in ``band``, how many it holds."""

    def scan(
        self, band: I64Array, low: U64Array, high: U64Array
    ) -> tuple[I64Array, I64Array, U64Array]:
        """``(range, doc, key)`` of each posting in ``band[i]`` with a key in ``[low[i], high[i]]``.

        ``range`` is the ``i`` of the range a posting falls in; ranges do not straddle ``2^63``.
        """

    def documents(self, docs: Sequence[int]) -> list[StoredDocument]:
        """The stored rows of the given document numbers (missing ones are left out)."""

    def get(self, doc_id: str) -> StoredDocument | None:
        """The stored row of ``doc_id``, or None."""

    def count(self) -> int:
        """How many documents are stored."""

    def documents_ever(self) -> int:
        """How many documents were ever stored (numbers are never reused), at once."""

    def all_documents(self) -> Iterator[StoredDocument]:
        """Every stored document, by document number."""

    def all_postings(self) -> tuple[I64Array, U64Array, I64Array]:
        """Every posting as arrays ``(band, key, doc)``, in no particular order."""

    def close(self) -> None:
        """Release the store's resources."""


class MemoryStore:
    """A :class:`Store` in Python dicts: real, small, lost when the process ends.

    A transaction snapshots the dicts and restores them on an exception (O(size) per
    transaction), so writes are all-or-nothing as with SQLite.
    """

    def __init__(self) -> None:
        self._header: dict[str, Any] | None = None
        self._rows: dict[int, StoredDocument] = {}
        self._ids: dict[str, int] = {}
        self._postings: dict[tuple[int, int], set[int]] = {}
        self._keys: dict[int, list[tuple[int, int]]] = {}
        self._fingerprints: dict[bytes, set[int]] = {}
        self._next_doc = 1
        self._sorted: tuple[I64Array, U64Array, I64Array] | None = None
        """Every posting sorted by band and key (for :meth:`scan`), until the next write."""

    def read_header(self) -> dict[str, Any] | None:
        """The header, or None."""
        return None if self._header is None else dict(self._header)

    def write_header(self, header: dict[str, Any]) -> None:
        """Keep the header."""
        self._header = dict(header)

    replace_header = write_header

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All-or-nothing writes (the state is restored on an exception)."""
        saved = copy.deepcopy((self._header, self._rows, self._ids, self._postings, self._keys,
                               self._fingerprints, self._next_doc))  # fmt: skip
        self._sorted = None
        try:
            yield
        except BaseException:
            (self._header, self._rows, self._ids, self._postings, self._keys, self._fingerprints,
             self._next_doc) = saved  # fmt: skip
            raise
        finally:
            self._sorted = None

    def insert(self, rows: DocumentRows) -> None:
        """Store new documents and their postings."""
        self._sorted = None
        for i, doc_id in enumerate(rows.ids):
            if doc_id in self._ids:
                raise KeyError(doc_id)
            doc = self._next_doc
            self._next_doc += 1
            fingerprint = rows.fingerprints[i].astype("<u8").tobytes()
            self._rows[doc] = StoredDocument(
                doc=doc,
                id=doc_id,
                fingerprint=fingerprint,
                signature=rows.signatures[i].copy(),
                num_shingles=int(rows.num_shingles[i]),
                metadata=rows.metadata[i],
            )
            self._ids[doc_id] = doc
            self._fingerprints.setdefault(fingerprint, set()).add(doc)
            stored = rows.keys_of(i).tolist()
            bands = posting_bands([len(stored)], rows.keys.shape[1]).tolist()
            keys = list(zip(bands, stored, strict=True))
            for posting in keys:
                self._postings.setdefault(posting, set()).add(doc)
            self._keys[doc] = keys

    def delete(self, ids: Sequence[str]) -> list[str]:
        """Remove documents and their postings."""
        self._sorted = None
        deleted = []
        for doc_id in ids:
            doc = self._ids.pop(doc_id, None)
            if doc is None:
                continue
            row = self._rows.pop(doc)
            self._fingerprints[row.fingerprint].discard(doc)
            for posting in self._keys.pop(doc):
                self._postings[posting].discard(doc)
            deleted.append(doc_id)
        return deleted

    def docs_of(self, ids: Sequence[str]) -> dict[str, int]:
        """The document numbers of stored ids."""
        return {i: self._ids[i] for i in ids if i in self._ids}

    def candidates(self, keys: U64Array, fingerprint: U64Array) -> list[int]:
        """Documents sharing a band key or the fingerprint."""
        found = set(self._fingerprints.get(fingerprint.astype("<u8").tobytes(), set()))
        for band, key in enumerate(keys.tolist()):
            found |= self._postings.get((band, key), set())
        return sorted(found)

    def holders(self, keys: U64Array, band: int) -> dict[int, int]:
        """For each document holding some of ``keys`` in ``band``, how many it holds."""
        counts: dict[int, int] = {}
        for key in keys.tolist():
            for doc in self._postings.get((band, key), ()):
                counts[doc] = counts.get(doc, 0) + 1
        return counts

    def scan(
        self, band: I64Array, low: U64Array, high: U64Array
    ) -> tuple[I64Array, I64Array, U64Array]:
        """Postings in key ranges: binary searches over the postings sorted by band and key."""
        if self._sorted is None:
            self._sorted = self.all_postings()
        bands, keys, docs = self._sorted
        ranges: list[I64Array] = [np.empty(0, np.int64)]
        found: list[I64Array] = [np.empty(0, np.int64)]
        for b in np.unique(band).tolist():
            chosen = np.flatnonzero(band == b)
            first, last = np.searchsorted(bands, [b, b + 1])
            within = keys[first:last]
            begin = first + np.searchsorted(within, low[chosen].astype(np.uint64), side="left")
            end = first + np.searchsorted(within, high[chosen].astype(np.uint64), side="right")
            counts = np.maximum(end - begin, 0)
            starts = np.cumsum(counts) - counts
            ranges.append(np.repeat(chosen, counts))
            found.append(np.repeat(begin - starts, counts) + np.arange(int(counts.sum())))
        at = np.concatenate(found)
        return np.concatenate(ranges), docs[at], keys[at]

    def documents(self, docs: Sequence[int]) -> list[StoredDocument]:
        """Stored rows by number."""
        return [self._rows[d] for d in docs if d in self._rows]

    def get(self, doc_id: str) -> StoredDocument | None:
        """The stored row of an id."""
        doc = self._ids.get(doc_id)
        return None if doc is None else self._rows[doc]

    def count(self) -> int:
        """Stored documents."""
        return len(self._rows)

    def documents_ever(self) -> int:
        """Documents ever stored."""
        return self._next_doc - 1

    def all_documents(self) -> Iterator[StoredDocument]:
        """Every stored row, by number."""
        for doc in sorted(self._rows):
            yield self._rows[doc]

    def all_postings(self) -> tuple[I64Array, U64Array, I64Array]:
        """Every posting."""
        triples = sorted(
            (band, key, doc) for (band, key), docs in self._postings.items() for doc in docs
        )
        band = np.array([t[0] for t in triples], dtype=np.int64)
        key = np.array([t[1] for t in triples], dtype=np.uint64)
        doc = np.array([t[2] for t in triples], dtype=np.int64)
        return band, key, doc

    def close(self) -> None:
        """Nothing to release."""
