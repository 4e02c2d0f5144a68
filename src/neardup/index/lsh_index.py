"""The persistent near-duplicate index: "what is this a near-copy of?", answered in milliseconds.

An :class:`LSHIndex` sketches documents exactly as ``neardup dedup`` does, stores their
signatures and LSH band postings in a :class:`~neardup.index.store.Store`, and answers queries
from point lookups of the query's band keys plus an in-process cache of signatures. An index of
SimHash fingerprints stores the fingerprints as postings instead and finds every one within
``h`` bits by range scans, by block-permuted tables or by PSM (:mod:`.fingerprints`). The
parameters live in the store's header, written once at creation (a PSM index adds its flip model
once, in the transaction of the batch it was fitted on): an index opened later uses them,
whatever the caller has, and refuses explicit parameters that differ.

A document without a single token (empty, or only whitespace) is stored but matches nothing,
and a query without a token finds nothing: emptiness is no evidence of a copy.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import numpy as np

from neardup._types import F64Array, I64Array, U64Array
from neardup._version import __version__
from neardup.errors import IncompatibleError, ParameterError, StoreError
from neardup.hamming.flips import FlipModel
from neardup.index.fingerprints import FingerprintPostings
from neardup.index.sqlite import REPAIR_ADVICE, SQLiteStore
from neardup.index.store import DocumentRows, MemoryStore, Store, StoredDocument, metadata_json
from neardup.kinds import INDEX_KINDS
from neardup.lookup import Match, check_ids, check_k, closed_error, ids_exist, ranked, renamed_k
from neardup.lsh.banding import band_keys, bands_rows
from neardup.params import LSHSpec, SketchSpec, check_banding
from neardup.sketch import make_sketcher
from neardup.sketch.signatures import FORMAT_VERSION, Signatures, differences
from neardup.sketch.simhash import SimHasher, estimate_cosine, hamming_distance
from neardup.text.normalize import UNICODE_VERSION
from neardup.text.shingle import Shingler, fingerprint_scheme

__all__ = ["CheckResult", "IndexedDocument", "LSHIndex", "QueryMeasure"]

QueryMeasure = Literal["jaccard", "cosine", "containment"]
"""What a query measures: the index's own similarity (Jaccard; cosine for SimHash) or the
containment of the text in each stored document."""

HEADER_KIND = "neardup-lsh-index"
FLIP_FIT_DOCUMENTS = 1000
"""A PSM index fits its flip model on the first batch added with at least this many documents
that have a token; until then its queries take every header bit as equally likely to flip."""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The outcome of "insert if new" for one document."""

    id: str
    inserted: bool
    matches: list[Match] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class IndexedDocument:
    """What the index holds about a document (its text is not stored): :meth:`LSHIndex.get`."""

    id: str
    num_shingles: int
    metadata: Any

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "num_shingles", "metadata"}``, as the service answers ``GET``."""
        return {"id": self.id, "num_shingles": self.num_shingles, "metadata": self.metadata}


def _header(sketch: SketchSpec, lsh: LSHSpec, containment_sample: int | None) -> dict[str, Any]:
    num_rows: int | None
    blocks = None
    if sketch.kind == "simhash":  # the tables' G is fixed here, for the index's life
        lsh = replace(lsh, family="hamming")
        postings = FingerprintPostings.of(sketch, lsh)
        num_bands, num_rows, blocks = postings.num_bands, None, postings.num_blocks
    else:
        num_bands, num_rows = bands_rows(lsh, sketch.num_perm)
    return {
        "kind": HEADER_KIND,
        "sketch": sketch.to_dict(),
        "lsh": lsh.to_dict(),
        "num_bands": num_bands,
        "num_rows": num_rows,
        "hamming_blocks": blocks,
        "containment_sample": containment_sample,
        "fingerprint_scheme": fingerprint_scheme(sketch.shingle),
        "unicode_version": UNICODE_VERSION,
        "signature_format": FORMAT_VERSION,
        "created_with": __version__,
    }


_COMPARED = ("kind", "sketch", "lsh", "num_bands", "num_rows", "hamming_blocks",
             "containment_sample", "fingerprint_scheme", "unicode_version",
             "signature_format")  # fmt: skip


def _opened(
    store: Store,
    header: dict[str, Any],
    sketch: SketchSpec | None,
    lsh: LSHSpec | None,
    containment_sample: int | None,
) -> tuple[dict[str, Any], SketchSpec, LSHSpec]:
    """An existing index's header (in today's full form) and specs; refuses other ones given."""
    if header.get("kind") != HEADER_KIND:
        raise StoreError(
            f"{_where(store)}not a neardup LSH index (header kind {header.get('kind')!r})"
        )
    try:
        stored = (SketchSpec.from_dict(header["sketch"]), LSHSpec.from_dict(header["lsh"]))
        int(header["num_bands"])
        if stored[0].kind != "simhash":
            int(header["num_rows"])
        elif stored[1].search == "tables":
            int(header["hamming_blocks"])
        _check_sample(header.get("containment_sample"))
    except (KeyError, TypeError, ValueError) as exc:  # ParameterError is a ValueError
        raise StoreError(
            f"{_where(store)}the index header is damaged ({exc}): {REPAIR_ADVICE}"
        ) from None
    # Specs gain fields with defaults over versions: compare in today's full form.
    header = {
        **header,
        "sketch": stored[0].to_dict(),
        "lsh": stored[1].to_dict(),
        "containment_sample": header.get("containment_sample"),
    }
    sample = containment_sample or header["containment_sample"]
    wanted = _header(sketch or stored[0], lsh or stored[1], sample)
    if lsh is None or lsh.hamming_blocks is None:  # the tables' G was chosen at creation
        wanted["hamming_blocks"] = header.get("hamming_blocks")
    diffs = _differences(header, wanted)
    if diffs:
        raise IncompatibleError("the index was made with other parameters: " + "; ".join(diffs))
    _check_specs(stored[0], None)
    return header, *stored


def _differences(stored: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key in _COMPARED:
        a, b = stored.get(key), wanted.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out.extend(
                f"{key}.{sub} (index has {a.get(sub)!r}, asked for {b.get(sub)!r})"
                for sub in sorted(set(a) | set(b))
                if a.get(sub) != b.get(sub)
            )
        elif a != b:
            out.append(f"{key} (index has {a!r}, this neardup uses {b!r})")
    return out


class LSHIndex:
    """A near-duplicate index of texts over a :class:`Store`; a context manager.

    It speaks the vocabulary of every index, :class:`~neardup.lookup.NearIndex`: ``add``,
    ``upsert``, ``delete``, ``get``, ``query(texts, threshold=, k=)``, ``info``, ``close``;
    and, for texts, ``add_new``, ``existing_ids``, ``check`` and ``query_signatures``.

    Parameters
    ----------
    store
        Where documents live: :class:`~neardup.index.MemoryStore` (the default: a new one) or
        :class:`~neardup.index.SQLiteStore` (:meth:`open` makes one from a path).
    sketch, lsh
        Parameters of a new index. For an existing one, leave them out (the header's are used);
        given and different, they raise :class:`IncompatibleError` naming the fields.
    containment_sample
        For a new index, ``m``: keep every shingle whose fingerprint is ``0 mod m`` (Broder's
        ``MOD_m`` sample, seed 003) of each document as postings, so that
        ``query(..., measure="containment")`` finds the stored documents containing a text:
        exactly with ``m = 1`` (every shingle is kept), estimated from ``1/m`` of them
        otherwise. ``None`` (default): no sample, no containment queries. Fixed for the
        index's life, like ``sketch`` and ``lsh``.
    cache_size
        Signatures kept in memory between queries.

    Examples
    --------
    >>> base = "the quick brown fox jumps over the lazy dog near the quiet river bank"
    >>> with LSHIndex() as index:
    ...     index.add(["a", "b"], [base, "something else entirely, about the weather today"])
    ...     index.query([base + " again"])
    [[Match(id='a', similarity=0.9296875, distance=None)]]
    """

    def __init__(
        self,
        store: Store | None = None,
        *,
        sketch: SketchSpec | None = None,
        lsh: LSHSpec | None = None,
        containment_sample: int | None = None,
        cache_size: int = 100_000,
    ) -> None:
        store = store if store is not None else MemoryStore()
        self._store = store
        self._closed = False
        header = store.read_header()
        _check_sample(containment_sample)
        if header is None:
            sketch = sketch if sketch is not None else SketchSpec()
            lsh = lsh if lsh is not None else LSHSpec()
            _check_specs(sketch, lsh)
            header = _header(sketch, lsh, containment_sample)
            lsh = LSHSpec.from_dict(header["lsh"])
            store.write_header(header)
        else:
            header, sketch, lsh = _opened(store, header, sketch, lsh, containment_sample)
        try:
            flips = header.get("flips")
            self.flips = None if flips is None else FlipModel.from_dict(flips)
            """PSM's flip model, fitted on the first large batch added (and then stored)."""
        except IncompatibleError as exc:
            raise IncompatibleError(f"{_where(store)}{exc}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreError(
                f"{_where(store)}the index's flip model is damaged ({exc}): {REPAIR_ADVICE}"
            ) from None
        self.sketch_spec: SketchSpec = sketch
        self.lsh_spec: LSHSpec = lsh
        self.header = header
        self.num_bands, self.num_rows = int(header["num_bands"]), header["num_rows"]
        self.containment_sample: int | None = header["containment_sample"]
        self.postings: FingerprintPostings | None = None
        """How SimHash fingerprints are posted and searched; None for LSH bands."""
        if sketch.kind == "simhash":
            self.postings = FingerprintPostings.of(sketch, lsh, header["hamming_blocks"])
        self._sketcher = make_sketcher(sketch)
        self._shingler = Shingler(sketch.shingle, sketch.normalize)
        self._cache: OrderedDict[int, StoredDocument] = OrderedDict()
        self._cache_size = cache_size
        self._cache_lock = threading.Lock()

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        sketch: SketchSpec | None = None,
        lsh: LSHSpec | None = None,
        containment_sample: int | None = None,
        create: bool | None = None,
    ) -> LSHIndex:
        """The index file at ``path``, backed by :class:`SQLiteStore`.

        Parameters
        ----------
        path
            The index file.
        sketch, lsh, containment_sample
            As for :class:`LSHIndex`.
        create
            ``None`` (default): open the index, or create it where no file exists. ``False``:
            open an existing index only (nothing is ever created or changed when that fails).
            ``True``: create a new index; ``path`` must not exist.

        Raises
        ------
        StoreError
            ``path`` is not what ``create`` asks for (see :class:`SQLiteStore`), or its header
            is missing or damaged.
        ParameterError
            The parameters of a new index are invalid; no file is left behind.
        """
        if create is not False and (sketch is not None or lsh is not None):
            _check_specs(sketch or SketchSpec(), lsh)  # before a file is made
        store = SQLiteStore(path, create=create)
        try:
            if create is False and store.read_header() is None:
                raise StoreError(
                    f"{path}: an index without a header (its creation was interrupted): "
                    "delete it and create it again"
                )
            return cls(store, sketch=sketch, lsh=lsh, containment_sample=containment_sample)
        except BaseException:
            if store.created:
                store.remove()
            else:
                store.close()
            raise

    def __enter__(self) -> LSHIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the store; every later call but ``close`` raises :class:`StoreError`."""
        if not self._closed:
            self._closed = True
            self._store.close()

    @property
    def store(self) -> Store:
        """The store the documents live in (a :class:`StoreError` once the index is closed)."""
        if self._closed:
            raise closed_error("LSHIndex")
        return self._store

    def __len__(self) -> int:
        return self.store.count()

    # writing -----------------------------------------------------------------------------

    def _rows(
        self, ids: Sequence[str], texts: Sequence[str], metadata: Sequence[Any] | None
    ) -> tuple[DocumentRows, FlipModel | None]:
        """The batch's rows, and the flip model fitted on it when it is PSM's first large one."""
        if len(ids) != len(texts):
            raise ParameterError(f"got {len(texts)} texts for {len(ids)} ids.")
        if metadata is not None and len(metadata) != len(ids):
            raise ParameterError(f"got {len(metadata)} metadata entries for {len(ids)} ids.")
        check_ids(ids)
        fitted = None
        if self._fits_flips(len(texts)):
            signatures, weights = self._simhasher.sketch_with_bit_weights(texts)
            fitted = self._fit_flips(signatures, weights)
        else:
            signatures = self._sketcher.sketch(texts)
        rows = DocumentRows(
            ids=list(ids),
            fingerprints=signatures.fingerprints,
            signatures=signatures.values,
            num_shingles=signatures.num_shingles,
            keys=self._keys(signatures.values),
            metadata=[metadata_json(m) for m in metadata]
            if metadata is not None
            else [None] * len(ids),
            samples=self._samples(texts) if self.containment_sample is not None else (),
        )
        return rows, fitted

    def _keys(self, values: U64Array) -> U64Array:
        """The posting keys of signature rows: band keys, or the fingerprints' postings."""
        if self.postings is not None:
            return self.postings.keys(values)
        assert self.num_rows is not None
        return band_keys(values, self.num_bands, self.num_rows)

    @property
    def _simhasher(self) -> SimHasher:
        assert isinstance(self._sketcher, SimHasher)
        return self._sketcher

    def _fits_flips(self, num_texts: int) -> bool:
        """Whether a batch of this size is the one PSM's flip model is fitted on."""
        return (
            self.postings is not None
            and self.postings.search == "psm"
            and self.flips is None
            and num_texts >= FLIP_FIT_DOCUMENTS
        )

    def _fit_flips(self, signatures: Signatures, weights: F64Array) -> FlipModel | None:
        """The flip model of a batch's documents with a token; None for too few of them."""
        assert self.postings is not None
        fitted = signatures.num_shingles > 0
        if int(fitted.sum()) < FLIP_FIT_DOCUMENTS:
            return None
        return FlipModel.fit(
            signatures.values[fitted, 0], weights[fitted, :64], max_distance=self.postings.per_word
        )

    @contextmanager
    def _writing(self, fitted: FlipModel | None = None) -> Iterator[None]:
        """A store transaction that also saves ``fitted``, the flip model of its batch.

        Unless the file holds one already (another writer's, committed meanwhile): that one is
        kept, and used from then on.
        """
        header = None
        with self.store.transaction():
            if fitted is not None:
                stored = (self.store.read_header() or {}).get("flips")
                header = {**self.header, "flips": stored or fitted.to_dict()}
                if stored is None:
                    self.store.replace_header(header)
            yield
        if header is not None:
            self.header, self.flips = header, FlipModel.from_dict(header["flips"])

    def _samples(self, texts: Sequence[str]) -> list[U64Array]:
        """Each text's containment sample: its shingles whose fingerprint is 0 mod ``m``."""
        assert self.containment_sample is not None
        sets = self._shingler.shingle_sets(texts)
        sampled = sets.hashes % np.uint64(self.containment_sample) == 0
        return [
            sets.set_of(d)[sampled[sets.offsets[d] : sets.offsets[d + 1]]] for d in range(len(sets))
        ]

    def add(
        self, ids: Sequence[str], texts: Sequence[str], metadata: Sequence[Any] | None = None
    ) -> None:
        """Add new documents in one transaction (all or none); an id already stored is an error.

        Cost: sketching, plus ``num_bands`` posting inserts per document, in key order (and,
        with a containment sample, one per sampled shingle).

        Raises
        ------
        IdExistsError
            Some ids are already stored (its ``ids`` lists them); nothing was added or changed.
            :meth:`upsert` replaces such documents, :meth:`add_new` keeps them.
        """
        rows, fitted = self._rows(ids, texts, metadata)
        with self._writing(fitted):
            present = self.store.docs_of(rows.ids)
            if present:
                raise ids_exist(
                    [i for i in rows.ids if i in present], "nothing of this batch was added"
                )
            self.store.insert(rows)

    def add_new(
        self, ids: Sequence[str], texts: Sequence[str], metadata: Sequence[Any] | None = None
    ) -> list[str]:
        """Add the documents whose ids are not stored yet, in one transaction; keep the others.

        A stored document is never replaced (that is :meth:`upsert`) and is not an error (that
        is :meth:`add`): its id is returned, and the new text given for it is dropped.

        Returns
        -------
        list[str]
            The ids that were already stored, in the order given; their documents are unchanged.

        Examples
        --------
        >>> from neardup.index import MemoryStore
        >>> with LSHIndex(MemoryStore()) as index:
        ...     index.add_new(["a"], ["the first text of all"])
        ...     index.add_new(["a", "b"], ["another text entirely", "the second text"])
        []
        ['a']
        """
        rows, fitted = self._rows(ids, texts, metadata)
        with self._writing(fitted):
            present = self.store.docs_of(rows.ids)
            new = [i for i, doc_id in enumerate(rows.ids) if doc_id not in present]
            if new:
                self.store.insert(rows if len(new) == len(rows) else _take(rows, new))
        return [doc_id for doc_id in rows.ids if doc_id in present]

    def existing_ids(self, ids: Sequence[str]) -> list[str]:
        """The ids of ``ids`` that are stored, in the order given. Cost: a lookup per id."""
        present = self.store.docs_of(list(ids))
        return [doc_id for doc_id in ids if doc_id in present]

    def upsert(
        self, ids: Sequence[str], texts: Sequence[str], metadata: Sequence[Any] | None = None
    ) -> None:
        """Add documents, replacing stored ones with the same ids, in one transaction."""
        rows, fitted = self._rows(ids, texts, metadata)
        with self._writing(fitted):
            self.store.delete(rows.ids)
            self.store.insert(rows)

    def delete(self, ids: Sequence[str]) -> list[str]:
        """Remove documents; return the ids that were present, each once, in the order given.

        Cost: ``O(num_bands)`` each, plus one delete per shingle of a containment sample.
        """
        with self._writing():
            return self.store.delete(list(dict.fromkeys(ids)))

    def check(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        *,
        threshold: float | None = None,
        metadata: Sequence[Any] | None = None,
    ) -> list[CheckResult]:
        """Insert each document that has no near-copy (similarity >= threshold), atomically.

        Documents are checked in order, each against the index and against the documents of
        the batch inserted before it; the whole batch commits in one transaction.
        """
        limit = self._threshold(threshold)  # SimHash passes ``threshold`` on: h bits decide
        rows, fitted = self._rows(ids, texts, metadata)
        results: list[CheckResult] = []
        probabilities = self._sketch_query(texts)[1] if self.postings is not None else None
        with self._writing(fitted):
            present = self.store.docs_of(rows.ids)
            if present:
                raise ids_exist(
                    [i for i in rows.ids if i in present],
                    "check needs new ids; nothing was checked or added",
                )
            for i in range(len(rows)):
                if self.postings is not None:
                    one = slice(i, i + 1)
                    p = None if probabilities is None else probabilities[one]
                    matches = self._near(rows.signatures[one], rows.num_shingles[one], p,
                                         threshold, None)[0]  # fmt: skip
                else:
                    matches = self._matches(
                        rows.signatures[i],
                        rows.keys[i],
                        rows.fingerprints[i],
                        threshold=limit,
                        k=None,
                    )
                if not matches:
                    self.store.insert(_take(rows, [i]))
                results.append(CheckResult(id=rows.ids[i], inserted=not matches, matches=matches))
        return results

    # reading -----------------------------------------------------------------------------

    def get(self, doc_id: str) -> IndexedDocument | None:
        """The stored facts of ``doc_id``, or None. Cost: one point lookup."""
        row = self.store.get(doc_id)
        if row is None:
            return None
        metadata = None
        if row.metadata is not None:
            try:
                metadata = json.loads(row.metadata)
            except ValueError as exc:
                raise StoreError(
                    f"{_where(self.store)}document {doc_id!r}: its metadata is not valid JSON "
                    f"({exc}): the index is damaged: {REPAIR_ADVICE}"
                ) from None
        return IndexedDocument(id=row.id, num_shingles=row.num_shingles, metadata=metadata)

    def query(
        self,
        texts: Sequence[str],
        *,
        threshold: float | None = None,
        k: int | None = None,
        measure: QueryMeasure | None = None,
        top_k: int | None = None,
    ) -> list[list[Match]]:
        """The stored near-copies of each text, best first (then by id).

        ``measure``: the index's own (:attr:`measure`, the default), or ``"containment"``.
        Each :class:`~neardup.lookup.Match` has the estimated Jaccard similarity, the fraction
        of signature slots that agree, and no ``distance`` (a SimHash index: the cosine of the
        fingerprints' angle, and their distance). With ``k`` alone: the ``k`` candidates of
        highest estimated similarity. Otherwise every candidate whose estimate reaches
        ``threshold`` (default: the index's), cut to ``k`` when both are given. A text without
        a token matches nothing. ``top_k`` is the former name of ``k``, deprecated. Cost:
        ``num_bands`` point lookups per text plus the candidates' signatures (cached).

        A ``threshold`` below the index's finds only the pairs its bands make candidates:
        :func:`~neardup.index.recall.threshold_warning` says how many.

        ``measure="containment"``: the stored documents that contain the text instead, each
        with the containment of the text's shingle set in its own, ``|S(q) ∩ S(d)| / |S(q)|``,
        from the index's containment sample (:class:`LSHIndex`'s ``containment_sample``):
        the share of the text's sampled shingles the document holds; exact when ``m = 1``.
        ``threshold`` is then a containment (default: the index's threshold, as for Jaccard).
        Every stored document sharing a sampled shingle is counted (no bands: no pair is missed
        by the lookup). Cost: one point lookup per sampled shingle of the text.

        Warns
        -----
        NeardupWarning
            ``top_k`` is given: it is deprecated, ``k`` means the same.
        """
        k = renamed_k(k, top_k, "LSHIndex.query")
        if measure == "containment":
            return [self._containers(s, threshold, k) for s in self._query_samples(texts)]
        if measure not in (None, self.measure):
            raise ParameterError(
                f"query.measure: this index measures {self.measure} "
                f"({self.header['sketch']['kind']} sketches), not {measure!r}: ask for "
                f"{self.measure!r} or 'containment', or leave query.measure out."
            )
        signatures, probabilities = self._sketch_query(texts)
        if self.postings is not None:
            self._check_query(threshold, k)
            return self._near(
                signatures.values, signatures.num_shingles, probabilities, threshold, k
            )
        return self.query_signatures(signatures, threshold=threshold, k=k)

    @property
    def measure(self) -> Literal["jaccard", "cosine"]:
        """What a near-copy query's ``similarity`` is.

        The Jaccard of the shingle sets, or for a SimHash index the cosine of the weighted
        vectors (from the fingerprints' distance).
        """
        return "cosine" if self.postings is not None else "jaccard"

    def _sketch_query(self, texts: Sequence[str]) -> tuple[Signatures, F64Array | None]:
        """The texts' signatures and, for PSM with a flip model, their flip probabilities.

        A model another process committed since this index was opened is read from the file.
        """
        if self.postings is None or self.postings.search != "psm":
            return self._sketcher.sketch(texts), None
        if self.flips is None and (flips := (self.store.read_header() or {}).get("flips")):
            self.header, self.flips = {**self.header, "flips": flips}, FlipModel.from_dict(flips)
        if self.flips is None:
            return self._sketcher.sketch(texts), None
        signatures, weights = self._simhasher.sketch_with_bit_weights(texts)
        return signatures, self.flips.probabilities(weights)

    def _query_samples(self, texts: Sequence[str]) -> list[U64Array]:
        if self.containment_sample is None:
            raise ParameterError(
                "this index keeps no containment sample, so it cannot answer containment "
                "queries: create one with containment_sample (neardup index create "
                "--containment-sample 1 for exact containment) and add the documents to it."
            )
        return self._samples(texts)

    def _containers(self, sample: U64Array, threshold: float | None, k: int | None) -> list[Match]:
        """The stored documents holding the text's ``sample``, by the share they hold."""
        check_k(k)
        limit = self._threshold(threshold) if threshold is not None or k is None else None
        if sample.shape[0] == 0:
            return []  # no sampled shingle: no evidence of a copy
        counts = self.store.holders(sample, self.num_bands)
        least = 0 if limit is None else math.ceil(limit * sample.shape[0] - 1e-9)
        if k is not None and len(counts) > k:
            least = max(least, sorted(counts.values(), reverse=True)[k - 1])
        chosen = sorted(d for d, c in counts.items() if c >= least)
        rows = self._rows_of(chosen)
        matches = [Match(id=r.id, similarity=counts[r.doc] / sample.shape[0]) for r in rows]
        return _best(matches, limit, k)

    def query_signatures(
        self,
        signatures: Signatures,
        *,
        threshold: float | None = None,
        k: int | None = None,
        top_k: int | None = None,
    ) -> list[list[Match]]:
        """:meth:`query` for signatures made with this index's sketch spec.

        Warns
        -----
        NeardupWarning
            ``top_k`` is given: it is deprecated, ``k`` means the same.
        """
        k = renamed_k(k, top_k, "LSHIndex.query_signatures")
        if signatures.spec != self.sketch_spec:
            diffs = differences(signatures.spec.to_dict(), self.sketch_spec.to_dict())
            raise IncompatibleError(
                "signatures were made with another sketch spec than the index's: "
                + "; ".join(diffs)
                + " (the signatures' first)"
            )
        if self.postings is not None:
            self._check_query(threshold, k)
            return self._near(signatures.values, signatures.num_shingles, None, threshold, k)
        self._check_query(None, k)
        limit = self._threshold(threshold) if threshold is not None or k is None else None
        assert self.num_rows is not None
        keys = band_keys(signatures.values, self.num_bands, self.num_rows)
        return [
            self._matches(
                signatures.values[i],
                keys[i],
                signatures.fingerprints[i],
                threshold=limit,
                k=k,
            )
            for i in range(signatures.num_docs)
        ]

    def _threshold(self, threshold: float | None) -> float:
        value = self.lsh_spec.threshold if threshold is None else threshold
        if not 0.0 <= value <= 1.0:
            raise ParameterError(f"threshold must be a float in [0, 1]; got {value}.")
        return value

    def _check_query(self, threshold: float | None, k: int | None) -> None:
        if threshold is not None:
            self._threshold(threshold)
        check_k(k)

    def _near(
        self,
        values: U64Array,
        num_shingles: I64Array,
        probabilities: F64Array | None,
        threshold: float | None,
        k: int | None,
    ) -> list[list[Match]]:
        """The stored fingerprints within ``h`` bits of each row of ``values``, nearest first.

        Each :class:`~neardup.lookup.Match` has the ``distance`` in bits and the cosine it
        estimates, ``cos(π distance / bits)``, which must reach ``threshold`` when one is
        given. A row without a token (``num_shingles`` 0) matches nothing. Cost: the scans of
        :meth:`FingerprintPostings.ranges`, then the near candidates' signatures (cached).
        """
        postings = self.postings
        assert postings is not None
        searched = np.flatnonzero(num_shingles > 0)
        p = None if probabilities is None else probabilities[searched]
        # PSM's header is log2 of the documents ever stored: read at once, and current.
        ranges = postings.ranges(values[searched], p, self.store.documents_ever())
        hit, doc, key = self.store.scan(ranges.band, ranges.low, ranges.high)
        near = hamming_distance(key[:, None], ranges.target[hit][:, None]) <= postings.per_word
        pairs = np.unique(np.stack([searched[ranges.query[hit[near]]], doc[near]], axis=1), axis=0)
        rows = self._rows_of(np.unique(pairs[:, 1]).tolist())  # a deleted one is left out
        docs = np.array([row.doc for row in rows], dtype=np.int64)
        at = np.searchsorted(docs, pairs[:, 1])
        held = at < docs.shape[0]
        held[held] = docs[at[held]] == pairs[held, 1]
        query, at = pairs[held, 0], at[held]
        stored = np.stack([row.signature for row in rows]) if rows else values[:0]
        distance = hamming_distance(values[query], stored[at])
        close = distance <= postings.max_distance
        cosine = estimate_cosine(distance, postings.bits)
        found: list[list[Match]] = [[] for _ in range(values.shape[0])]
        within = zip(query[close].tolist(), at[close].tolist(), distance[close].tolist(),
                     cosine[close].tolist(), strict=True)  # fmt: skip
        for q, r, d, c in within:
            found[q].append(Match(id=rows[r].id, similarity=c, distance=d))
        return [_best(matches, threshold, k) for matches in found]

    def _matches(
        self,
        signature: U64Array,
        keys: U64Array,
        fingerprint: U64Array,
        *,
        threshold: float | None,
        k: int | None,
    ) -> list[Match]:
        if np.array_equal(fingerprint, self._empty_fingerprint):
            return []  # no token: no evidence of a copy (an empty stored document is never met)
        docs = self.store.candidates(keys, fingerprint)
        rows = self._rows_of(docs)
        if not rows:
            return []
        fp = fingerprint.astype("<u8").tobytes()
        stacked = np.stack([r.signature for r in rows])
        similarity = np.mean(stacked == signature, axis=1)
        for i, row in enumerate(rows):
            if row.fingerprint == fp:
                similarity[i] = 1.0
        matches = [
            Match(id=r.id, similarity=float(s)) for r, s in zip(rows, similarity, strict=True)
        ]
        return _best(matches, threshold, k)

    @property
    def _width(self) -> int:
        """64-bit words per stored signature."""
        return self.postings.words if self.postings is not None else self.sketch_spec.num_perm

    @cached_property
    def _empty_fingerprint(self) -> U64Array:
        """The fingerprint of a text without a token (any such text normalises to "")."""
        empty: U64Array = self._sketcher.sketch([""]).fingerprints[0].copy()
        return empty

    def _rows_of(self, docs: list[int]) -> list[StoredDocument]:
        with self._cache_lock:
            cached = {d: self._cache[d] for d in docs if d in self._cache}
            for d in cached:
                self._cache.move_to_end(d)
        missing = [d for d in docs if d not in cached]
        if missing:
            fetched = self.store.documents(missing)
            for row in fetched:
                if row.signature.shape != (self._width,):
                    raise StoreError(
                        f"{_where(self.store)}the index file is damaged (document {row.id!r} has "
                        f"a signature of {row.signature.shape[0]} slots): {REPAIR_ADVICE}"
                    )
            with self._cache_lock:
                for row in fetched:
                    cached[row.doc] = row
                    self._cache[row.doc] = row
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return [cached[d] for d in docs if d in cached]

    # integrity ---------------------------------------------------------------------------

    def verify_integrity(self) -> list[str]:
        """Every inconsistency between documents and postings (empty when sound).

        Recomputes every stored document's band keys from its signature and compares them with
        the band postings; also checks signature and fingerprint sizes, metadata, and the
        store's own integrity (for SQLite: its integrity check, and every posting, containment
        samples included, against the stored keys). Cost: a full scan.

        Raises
        ------
        StoreError
            The file is damaged where the scan cannot go on (SQLite reports it malformed).
        """
        problems: list[str] = []
        check_file = getattr(self.store, "integrity_problems", None)
        if check_file is not None:
            problems.extend(check_file())
        expected: list[tuple[int, int, int]] = []
        for row in self.store.all_documents():
            if row.signature.shape != (self._width,):
                problems.append(f"document {row.id!r}: signature of {row.signature.shape[0]} slots")
                continue
            if len(row.fingerprint) != 16:
                problems.append(f"document {row.id!r}: fingerprint of {len(row.fingerprint)} bytes")
            if row.metadata is not None:
                try:
                    json.loads(row.metadata)
                except ValueError:
                    problems.append(f"document {row.id!r}: metadata that is not JSON")
            if row.num_shingles > 0:
                keys = self._keys(row.signature[None, :])[0]
                expected.extend((b, int(k), row.doc) for b, k in enumerate(keys.tolist()))
        expected.sort()
        band, key, doc = self.store.all_postings()
        bands = band < self.num_bands  # the containment samples are checked by the store
        actual = sorted(
            zip(band[bands].tolist(), key[bands].tolist(), doc[bands].tolist(), strict=True)
        )
        if actual != expected:
            missing = sorted(set(expected) - set(actual))
            extra = sorted(set(actual) - set(expected))
            problems.append(
                f"postings do not match the documents' signatures: {len(missing)} missing, "
                f"{len(extra)} extra"
            )
        return problems

    def _check(self) -> None:
        """Assert every internal invariant (for tests)."""
        problems = self.verify_integrity()
        assert not problems, problems

    def info(self) -> dict[str, Any]:
        """The header, the document count and, for a file, its size.

        A PSM flip model is shown by its source and size, not its 1,024 quantiles.
        """
        header = dict(self.header)
        if header.get("flips") is not None:
            model = header["flips"]
            header["flips"] = {k: model[k] for k in ("version", "source", "pairs")}
        out: dict[str, Any] = {"documents": len(self), "measure": self.measure, "header": header}
        size = getattr(self.store, "file_bytes", None)
        if size is not None:
            num_bytes = size()
            out["bytes"] = num_bytes
            out["bytes_per_document"] = round(num_bytes / max(out["documents"], 1), 1)
        return out


