"""How texts become vectors for the embedding methods (``--method embedding``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

from neardup.errors import ParameterError
from neardup.params.rules import (
    Rule,
    Spec,
    boolean,
    one_of,
    optional_real,
    optional_text,
    real,
)

EmbeddingDevice = Literal["cpu", "cuda"]


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddingSpec(Spec):
    """The embedding method (``neardup dedup --method embedding``): where the vectors come from.

    Documents are encoded by a model (:mod:`neardup.embed`), or their vectors read from a file
    an earlier run saved; pairs are joined by the exact cosine of their vectors at
    ``DedupConfig.lsh.threshold``, candidates found by random-hyperplane LSH (seed 002) with
    bands chosen for ``recall`` at the threshold (:func:`neardup.join.vector_join`).

    Parameters
    ----------
    model
        The directory of a model saved on disk (``--model``), e.g. a sentence-transformers
        model; ``None`` where ``embeddings`` gives the vectors, or an encoder object is passed
        to the Python API.
    embeddings
        An ``embeddings.npy`` an earlier run of the same inputs saved (``--embeddings``): no
        encoding; refused when made for other documents or with another model. Or a
        ``.parquet`` table of vectors made elsewhere, an ``id`` and an ``embedding`` (a list of
        floats) per document (:func:`neardup.io.embeddings.read_embedding_table`).
    save
        Write the documents' vectors to the output as ``embeddings.npy`` (``--save-embeddings``,
        with ``embeddings.json`` saying how they were made).
    recall
        The chance a pair exactly at the threshold becomes a candidate (nearer pairs: more).
    device
        ``"cpu"``: neardup's own forward pass (NumPy, every core; the same vectors at every
        run, whatever the number of threads); ``"cuda"``: the model run by
        sentence-transformers on the GPU (``--device``; needs torch with CUDA), its vectors
        within about 1e-4 of the CPU's.
    with_shingles
        Also find pairs by their shingles (``--method minhash+embedding``): a pair is a near
        duplicate when its shingle Jaccard reaches ``DedupConfig.lsh.threshold`` *or* its
        cosine reaches ``cosine_threshold``, and ``pairs.jsonl`` says which did (``found_by``).
    cosine_threshold
        The cosine at which a pair is a near duplicate when ``with_shingles`` (``None``:
        :data:`COSINE_THRESHOLD`); the embedding method alone joins at
        ``DedupConfig.lsh.threshold``, and this must then be ``None``.
    """

    model: str | None = None
    embeddings: str | None = None
    save: bool = False
    recall: float = 0.95
    device: EmbeddingDevice = "cpu"
    with_shingles: bool = False
    cosine_threshold: float | None = None

    _RULES: ClassVar[Mapping[str, Rule]] = {
        "model": optional_text(),
        "embeddings": optional_text(),
        "save": boolean(),
        "recall": real(0.0, 1.0, low_open=True, high_open=True),
        "device": one_of("cpu", "cuda"),
        "with_shingles": boolean(),
        "cosine_threshold": optional_real(0.0, 1.0, low_open=True),
    }

    def __post_init__(self) -> None:
        self._validate()
        if self.cosine_threshold is not None and not self.with_shingles:
            raise ParameterError(
                "EmbeddingSpec.cosine_threshold applies with shingles (with_shingles); the "
                "embedding method alone joins at DedupConfig.lsh.threshold: set that instead"
            )


COSINE_THRESHOLD = 0.9
"""The cosine of a near duplicate by its embeddings when none is given (``--threshold`` of
``--method embedding``, ``--cosine-threshold`` of ``minhash+embedding``). On a corpus about one
subject every text is near every other: Clough & Stevenson's answers to one question that copy
nothing reach 0.83 with their source (all-MiniLM-L6-v2), and 10% of the pairs of answers to one
question pass 0.87 (docs/semantic.md)."""
