"""The candidate stage: the sketch kind's candidate scheme over one document per exact group.

LSH bands one at a time, shared bottom-k hashes, supershingles, SimHashes within h bits, or the
embedding's cosine join, into sorted runs (on disk beyond half the working memory).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neardup._types import BoolArray, F32Array
from neardup.candidates import candidate_scheme
from neardup.errors import NeardupWarning
from neardup.io.spill import PairRuns
from neardup.params import DedupConfig
from neardup.pipeline.exact import exact_candidates
from neardup.pipeline.sketching import Sketched
from neardup.semantic import (
    cosine_candidates,
    describe_join,
)


def warn_of_giant_buckets(num_giant: int, largest: int, config: DedupConfig) -> None:
    """Warn when buckets above ``config.lsh.max_bucket_size`` were paired linearly.

    ``num_giant``: how many there were; ``largest``: the documents of the largest bucket.
    """
    if num_giant:
        warnings.warn(
            f"{num_giant} LSH buckets held more than {config.lsh.max_bucket_size} documents "
            f"(largest: {largest}); in them each document was paired only with the documents "
            "just before it. Boilerplate shared by many documents usually causes this.",
            NeardupWarning,
            stacklevel=3,
        )


@dataclass(frozen=True, slots=True)
class Candidates:
    """Candidate pairs in sorted runs, and the buckets the scheme found too large to pair fully."""

    runs: PairRuns
    num_giant_buckets: int = 0
    largest_bucket: int = 0
    scheme: Mapping[str, Any] | None = None
    """How they were found, where it is not the config's banding (the embedding method's
    cosine join: :func:`~neardup.semantic.describe_join`)."""


def find_candidates(
    sketched: Sketched, active: BoolArray, config: DedupConfig, work_dir: Path | None = None
) -> Candidates:
    """Candidate pairs among the ``active`` documents, by the sketch kind's scheme.

    They are gathered into sorted runs (:class:`~neardup.io.spill.PairRuns`), written to
    ``work_dir`` once they outgrow half of ``config.working_memory`` (kept in memory when
    ``work_dir`` is None). The lookup keys are released then (``sketched.keys``: their files,
    8 bytes a band a document, leave the disk before verification writes its shingle sets).
    """
    runs = PairRuns(
        sketched.num_docs, work_dir, memory_bytes=config.working_memory // 2, with_values=False
    )
    scheme = candidate_scheme(config.sketch, config.lsh)
    if scheme.reads_sets:
        found = exact_candidates(sketched.texts, active, sketched.lengths, config)
        runs.add(found.first, found.second)
        candidates = Candidates(runs)
    else:
        candidates = Candidates(runs, *scheme.gather_pairs(sketched.keys, active, runs))
    sketched.keys.release()
    return candidates


def _cosine_candidates(
    vectors: F32Array,
    active: BoolArray,
    config: DedupConfig,
    work_dir: Path | None,
    shingles: Candidates | None = None,
) -> Candidates:
    """The embedding method's candidates (:func:`~neardup.semantic.cosine_candidates`) as runs.

    With the ``shingles``' candidates (``minhash+embedding``), added to theirs: the summary's
    ``lsh`` section is then the shingles' banding with the cosine join under ``"cosine"``.
    """
    if shingles is None:
        runs = PairRuns(
            active.shape[0], work_dir, memory_bytes=config.working_memory // 2, with_values=False
        )
        shingles = Candidates(runs)
    first, second, info = cosine_candidates(vectors, active, config, work_dir)
    shingles.runs.add(first, second)
    assert config.cosine_threshold is not None
    scheme = describe_join(info, vectors.shape[1], config.cosine_threshold)
    if not config.embedding_only:
        scheme = {**candidate_scheme(config.sketch, config.lsh).describe(), "cosine": scheme}
    return Candidates(
        shingles.runs,
        num_giant_buckets=shingles.num_giant_buckets + int(info.get("num_giant_buckets", 0)),
        largest_bucket=max(shingles.largest_bucket, int(info.get("largest_bucket", 0))),
        scheme=scheme,
    )
