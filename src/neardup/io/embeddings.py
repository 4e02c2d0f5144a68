"""Documents' embeddings on disk: ``embeddings.npy`` and the ``embeddings.json`` that says how.

Where it sits: the embedding method (:mod:`neardup.semantic`) writes each document's vector
here (``--save-embeddings``) and a later run of the same inputs reads them back
(``--embeddings FILE``) instead of encoding again, the slow part of that method.

Layout: ``embeddings.npy`` is a NumPy ``.npy`` file, float32, ``(num_docs, dim)``, row ``d``
the vector of document ``d`` in input order (an exact copy has its group's vector, an empty
document zeros). Beside it, ``embeddings.json`` (for a file ``NAME.npy``, ``NAME.json``)::

    {"format": "neardup-embeddings", "version": 1, "num_docs": N, "dim": D,
     "ids_sha256": "...", "model": "PATH", "model_sha256": "...", "normalize": {...}}

``ids_sha256`` is the SHA-256 of the documents' ids in order (UTF-8, each followed by a NUL
byte); ``model_sha256`` that of the model's weights (:func:`neardup.embed.model_digest`), or
null for vectors of an encoder object; ``normalize`` the text normalisation the encoder saw,
and ``host_templates`` whether the texts were stripped of their hosts' templates (absent:
false). A file is refused for documents with other ids, with another model or normalisation.

Vectors made elsewhere come as a Parquet table (``--embeddings FILE.parquet``): a string column
``id`` and a list column ``embedding`` of one length, one row per document of the run in any
order (rows of other ids are left aside); nothing says what made them, so nothing is checked
but the ids and the width (:func:`read_embedding_table`).
"""

from __future__ import annotations

import collections
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from neardup._types import F32Array
from neardup.errors import IncompatibleError, InputError

__all__ = [
    "EMBEDDINGS_FILE",
    "EmbeddingInfo",
    "ids_digest",
    "read_embedding_table",
    "read_embeddings",
    "write_embeddings",
]

EMBEDDINGS_FILE = "embeddings.npy"
FORMAT = "neardup-embeddings"
VERSION = 1

EmbeddingInfo = dict[str, Any]
"""The fields of ``embeddings.json`` (see the module docstring)."""


