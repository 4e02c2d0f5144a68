"""Text encoders for the embedding method: texts in, one vector per text out.

Where it sits: beside :mod:`neardup.text` and :mod:`neardup.sketch`, for ``--method
embedding``. Shingles find copies that share wording; an encoder maps texts that share meaning
(paraphrases, heavy rewrites) to nearby directions, and the run then joins the vectors by
cosine (:mod:`neardup.semantic`).

Any object with ``encode(list[str]) -> ndarray`` (:class:`Encoder`) will do in the Python API.
From a path, :func:`load_encoder` reads a model saved on disk, with no network:

* a sentence-transformers BERT model (``modules.json``; e.g. all-MiniLM-L6-v2), run by
  :class:`~neardup.embed.bert.BertEncoder`, a NumPy forward pass as exact as the library's;
* a model2vec static model (:func:`~neardup.embed.static.is_static_model`; e.g. the potion
  models semhash uses), run by :class:`~neardup.embed.static.StaticEncoder`: the mean
  of its tokens' vectors, as model2vec computes it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from neardup.errors import MissingExtraError, ParameterError

__all__ = [
    "Encoder",
    "SentenceTransformerEncoder",
    "as_rows",
    "load_encoder",
    "model_digest",
    "model_files",
    "model_json",
]


class Encoder(Protocol):
    """Anything that turns texts into vectors: one row per text, the same width every call."""

    def encode(self, texts: Sequence[str]) -> NDArray[Any]:
        """The texts' vectors, ``(len(texts), dim)``."""
        ...


def load_encoder(path: Path | str, device: str = "cpu") -> Encoder:
    """The encoder of the model saved in the directory ``path``.

    ``device="cuda"`` runs a sentence-transformers model by that library on the GPU
    (:class:`SentenceTransformerEncoder`) instead of neardup's forward pass on the CPU.

    Raises
    ------
    ParameterError
        ``path`` is not a directory, or holds no model of a kind this reads (named); ``cuda``
        for a static model, or where torch sees no GPU.
    MissingExtraError
        Without the packages the model's kind needs (``pip install 'neardup[semantic]'``; for
        ``cuda``, sentence-transformers).
    """
    directory = Path(path)
    if not directory.is_dir():
        raise ParameterError(
            f"--model {directory}: not a directory; give the directory of a model saved on "
            "disk, e.g. a sentence-transformers model (modules.json, model.safetensors, ...)"
        )
    from neardup.embed.static import StaticEncoder, is_static_model

    if is_static_model(directory):  # before modules.json, which model2vec writes too
        if device != "cpu":
            raise ParameterError(
                f"--device {device}: {directory} is a static model, a table lookup that no GPU "
                "speeds up; drop --device"
            )
        return StaticEncoder(directory)
    if (directory / "modules.json").is_file():
        if device != "cpu":
            return SentenceTransformerEncoder(directory, device)
        from neardup.embed.bert import BertEncoder

        return BertEncoder(directory)
    raise ParameterError(
        f"--model {directory}: no modules.json and no model2vec config.json; expected a "
        "sentence-transformers model as SentenceTransformer.save writes it, or a model2vec "
        "model as StaticModel.save_pretrained does"
    )


class SentenceTransformerEncoder:
    """A sentence-transformers model run by that library, on a GPU (``--device cuda``).

    The library and torch are not neardup's dependencies: installed by the user with torch for
    their GPU. Its vectors agree with :class:`~neardup.embed.bert.BertEncoder`'s to about 1e-4
    cosine (the products are summed in another order).
    """

    BATCH_SIZE = 256
    """Texts per forward pass on the GPU."""

    def __init__(self, path: Path, device: str) -> None:
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise MissingExtraError(
                f"--device {device} runs the model with sentence-transformers: pip install "
                "sentence-transformers (with torch for the GPU), or drop --device"
            ) from error
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise ParameterError(f"--device {device}: torch sees no GPU here; drop --device")
        self.model = SentenceTransformer(str(path), device=device)

    def encode(self, texts: Sequence[str]) -> NDArray[Any]:
        """The texts' vectors, as ``SentenceTransformer.encode`` gives them."""
        vectors: NDArray[Any] = self.model.encode(
            list(texts), batch_size=self.BATCH_SIZE, convert_to_numpy=True
        )
        return vectors


def model_digest(path: Path | str) -> str:
    """A SHA-256 of the model's weight files, in name order: what the embeddings were made with.

    Recorded beside saved embeddings, so that embeddings of another model are refused.
    """
    digest = hashlib.sha256()
    for weights in sorted(Path(path).glob("*.safetensors")):
        digest.update(weights.name.encode())
        with weights.open("rb") as f:
            while block := f.read(1 << 22):
                digest.update(block)
    return digest.hexdigest()


def model_json(path: Path, expected: str) -> Any:
    """A saved model's JSON file (its ``config.json``, ``modules.json``, ...).

    Raises
    ------
    ParameterError
        The file missing (named, with what the model directory was ``expected`` to hold), or
        unreadable.
    """
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ParameterError(
            f"--model {path.parent}: no {path.name}; expected {expected}"
        ) from None
    except (OSError, ValueError) as error:
        raise ParameterError(f"--model {path.parent}: cannot read {path.name}: {error}") from None


def model_files(path: Path) -> tuple[Any, dict[str, NDArray[Any]]]:
    """A saved model's tokenizer (``tokenizer.json``) and tensors (``model.safetensors``).

    Raises
    ------
    ParameterError
        Either file missing or unreadable (named).
    MissingExtraError
        Without the ``tokenizers`` and ``safetensors`` packages (``neardup[semantic]``).
    """
    try:
        import threadpoolctl  # noqa: F401  (BertEncoder runs BLAS on one thread per batch)
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
    except ImportError as error:
        raise MissingExtraError(
            "the embedding method needs: pip install 'neardup[semantic]'"
        ) from error
    try:
        return Tokenizer.from_file(str(path / "tokenizer.json")), load_file(
            str(path / "model.safetensors")
        )
    except Exception as error:  # tokenizers and safetensors raise their own kinds
        raise ParameterError(
            f"--model {path}: cannot read tokenizer.json and model.safetensors: {error}"
        ) from None


def as_rows(vectors: Any, num_texts: int, owner: str) -> NDArray[np.float32]:
    """An encoder's output checked and made float32 rows: one finite row per text."""
    rows = np.asarray(vectors)
    if rows.ndim != 2 or rows.shape[0] != num_texts or not np.issubdtype(rows.dtype, np.number):
        raise ParameterError(
            f"{owner}.encode gave an array of shape {rows.shape} and dtype {rows.dtype} for "
            f"{num_texts} texts; it must return one numeric row per text, (texts, dim)"
        )
    rows = np.ascontiguousarray(rows, dtype=np.float32)
    if not np.isfinite(rows).all():
        raise ParameterError(f"{owner}.encode gave NaN or infinite values")
    return rows
