"""Deterministic corpora for ``bench/scale.py``: short real documents with planted near-copies.

Base documents are three runs of 15 consecutive words taken at random places of the RFC corpus
(45 words, ~290 bytes, single spaces; real text, but unlikely to repeat by chance). A share of
the documents are planted copies of an earlier base document, with a known edit:

=========  ============================================================  =====================
kind       edit                                                          w5 Jaccard to source
=========  ============================================================  =====================
exact      none                                                          1
case       upper-cased, with doubled spaces (identical after            1
           normalisation)
append-k   k words appended (k = 1..12)                                  41 / (41 + k)
subst      one word replaced at a random position                        0.78 - 1 (by position)
delete     one word deleted at a random position                         0.80 - 1 (by position)
=========  ============================================================  =====================

The truth file lists ``copy<TAB>source<TAB>kind``; sources are drawn uniformly from the earlier
base documents, so some sources get several copies (clusters of 2 and more). The same seed and
size always give the same bytes.

Also :func:`write_rfc_jsonl`: the whole RFC corpus as one JSONL file (``{"id", "text"}``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from bench.corpora import RFC_ARCHIVE, load_rfcs

WORDS_PER_RUN = 15
RUNS = 3
SHARES = {"exact": 0.04, "case": 0.02, "append": 0.06, "subst": 0.04, "delete": 0.04}
"""Share of the documents planted as each kind of copy (20% in all)."""

_SPACE = re.compile(rb"\s+")


def _word_stream(archive: Path) -> tuple[bytes, np.ndarray, np.ndarray]:
    """All RFC text as one byte string, with the start and end of every word."""
    _, texts = load_rfcs(archive)
    data = "\n".join(texts).encode("utf-8")
    spans = [(m.start(), m.end()) for m in re.finditer(rb"\S+", data)]
    bounds = np.array(spans, dtype=np.int64)
    return data, bounds[:, 0], bounds[:, 1]


def write_short_corpus(
    path: Path, num_docs: int, *, seed: int = 12, archive: Path = RFC_ARCHIVE
) -> Path:
    """Write ``num_docs`` short documents as JSONL to ``path`` and the truth to ``path.truth.tsv``.

    Written to temporary names and renamed, so an interrupted run leaves nothing half-written.
    Returns the truth file's path.
    """
    data, starts, ends = _word_stream(archive)
    rng = np.random.default_rng(seed)
    num_words = starts.shape[0]
    kinds = np.array(["base", *SHARES])
    probs = np.array([1 - sum(SHARES.values()), *SHARES.values()])
    chosen = rng.choice(kinds, size=num_docs, p=probs)
    chosen[:10] = "base"
    run_starts = rng.integers(0, num_words - WORDS_PER_RUN, size=(num_docs, RUNS))
    picks = rng.random(num_docs)
    params = rng.integers(0, 1 << 30, size=(num_docs, 2))
    bases: list[int] = []
    words_of: dict[int, list[bytes]] = {}
    truth = path.with_name(path.name + ".truth.tsv")
    tmp, tmp_truth = path.with_suffix(".tmp"), truth.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as out, tmp_truth.open("w", encoding="utf-8") as facts:
        facts.write("copy\tsource\tkind\n")
        for doc in range(num_docs):
            kind = str(chosen[doc])
            if kind == "base":
                words = []
                for s in run_starts[doc].tolist():
                    run = data[starts[s] : ends[s + WORDS_PER_RUN - 1]]
                    words.extend(_SPACE.split(run))
                words_of[doc] = words
                bases.append(doc)
                text = b" ".join(words).decode("utf-8", "replace")
            else:
                source = bases[int(picks[doc] * len(bases))]
                text, label = _copy(words_of[source], kind, params[doc], data, starts, ends)
                facts.write(f"d{doc:08d}\td{source:08d}\t{label}\n")
            out.write(json.dumps({"id": f"d{doc:08d}", "text": text}) + "\n")
    tmp.replace(path)
    tmp_truth.replace(truth)
    return truth


def _copy(
    words: list[bytes],
    kind: str,
    param: np.ndarray,
    data: bytes,
    starts: np.ndarray,
    ends: np.ndarray,
) -> tuple[str, str]:
    """The text of a planted copy of ``words`` and its truth label."""
    a, b = int(param[0]), int(param[1])
    words = list(words)
    if kind == "exact":
        return b" ".join(words).decode("utf-8", "replace"), "exact"
    if kind == "case":
        return b"  ".join(words).decode("utf-8", "replace").upper(), "case"
    filler = [
        data[starts[i] : ends[i]]
        for i in range(b % (starts.shape[0] - 12), b % (starts.shape[0] - 12) + 12)
    ]
    if kind == "append":
        k = 1 + a % 12
        return b" ".join(words + filler[:k]).decode("utf-8", "replace"), f"append-{k}"
    position = a % len(words)
    if kind == "subst":
        words[position] = filler[0]
        return b" ".join(words).decode("utf-8", "replace"), f"subst@{position}"
    del words[position]
    return b" ".join(words).decode("utf-8", "replace"), f"delete@{position}"


def write_rfc_jsonl(path: Path, archive: Path = RFC_ARCHIVE) -> None:
    """The whole RFC corpus as JSONL, ``{"id": "rfcN", "text": ...}`` in archive order."""
    ids, texts = load_rfcs(archive)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for doc_id, text in zip(ids, texts, strict=True):
            out.write(json.dumps({"id": doc_id, "text": text}) + "\n")
    tmp.replace(path)