def ids_digest(ids: Sequence[str]) -> str:
    """SHA-256 of the ids in order, each UTF-8 and followed by a NUL byte."""
    digest = hashlib.sha256()
    for start in range(0, len(ids), 65536):
        chunk = "\0".join(ids[i] for i in range(start, min(start + 65536, len(ids)))) + "\0"
        digest.update(chunk.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def info_path(path: Path) -> Path:
    """The ``.json`` beside an embeddings file."""
    return path.with_suffix(".json")


def write_embeddings(path: Path, vectors: F32Array, info: Mapping[str, Any]) -> None:
    """Write the vectors to ``path`` (``.npy``) and their description beside it.

    Called inside a run's atomic output directory: it appears whole or not at all.
    """
    np.save(path, np.asarray(vectors, dtype=np.float32), allow_pickle=False)
    described = {"format": FORMAT, "version": VERSION, **info}
    info_path(path).write_text(json.dumps(described, indent=2) + "\n", encoding="utf-8")


def read_embeddings(path: Path | str, expected: Mapping[str, Any]) -> F32Array:
    """The vectors in ``path``, mapped read-only, when made for what ``expected`` describes.

    ``expected`` holds ``num_docs``, ``ids_sha256``, ``normalize`` and ``host_templates`` of this
    run, and ``model_sha256`` when it names a model (None: any model).

    Raises
    ------
    InputError
        No such file, no description beside it, or not a float32 matrix.
    IncompatibleError
        Vectors of other documents, of another normalisation or of another model (named).
    """
    path = Path(path)
    described = info_path(path)
    try:
        info = json.loads(described.read_text(encoding="utf-8"))
        vectors: F32Array = np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError as error:
        raise InputError(
            f"--embeddings {path}: {error.filename} does not exist; give an embeddings.npy "
            "that a run with --save-embeddings wrote (with its .json beside it)"
        ) from None
    except (OSError, ValueError) as error:
        raise InputError(f"--embeddings {path}: cannot read it: {error}") from None
    if info.get("format") != FORMAT or info.get("version") != VERSION:
        raise InputError(
            f"--embeddings {path}: {described.name} is not a neardup embeddings description "
            f"(format {info.get('format')!r}, version {info.get('version')!r})"
        )
    if vectors.dtype != np.float32 or vectors.ndim != 2 or vectors.shape[0] != info["num_docs"]:
        raise InputError(
            f"--embeddings {path}: expected float32 rows, one per document ({info['num_docs']}); "
            f"got {vectors.dtype} of shape {vectors.shape}"
        )
    wanted = {k: v for k, v in expected.items() if v is not None}
    differing = [
        name for name, value in wanted.items() if info.get(name, _UNSTATED.get(name)) != value
    ]
    if differing:
        raise IncompatibleError(
            f"--embeddings {path} was made "
            + ", ".join(
                _difference(name, info.get(name, _UNSTATED.get(name)), wanted[name])
                for name in differing
            )
            + ": encode again (drop --embeddings), or give the inputs and options it was made of"
        )
    return vectors


def read_embedding_table(path: Path | str, ids: Sequence[str]) -> F32Array:
    """The vectors of the documents ``ids``, in their order, from a Parquet table of them.

    The table has a string column ``id`` and a list column ``embedding`` (floats, one length);
    every id of the run must have one row, and no id two.

    Raises
    ------
    InputError
        The file cannot be read, lacks a column, repeats an id, misses one of the run's
        (the first named, and how many), or holds vectors of different lengths or not finite.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    path = Path(path)
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as error:
        raise InputError(f"--embeddings {path}: cannot read it as Parquet: {error}") from None
    missing = [name for name in ("id", "embedding") if name not in table.column_names]
    if missing:
        raise InputError(
            f"--embeddings {path}: no column {missing[0]!r} (it has "
            f"{', '.join(table.column_names)}); give a table of an 'id' column and an "
            "'embedding' column of float lists"
        )
    table_ids = pc.cast(table.column("id"), pa.string()).to_pylist()
    row_of = {doc_id: row for row, doc_id in enumerate(table_ids)}
    if len(row_of) < len(table_ids):
        twice = next(i for i, n in collections.Counter(table_ids).items() if n > 1)
        raise InputError(f"--embeddings {path}: the id {twice!r} has more than one row")
    absent = [doc_id for doc_id in ids if doc_id not in row_of]
    if absent:
        raise InputError(
            f"--embeddings {path}: no vector for {len(absent):,} of this run's documents, "
            f"the first {absent[0]!r}; give a row for every document"
        )
    column = table.column("embedding").combine_chunks()
    if not (pa.types.is_list(column.type) or pa.types.is_fixed_size_list(column.type)):
        raise InputError(
            f"--embeddings {path}: the embedding column holds {column.type}, not lists of floats"
        )
    lengths = np.asarray(pc.list_value_length(column).fill_null(-1))
    if (lengths < 0).any():
        row = int(np.argmax(lengths < 0))
        raise InputError(f"--embeddings {path}: the row of id {table_ids[row]!r} has no embedding")
    if lengths.shape[0] and (lengths != lengths[0]).any() | (lengths[0] < 1):
        raise InputError(
            f"--embeddings {path}: every embedding must have one length; found "
            f"{', '.join(map(str, sorted(set(lengths.tolist()))[:3]))}"
        )
    dim = int(lengths[0]) if lengths.shape[0] else 0
    values = np.asarray(pc.cast(column.flatten(), pa.float32()), dtype=np.float32)
    vectors = values.reshape(-1, dim) if dim else np.zeros((0, 0), dtype=np.float32)
    if not np.isfinite(vectors).all():
        raise InputError(f"--embeddings {path}: an embedding holds NaN or infinity")
    return np.ascontiguousarray(vectors[[row_of[doc_id] for doc_id in ids]])


_UNSTATED = {"host_templates": False}
"""What a description made before a field existed meant by leaving it out."""


def _difference(name: str, made: Any, now: Any) -> str:
    if name == "num_docs":
        return f"for {made} documents, not this run's {now}"
    if name == "ids_sha256":
        return "for documents with other ids"
    if name == "model_sha256":
        return "with another model than --model"
    if name == "host_templates":
        return "with --host-templates" if made else "without --host-templates"
    return f"with {name} {made!r}, not this run's {now!r}"
