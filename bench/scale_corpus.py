"""Deterministic corpora for ``bench/scale.py``: short real documents, sparse and dense.

Short (sparse) corpora (:func:`write_short_corpus`): base documents are three runs of 15
consecutive words taken at random places of the RFC corpus (45 words, ~300 bytes, single spaces;
real text, but unlikely to repeat by chance). A share of the documents are planted copies of an
earlier base document, with a known edit:

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

Dense corpora (:func:`write_dense_corpus`): every document a window of 30 to 60 consecutive
words drawn uniformly from a bounded pool, the first ``pool_words`` words of the RFC corpus (in
archive order), and one document in ten a copy of one of the 1,000 documents written just
before it with one word replaced. The smaller the pool, the more windows overlap and the more
near neighbours (word 5-shingle Jaccard >= 0.8) they give each document; the RFC text's own
repetition (boilerplate above all) adds groups of near-identical windows on top, so the density
is not monotonic in the pool. :data:`DENSE_PRESETS` names three pools, measured at 1M
documents: about 1, 4 and 50 near neighbours per document (:func:`near_neighbours` measures
it; no pool of the first words measured went below 0.95).

Also :func:`write_rfc_jsonl`: the whole RFC corpus as one JSONL file (``{"id", "text"}``).

Run ``python -m bench.scale_corpus dense PRESET|POOL_WORDS NUM_DOCS PATH`` to write a dense
corpus, ``python -m bench.scale_corpus density PATH [SAMPLE]`` to measure its near neighbours
(``SAMPLE`` 0: every document), ``python -m bench.scale_corpus calibrate NUM_DOCS POOL_WORDS...``
to write and measure (10,000 documents) a corpus for each pool.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bench.corpora import RFC_ARCHIVE, load_rfcs

if TYPE_CHECKING:
    from neardup import ShingleSets

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
    A base document's text is made again from its runs' starts when a copy needs it, so memory
    holds a few numbers per document, not the texts (100M documents: 16 GB, 20 minutes).
    Returns the truth file's path (``path`` + ``.truth.tsv``).
    """
    data, word_starts = _word_stream(archive)
    num_words = word_starts.shape[0] - 1
    rng = np.random.default_rng(seed)
    kinds = np.array(["base", *SHARES])
    probs = np.array([1 - sum(SHARES.values()), *SHARES.values()])
    chosen = rng.choice(len(kinds), size=num_docs, p=probs)
    chosen[:10] = 0
    run_starts = rng.integers(0, num_words - WORDS_PER_RUN, size=(num_docs, RUNS))
    picks = rng.random(num_docs)
    params = rng.integers(0, 1 << 30, size=(num_docs, 2))
    is_base = chosen == 0
    bases = np.flatnonzero(is_base)
    bases_before = np.cumsum(is_base) - is_base  # the base documents written before each one
    sources = bases[(picks * bases_before).astype(np.int64)]
    starts = word_starts.tolist()

    def base_text(doc: int) -> bytes:
        return b" ".join(
            data[starts[s] : starts[s + WORDS_PER_RUN] - 1] for s in run_starts[doc].tolist()
        )

    truth = path.with_name(path.name + ".truth.tsv")
    tmp, tmp_truth = path.with_suffix(".tmp"), truth.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as out, tmp_truth.open("w", encoding="utf-8") as facts:
        facts.write("copy\tsource\tkind\n")
        for doc, kind in enumerate(chosen.tolist()):
            if kind == 0:
                text = base_text(doc)
            else:
                source = int(sources[doc])
                edit, where = params[doc].tolist()
                at = starts[where % (num_words - 12)]
                filler = data[at : at + 200].split(b" ")
                text, label = _copy(base_text(source), str(kinds[kind]), edit, filler)
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


# ---------------------------------------------------------------- dense corpora

