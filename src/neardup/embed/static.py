"""A static embedding model (model2vec) run in NumPy: the mean of its tokens' vectors.

Where it sits: the embedding method's second encoder (:mod:`neardup.embed`). A static model has
no layers: each token has one vector, distilled from a sentence transformer, and a text's
embedding is the mean of its tokens' vectors, so encoding is a table lookup, hundreds of times
faster than a transformer's forward pass, for a little less quality (MinishLab's potion models
for semhash). It reads a model as ``model2vec``'s ``StaticModel.save_pretrained`` writes it
(``config.json``, ``modules.json`` naming a ``StaticEmbedding``, ``model.safetensors`` holding
``embeddings`` and optionally per-token ``weights`` and a vocabulary ``mapping``,
``tokenizer.json``) and computes what ``StaticModel.encode`` computes: each text cut to
``max_length`` times the median token length in characters, tokenised without special tokens
and cut to ``max_length`` tokens, unknown tokens dropped, the (weighted) mean of the rest, and
unit length where ``normalize`` is set (tests/semantic/test_static.py checks it against model2vec).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from neardup._types import F32Array
from neardup.embed import model_files, model_json
from neardup.errors import ParameterError

__all__ = ["StaticEncoder", "is_static_model"]

_SAVED = "a model2vec model as StaticModel.save_pretrained writes it"

DEFAULT_MAX_LENGTH = 512
"""Tokens per text where the model's config names no ``max_length`` (model2vec's default)."""


def is_static_model(path: Path) -> bool:
    """Whether the directory holds a model2vec model.

    Its ``config.json`` says ``"model_type": "model2vec"`` (distilled models), or its
    ``modules.json`` starts with a ``StaticEmbedding`` (what ``save_pretrained`` writes).
    """
    config, modules = _json(path / "config.json"), _json(path / "modules.json")
    if isinstance(config, dict) and config.get("model_type") == "model2vec":
        return True
    first = modules[0] if isinstance(modules, list) and modules else None
    return isinstance(first, dict) and str(first.get("type", "")).endswith(".StaticEmbedding")


def _json(path: Path) -> Any:
    """A JSON file's value, or None where it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class StaticEncoder:
    """Sentence embeddings of a model2vec static model.

    Parameters
    ----------
    path
        The model's directory, as ``StaticModel.save_pretrained`` writes it.

    Raises
    ------
    ParameterError
        A directory without the model's files (named), or tables that do not fit together.
    MissingExtraError
        Without the ``tokenizers`` and ``safetensors`` packages (``neardup[semantic]``).
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.tokenizer, tables = model_files(self.path)
        config = model_json(self.path / "config.json", _SAVED)
        if not isinstance(config, dict):
            raise ParameterError(f"--model {self.path}: config.json is not a JSON object")
        if "embeddings" not in tables:
            raise ParameterError(
                f"--model {self.path}: model.safetensors holds no 'embeddings' table; "
                f"found {sorted(tables)}"
            )
        self.embeddings = tables["embeddings"].astype(np.float32, copy=False)
        self.weights = tables.get("weights")
        self.mapping = tables.get("mapping")
        self.dim = int(self.embeddings.shape[1])
        self.normalizes = bool(config.get("normalize", False))
        self.max_length: int | None = config.get("max_length", DEFAULT_MAX_LENGTH)
        vocabulary = self.tokenizer.get_vocab()
        if self.mapping is None and self.embeddings.shape[0] != len(vocabulary):
            raise ParameterError(
                f"--model {self.path}: {self.embeddings.shape[0]} vectors for "
                f"{len(vocabulary)} tokens, and no mapping between them"
            )
        lengths = [len(token) for token, _ in sorted(vocabulary.items(), key=lambda t: t[1])]
        self.max_chars = (
            None if self.max_length is None else self.max_length * int(np.median(lengths))
        )
        self.tokenizer.no_padding()
        if self.max_length is None:
            self.tokenizer.no_truncation()
        else:
            self.tokenizer.enable_truncation(self.max_length)
        self.unknown = _unknown_token(self.tokenizer)

    def encode(self, texts: Sequence[str]) -> F32Array:
        """The embeddings of ``texts``, one float32 row each (zeros for a text with no token)."""
        if self.max_chars is not None:
            texts = [text[: self.max_chars] for text in texts]
        encoded = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        out = np.zeros((len(encoded), self.dim), dtype=np.float32)
        for row, encoding in enumerate(encoded):
            ids = np.asarray(encoding.ids, dtype=np.int64)
            if self.unknown is not None:
                ids = ids[ids != self.unknown]
            if ids.shape[0] == 0:
                continue
            vectors = self.embeddings[self.mapping[ids] if self.mapping is not None else ids]
            if self.weights is not None:
                vectors = vectors * self.weights[ids][:, None]
            out[row] = vectors.mean(axis=0)
        if self.normalizes:
            out /= np.linalg.norm(out, axis=1, keepdims=True) + 1e-32
        return out


def _unknown_token(tokenizer: Any) -> int | None:
    """The id of the tokenizer's unknown token, dropped from every text (None: it has none)."""
    model = tokenizer.model
    if hasattr(model, "unk_token"):
        token = model.unk_token
        return None if token is None else tokenizer.token_to_id(token)
    found = json.loads(tokenizer.to_str())["model"].get("unk_id")  # a Unigram model
    return None if found is None else int(found)
