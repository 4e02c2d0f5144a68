"""The embedding method's own stages: documents' vectors, their cosine candidates, exact cosine.

Where it sits: ``dedup --method embedding`` (:attr:`DedupConfig.embedding`) replaces the
candidates and the measure of the shingle methods and keeps every other stage::

    read (+ exact groups, as every method) → encode (neardup.embed) or read saved vectors
      → cosine candidates (random hyperplanes, banded: neardup.join.vector_join)
      → exact cosine (VectorScorer) → the same joining, clustering and outputs

Each exact group's first non-empty document is encoded, once; its copies share its vector.
The encoder sees each text as the run keeps it (:class:`~neardup.pipeline.TextStore`): as read,
after NFKC and the case folding of non-ASCII letters by default
(:func:`~neardup.text.normalize.normalize_bytes`). An uncased model such as all-MiniLM-L6-v2
lowercases itself; NFKC rewrites a few characters (``½`` becomes ``1⁄2``: that sample text's
embedding moves by 0.007 cosine, tests/semantic's others not at all).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from neardup._progress import Progress
from neardup._types import Batch, BoolArray, F32Array, F64Array, I64Array
from neardup.embed import Encoder, as_rows, load_encoder, model_digest
from neardup.errors import InputError, ParameterError
from neardup.io.embeddings import (
    EMBEDDINGS_FILE,
    ids_digest,
    read_embedding_table,
    read_embeddings,
)
from neardup.join.distances import pair_values
from neardup.join.vectors import vector_join
from neardup.pairs import CandidatePairs, Measured
from neardup.params import DedupConfig, EmbeddingSpec, JoinSpec
from neardup.text.spans import byte_pieces

if TYPE_CHECKING:
    from neardup.io.records import Ids

__all__ = [
    "EncodedCorpus",
    "VectorScorer",
    "cosine_candidates",
    "describe_join",
    "document_vectors",
]

ENCODE_PIECE_BYTES = 4 << 20
"""Text read and handed to the encoder at once (its length batches are cut within it)."""


class TextSource(Protocol):
    """Where the run's texts are read again (:class:`neardup.pipeline.TextStore` is one)."""

    def sizes(self) -> I64Array:
        """Each text's size in bytes."""
        ...

    def take(self, docs: I64Array) -> Batch:
        """The texts of ``docs``, in that order."""
        ...


def _texts(batch: Batch) -> list[str]:
    """The batch's texts as Python strings (the encoder's input)."""
    data, offsets = batch.data, batch.offsets.tolist()
    return [
        data[lo:hi].tobytes().decode("utf-8", "surrogatepass")
        for lo, hi in itertools.pairwise(offsets)
    ]


class EncodedCorpus:
    """How a run gets its documents' vectors: an encoder, or a file an earlier run saved.

    Parameters
    ----------
    spec
        The run's :class:`~neardup.params.EmbeddingSpec`.
    encoder
        An encoder object (the Python API); ``None`` loads ``spec.model``.
    """

    def __init__(self, spec: EmbeddingSpec, encoder: Encoder | None = None) -> None:
        if encoder is None and spec.model is None and spec.embeddings is None:
            raise ParameterError(
                "the embedding method needs a model (--model DIR), saved embeddings "
                "(--embeddings FILE) or, in Python, an encoder object"
            )
        self.spec = spec
        self._encoder = encoder
        if spec.embeddings is not None and not Path(spec.embeddings).is_file():
            raise InputError(
                f"--embeddings {spec.embeddings}: no such file; give the embeddings.npy that a "
                "run with --save-embeddings wrote, or a Parquet table of 'id' and 'embedding'"
            )
        if encoder is None and spec.embeddings is None:
            self.encoder()  # a model that cannot be read is said before the inputs are

    @classmethod
    def of_run(cls, config: DedupConfig, encoder: Encoder | None = None) -> EncodedCorpus | None:
        """The corpus of a run with this config (None unless it uses the embedding method).

        Raises
        ------
        ParameterError
            An ``encoder`` given to a run that does not use the embedding method.
        """
        if config.embedding is not None:
            return cls(config.embedding, encoder)
        if encoder is not None:
            raise ParameterError(
                "got an encoder, but config.embedding is None: set "
                "DedupConfig(embedding=EmbeddingSpec()) to use the embedding method"
            )
        return None

    @functools.cached_property
    def model_sha256(self) -> str | None:
        """The digest of ``spec.model``'s weights.

        Read only where a run saves or reuses vectors (90 MB for all-MiniLM-L6-v2).
        """
        return model_digest(self.spec.model) if self.spec.model is not None else None

    def encoder(self) -> Encoder:
        """The encoder (loaded from ``spec.model`` on first use)."""
        if self._encoder is None:
            assert self.spec.model is not None
            self._encoder = load_encoder(self.spec.model, self.spec.device)
        return self._encoder

    def describe(self, ids: Sequence[str], config: DedupConfig, dim: int) -> dict[str, object]:
        """What ``embeddings.json`` says of this run's vectors."""
        return {
            "num_docs": len(ids),
            "dim": dim,
            "ids_sha256": ids_digest(ids),
            "model": self.spec.model,
            "model_sha256": self.model_sha256,
            "normalize": config.sketch.normalize.to_dict(),
            "host_templates": config.host_templates,
        }