DENSE_PRESETS: dict[str, int] = {
    "rfc-first-8m-words": 8_000_000,
    "rfc-first-20m-words": 20_000_000,
    "rfc-first-80k-words": 80_000,
}
"""Pool sizes in words, by name: the lowest density a pool of the first words reaches, the
issue's reference corpus (the first 20M words), and a dense one.

Near neighbours per document at 1M documents (:func:`near_neighbours`, exact Jaccard >= 0.8;
a near pair gives each of its documents one; all 1M documents for the first two, a sample of
10,000 for the last):

=====================  ======  ======  ====  ====  ====  =====================
preset                 mean    median  p90   p99   max   documents with one
=====================  ======  ======  ====  ====  ====  =====================
rfc-first-8m-words     0.96    0       2     6     224   49%
rfc-first-20m-words    4.32    0       1     187   536   30%
rfc-first-80k-words    50.7    54      78    106   420   96%
=====================  ======  ======  ====  ====  ====  =====================

The density is not monotonic in the pool: windows overlap less in a larger pool, but the RFCs
after the first 8M words hold more repeated text (the ISOC copyright statement of the RFCs of
1997-2004 above all: 77% of the near neighbours of the 20M-word corpus belong to its 1% of
documents with the most). Means measured at 1M documents (samples of 10,000) for other pools:
80k words 50.7, 100k 42.5, 150k 30.0, 1M 4.69, 2M 2.51, 4M 1.68, 6M 1.17, 8M 0.95, 10M 1.38,
12M 1.97, 14M 2.84, 20M 4.29, 40M 2.81, all 68.2M 1.78: none went below 0.95, so no pool of the
first words gives 0.5. ``python -m bench.scale_corpus calibrate 1e6 POOL_WORDS...`` measures
other pools.
"""

DENSE_CHUNK = 1 << 16
"""Documents drawn at a time: a corpus is a prefix of every larger one with the same pool and
seed."""


@functools.lru_cache(maxsize=1)
def _cached_word_stream(archive: Path) -> tuple[bytes, np.ndarray]:
    """:func:`_word_stream`, read once per process (a minute: the archive is 95 MB of xz)."""
    return _word_stream(archive)


def _escaped_pool(archive: Path, pool_words: int) -> tuple[bytes, np.ndarray]:
    """The first ``pool_words`` words, JSON-escaped (ASCII), and where every word starts.

    Escaping never makes or removes a space, so word ``w`` of the pool is
    ``pool[starts[w] : starts[w + 1] - 1]``, ready to go between the quotes of a JSON string.
    """
    data, word_starts = _cached_word_stream(archive)
    num_words = word_starts.shape[0] - 1
    if not 60 < pool_words <= num_words:
        raise ValueError(f"pool_words must be in 61..{num_words:,} (the RFC corpus's words)")
    text = data[: int(word_starts[pool_words]) - 1].decode("utf-8")
    pool = json.dumps(text)[1:-1].encode("ascii")
    spaces = np.flatnonzero(np.frombuffer(pool, dtype=np.uint8) == 32)
    starts = np.concatenate([[0], spaces + 1, [len(pool) + 1]])
    assert starts.shape[0] - 1 == pool_words
    return pool, starts


