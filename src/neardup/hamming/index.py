"""An in-memory SimHash index: add documents, ask which stored ones are within ``h`` bits.

Fingerprints live in one array. Most of them are covered by block-permuted tables
(:class:`~neardup.hamming.pairs.FingerprintTables`); the ones added since the tables were
built are scanned by popcount, and the tables are rebuilt once that tail outgrows half the
indexed part (amortised O(log n) sorts per fingerprint). Removed documents are masked until
the next rebuild. The index saves to one ``.npz`` file with every parameter that made its
fingerprints, the IDF weights included, and refuses a file made differently.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from neardup._types import I64Array, U64Array
from neardup._version import __version__
from neardup.errors import IdExistsError, IncompatibleError, InputError, ParameterError
from neardup.hamming.pairs import FingerprintTables
from neardup.params import SketchSpec
from neardup.sketch.signatures import differences, provenance_of
from neardup.sketch.simhash import SimHasher, hamming_distance
from neardup.sketch.weighted import IDFWeights

__all__ = ["HammingIndex", "HammingMatch"]

FILE_FORMAT = "neardup-hamming-index"
FILE_VERSION = 1
MIN_REBUILD = 1024
"""Fingerprints added before the tables are first built (the tail is scanned until then)."""
SCAN_CELLS = 1 << 22
"""Query-by-fingerprint distances computed at once when scanning the untabled tail."""


@dataclass(frozen=True, slots=True)
class HammingMatch:
    """A stored document whose fingerprint is ``distance`` bits from the query's."""

    id: str
    distance: int