def document_vectors(
    corpus: EncodedCorpus,
    texts: TextSource,
    ids: Ids,
    group_first: I64Array,
    encoded: BoolArray,
    config: DedupConfig,
    work_dir: Path | None = None,
    *,
    show_progress: bool = False,
) -> F32Array:
    """Every document's vector, ``(num_docs, dim)`` float32, in input order.

    The ``encoded`` documents (each exact group's first that has a token) are encoded a piece
    of :data:`ENCODE_PIECE_BYTES` of text at a time, or read from ``corpus.spec.embeddings`` (a
    saved ``.npy``, or a ``.parquet`` table of vectors by id made elsewhere);
    a copy takes its group's vector, an empty document zeros. With ``work_dir`` the matrix is
    the file :data:`~neardup.io.embeddings.EMBEDDINGS_FILE` there (mapped, so only the pages
    in use are held), else in memory.
    """
    spec = corpus.spec
    if spec.embeddings is not None and spec.embeddings.endswith(".parquet"):
        return read_embedding_table(spec.embeddings, list(ids))
    if spec.embeddings is not None:
        return read_embeddings(
            spec.embeddings,
            {
                "num_docs": len(ids),
                "ids_sha256": ids_digest(ids),
                "normalize": config.sketch.normalize.to_dict(),
                "host_templates": config.host_templates,
                "model_sha256": corpus.model_sha256,
            },
        )
    docs = np.flatnonzero(encoded)
    num_docs = group_first.shape[0]
    if docs.shape[0] == 0:  # no document has a token: nothing to encode
        return np.zeros((num_docs, 0), dtype=np.float32)
    vectors: F32Array | None = None
    sizes = texts.sizes()[docs]
    bounds = byte_pieces(sizes, ENCODE_PIECE_BYTES)
    encoder = corpus.encoder()
    with Progress("embed", docs.shape[0], unit="docs", enabled=show_progress) as bar:
        for lo, hi in itertools.pairwise(bounds):
            rows = as_rows(
                encoder.encode(_texts(texts.take(docs[lo:hi]))), hi - lo, type(encoder).__name__
            )
            if vectors is None:
                vectors = _matrix(num_docs, rows.shape[1], work_dir)
            elif rows.shape[1] != vectors.shape[1]:
                raise ParameterError(
                    f"{type(encoder).__name__}.encode gave rows of {rows.shape[1]} values after "
                    f"rows of {vectors.shape[1]}; an encoder must keep one width"
                )
            vectors[docs[lo:hi]] = rows
            bar(hi)
    assert vectors is not None  # there was a piece to encode
    copies = np.flatnonzero((group_first != np.arange(num_docs)) & encoded[group_first])
    vectors[copies] = vectors[group_first[copies]]
    return vectors


def _matrix(num_docs: int, dim: int, work_dir: Path | None) -> F32Array:
    """A zeroed ``(num_docs, dim)`` float32 matrix: a mapped ``.npy`` in ``work_dir``, or memory."""
    if work_dir is None:
        return np.zeros((num_docs, dim), dtype=np.float32)
    return np.lib.format.open_memmap(
        work_dir / EMBEDDINGS_FILE, mode="w+", dtype=np.float32, shape=(num_docs, dim)
    )