def write_dense_corpus(
    path: Path,
    num_docs: int,
    *,
    pool_words: int = 20_000_000,
    seed: int = 13,
    copy_share: float = 0.1,
    recent: int = 1000,
    min_words: int = 30,
    max_words: int = 60,
    archive: Path = RFC_ARCHIVE,
) -> Path:
    """Write ``num_docs`` dense documents as JSONL to ``path`` and the truth of the copies.

    Each document is a window of ``min_words`` to ``max_words`` consecutive words (uniform)
    starting uniformly in the first ``pool_words`` words of the RFC corpus; a share
    ``copy_share`` of them is instead a copy of one of the ``recent`` documents just before it
    (uniform; a copy may be copied again) with the word at a uniform position replaced by a
    uniform word of the pool. Ids are ``d%08d`` in order. The truth file beside it
    (``path`` + ``.truth.tsv``) lists ``copy<TAB>source<TAB>subst@p``. Both are written to
    temporary names and renamed; the same arguments always give the same bytes, and the first
    ``n`` documents are the same for every ``num_docs >= n``. Returns the truth file's path.
    """
    pool, starts_array = _escaped_pool(archive, pool_words)
    starts = starts_array.tolist()
    rng = np.random.default_rng(seed)
    truth = path.with_name(path.name + ".truth.tsv")
    tmp = path.with_name(f".{path.name}.tmp")
    tmp_truth = truth.with_name(f".{truth.name}.tmp")
    ring: list[bytes] = [b""] * recent
    try:
        with tmp.open("wb") as out, tmp_truth.open("w", encoding="utf-8") as facts:
            facts.write("copy\tsource\tkind\n")
            for first in range(0, num_docs, DENSE_CHUNK):
                lengths = rng.integers(min_words, max_words + 1, size=DENSE_CHUNK)
                begins = rng.integers(0, pool_words - lengths + 1).tolist()
                copies = (rng.random(DENSE_CHUNK) < copy_share).tolist()
                backs = rng.random(DENSE_CHUNK).tolist()
                places = rng.random(DENSE_CHUNK).tolist()
                words = rng.integers(0, pool_words, size=DENSE_CHUNK).tolist()
                lengths_list = lengths.tolist()
                lines = []
                for i in range(min(DENSE_CHUNK, num_docs - first)):
                    doc = first + i
                    if copies[i] and doc:
                        source = doc - 1 - int(backs[i] * min(doc, recent))
                        parts = ring[source % recent].split(b" ")
                        at = int(places[i] * len(parts))
                        w = words[i]
                        parts[at] = pool[starts[w] : starts[w + 1] - 1]
                        text = b" ".join(parts)
                        facts.write(f"d{doc:08d}\td{source:08d}\tsubst@{at}\n")
                    else:
                        b = begins[i]
                        text = pool[starts[b] : starts[b + lengths_list[i]] - 1]
                    ring[doc % recent] = text
                    lines.append(b'{"id": "d%08d", "text": "%b"}\n' % (doc, text))
                out.write(b"".join(lines))
        tmp.replace(path)
        tmp_truth.replace(truth)
    except BaseException:
        tmp.unlink(missing_ok=True)
        tmp_truth.unlink(missing_ok=True)
        raise
    return truth


def near_neighbours(
    path: Path,
    *,
    sample: int = 2000,
    threshold: float = 0.8,
    seed: int = 0,
    max_postings: int = 20_000_000,
) -> dict[str, float]:
    """Exact near neighbours of a uniform sample of the documents of a JSONL corpus (0: all).

    Every document is shingled as ``neardup dedup`` does by default (word 5-shingles of the
    normalised text, :class:`neardup.Shingler`); each sampled document is compared with every
    document sharing a shingle with it, by the exact Jaccard of the shingle sets. A near
    neighbour is another document at ``threshold`` or above (exact copies included). Returns
    the mean, median, 90th and 99th percentile and largest number of near neighbours per
    sampled document, the share with at least one, the mean of those with the very same
    shingle set (Jaccard 1: exact copies after normalisation, or windows of repeated text), and
    the mean documents sharing a shingle per sampled document.
    """
    from neardup import Shingler

    with path.open("rb") as f:
        texts = [json.loads(line)["text"] for line in f]
    sets = Shingler().shingle_sets(texts)
    del texts
    num_docs = len(sets)
    if sample and sample < num_docs:
        rng = np.random.default_rng(seed)
        chosen = np.sort(rng.choice(num_docs, size=sample, replace=False))
    else:
        chosen = np.arange(num_docs)
    near, exact, shared = _near_counts(sets, chosen, threshold, max_postings)
    return {
        "documents": num_docs,
        "sample": int(chosen.shape[0]),
        "mean": float(near.mean()),
        "median": float(np.median(near)),
        "p90": float(np.percentile(near, 90)),
        "p99": float(np.percentile(near, 99)),
        "max": int(near.max()),
        "share_with_one": float((near > 0).mean()),
        "mean_same_shingles": float(exact.mean()),
        "mean_sharing_a_shingle": float(shared.mean()),
    }


