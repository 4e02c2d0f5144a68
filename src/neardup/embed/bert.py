"""A sentence-transformers BERT model run in NumPy: texts in, sentence embeddings out.

Where it sits: the embedding method's encoder (:mod:`neardup.embed`), beside the shingling of
the other methods. It reads a model as sentence-transformers saves it (``modules.json``,
``config.json``, ``model.safetensors``, ``tokenizer.json``, ``sentence_bert_config.json``,
``1_Pooling/config.json``), e.g. all-MiniLM-L6-v2, and computes what
``SentenceTransformer(path).encode(texts)`` computes: WordPiece tokens (Hugging Face
``tokenizers``, the model's own ``tokenizer.json``) cut at ``max_seq_length``, the BERT encoder
(embeddings, then self-attention and feed-forward layers, each with a residual and LayerNorm),
mean pooling over the real tokens, and the unit-length normalisation where the model has it.

Why not torch: sentence-transformers pulls torch with its CUDA libraries, a 6 GB environment
that every clean install would download. The forward pass is a few matrix products per layer
(NumPy's BLAS, on every core) and three element-wise steps (:mod:`neardup._kernels.encoder`);
its embeddings agree with sentence-transformers' to 1e-4 cosine (tests/semantic).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from neardup._kernels.encoder import gelu_rows, layer_norm_rows, masked_softmax
from neardup._parallel import in_blocks
from neardup._types import F32Array, I64Array
from neardup.embed import model_files, model_json
from neardup.errors import ParameterError

__all__ = ["BertEncoder"]

BATCH_TOKENS = 2048
"""Tokens (rows x padded length) a thread runs through the layers at once: about 15 MB of
activations (all-MiniLM-L6-v2 on 2 cores: 10.1 s at 2,048 against 11.7 s at 4,096)."""

_SUPPORTED = "a BERT model saved by sentence-transformers (Transformer, Pooling, Normalize)"


@dataclass(frozen=True, slots=True)
class _Layer:
    """One encoder layer's weights, transposed for ``x @ w``."""

    qkv: F32Array
    qkv_bias: F32Array
    out: F32Array
    out_bias: F32Array
    norm1: tuple[F32Array, F32Array]
    up: F32Array
    up_bias: F32Array
    down: F32Array
    down_bias: F32Array
    norm2: tuple[F32Array, F32Array]


def _modules(path: Path) -> tuple[str, bool]:
    """The pooling (``"mean"`` or ``"cls"``) and whether the model normalises its output."""
    kinds = {m["type"].rsplit(".", 1)[-1]: m for m in model_json(path / "modules.json", _SUPPORTED)}
    unknown = set(kinds) - {"Transformer", "Pooling", "Normalize"}
    if "Transformer" not in kinds or "Pooling" not in kinds or unknown:
        raise ParameterError(
            f"--model {path}: modules {sorted(kinds)} are not supported; expected {_SUPPORTED}"
        )
    pooling = model_json(path / kinds["Pooling"]["path"] / "config.json", _SUPPORTED)
    modes = [
        k.removeprefix("pooling_mode_")
        for k, v in pooling.items()
        if k.startswith("pooling_mode_") and v
    ]
    if modes not in (["mean_tokens"], ["cls_token"]):
        raise ParameterError(
            f"--model {path}: pooling {modes} is not supported; mean_tokens or cls_token"
        )
    return ("mean" if modes == ["mean_tokens"] else "cls"), "Normalize" in kinds