def cosine_candidates(
    vectors: F32Array, active: BoolArray, config: DedupConfig, work_dir: Path | None = None
) -> tuple[I64Array, I64Array, dict[str, Any]]:
    """The pairs of ``active`` documents whose vectors' cosine reaches the run's cosine threshold.

    That is ``config.lsh.threshold`` for the embedding method alone, the embedding spec's
    own with shingles (:attr:`~neardup.params.DedupConfig.cosine_threshold`).

    Found by :func:`~neardup.join.vector_join` (random hyperplanes, bands chosen for
    ``config.embedding.recall`` at the threshold from a seeded sample of pairs, buckets past
    ``config.lsh.max_bucket_size`` capped as there), and measured exactly. Returns the pairs
    as document numbers, sorted, and how the join found them.
    """
    assert config.embedding is not None
    assert config.cosine_threshold is not None
    docs = np.flatnonzero(active)
    spec = JoinSpec(
        metric="cosine",
        threshold=config.cosine_threshold,
        recall=config.embedding.recall,
        max_bucket_size=config.lsh.max_bucket_size,
        seed=config.sketch.seed,
    )
    if docs.shape[0] < 2 or vectors.shape[1] == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, {}
    result = vector_join(
        np.asarray(vectors[docs]), spec, work_dir=work_dir, memory_bytes=config.working_memory // 2
    )
    return docs[result.first], docs[result.second], result.info


def describe_join(info: Mapping[str, Any], dim: int, threshold: float) -> dict[str, Any]:
    """The summary's ``lsh`` section of an embedding run: the cosine join's bands and counts.

    ``threshold``: the cosine the join was made for (as the run resolved it).
    """
    if "num_bands" not in info:  # fewer than two documents to pair
        return {
            "scheme": "cosine",
            "threshold": threshold,
            "dim": dim,
            "label": "cosine (nothing to pair)",
        }
    return {
        "scheme": "cosine",
        "threshold": threshold,
        "family": "random hyperplanes",
        "dim": dim,
        "num_bands": info["num_bands"],
        "num_rows": info["num_rows"],
        "candidate_probability_at_threshold": info["predicted_recall"],
        "bucket_pairs_measured": info["num_candidates"],
        "bucket_pairs_skipped": info["bucket_pairs_skipped"],
        "label": f"cosine, b={info['num_bands']}, r={info['num_rows']}",
    }


class VectorScorer:
    """The exact cosine of pairs of documents' vectors: the embedding method's measure.

    It answers what :func:`~neardup.pipeline.verify_and_join` and
    :func:`~neardup.pipeline.cluster_joined` ask of a scorer, with the cosine as both the
    estimate and the exact value.
    """

    sets = None
    measures_in_parts = False

    def __init__(self, vectors: F32Array, config: DedupConfig) -> None:
        self.vectors = vectors
        self.config = config

    def prepare(self, needed: BoolArray) -> None:
        """Nothing to make ready: every document's vector is at hand."""

    def similarity(self, pairs: CandidatePairs) -> F64Array:
        """The cosine of each pair."""
        return pair_values("cosine", self.vectors, pairs.first, pairs.second)

    def chunks(self, pairs: CandidatePairs, *, candidates: bool = False) -> Iterator[VectorChunk]:
        """The pairs in one chunk: a vector is a fixed, small row (no text to read).

        Every pair is measured, candidate or not: a cosine has no bound to reject one by.
        """
        yield VectorChunk(self, pairs)

    def close(self) -> None:
        """Nothing to release: the vectors belong to the run."""

    def __enter__(self) -> VectorScorer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class VectorChunk:
    """Pairs of a :class:`VectorScorer`, measured as asked."""

    def __init__(self, scorer: VectorScorer, pairs: CandidatePairs) -> None:
        self.lo, self.hi = 0, len(pairs)
        self._scorer, self._pairs = scorer, pairs

    def measure(self, positions: I64Array, *, with_estimate: bool = True) -> Measured:
        """``(cosine, cosine)`` of the pairs at ``positions``: the estimate is the cosine too."""
        del with_estimate
        pairs = CandidatePairs(
            first=self._pairs.first[positions], second=self._pairs.second[positions]
        )
        cosine = self._scorer.similarity(pairs)
        return Measured(cosine, cosine)
