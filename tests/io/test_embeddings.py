"""Saved embeddings: refused for another run, named; descriptions of older runs still read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from neardup.errors import IncompatibleError
from neardup.io.embeddings import ids_digest, info_path, read_embeddings, write_embeddings

IDS = ["a", "b", "c"]


def _expected(**changed: object) -> dict[str, object]:
    return {
        "num_docs": 3,
        "ids_sha256": ids_digest(IDS),
        "normalize": {"nfkc": True},
        "host_templates": False,
        "model_sha256": None,
        **changed,
    }


def _saved(tmp_path: Path, **info: object) -> Path:
    path = tmp_path / "embeddings.npy"
    write_embeddings(path, np.eye(3, dtype=np.float32), {"dim": 3, **_expected(), **info})
    return path


def test_vectors_of_the_same_run_are_read(tmp_path: Path) -> None:
    vectors = read_embeddings(_saved(tmp_path), _expected())
    np.testing.assert_array_equal(vectors, np.eye(3))


@pytest.mark.parametrize(
    ("changed", "message"),
    [
        ({"ids_sha256": ids_digest(["a", "b", "d"])}, "documents with other ids"),
        ({"host_templates": True}, "made without --host-templates"),
        ({"normalize": {"nfkc": False}}, "normalize"),
    ],
)
def test_vectors_of_another_run_are_refused(
    tmp_path: Path, changed: dict[str, object], message: str
) -> None:
    with pytest.raises(IncompatibleError, match=message):
        read_embeddings(_saved(tmp_path), _expected(**changed))


def test_a_description_from_before_host_templates_reads_as_without(tmp_path: Path) -> None:
    path = _saved(tmp_path)
    info = json.loads(info_path(path).read_text())
    del info["host_templates"]
    info_path(path).write_text(json.dumps(info))
    read_embeddings(path, _expected())
    with pytest.raises(IncompatibleError, match="without --host-templates"):
        read_embeddings(path, _expected(host_templates=True))
