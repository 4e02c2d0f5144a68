"""The static (model2vec) encoder against model2vec itself, on models it saves."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neardup.embed import load_encoder
from neardup.embed.static import StaticEncoder
from neardup.errors import ParameterError

TEXTS = [
    "The cat sat on the mat.",
    "A cat was sitting on the mat.",
    "Crème brûlée, naïve café: Ünïcödé and ½ CJK 東京 text.",
    "",
    "zzqx unknownish tokens ############",
    "word " * 2000,  # past max_length: cut to it, in characters and in tokens
]


def _saved_model(minilm: Path, tmp_path: Path, **options: object) -> Path:
    """A static model with all-MiniLM-L6-v2's WordPiece vocabulary and seeded vectors, saved
    by model2vec itself."""
    model2vec = pytest.importorskip("model2vec")
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(minilm / "tokenizer.json"))
    size = tokenizer.get_vocab_size()
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(size, 16)).astype(np.float32)
    if "token_mapping" in options:  # a quantised vocabulary: 500 shared vectors
        vectors = vectors[:500]
        options["token_mapping"] = rng.integers(0, 500, size=size)
    if options.pop("weighted", False):
        options["weights"] = rng.uniform(0.1, 2.0, size=size).astype(np.float32)
    model = model2vec.StaticModel(vectors, tokenizer, **options)
    path = tmp_path / "static"
    model.save_pretrained(path)
    return path


@pytest.mark.parametrize(
    "options",
    [{"normalize": True}, {"normalize": False, "max_length": 64}, {"weighted": True},
     {"token_mapping": True, "normalize": True}],
    ids=["normalised", "max-length-64", "weighted", "quantised"],
)  # fmt: skip
def test_embeddings_equal_model2vecs(
    minilm: Path, tmp_path: Path, options: dict[str, object]
) -> None:
    """Every text as model2vec encodes it: cut, unknown tokens dropped, weighted mean, unit."""
    path = _saved_model(minilm, tmp_path, **dict(options))
    from model2vec import StaticModel

    theirs = StaticModel.from_pretrained(path).encode(TEXTS)
    ours = load_encoder(path).encode(TEXTS)
    assert isinstance(load_encoder(path), StaticEncoder)
    np.testing.assert_allclose(ours, theirs, atol=1e-6)
    assert not ours[3].any()  # the empty text
    with pytest.raises(ParameterError, match="static model, a table lookup"):
        load_encoder(path, "cuda")