def _best(matches: list[Match], threshold: float | None, k: int | None) -> list[Match]:
    """``matches`` best first (then by id), those reaching ``threshold``, at most ``k``."""
    if threshold is not None:
        matches = [m for m in matches if m.similarity is not None and m.similarity >= threshold]
    return ranked(matches, k)


def _check_sample(containment_sample: int | None) -> None:
    """Refuse a containment sample rate that is not a whole number ``m >= 1``."""
    value = containment_sample
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ParameterError(
            f"containment_sample must be None or an int >= 1 (1 keeps every shingle: exact "
            f"containment); got {value!r}."
        )


def _check_specs(sketch: SketchSpec, lsh: LSHSpec | None) -> None:
    """Refuse specs an index cannot be built on (before any file is made)."""
    if sketch.kind not in INDEX_KINDS:
        raise ParameterError(
            f"an index is built on LSH bands of MinHash slots or on SimHash fingerprints: sketch "
            f"kind must be one of {', '.join(INDEX_KINDS)}; got {sketch.kind!r}."
        )
    if sketch.kind == "simhash":
        if sketch.weighting == "tfidf":
            raise ParameterError(
                "an index weighs SimHash features by term frequency: TF-IDF needs the IDF of "
                "the whole collection, which an index that grows batch by batch does not have; "
                "give SketchSpec(weighting='tf') (or deduplicate the collection with neardup "
                "dedup)."
            )
        if lsh is not None and lsh.family not in (None, "hamming"):
            raise ParameterError(
                f"a SimHash index finds fingerprints within h bits: LSHSpec.family must be "
                f"'hamming'; got {lsh.family!r}."
            )
        if lsh is not None:
            FingerprintPostings.of(sketch, lsh)  # refuses a radius PSM cannot flip
        return
    if lsh is not None and lsh.family not in (None, "bands"):
        raise ParameterError(
            f"an index is built on LSH bands: LSHSpec.family must be 'bands'; got {lsh.family!r}."
        )
    if lsh is not None:
        check_banding(sketch, lsh)


def _where(store: Store) -> str:
    """``"PATH: "`` for a store in a file, else nothing: the start of a message."""
    path = getattr(store, "path", None)
    return "" if path is None else f"{path}: "


def _take(rows: DocumentRows, chosen: list[int]) -> DocumentRows:
    return DocumentRows(
        ids=[rows.ids[i] for i in chosen],
        fingerprints=rows.fingerprints[chosen],
        signatures=rows.signatures[chosen],
        num_shingles=rows.num_shingles[chosen],
        keys=rows.keys[chosen],
        metadata=[rows.metadata[i] for i in chosen],
        samples=[rows.samples[i] for i in chosen] if rows.samples else (),
    )
