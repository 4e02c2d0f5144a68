"""The NumPy forward pass of a sentence-transformers BERT model against the library itself."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numba
import numpy as np
import pytest

from neardup.embed import SentenceTransformerEncoder, as_rows, load_encoder, model_digest
from neardup.embed.bert import BertEncoder
from neardup.errors import MissingExtraError, ParameterError

pytestmark = pytest.mark.slow  # the encoder's kernels compile on a cold cache


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return (a * b).sum(axis=1)


def test_embeddings_match_sentence_transformers(
    minilm: Path, sample_texts: list[str], reference: np.ndarray
) -> None:
    """Every sample text within 1e-4 cosine of sentence-transformers' embedding, as unit rows:
    the paraphrase pair, accents and CJK, two texts cut at 256 tokens, empty and blank."""
    vectors = load_encoder(minilm).encode(sample_texts)
    assert vectors.shape == reference.shape == (len(sample_texts), 384)
    assert vectors.dtype == np.float32
    assert _cosines(vectors, reference).min() >= 1 - 1e-4
    assert np.abs(vectors - reference).max() < 1e-4
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_sentence_transformers_itself(minilm: Path, sample_texts: list[str]) -> None:
    """Where sentence-transformers is installed, the check against the library as it runs now
    (not only against the stored reference)."""
    library = pytest.importorskip("sentence_transformers")
    theirs = library.SentenceTransformer(str(minilm), device="cpu").encode(sample_texts)
    ours = BertEncoder(minilm).encode(sample_texts)
    assert _cosines(ours, theirs).min() >= 1 - 1e-4


def test_batching_and_threads_change_nothing(minilm: Path, sample_texts: list[str]) -> None:
    """The embeddings do not depend on how texts are batched nor on the number of threads."""
    texts = sample_texts * 3
    whole = BertEncoder(minilm).encode(texts)
    small = BertEncoder(minilm, batch_tokens=300).encode(texts)
    np.testing.assert_allclose(small, whole, atol=1e-6)
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        one = BertEncoder(minilm).encode(texts)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one, whole)
    np.testing.assert_array_equal(
        whole[: len(sample_texts)], whole[len(sample_texts) :][: len(sample_texts)]
    )


def test_paraphrases_are_near_and_topics_apart(minilm: Path) -> None:
    """What the method rests on: a paraphrase scores far above an unrelated sentence."""
    vectors = BertEncoder(minilm).encode(
        ["The cat sat on the mat.", "A cat was sitting on the mat.", "Stock markets fell."]
    )
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.9
    assert similarity[0, 2] < 0.2


def _copy(minilm: Path, tmp_path: Path) -> Path:
    target = tmp_path / "model"
    shutil.copytree(minilm, target)
    return target


def test_models_of_other_kinds_are_refused(minilm: Path, tmp_path: Path) -> None:
    """A directory that is not a model, or a model of another architecture, says what it is."""
    with pytest.raises(ParameterError, match="not a directory"):
        load_encoder(tmp_path / "missing")
    with pytest.raises(ParameterError, match=r"no modules\.json and no model2vec"):
        load_encoder(tmp_path)
    model = _copy(minilm, tmp_path)
    pooling = model / "1_Pooling" / "config.json"
    settings = pooling.read_text()
    maxed = {
        **json.loads(settings),
        "pooling_mode_mean_tokens": False,
        "pooling_mode_max_tokens": True,
    }
    pooling.write_text(json.dumps(maxed))
    with pytest.raises(ParameterError, match=r"pooling \['max_tokens'\] is not supported"):
        load_encoder(model)
    pooling.write_text(settings)
    config = (model / "config.json").read_text()
    (model / "config.json").write_text(json.dumps({**json.loads(config), "model_type": "roberta"}))
    with pytest.raises(ParameterError, match="model_type 'roberta'"):
        BertEncoder(model)
    (model / "config.json").write_text(config)
    (model / "sentence_bert_config.json").unlink()
    with pytest.raises(ParameterError, match=r"no sentence_bert_config\.json"):
        BertEncoder(model)


def test_cls_pooling_takes_the_first_token(minilm: Path, tmp_path: Path) -> None:
    """A model pooled by its [CLS] token gives that token's output (unit length here)."""
    model = _copy(minilm, tmp_path)
    pooling = model / "1_Pooling" / "config.json"
    settings = json.loads(pooling.read_text())
    settings.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    pooling.write_text(json.dumps(settings))
    cls = BertEncoder(model).encode(["The cat sat on the mat.", "Stock markets fell."])
    mean = BertEncoder(minilm).encode(["The cat sat on the mat.", "Stock markets fell."])
    assert np.abs(cls - mean).max() > 0.01
    np.testing.assert_allclose(np.linalg.norm(cls, axis=1), 1.0, atol=1e-6)


def test_model_digest_follows_the_weights(minilm: Path, tmp_path: Path) -> None:
    """The digest recorded beside saved embeddings changes with the weights, not the path."""
    model = _copy(minilm, tmp_path)
    assert model_digest(model) == model_digest(minilm)
    with (model / "model.safetensors").open("r+b") as f:
        f.seek(-1, 2)
        last = f.read(1)
        f.seek(-1, 2)
        f.write(bytes([last[0] ^ 1]))
    assert model_digest(model) != model_digest(minilm)


def test_an_encoders_output_is_checked() -> None:
    """Rows of another count, or NaN, from a user's encoder are refused by name."""
    assert as_rows([[1, 2], [3, 4]], 2, "Mine").dtype == np.float32
    with pytest.raises(ParameterError, match=r"Mine.encode gave an array of shape \(1, 2\)"):
        as_rows([[1, 2]], 2, "Mine")
    with pytest.raises(ParameterError, match="NaN"):
        as_rows([[np.nan, 2]], 1, "Mine")


def test_the_gpu_path_is_sentence_transformers(
    minilm: Path, sample_texts: list[str], reference: np.ndarray
) -> None:
    """``--device cuda`` hands the model to sentence-transformers; where that library is
    installed its adapter gives the reference vectors (here on the CPU: no GPU in CI)."""
    pytest.importorskip("sentence_transformers")
    vectors = SentenceTransformerEncoder(minilm, "cpu").encode(sample_texts)
    assert _cosines(vectors, reference).min() >= 1 - 1e-4


def test_the_gpu_path_says_what_it_needs(minilm: Path) -> None:
    """Without sentence-transformers (or without a GPU), --device cuda says what to install."""
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        with pytest.raises(MissingExtraError, match="pip install sentence-transformers"):
            load_encoder(minilm, "cuda")
    else:
        import torch

        if torch.cuda.is_available():
            pytest.skip("a GPU is present: --device cuda works here")
        with pytest.raises(ParameterError, match="torch sees no GPU"):
            load_encoder(minilm, "cuda")
