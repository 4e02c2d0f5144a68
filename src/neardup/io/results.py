"""Writing a dedup run's results: ``clusters.jsonl``, ``pairs.jsonl``, ``summary.json``.

``clusters.jsonl``: one line per input document, in input order:
``{"id": ..., "cluster": <id of the cluster's first document>, "keep": true|false}``.

``pairs.jsonl``: one line per duplicate pair, ``a`` before ``b`` in input order:
``{"a": ..., "b": ..., "jaccard": <exact Jaccard or null>, "estimate": <from signatures>,
"exact": <true when the normalised texts are identical>}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from neardup._types import BoolArray, F64Array, I64Array

__all__ = [
    "cluster_line",
    "exact_pair_line",
    "near_pair_line",
    "write_clusters",
    "write_index_matches",
    "write_json",
    "write_pairs",
]


def cluster_line(doc_id: str, cluster_id: str, keep: bool) -> str:
    """One line of ``clusters.jsonl`` (with its newline); every engine writes these bytes."""
    flag = "true" if keep else "false"
    encoded_id = json.dumps(doc_id, ensure_ascii=False)
    encoded_cluster = json.dumps(cluster_id, ensure_ascii=False)
    return f'{{"id": {encoded_id}, "cluster": {encoded_cluster}, "keep": {flag}}}\n'


def exact_pair_line(a: str, b: str) -> str:
    """The ``pairs.jsonl`` line of two documents with identical normalised text."""
    record = {"a": a, "b": b, "jaccard": 1.0, "estimate": 1.0, "exact": True}
    return json.dumps(record, ensure_ascii=False) + "\n"


def near_pair_line(a: str, b: str, estimate: float, jaccard: float) -> str:
    """The ``pairs.jsonl`` line of a verified near pair (``jaccard`` NaN when not computed)."""
    record = {
        "a": a,
        "b": b,
        "jaccard": None if np.isnan(jaccard) else round(jaccard, 6),
        "estimate": round(estimate, 6),
        "exact": False,
    }
    return json.dumps(record, ensure_ascii=False) + "\n"


def write_clusters(path: Path, ids: Sequence[str], labels: I64Array, keep: BoolArray) -> None:
    """Write ``clusters.jsonl``."""
    with path.open("w", encoding="utf-8", errors="surrogatepass") as f:
        for doc, (label, kept) in enumerate(zip(labels.tolist(), keep.tolist(), strict=True)):
            f.write(cluster_line(ids[doc], ids[label], kept))


def write_pairs(
    path: Path,
    ids: Sequence[str],
    exact: tuple[I64Array, I64Array],
    near: tuple[I64Array, I64Array, F64Array, F64Array],
) -> None:
    """Write ``pairs.jsonl``: exact duplicates first, then verified near duplicates."""
    with path.open("w", encoding="utf-8", errors="surrogatepass") as f:
        for a, b in zip(exact[0].tolist(), exact[1].tolist(), strict=True):
            f.write(exact_pair_line(ids[a], ids[b]))
        first, second, estimate, jaccard = near
        for a, b, est, jac in zip(
            first.tolist(), second.tolist(), estimate.tolist(), jaccard.tolist(), strict=True
        ):
            f.write(near_pair_line(ids[a], ids[b], est, jac))


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as indented JSON."""
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_index_matches(
    path: Path, ids: Sequence[str], matches: Mapping[int, Sequence[Any]]
) -> None:
    """Write ``index_matches.jsonl``, one line per document dropped for a near-copy in the index.

    Each line is ``{"id", "matches": [{"id", "similarity"}, ...]}``, in input order.
    """
    with path.open("w", encoding="utf-8", errors="surrogatepass") as f:
        for doc in sorted(matches):
            found = [{"id": m.id, "similarity": round(m.similarity, 6)} for m in matches[doc]]
            f.write(json.dumps({"id": ids[doc], "matches": found}, ensure_ascii=False) + "\n")
