"""The sketch stage: normalise → shingle → sketch, batch by batch, a few arrays per document.

Also the first pass that learns document frequencies (:func:`fit_idf`) for a TF-IDF SimHash
and canonical forms, and the rule that keeps shingle sets where near copies are dense.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from neardup._types import Batch, BoolArray, I64Array, U64Array
from neardup.candidates import candidate_scheme
from neardup.errors import InputError
from neardup.io.records import Ids, RecordBatch
from neardup.io.setstore import SketchedSets
from neardup.io.spill import KeyColumns
from neardup.keep import KeepValues
from neardup.kinds import SKETCH_KINDS
from neardup.lsh.banding import near_key_share
from neardup.params import DedupConfig
from neardup.pipeline.shared import ProgressCallback, TextStore
from neardup.sketch import IDFWeights, OPHSketcher, make_sketcher
from neardup.sketch.signatures import Signatures
from neardup.sketch.simhash import SimHasher
from neardup.templates import HostTemplates
from neardup.text.normalize import TextStats, normalize_bytes, text_statistics

SKETCH_ROWS = 8192
"""Documents sketched per kernel call: their signature rows stay in cache until keyed."""


@dataclass(frozen=True, slots=True)
class Sketched:
    """What the first pass keeps per document.

    Small fixed-size arrays, the ids, the keys (spilled by column) and where the texts can be
    found again (:class:`TextStore`).
    """

    ids: Ids
    lengths: I64Array
    """Characters per document, before normalisation (``keep="longest"`` compares these)."""
    fingerprints: U64Array
    """``uint64[num_docs, 2]``: the 128-bit fingerprint of each normalised text."""
    is_short: BoolArray
    """Documents with no shingle at all: matched only by their exact fingerprint."""
    is_empty: BoolArray
    """Documents with no token at all (empty, or only separators): matched with nothing."""
    keys: KeyColumns
    """Lookup keys of the candidate scheme (LSH band keys for banding), one row per document."""
    texts: TextStore
    num_bytes: int
    """UTF-8 bytes of normalised text sketched."""
    idf: IDFWeights | None = None
    """The IDF weights of a TF-IDF SimHash (verification weighs the shingles with them too)."""
    keep_values: KeepValues | None = None
    """The ``keep_by`` fields' values, when representatives are chosen by them."""
    kept_sets: SketchedSets | None = None
    """The shingle sets kept as the documents were sketched (:func:`keeps_sets`)."""
    host_templates: Mapping[str, Any] | None = None
    """How the hosts' templates left out of the texts were learned (``--host-templates``)."""

    @property
    def num_docs(self) -> int:
        """Documents sketched."""
        return len(self.ids)


@dataclass(frozen=True, slots=True)
class SketchedBlock:
    """Up to :data:`SKETCH_ROWS` consecutive documents of a batch, sketched and keyed."""

    start: int
    """The block's first document, within its batch."""
    signatures: Signatures
    keys: U64Array
    """The candidate scheme's lookup keys, one row per document."""
    is_empty: BoolArray
    """Documents with no token at all (empty, or only separators): matched with nothing."""

    @property
    def stop(self) -> int:
        """One past the block's last document, within its batch."""
        return self.start + self.signatures.num_docs


class BatchSketcher:
    """The per-batch step of both engines: normalise, then sketch and key block by block.

    The signature rows of at most :data:`SKETCH_ROWS` documents exist at once, so they stay in
    cache until keyed. ``idf``: the weights of ``weighting="tfidf"`` (:func:`fit_idf`).
    """

    def __init__(self, config: DedupConfig, idf: IDFWeights | None = None) -> None:
        self._spec = config.sketch.normalize
        self._sketcher = make_sketcher(config.sketch, idf)
        self._scheme = candidate_scheme(config.sketch, config.lsh)

    def normalize(
        self, texts: Batch, stats: TextStats | None = None, *, in_place: bool = False
    ) -> tuple[Batch, TextStats]:
        """The normalised texts, and the raw texts' statistics (``stats``, when known).

        ``in_place``: the normalised texts may be written over ``texts`` (the caller owns
        that buffer alone).
        """
        stats = stats if stats is not None else text_statistics(texts)
        return normalize_bytes(texts, self._spec, stats, in_place=in_place), stats

    def blocks(
        self, normalized: Batch, kept: SketchedSets | None = None
    ) -> Iterator[SketchedBlock]:
        """The normalised texts sketched and keyed, a block of documents at a time.

        ``kept``: where the shingle sets it chooses go, from the same pass (OPH only); it is
        told of every document.
        """
        no_token = self._sketcher.no_token_fingerprint
        for start in range(0, normalized.num_docs, SKETCH_ROWS):
            stop = min(start + SKETCH_ROWS, normalized.num_docs)
            part = Batch(data=normalized.data, offsets=normalized.offsets[start : stop + 1])
            weights = None
            chosen = kept.chosen(np.diff(part.offsets)) if kept is not None else None
            if chosen is not None and chosen.any():
                assert kept is not None
                assert isinstance(self._sketcher, OPHSketcher)
                signatures, sets = self._sketcher.sketch_keeping_sets(part, chosen)
                kept.append(sets, chosen)
            else:
                if kept is not None:
                    kept.skip(part.num_docs)
                if self._scheme.reads_bit_weights:
                    assert isinstance(self._sketcher, SimHasher)
                    signatures, weights = self._sketcher.sketch_with_bit_weights(part)
                else:
                    signatures = self._sketcher.sketch(part)
            yield SketchedBlock(
                start=start,
                signatures=signatures,
                keys=self._scheme.keys(signatures.values, weights),
                is_empty=(signatures.fingerprints == no_token).all(axis=1),
            )