def _near_counts(
    sets: ShingleSets, chosen: np.ndarray, threshold: float, max_postings: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Near neighbours, those of Jaccard 1, and documents sharing a shingle, of each chosen."""
    sizes = sets.sizes()
    num_docs = sizes.shape[0]
    sample = chosen.shape[0]
    order = np.argsort(sets.hashes, kind="stable")
    hashes = sets.hashes[order]
    owners = np.repeat(np.arange(num_docs, dtype=np.int64), sizes)[order]
    del order
    near = np.zeros(sample, dtype=np.int64)
    exact = np.zeros(sample, dtype=np.int64)
    shared = np.zeros(sample, dtype=np.int64)
    start = 0
    while start < sample:
        # sampled documents from ``start`` while their postings stay within ``max_postings``
        stop, postings = start, 0
        while stop < sample:
            query = sets.set_of(int(chosen[stop]))
            count = int(
                (
                    np.searchsorted(hashes, query, "right") - np.searchsorted(hashes, query, "left")
                ).sum()
            )
            if stop > start and postings + count > max_postings:
                break
            postings += count
            stop += 1
        batch = chosen[start:stop]
        query = np.concatenate([sets.set_of(int(d)) for d in batch])
        query_owner = np.repeat(np.arange(start, stop), sizes[batch])
        lo = np.searchsorted(hashes, query, "left")
        counts = np.searchsorted(hashes, query, "right") - lo
        first = np.cumsum(counts) - counts
        at = np.repeat(lo - first, counts) + np.arange(int(counts.sum()))
        keys = np.repeat(query_owner, counts) * num_docs + owners[at]
        pairs, inter = np.unique(keys, return_counts=True)
        who, other = np.divmod(pairs, num_docs)
        union = sizes[chosen[who]] + sizes[other] - inter
        is_other = other != chosen[who]
        near += np.bincount(who[(inter >= threshold * union) & is_other], minlength=sample)
        exact += np.bincount(who[(inter == union) & is_other], minlength=sample)
        shared += np.bincount(who[is_other], minlength=sample)
        start = stop
    return near, exact, shared


def _main(argv: list[str]) -> None:
    if len(argv) == 4 and argv[0] == "dense":
        preset, num_docs, path = argv[1], int(float(argv[2])), Path(argv[3])
        pool = DENSE_PRESETS[preset] if preset in DENSE_PRESETS else int(float(preset))
        write_dense_corpus(path, num_docs, pool_words=pool)
    elif len(argv) >= 3 and argv[0] == "calibrate":
        num_docs = int(float(argv[1]))
        for words in [int(float(a)) for a in argv[2:]]:
            with tempfile.TemporaryDirectory(
                dir=Path(__file__).resolve().parent.parent / "out"
            ) as d:
                path = Path(d) / "dense.jsonl"
                write_dense_corpus(path, num_docs, pool_words=words)
                found = near_neighbours(path, sample=10_000)
            print(json.dumps({"pool_words": words, **found}), flush=True)
    elif len(argv) in {2, 3} and argv[0] == "density":
        sample = int(argv[2]) if len(argv) == 3 else 2000
        print(json.dumps(near_neighbours(Path(argv[1]), sample=sample)))
    else:
        sys.exit(
            "usage: python -m bench.scale_corpus dense PRESET|POOL_WORDS NUM_DOCS PATH\n"
            "       python -m bench.scale_corpus density PATH [SAMPLE]\n"
            "       python -m bench.scale_corpus calibrate NUM_DOCS POOL_WORDS..."
        )


if __name__ == "__main__":
    _main(sys.argv[1:])
