"""The batch job as named stages, and :func:`dedup` composing them for texts in memory.

::

    fit_idf          for a TF-IDF SimHash and canonical forms: a first pass learning document
                     frequencies
    sketch_batches   normalise → shingle → sketch, batch by batch (BatchSketcher); keeps per
                     document only the id, the length, the exact fingerprint and the lookup keys
                     (spilled by column), and a way back to the text (the text store)
    exact_groups     documents with identical normalised text, grouped by fingerprint
    find_candidates  the sketch kind's candidate scheme (LSH bands one at a time, shared bottom-k
                     hashes, supershingles, or SimHashes within h bits) over one representative
                     per exact group, into sorted runs (on disk beyond half the working memory)
    verify_and_join  the candidates in (first, second) order, in chunks of bounded size: their
                     texts from the text store, shingled for the exact similarity (Jaccard,
                     weighted Jaccard, or cosine for SimHash) and sketched again for the
                     estimate; accepted by the verification mode's rule (accepted) and joined
                     by a union-find; a candidate already joined is not measured unless every
                     pair is wanted (measures_every_candidate)
    cluster_joined   one representative per component, every member's similarity to it
                     measured; with ``cluster="center"``, members below the threshold moved to
                     another center or their own (no chaining); the pairs that joined two
                     clusters (a spanning forest)

One module per stage (``sketching``, ``exact``, ``finding``, ``verification`` with
``scoring``, ``clustering``), what they share (``shared``), and ``flow``, which composes them.
Each stage is timed; the :class:`~neardup.summary.Summary` reports every parameter, count and
timing (:func:`summarize`). The Spark engine takes the same steps on its partitions
(:class:`BatchSketcher`, :func:`exact_groups`, :func:`accepted`, the bucket cap of
:func:`~neardup.lsh.banding.bucket_pairs`, the keep rule of
:func:`~neardup.cluster.representatives`). No stage holds a Python object per document:
per-document state is a few NumPy arrays (90 to 130 bytes a document), the rest is spilled
or streamed.
"""

from __future__ import annotations

from neardup.pipeline.clustering import cluster_joined
from neardup.pipeline.exact import duplicate_ids, exact_candidates, exact_groups
from neardup.pipeline.finding import Candidates, find_candidates, warn_of_giant_buckets
from neardup.pipeline.flow import (
    DedupResult,
    StringTexts,
    dedup,
    dedup_batches,
    find_duplicates,
    summarize,
)
from neardup.pipeline.scoring import (
    VERIFY_BYTES_PER_BYTE,
    PairScorer,
    ScoredChunk,
    measured,
    score_pairs,
    size_floor,
)
from neardup.pipeline.shared import TextStore, Timings
from neardup.pipeline.sketching import (
    BatchSketcher,
    Sketched,
    SketchedBlock,
    fit_idf,
    keeps_sets,
    sketch_batches,
)
from neardup.pipeline.verification import (
    JoinedPairs,
    VerifiedPairs,
    accepted,
    measures_every_candidate,
    verify_and_join,
)

__all__ = [
    "VERIFY_BYTES_PER_BYTE",
    "BatchSketcher",
    "Candidates",
    "DedupResult",
    "JoinedPairs",
    "PairScorer",
    "ScoredChunk",
    "Sketched",
    "SketchedBlock",
    "StringTexts",
    "TextStore",
    "Timings",
    "VerifiedPairs",
    "accepted",
    "cluster_joined",
    "dedup",
    "dedup_batches",
    "duplicate_ids",
    "exact_candidates",
    "exact_groups",
    "find_candidates",
    "find_duplicates",
    "fit_idf",
    "keeps_sets",
    "measured",
    "measures_every_candidate",
    "score_pairs",
    "size_floor",
    "sketch_batches",
    "summarize",
    "verify_and_join",
    "warn_of_giant_buckets",
]
