"""Compiling the later stages' kernels in a second process while a first run reads and sketches.

numba compiles one kernel at a time in a process. On a cold cache (no earlier run, no
``neardup warmup``) a first run would compile every kernel of its path in turn, the stages after
sketching waiting for those before. :func:`compiling_ahead` starts a second Python process that
runs those later stages (exact groups, candidates, verification, clustering, writing) on made-up
documents, compiling their kernels into the same cache while the run compiles and runs its
reading and sketching; the run then loads them. The second process runs at a lower priority, so
the run's own threads keep their speed (its stage timings stay those of a warm run). On two
cores the bundled sample's first run takes 14-16 s instead of 21 s.

The made-up run goes through the very functions a run calls, :func:`~neardup.pipeline.
find_duplicates` and the writers, with the default configuration, so it compiles the same
kernels for the same argument types (``tests/test_warmup.py`` checks that a run compiles
nothing of those stages after it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from neardup._kernels import groups, jsonout, sets
from neardup._kernels.compiling import missing_from_cache
from neardup._types import Batch
from neardup.candidates import candidate_scheme
from neardup.io.arena import TextArena
from neardup.io.records import Ids
from neardup.io.results import write_clusters, write_pairs
from neardup.io.spill import KeyColumns
from neardup.params import DedupConfig
from neardup.pipeline import DedupResult, Sketched, Timings, find_duplicates
from neardup.text.shingle import Shingler

__all__ = ["compile_later_stages", "compiling_ahead"]

_NUM_DOCS = 5000
"""Made-up documents: more keys than :data:`~neardup.hashing.packed.SMALL`, so the radix sort's
kernels compile too."""


def compile_later_stages(directory: Path) -> DedupResult:
    """Shingle, find duplicates among, and write results of, made-up documents (in ``directory``).

    In the order a run needs them after its reading kernels: the shingling kernels (which
    sketching shares with verification's shingle sets), then the stages from exact groups to
    clusters, then the writers. Returns what the stages found (documents 0 to 3 near copies,
    4 and 5 exact ones: every stage had work).
    """
    ids = Ids.of([f"doc-{i}" for i in range(_NUM_DOCS)])
    found = _find_duplicates(directory, ids)
    _write_results(directory, ids)
    return found


def _write_results(directory: Path, ids: Ids) -> None:
    """``clusters.jsonl`` and ``pairs.jsonl`` of made-up clusters and pairs."""
    docs = np.arange(_NUM_DOCS, dtype=np.int64)
    labels = docs // 2 * 2
    similarity = np.where(docs % 2 == 1, 0.9, 1.0)
    write_clusters(
        directory / "clusters.jsonl", ids, labels, labels == docs, similarity, similarity
    )
    first, second = docs[::2], docs[1::2]
    near = (first, second, similarity[second], similarity[second])
    write_pairs(directory / "pairs.jsonl", ids, (first, second), near)


def _find_duplicates(directory: Path, ids: Ids) -> DedupResult:
    """Every stage from exact groups to clusters, on made-up documents and sketches.

    Documents 0 to 3 share their signature rows (candidates that verify and cluster), 4 and 5
    their fingerprints (exact copies); the others are apart.
    """
    config = DedupConfig()  # the default run's path: pairs already joined are not measured
    rng = np.random.default_rng(0)
    words = " ".join(f"word{w}" for w in range(40))
    texts = [f"{words} and then {i}" for i in range(4)]  # near copies
    texts += [f"document {i} about something else, {i * 7919}" for i in range(4, _NUM_DOCS)]
    data = "".join(texts).encode()
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    texts_batch = Batch(data=np.frombuffer(data, dtype=np.uint8), offsets=offsets)
    Shingler(config.sketch.shingle, config.sketch.normalize).shingle_sets(texts_batch)
    arena = TextArena(directory / "texts.utf8")
    arena.append(None, texts_batch)
    arena.finish()
    rows = rng.integers(0, 2**63, size=(_NUM_DOCS, config.sketch.num_perm), dtype=np.uint64)
    rows[1:4] = rows[0]
    keys = KeyColumns(directory)
    keys.append(candidate_scheme(config.sketch, config.lsh).keys(rows))
    fingerprints = rng.integers(0, 2**63, size=(_NUM_DOCS, 2), dtype=np.uint64)
    fingerprints[5] = fingerprints[4]
    fingerprints[7, 0] = fingerprints[6, 0]  # a shared high word: 128-bit keys told apart
    sketched = Sketched(
        ids=ids,
        lengths=np.diff(offsets),
        fingerprints=fingerprints,
        is_short=np.zeros(_NUM_DOCS, dtype=bool),
        is_empty=np.zeros(_NUM_DOCS, dtype=bool),
        keys=keys,
        texts=arena,
        num_bytes=len(data),
    )
    try:
        return find_duplicates(sketched, config, Timings(), work_dir=directory)
    finally:
        arena.close()


def _cores() -> int:
    """The CPU cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _cache_is_cold() -> bool:
    """Whether the later stages' kernels are not in the cache yet (a look, no compiling)."""
    return bool(
        missing_from_cache([groups.equal_key_buckets, sets.shingle_sets, jsonout.pair_lines])
    )


@contextmanager
def compiling_ahead(enabled: bool = True) -> Iterator[None]:
    """Compile the later stages' kernels in a second process, if not cached, within the block.

    See the module docstring; the process is stopped when the block ends.

    A plain ``python -c`` process (not :mod:`multiprocessing`, which would import the caller's
    main module again); its output is discarded: if it fails, the run compiles what it needs.
    """
    if not enabled or _cores() < 2 or not _cache_is_cold():
        yield  # one core: a second process would only slow the run down
        return
    with tempfile.TemporaryDirectory(prefix="neardup-ahead-") as directory:
        code = (
            "import os; os.nice(10); "  # the run's own threads come first: its timings hold
            "from pathlib import Path; from neardup.engine.ahead import compile_later_stages; "
            f"compile_later_stages(Path({directory!r}))"
        )
        process = subprocess.Popen(  # noqa: S603 (this Python, a fixed command)
            [sys.executable, "-c", code],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            yield
        finally:
            process.kill()  # numba writes each cache file whole (a rename): nothing half-written
            process.wait()
