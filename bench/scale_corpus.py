"""Deterministic corpora for ``bench/scale.py``: short real documents with planted near-copies.

Base documents are three runs of 15 consecutive words taken at random places of the RFC corpus
(45 words, ~300 bytes, single spaces; real text, but unlikely to repeat by chance). A share of
the documents are planted copies of an earlier base document, with a known edit:

=========  =============================================================  ======================
kind       edit                                                           w5 Jaccard to source
=========  =============================================================  ======================
exact      none                                                           1
case       upper-cased, with doubled spaces (identical after              1
           normalisation)
append-k   k words appended (k = 1..12)                                   41 / (41 + k)
subst@p    the word at position p replaced                                0.78 - 1 (by position)
delete@p   the word at position p deleted                                 0.80 - 1 (by position)
=========  =============================================================  ======================

The truth file lists ``copy<TAB>source<TAB>kind``; sources are drawn uniformly from the earlier
base documents, so some get several copies (clusters of 2 and more). The same seed and size
always give the same bytes.

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


def _word_stream(archive: Path) -> tuple[bytes, np.ndarray]:
    """All RFC text with whitespace collapsed to single spaces, and where every word starts."""
    _, texts = load_rfcs(archive)
    data = re.sub(rb"\s+", b" ", "\n".join(texts).encode("utf-8")).strip()
    spaces = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 32)
    return data, np.concatenate([[0], spaces + 1, [len(data) + 1]])


def write_short_corpus(
    path: Path, num_docs: int, *, seed: int = 12, archive: Path = RFC_ARCHIVE
) -> Path:
    """Write ``num_docs`` short documents as JSONL to ``path`` and the truth beside it.

    Written to temporary names and renamed, so an interrupted run leaves nothing half-written.
    Returns the truth file's path (``path`` + ``.truth.tsv``).
    """
    data, word_starts = _word_stream(archive)
    num_words = word_starts.shape[0] - 1
    rng = np.random.default_rng(seed)
    kinds = np.array(["base", *SHARES])
    probs = np.array([1 - sum(SHARES.values()), *SHARES.values()])
    chosen = rng.choice(kinds, size=num_docs, p=probs)
    chosen[:10] = "base"
    run_starts = rng.integers(0, num_words - WORDS_PER_RUN, size=(num_docs, RUNS)).tolist()
    picks = rng.random(num_docs).tolist()
    params = rng.integers(0, 1 << 30, size=(num_docs, 2)).tolist()
    starts = word_starts.tolist()
    bases: list[int] = []
    text_of: dict[int, bytes] = {}
    truth = path.with_name(path.name + ".truth.tsv")
    tmp, tmp_truth = path.with_suffix(".tmp"), truth.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as out, tmp_truth.open("w", encoding="utf-8") as facts:
        facts.write("copy\tsource\tkind\n")
        for doc, kind in enumerate(chosen.tolist()):
            if kind == "base":
                text = b" ".join(
                    data[starts[s] : starts[s + WORDS_PER_RUN] - 1] for s in run_starts[doc]
                )
                text_of[doc] = text
                bases.append(doc)
            else:
                source = bases[int(picks[doc] * len(bases))]
                at = starts[params[doc][1] % (num_words - 12)]
                filler = data[at : at + 200].split(b" ")
                text, label = _copy(text_of[source], kind, params[doc][0], filler)
                facts.write(f"d{doc:08d}\td{source:08d}\t{label}\n")
            record = {"id": f"d{doc:08d}", "text": text.decode("utf-8", "replace")}
            out.write(json.dumps(record) + "\n")
    tmp.replace(path)
    tmp_truth.replace(truth)
    return truth


def _copy(text: bytes, kind: str, param: int, filler: list[bytes]) -> tuple[bytes, str]:
    """The text of a planted copy of ``text`` and its truth label."""
    if kind == "exact":
        return text, "exact"
    if kind == "case":
        return text.replace(b" ", b"  ").upper(), "case"
    words = text.split(b" ")
    if kind == "append":
        k = 1 + param % 12
        return b" ".join(words + filler[:k]), f"append-{k}"
    position = param % len(words)
    if kind == "subst":
        words[position] = filler[0]
        return b" ".join(words), f"subst@{position}"
    del words[position]
    return b" ".join(words), f"delete@{position}"


def write_rfc_jsonl(path: Path, archive: Path = RFC_ARCHIVE) -> None:
    """The whole RFC corpus as JSONL, ``{"id": "rfcN", "text": ...}`` in archive order."""
    ids, texts = load_rfcs(archive)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for doc_id, text in zip(ids, texts, strict=True):
            out.write(json.dumps({"id": doc_id, "text": text}) + "\n")
    tmp.replace(path)
