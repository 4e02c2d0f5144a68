"""An in-memory SimHash index: add documents, ask which stored ones are within ``h`` bits.

It speaks the vocabulary of every index, :class:`~neardup.lookup.NearIndex`: ``add``,
``upsert``, ``delete``, ``get``, ``query(texts, threshold=, k=)``, ``info``, ``close``; a
query answers with a list of :class:`~neardup.lookup.Match`, each with the ``distance`` in
bits and, as ``similarity``, the cosine that distance estimates, ``cos(π distance / bits)``.

Fingerprints live in one array. Most of them are covered by a search structure
(:class:`~neardup.hamming.pairs.FingerprintTables`): block-permuted tables (exact), or with
``search="psm"`` seed 004's single sorted copy searched by likely bit flips (a quarter of the
memory; exact with every flip set, faster and approximate with a ``budget``). The ones added
since it was built are scanned by popcount, and the search is rebuilt once that tail outgrows
half the indexed part (amortised O(log n) sorts per fingerprint). Deleted documents are masked until
the next rebuild. The index saves to one ``.npz`` file with every parameter that made its
fingerprints, the IDF weights included, and refuses a file made differently.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from neardup._kernels.vosh import MAX_SET_BITS
from neardup._types import F64Array, I64Array, U64Array
from neardup._version import __version__
from neardup.errors import IncompatibleError, InputError, ParameterError, StoreError
from neardup.hamming.flips import FlipModel
from neardup.hamming.pairs import FingerprintTables
from neardup.io.atomic import replaced_file
from neardup.io.output import check_output
from neardup.lookup import Match, check_ids, check_k, closed_error, ids_exist, ranked, renamed_k
from neardup.params import Search, SketchSpec
from neardup.sketch.signatures import Signatures, differences, provenance_of
from neardup.sketch.simhash import SimHasher, estimate_cosine, hamming_distance
from neardup.sketch.weighted import IDFWeights

__all__ = ["HammingIndex", "IndexedFingerprint"]

FILE_FORMAT = "neardup-hamming-index"
FILE_VERSION = 1
MIN_REBUILD = 1024
"""Fingerprints added before the tables are first built (the tail is scanned until then)."""
SCAN_CELLS = 1 << 22
"""Query-by-fingerprint distances computed at once when scanning the untabled tail."""
REPAIR_ADVICE = "restore it from a copy, or build the index again and save it"
"""What to do about a damaged index file: the end of every such :class:`StoreError`."""


@dataclass(frozen=True, slots=True)
class IndexedFingerprint:
    """What the index holds about a document: its SimHash fingerprint (:meth:`HammingIndex.get`).

    ``fingerprint``: ``simhash_bits / 64`` uint64 words (a copy).
    """

    id: str
    fingerprint: U64Array

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "fingerprint"}``, the words as integers.

        Examples
        --------
        >>> IndexedFingerprint("a", np.array([5], np.uint64)).to_dict()
        {'id': 'a', 'fingerprint': [5]}
        """
        return {"id": self.id, "fingerprint": self.fingerprint.tolist()}


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
    search
        ``"tables"`` (block-permuted tables) or ``"psm"`` (probabilistic SimHash matching).
    budget
        PSM's flip sets per query (and 64-bit word): ``None`` tries every set of at most ``h``
        header bits, an exact search; a small budget (8 on RFC paragraphs at ``h = 3``) finds
        some 95% of the neighbours much faster (docs/simhash.md).
    flips
        PSM's :class:`~neardup.hamming.flips.FlipModel`; ``None`` fits one from the first
        documents added as text (their bit weights), and it is saved with the index.

    Notes
    -----
    The index lives in memory: :meth:`save` writes it to a file (atomically, whole or not at
    all) and :meth:`load` reads it back; nothing is written between. For an index kept on
    disk through every write, use an :class:`~neardup.index.LSHIndex` of ``kind="simhash"``.

    Examples
    --------
    >>> base = "the quick brown fox jumps over the lazy dog near the quiet river bank"
    >>> with HammingIndex(SketchSpec(kind="simhash")) as index:
    ...     index.add(["a", "b"], [base, "something else entirely, about the weather today"])
    ...     index.query([base + " again"])
    [[Match(id='a', similarity=0.989176509964781, distance=3)]]
    """

    def __init__(
        self,
        spec: SketchSpec | None = None,
        *,
        max_distance: int = 7,
        idf: IDFWeights | None = None,
        search: Search = "tables",
        budget: int | None = None,
        flips: FlipModel | None = None,
    ) -> None:
        self.spec = spec if spec is not None else SketchSpec(kind="simhash")
        self.max_distance = max_distance
        self.idf = idf
        if search not in ("tables", "psm"):
            raise ParameterError(f"search must be 'tables' or 'psm'; got {search!r}.")
        widest = MAX_SET_BITS if self.spec.simhash_bits == 64 else 2 * MAX_SET_BITS + 1
        if search == "psm" and (max_distance > widest or (budget is not None and budget < 1)):
            raise ParameterError(
                f"search='psm' with {self.spec.simhash_bits}-bit fingerprints needs max_distance "
                f"<= {widest} and a budget of at least 1 (or None); got max_distance="
                f"{max_distance}, budget={budget}: lower them, or use search='tables'."
            )
        self.search = search
        self.budget = budget
        self.flips = flips
        self._hasher = SimHasher(self.spec, idf)
        self._ids: list[str] = []
        self._row_of: dict[str, int] = {}
        self._values = np.empty((0, self._hasher.width), dtype=np.uint64)
        self._live = np.empty(0, dtype=bool)
        self._tables: FingerprintTables | None = None
        self._indexed = 0
        self._closed = False

    def __enter__(self) -> HammingIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release the fingerprints; every later call but ``close`` raises :class:`StoreError`.

        Nothing is saved: :meth:`save` first what should outlive the index.
        """
        self._closed = True
        self._ids, self._row_of, self._tables, self._indexed = [], {}, None, 0
        self._values = np.empty((0, self._hasher.width), dtype=np.uint64)
        self._live = np.empty(0, dtype=bool)

    def _check_open(self) -> None:
        if self._closed:
            raise closed_error("HammingIndex")

    def __len__(self) -> int:
        self._check_open()
        return len(self._row_of)

    def __contains__(self, doc_id: object) -> bool:
        self._check_open()
        return doc_id in self._row_of

    # writing -----------------------------------------------------------------------------

    def add(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        """Add new documents; an id already stored is an error, and nothing is added.

        Raises
        ------
        IdExistsError
            Some ids are already stored (its ``ids`` lists them); :meth:`upsert` replaces them.
        InputError
            An id is not a non-empty string, or appears twice in the batch.
        """
        self._check_open()
        self._insert(ids, self._sketch(ids, texts), replace=False)

    def add_signatures(self, ids: Sequence[str], signatures: Signatures) -> None:
        """:meth:`add` for signatures made with this index's spec (by ``SimHasher.sketch``)."""
        self._check_open()
        self._check_spec(signatures)
        if len(ids) != signatures.num_docs:
            raise ParameterError(f"got {signatures.num_docs} signatures for {len(ids)} ids.")
        self._insert(ids, signatures.values, replace=False)

    def upsert(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        """Add documents, replacing stored ones with the same ids."""
        self._check_open()
        self._insert(ids, self._sketch(ids, texts), replace=True)

    def delete(self, ids: Sequence[str]) -> list[str]:
        """Remove documents; return the ids that were present, each once, in the order given."""
        self._check_open()
        present = list(dict.fromkeys(doc_id for doc_id in ids if doc_id in self._row_of))
        for doc_id in present:
            self._live[self._row_of.pop(doc_id)] = False
        if len(self._row_of) < len(self._ids) // 2:
            self._rebuild()
        return present

    def _sketch(self, ids: Sequence[str], texts: Sequence[str]) -> U64Array:
        """The fingerprints of ``texts``, one for each of ``ids``; PSM's model fitted first."""
        if len(ids) != len(texts):
            raise ParameterError(f"got {len(texts)} texts for {len(ids)} ids.")
        if self.search != "psm" or self.flips is not None or len(texts) < 2:
            return self._hasher.sketch(texts).values
        signatures, weights = self._hasher.sketch_with_bit_weights(texts)
        self.flips = FlipModel.fit(signatures.values[:, 0], weights[:, :64],
                                   max_distance=self.max_distance)  # fmt: skip
        return signatures.values

    def _insert(self, ids: Sequence[str], values: U64Array, *, replace: bool) -> None:
        """Store fingerprint rows under ``ids``; all of them, or (on an error) none."""
        values = self._rows(values)
        check_ids(ids)
        if replace:
            self.delete(ids)
        else:
            clash = [doc_id for doc_id in ids if doc_id in self._row_of]
            if clash:
                raise ids_exist(clash, "nothing of this batch was added")
        start = len(self._ids)
        self._ids.extend(ids)
        self._row_of.update((doc_id, start + i) for i, doc_id in enumerate(ids))
        self._values = np.concatenate([self._values, values])
        self._live = np.concatenate([self._live, np.ones(len(ids), dtype=bool)])
        if len(self._ids) - self._indexed > max(MIN_REBUILD, self._indexed // 2):
            self._rebuild()

    # reading -----------------------------------------------------------------------------

    def get(self, doc_id: str) -> IndexedFingerprint | None:
        """The stored fingerprint of ``doc_id``, or None. Cost: a dict lookup."""
        self._check_open()
        row = self._row_of.get(doc_id)
        return None if row is None else IndexedFingerprint(doc_id, self._values[row].copy())

    def query(
        self,
        texts: Sequence[str],
        *,
        threshold: float | None = None,
        k: int | None = None,
        max_distance: int | None = None,
        top_k: int | None = None,
    ) -> list[list[Match]]:
        """Stored documents within ``max_distance`` bits of each text, best first (then by id).

        Every stored document within ``max_distance`` (default ``h``) bits whose estimated
        cosine reaches ``threshold`` (default: none beyond the bits), cut to the ``k`` nearest
        when given. Each :class:`~neardup.lookup.Match` has the ``distance`` in bits and the
        cosine it estimates as ``similarity``, ``cos(π distance / simhash_bits)``. Cost: the
        tables' search plus a popcount per fingerprint added since they were built. ``top_k`` is
        the former name of ``k``, deprecated.
        """
        self._check_open()
        k = renamed_k(k, top_k, "HammingIndex.query")
        if self.search != "psm" or self.flips is None:
            return self.query_signatures(
                self._hasher.sketch(texts), threshold=threshold, k=k, max_distance=max_distance
            )
        signatures, weights = self._hasher.sketch_with_bit_weights(texts)
        probabilities = self.flips.probabilities(weights)
        return self._query(signatures, threshold, k, max_distance, probabilities)

    def query_signatures(
        self,
        signatures: Signatures,
        *,
        threshold: float | None = None,
        k: int | None = None,
        max_distance: int | None = None,
        top_k: int | None = None,
    ) -> list[list[Match]]:
        """:meth:`query` for signatures made with this index's spec (by ``SimHasher.sketch``).

        Without the bit weights, PSM takes every header bit as equally likely to flip.
        """
        self._check_open()
        k = renamed_k(k, top_k, "HammingIndex.query_signatures")
        return self._query(signatures, threshold, k, max_distance, None)

    def _query(
        self,
        signatures: Signatures,
        threshold: float | None,
        k: int | None,
        max_distance: int | None,
        probabilities: F64Array | None,
    ) -> list[list[Match]]:
        self._check_spec(signatures)
        check_k(k)
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise ParameterError(f"threshold must be a float in [0, 1]; got {threshold}.")
        queries = self._rows(signatures.values)
        h = self.max_distance if max_distance is None else max_distance
        query, row = self._search(queries, h, probabilities)
        distance = hamming_distance(queries[query], self._values[row])
        similarity = estimate_cosine(distance, self.spec.simhash_bits)
        found: list[list[Match]] = [[] for _ in range(queries.shape[0])]
        for q, r, d, s in zip(
            query.tolist(), row.tolist(), distance.tolist(), similarity.tolist(), strict=True
        ):
            if threshold is None or s >= threshold:
                found[q].append(Match(id=self._ids[r], similarity=s, distance=d))
        return [ranked(near, k) for near in found]

    def _check_spec(self, signatures: Signatures) -> None:
        if signatures.spec != self.spec:
            diffs = differences(signatures.spec.to_dict(), self.spec.to_dict())
            raise IncompatibleError(
                "signatures were made with another sketch spec than the index's: "
                + "; ".join(diffs)
                + " (the signatures' first)"
            )

    def _search(
        self, queries: U64Array, h: int, probabilities: F64Array | None
    ) -> tuple[I64Array, I64Array]:
        """``(query, row)`` of live rows within ``h`` bits (the search for the indexed part)."""
        found_q: list[I64Array] = []
        found_r: list[I64Array] = []
        indexed = self._indexed
        if self._tables is not None and h == self.max_distance:
            query, row = self._tables.query(queries, probabilities)
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
        self._tables = None
        if len(keep):
            self._tables = FingerprintTables(
                self._values, self.max_distance, search=self.search, budget=self.budget
            )
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

    @property
    def header(self) -> dict[str, Any]:
        """How the fingerprints were made and searched: saved with the index, checked on load."""
        return {
            "format": FILE_FORMAT,
            "file_version": FILE_VERSION,
            "neardup_version": __version__,
            "provenance": provenance_of(self.spec),
            "max_distance": self.max_distance,
            "idf": self.idf.describe() if self.idf is not None else None,
            "search": self.search,
            "budget": self.budget,
            "flips": self.flips.to_dict() if self.flips is not None else None,
        }

    def info(self) -> dict[str, Any]:
        """The document count, the measure and the header, as every index gives them.

        Examples
        --------
        >>> info = HammingIndex().info()
        >>> info["documents"], info["measure"], info["header"]["max_distance"]
        (0, 'cosine', 7)
        """
        return {"documents": len(self), "measure": "cosine", "header": self.header}

    # the file ----------------------------------------------------------------------------

    def save(self, path: Path | str) -> None:
        """Write the index to ``path`` (a ``.npz`` file) atomically: whole, or not at all.

        An earlier saved Hamming index at ``path`` is replaced; any other file is not.

        Raises
        ------
        StoreError
            The file cannot be written (a missing directory, permissions, disk space).
        InputError
            ``path`` holds something else than a saved Hamming index (nothing is written).
        """
        self._check_open()
        path = Path(path)
        check_output(path, "hamming index", overwrite=True)
        live = np.flatnonzero(self._live)
        arrays: dict[str, Any] = {
            "parameters": np.array(json.dumps(self.header)),
            "ids": np.array([self._ids[i] for i in live.tolist()], dtype=str),
            "values": self._values[live],
        }
        if self.idf is not None:
            arrays |= {"idf_features": self.idf.features_, "idf_values": self.idf.idf_}
        try:
            with replaced_file(path) as f:
                np.savez(f, **arrays)
        except OSError as exc:
            raise _unwritable(path, exc) from None

    @classmethod
    def load(cls, path: Path | str, spec: SketchSpec | None = None) -> HammingIndex:
        """Read an index saved by :meth:`save`; a ``spec`` that differs is an error.

        Raises
        ------
        StoreError
            ``path`` is missing or unreadable, is not a saved Hamming index, has another file
            version, or is damaged.
        IncompatibleError
            ``spec`` differs from the index's, or the index was made by another fingerprint
            scheme or Unicode version.
        """
        path = Path(path)
        try:
            with open(path, "rb") as file:  # np.load leaves a file it opened open on some errors
                data = np.load(file, allow_pickle=False)
                if not isinstance(data, np.lib.npyio.NpzFile):
                    raise ValueError("one NumPy array, not an archive")
                with data:
                    header = json.loads(str(data["parameters"]))
                    arrays = {name: data[name] for name in data.files}
        except FileNotFoundError:
            raise StoreError(f"no index at {path}; save one there with HammingIndex.save") from None
        except OSError as exc:
            raise StoreError(f"{path}: cannot read the index file: {exc.strerror or exc}") from None
        except (ValueError, KeyError, EOFError, NotImplementedError, zipfile.BadZipFile) as exc:
            raise StoreError(
                f"{path}: not a neardup Hamming index, or a damaged one ({exc}); if it was an "
                f"index, {REPAIR_ADVICE}"
            ) from None
        if not isinstance(header, dict) or header.get("format") != FILE_FORMAT:
            raise StoreError(f"{path}: not a neardup Hamming index")
        if header.get("file_version") != FILE_VERSION:
            raise StoreError(
                f"{path}: a Hamming index of file version {header.get('file_version')!r}; this "
                f"neardup reads version {FILE_VERSION} (a newer file needs a newer neardup)"
            )
        try:
            stored = SketchSpec.from_dict(header["provenance"]["sketch"])
            max_distance = int(header["max_distance"])
            idf = None
            if header["idf"] is not None:
                idf = IDFWeights(stored).set_learned(
                    arrays["idf_features"], arrays["idf_values"], header["idf"]["num_docs"]
                )
            ids, values = arrays["ids"].tolist(), arrays["values"]
            search = header.get("search", "tables")  # files from before PSM have none
            budget = header.get("budget")
            flips = None if header.get("flips") is None else FlipModel.from_dict(header["flips"])
        except IncompatibleError as exc:
            raise IncompatibleError(f"{path}: {exc}") from None
        except (KeyError, TypeError, ValueError) as exc:  # ParameterError is a ValueError
            raise _damaged(path, exc) from None
        if spec is not None and spec != stored:
            diffs = "; ".join(differences(stored.to_dict(), spec.to_dict()))
            raise IncompatibleError(
                f"{path}: the index was made with other parameters: {diffs} (the index's first)"
            )
        # Specs gain fields with defaults over versions: compare in today's full form.
        made = {**header["provenance"], "sketch": stored.to_dict()}
        if made != provenance_of(stored):
            diffs = "; ".join(differences(made, provenance_of(stored)))
            raise IncompatibleError(
                f"{path}: made by another fingerprint scheme, SimHash rule or Unicode version: "
                f"{diffs} (the index's first); rebuild the index."
            )
        try:
            index = cls(stored, max_distance=max_distance, idf=idf, search=search, budget=budget,
                        flips=flips)  # fmt: skip
            index._insert(ids, values, replace=False)
        except (ParameterError, InputError) as exc:  # rows of another width, ids repeated
            raise _damaged(path, exc) from None
        return index


def _damaged(path: Path, exc: Exception) -> StoreError:
    return StoreError(f"{path}: the index file is damaged ({exc}): {REPAIR_ADVICE}")


def _unwritable(path: Path, exc: OSError) -> StoreError:
    return StoreError(
        f"{path}: cannot write the index file ({exc.strerror or exc}): check the directory, the "
        "disk space and the permissions"
    )