class BertEncoder:
    """Sentence embeddings of a sentence-transformers BERT model, by a NumPy forward pass.

    Parameters
    ----------
    path
        The model's directory, as ``SentenceTransformer.save`` writes it.
    batch_tokens
        Tokens run through the layers at once (texts of similar length together); the
        embeddings do not depend on it.

    Raises
    ------
    ParameterError
        A directory that is not such a model (named), or one of another architecture.
    MissingExtraError
        Without the ``tokenizers`` and ``safetensors`` packages (``neardup[semantic]``).
    """

    def __init__(self, path: Path | str, *, batch_tokens: int = BATCH_TOKENS) -> None:
        self.path = Path(path)
        self.pooling, self.normalizes = _modules(self.path)
        config = model_json(self.path / "config.json", _SUPPORTED)
        if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
            raise ParameterError(
                f"--model {self.path}: model_type {config.get('model_type')!r} with "
                f"hidden_act {config.get('hidden_act')!r} is not supported; expected "
                f"{_SUPPORTED}"
            )
        self.dim = int(config["hidden_size"])
        self.num_heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        settings = model_json(self.path / "sentence_bert_config.json", _SUPPORTED)
        positions = int(config["max_position_embeddings"])
        self.max_length = min(int(settings.get("max_seq_length") or positions), positions)
        self.batch_tokens = max(batch_tokens, self.max_length)
        self.tokenizer, tensors = model_files(self.path)
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_length)
        weights = {k.removeprefix("bert."): v for k, v in tensors.items()}
        try:
            self._embeddings = (
                weights["embeddings.word_embeddings.weight"],
                weights["embeddings.position_embeddings.weight"],
                weights["embeddings.token_type_embeddings.weight"][0],
            )
            self._norm = _norm(weights, "embeddings.LayerNorm")
            self._layers = [
                _layer(weights, f"encoder.layer.{i}") for i in range(config["num_hidden_layers"])
            ]
        except KeyError as missing:
            raise ParameterError(
                f"--model {self.path}: model.safetensors has no tensor {missing}; expected "
                f"{_SUPPORTED}"
            ) from None

    def encode(self, texts: Sequence[str]) -> F32Array:
        """The embeddings of ``texts``, one float32 row each (unit length if the model says).

        Texts of similar length are run together, a batch of at most ``batch_tokens`` tokens
        on each of ``numba.get_num_threads()`` threads at once, BLAS on one thread in each: the
        same values as one thread, and no thread spinning while another works.
        """
        from threadpoolctl import threadpool_limits

        encoded = self.tokenizer.encode_batch(list(texts), add_special_tokens=True)
        lengths = np.fromiter((len(e.ids) for e in encoded), dtype=np.int64, count=len(encoded))
        out = np.empty((len(encoded), self.dim), dtype=np.float32)
        order = np.argsort(lengths, kind="stable")
        batches = list(_length_batches(lengths[order], self.batch_tokens))

        def run(lo: int, hi: int) -> None:
            for rows in batches[lo:hi]:
                docs = order[rows]
                ids = np.zeros((docs.shape[0], int(lengths[docs[-1]])), dtype=np.int64)
                for row, doc in enumerate(docs.tolist()):
                    ids[row, : lengths[doc]] = encoded[doc].ids
                out[docs] = self._forward(ids, lengths[docs])

        with threadpool_limits(1, user_api="blas"):
            in_blocks(run, len(batches), max_block=1)
        if self.normalizes:
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out

    def _forward(self, ids: I64Array, lengths: I64Array) -> F32Array:
        """The pooled output of the encoder for one batch of padded token rows."""
        rows, width = ids.shape
        words, positions, token_type = self._embeddings
        x = words[ids] + positions[:width] + token_type
        x = np.ascontiguousarray(x.reshape(rows * width, self.dim))
        layer_norm_rows(x, *self._norm, self.eps)
        for layer in self._layers:
            x = self._layer(x, layer, rows, width, lengths)
        hidden = x.reshape(rows, width, self.dim)
        if self.pooling == "cls":
            return np.ascontiguousarray(hidden[:, 0])
        real = (np.arange(width) < lengths[:, None]).astype(np.float32)
        pooled: F32Array = np.einsum("rw,rwd->rd", real, hidden)
        pooled /= np.maximum(lengths, 1).astype(np.float32)[:, None]
        return pooled

    def _layer(
        self, x: F32Array, layer: _Layer, rows: int, width: int, lengths: I64Array
    ) -> F32Array:
        """One encoder layer: self-attention and the feed-forward block, each with a residual."""
        heads, head_dim = self.num_heads, self.dim // self.num_heads
        qkv = x @ layer.qkv + layer.qkv_bias
        # (3, rows, heads, width, head_dim), each contiguous: NumPy's batched matmul calls BLAS
        qkv = np.ascontiguousarray(
            qkv.reshape(rows, width, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
        )
        scores = np.matmul(qkv[0], np.ascontiguousarray(qkv[1].transpose(0, 1, 3, 2)))
        scores *= np.float32(1.0 / math.sqrt(head_dim))
        masked_softmax(scores, lengths)
        context = np.matmul(scores, qkv[2]).transpose(0, 2, 1, 3).reshape(rows * width, self.dim)
        x += context @ layer.out
        x += layer.out_bias
        layer_norm_rows(x, *layer.norm1, self.eps)
        inner = x @ layer.up
        inner += layer.up_bias
        gelu_rows(inner)
        x += inner @ layer.down
        x += layer.down_bias
        layer_norm_rows(x, *layer.norm2, self.eps)
        return x


def _norm(weights: dict[str, F32Array], name: str) -> tuple[F32Array, F32Array]:
    return weights[f"{name}.weight"], weights[f"{name}.bias"]


def _layer(weights: dict[str, F32Array], name: str) -> _Layer:
    def dense(part: str) -> tuple[F32Array, F32Array]:
        return np.ascontiguousarray(weights[f"{name}.{part}.weight"].T), weights[
            f"{name}.{part}.bias"
        ]

    query, key, value = (dense(f"attention.self.{p}") for p in ("query", "key", "value"))
    out, up, down = (
        dense("attention.output.dense"),
        dense("intermediate.dense"),
        dense("output.dense"),
    )
    return _Layer(
        qkv=np.ascontiguousarray(np.concatenate([query[0], key[0], value[0]], axis=1)),
        qkv_bias=np.concatenate([query[1], key[1], value[1]]),
        out=out[0],
        out_bias=out[1],
        norm1=_norm(weights, f"{name}.attention.output.LayerNorm"),
        up=up[0],
        up_bias=up[1],
        down=down[0],
        down_bias=down[1],
        norm2=_norm(weights, f"{name}.output.LayerNorm"),
    )


def _length_batches(sorted_lengths: I64Array, batch_tokens: int) -> Iterator[slice]:
    """Runs of rows (lengths ascending) whose padded size, rows x longest, fits ``batch_tokens``."""
    start, count = 0, sorted_lengths.shape[0]
    while start < count:
        stop = start + 1
        while stop < count and (stop + 1 - start) * int(sorted_lengths[stop]) <= batch_tokens:
            stop += 1
        yield slice(start, stop)
        start = stop