def sketch_batches(
    batches: Iterable[RecordBatch],
    config: DedupConfig,
    keys: KeyColumns,
    texts: TextStore,
    *,
    idf: IDFWeights | None = None,
    progress: ProgressCallback | None = None,
    kept: SketchedSets | None = None,
    templates: HostTemplates | None = None,
) -> Sketched:
    """Normalise and sketch record batches; keep per document only what later stages need.

    Each batch goes through :class:`BatchSketcher`: the lookup keys of each block are appended
    to ``keys`` and its signature rows dropped. The normalised texts go to ``texts``; the
    shingle sets verification will want, to ``kept`` (:func:`keeps_sets`). ``idf``: the
    weights of ``weighting="tfidf"`` (:func:`fit_idf`); ``templates``: the hosts' templates
    the normalised texts are stripped of (``config.host_templates``).
    """
    step = BatchSketcher(config, idf)
    ids: list[Ids] = []
    lengths: list[I64Array] = []
    fingerprints: list[U64Array] = []
    short: list[BoolArray] = []
    empty: list[BoolArray] = []
    num_bytes = 0
    if kept is not None:
        kept.keeping = False  # until a batch shows dense near copies
    for batch in batches:
        normalized, stats = step.normalize(batch.texts, batch.stats, in_place=True)
        normalized = _stripped(batch.ids, normalized, templates)
        texts.append(batch, normalized)
        first_block = len(fingerprints)
        observed: list[U64Array] = []
        for block in step.blocks(normalized, kept):
            keys.append(block.keys)
            fingerprints.append(block.signatures.fingerprints)
            short.append(block.signatures.is_short)
            empty.append(block.is_empty)
            observed.append(block.keys[:, :2])
        if kept is not None and observed:
            kept.keeping = _dense_near_copies(
                np.concatenate(observed),
                np.concatenate(fingerprints[first_block:]),
                np.concatenate(short[first_block:]),
            )
        lengths.append(stats.chars)
        ids.append(batch.ids)
        num_bytes += normalized.num_bytes
        if progress is not None:
            progress(batch.position)
    texts.finish()
    if not ids:
        raise InputError("no usable records in the input")
    return Sketched(
        ids=Ids.concat(_emptied(ids)),
        lengths=np.concatenate(_emptied(lengths)),
        fingerprints=np.concatenate(_emptied(fingerprints)),
        is_short=np.concatenate(_emptied(short)),
        is_empty=np.concatenate(_emptied(empty)),
        keys=keys,
        texts=texts,
        num_bytes=num_bytes,
        idf=idf,
        kept_sets=kept,
    )


DENSE_SHARE = 0.05
"""A batch where this share of the documents shares a key of the first two columns with a
document of another text (:func:`~neardup.lsh.banding.near_key_share`) holds dense near copies:
the next batch keeps its short documents' shingle sets (:class:`~neardup.io.setstore.
SketchedSets`)."""


def _dense_near_copies(keys: U64Array, fingerprints: U64Array, is_short: BoolArray) -> bool:
    """Whether a batch's keys (two columns) and fingerprints show dense near copies.

    See :data:`DENSE_SHARE`.

    Where near copies are dense, most documents are verified, and keeping their sets as they
    are sketched spares verification most of its work (dense 10M: 61.5 s to 37.7 s); where
    they are rare, the sets would be made for nothing.
    Within one batch the share is a fraction of the corpus's, and two columns see a fraction
    of the near pairs, so the bar is low. Measured per 32 MB batch: the dense 1M corpus of
    ``bench/scale.py`` 10-11%; its sparse 1M corpus 13% in the first batch (its copies' sources
    all lie before them), then 4.4% and falling; 800k short documents without a near copy 0%;
    the RFCs under 4%.
    """
    usable = ~is_short
    return near_key_share(keys[usable], fingerprints[usable, 0]) >= DENSE_SHARE


def keeps_sets(config: DedupConfig) -> bool:
    """Whether verification reads shingle sets, so that sketching may keep them.

    Under exact verification of OPH sketches (:class:`PairScorer`), the default; not under the
    embedding method alone, which measures vectors.
    """
    return (
        config.verify_mode == "exact" and config.sketch.kind == "oph" and not config.embedding_only
    )


def _emptied(parts: list[Any]) -> list[Any]:
    """The parts, the list emptied.

    Each kind of array is then joined and its parts freed before the next kind is joined: the
    peak holds one array twice, not all of them.
    """
    taken = list(parts)
    parts.clear()
    return taken


def fit_idf(
    batches: Iterable[RecordBatch], config: DedupConfig, templates: HostTemplates | None = None
) -> IDFWeights | None:
    """The IDF of the corpus when ``config``'s sketch uses it (a first pass), else None.

    A TF-IDF SimHash weighs its shingles by it; canonical forms keep the terms of a band of it.
    ``templates``: the hosts' templates the texts are compared without.
    """
    kind = SKETCH_KINDS[config.sketch.kind]
    weighs_by_tf = "weighting" in kind.options and config.sketch.weighting == "tf"
    if not kind.uses_idf or weighs_by_tf:
        return None
    spec = config.sketch.normalize
    normalized = (_stripped(b.ids, normalize_bytes(b.texts, spec), templates) for b in batches)
    return IDFWeights(config.sketch).fit_batches(normalized)


def _stripped(ids: Sequence[str], normalized: Batch, templates: HostTemplates | None) -> Batch:
    """The normalised texts without their hosts' templates, where there are templates."""
    return normalized if templates is None else templates.strip(ids, normalized)