class HammingIndex:
    """Documents' SimHash fingerprints, searchable for every one within ``max_distance`` bits.

    Parameters
    ----------
    spec
        A ``kind="simhash"`` sketch spec (bits, weighting, projection, shingles, seed).
    max_distance
        ``h``: the default radius of :meth:`query`.
    idf
        The fitted IDF weights of ``weighting="tfidf"``; saved with the index.

    Examples
    --------
    >>> base = "the quick brown fox jumps over the lazy dog near the quiet river bank"
    >>> with HammingIndex(SketchSpec(kind="simhash")) as index:
    ...     index.add(["a", "b"], [base, "something else entirely, about the weather today"])
    ...     index.query([base + " again"])
    [[HammingMatch(id='a', distance=3)]]
    """

    def __init__(
        self,
        spec: SketchSpec | None = None,
        *,
        max_distance: int = 7,
        idf: IDFWeights | None = None,
    ) -> None:
        self.spec = spec if spec is not None else SketchSpec(kind="simhash")
        self.max_distance = max_distance
        self.idf = idf
        self._hasher = SimHasher(self.spec, idf)
        self._ids: list[str] = []
        self._row_of: dict[str, int] = {}
        self._values = np.empty((0, self._hasher.width), dtype=np.uint64)
        self._live = np.empty(0, dtype=bool)
        self._tables: FingerprintTables | None = None
        self._indexed = 0

    def __enter__(self) -> HammingIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._check()

    def __len__(self) -> int:
        return len(self._row_of)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._row_of

    def add(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        """Add new documents; an id already stored (or repeated) is an error, nothing added."""
        self.add_fingerprints(ids, self._hasher.sketch(texts).values)

    def add_fingerprints(self, ids: Sequence[str], values: U64Array) -> None:
        """Add fingerprints made with this index's spec (rows of ``simhash_bits / 64`` words)."""
        values = self._rows(values)
        if len(ids) != values.shape[0]:
            raise ParameterError(f"got {len(ids)} ids for {values.shape[0]} fingerprints.")
        clash = [i for i in ids if i in self._row_of]
        if clash or len(set(ids)) != len(ids):
            shown = ", ".join(map(repr, clash[:5])) or "repeated ids in the batch"
            raise IdExistsError(f"ids already in the index: {shown}; remove them first.")
        start = len(self._ids)
        self._ids.extend(ids)
        self._row_of.update((doc_id, start + i) for i, doc_id in enumerate(ids))
        self._values = np.concatenate([self._values, values])
        self._live = np.concatenate([self._live, np.ones(len(ids), dtype=bool)])
        if len(self._ids) - self._indexed > max(MIN_REBUILD, self._indexed // 2):
            self._rebuild()

    def remove(self, ids: Sequence[str]) -> list[str]:
        """Remove documents; return the ids that were present."""
        present = [doc_id for doc_id in ids if doc_id in self._row_of]
        for doc_id in present:
            self._live[self._row_of.pop(doc_id)] = False
        if len(self._row_of) < len(self._ids) // 2:
            self._rebuild()
        return present

    def query(
        self, texts: Sequence[str], *, max_distance: int | None = None
    ) -> list[list[HammingMatch]]:
        """Stored documents within ``max_distance`` (default ``h``) of each text, nearest first."""
        return self.query_fingerprints(self._hasher.sketch(texts).values, max_distance=max_distance)

    def query_fingerprints(
        self, values: U64Array, *, max_distance: int | None = None
    ) -> list[list[HammingMatch]]:
        """:meth:`query` for fingerprints made with this index's spec."""
        queries = self._rows(values)
        h = self.max_distance if max_distance is None else max_distance
        query, row = self._search(queries, h)
        distance = hamming_distance(queries[query], self._values[row])
        order = np.lexsort((row, distance, query))
        out: list[list[HammingMatch]] = [[] for _ in range(queries.shape[0])]
        for q, r, d in zip(
            query[order].tolist(), row[order].tolist(), distance[order].tolist(), strict=True
        ):
            out[q].append(HammingMatch(id=self._ids[r], distance=d))
        return out

    def _search(self, queries: U64Array, h: int) -> tuple[I64Array, I64Array]:
        """``(query, row)`` of live rows within ``h`` bits (tables for the indexed part)."""
        found_q: list[I64Array] = []
        found_r: list[I64Array] = []
        indexed = self._indexed
        if self._tables is not None and h == self.max_distance:
            query, row = self._tables.query(queries)
            found_q.append(query)
            found_r.append(row)
        else:
            indexed = 0  # another radius than the tables': scan everything
        tail = self._values[indexed:]
        step = max(1, SCAN_CELLS // max(tail.shape[0], 1))  # bounds the distance matrix
        for start in range(0, queries.shape[0] if tail.shape[0] else 0, step):
            distance = hamming_distance(queries[start : start + step, None, :], tail[None, :, :])
            query, row = np.nonzero(distance <= h)
            found_q.append(query.astype(np.int64) + start)
            found_r.append(row.astype(np.int64) + indexed)
        if not found_q:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        query, row = np.concatenate(found_q), np.concatenate(found_r)
        live = self._live[row]
        return query[live], row[live]

    def _rows(self, values: U64Array) -> U64Array:
        rows = np.ascontiguousarray(values, dtype=np.uint64)
        if rows.ndim == 1 and self._hasher.width == 1:
            rows = rows[:, None]
        if rows.ndim != 2 or rows.shape[1] != self._hasher.width:
            raise ParameterError(
                f"fingerprints of {self.spec.simhash_bits} bits are rows of "
                f"{self._hasher.width} uint64 words; got shape {np.shape(values)}."
            )
        return rows

    def _rebuild(self) -> None:
        """Drop removed rows and build the tables over everything stored."""
        keep = np.flatnonzero(self._live)
        self._ids = [self._ids[i] for i in keep.tolist()]
        self._row_of = {doc_id: i for i, doc_id in enumerate(self._ids)}
        self._values = self._values[keep]
        self._live = np.ones(len(self._ids), dtype=bool)
        self._tables = FingerprintTables(self._values, self.max_distance) if len(keep) else None
        self._indexed = len(self._ids)

    def _check(self) -> None:
        """Assert every internal invariant (tests call this after each operation)."""
        n = len(self._ids)
        assert self._values.shape == (n, self._hasher.width)
        assert self._live.shape == (n,)
        assert int(self._live.sum()) == len(self._row_of)
        assert all(self._ids[row] == doc_id for doc_id, row in self._row_of.items())
        assert all(self._live[row] for row in self._row_of.values())
        assert 0 <= self._indexed <= n
        if self._tables is not None:
            assert self._tables.rows.shape[0] == self._indexed

    def parameters(self) -> dict[str, Any]:
        """How the fingerprints were made and searched: stored with the index, checked on load."""
        return {
            "format": FILE_FORMAT,
            "file_version": FILE_VERSION,
            "neardup_version": __version__,
            "provenance": provenance_of(self.spec),
            "max_distance": self.max_distance,
            "idf": self.idf.describe() if self.idf is not None else None,
        }

    def save(self, path: Path | str) -> None:
        """Write the index to ``path`` (a ``.npz`` file) atomically: whole, or not at all."""
        path = Path(path)
        live = np.flatnonzero(self._live)
        arrays: dict[str, Any] = {
            "parameters": np.array(json.dumps(self.parameters())),
            "ids": np.array([self._ids[i] for i in live.tolist()], dtype=str),
            "values": self._values[live],
        }
        if self.idf is not None:
            arrays |= {"idf_features": self.idf.features_, "idf_values": self.idf.idf_}
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, **arrays)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: Path | str, spec: SketchSpec | None = None) -> HammingIndex:
        """Read an index saved by :meth:`save`; a ``spec`` that differs is an error."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                parameters = json.loads(str(data["parameters"]))
                arrays = {name: data[name] for name in data.files}
        except (OSError, ValueError, KeyError) as exc:
            raise InputError(f"not a neardup Hamming index ({exc})", path=path) from None
        if parameters.get("format") != FILE_FORMAT or parameters.get("file_version") != 1:
            raise InputError("not a neardup Hamming index of file version 1", path=path)
        stored = SketchSpec.from_dict(parameters["provenance"]["sketch"])
        if spec is not None and spec != stored:
            diffs = "; ".join(differences(stored.to_dict(), spec.to_dict()))
            raise IncompatibleError(
                f"{path}: the index was made with other parameters: {diffs} (the index's first)"
            )
        idf = None
        if parameters["idf"] is not None:
            idf = IDFWeights(stored).set_learned(
                arrays["idf_features"], arrays["idf_values"], parameters["idf"]["num_docs"]
            )
        index = cls(stored, max_distance=parameters["max_distance"], idf=idf)
        if parameters["provenance"] != provenance_of(stored):
            raise IncompatibleError(
                f"{path}: made by another fingerprint scheme or Unicode version "
                f"({parameters['provenance']}); rebuild the index."
            )
        index.add_fingerprints(arrays["ids"].tolist(), arrays["values"])
        return index
