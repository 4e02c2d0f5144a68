"""What a dedup run reports: every parameter, count and timing (``summary.json``).

Both engines fill a :class:`Summary`; :meth:`Summary.to_dict` makes it the run record every
command writes (:class:`~neardup.record.RunRecord`), with dedup's own keys after the common ones.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from neardup._version import __version__
from neardup.kinds import Measure
from neardup.params import DedupConfig, OutputSpec, ReadSpec, VerifyMode
from neardup.record import RunRecord, stage_timings

if TYPE_CHECKING:  # numpy stays unimported until a run needs it (the CLI starts light)
    from neardup._types import F64Array, I64Array

__all__ = [
    "HISTOGRAM_BINS",
    "ClusterSize",
    "Counts",
    "SimilarityHistogram",
    "StageTimes",
    "Summary",
    "histogram_counts",
]

HISTOGRAM_BINS = 50
"""Bins of the similarity histogram, each 1/50 wide over [0, 1]."""


def histogram_counts(similarity: F64Array) -> I64Array:
    """Pairs per bin ``min(floor(50 s), 49)`` of their similarity ``s`` clipped to [0, 1].

    NaN (not measured) is left out. The Spark engine bins with the same arithmetic.

    Examples
    --------
    >>> import numpy as np
    >>> histogram_counts(np.array([0.0, 0.019, 0.02, 1.0, np.nan]))[[0, 1, 49]].tolist()
    [2, 1, 1]
    """
    import numpy as np

    values = similarity[~np.isnan(similarity)]
    bins = np.minimum(np.floor(np.clip(values, 0.0, 1.0) * HISTOGRAM_BINS), HISTOGRAM_BINS - 1)
    return np.bincount(bins.astype(np.int64), minlength=HISTOGRAM_BINS).astype(np.int64)


@dataclass(frozen=True, slots=True)
class SimilarityHistogram:
    """How many candidate and verified pairs fell in each similarity bin (:data:`HISTOGRAM_BINS`).

    The similarity is the one verification went by: exact, or the estimate under
    ``verify="signature"`` (and ``"none"``).
    """

    candidates: tuple[int, ...]
    verified: tuple[int, ...]

    @classmethod
    def of(cls, candidates: I64Array, verified: I64Array) -> SimilarityHistogram:
        """The histogram of two arrays of counts (:func:`histogram_counts`)."""
        return cls(tuple(candidates.tolist()), tuple(verified.tolist()))

    def to_dict(self) -> dict[str, list[Any]]:
        """``edges`` (``HISTOGRAM_BINS + 1`` bin edges), ``candidates`` and ``verified``."""
        return {
            "edges": [round(i / HISTOGRAM_BINS, 2) for i in range(HISTOGRAM_BINS + 1)],
            "candidates": list(self.candidates),
            "verified": list(self.verified),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Counts:
    """What a run counted, in the order ``summary.json`` lists it.

    ``against_index`` (documents dropped for a near-copy in an index),
    ``bad_records_skipped`` (malformed records skipped) and the web archives' counts
    (``non_html_skipped``, ``not_ok_skipped``, ``revisits_resolved``, ``unresolved_revisits``,
    ``duplicate_payloads``: see :class:`neardup.io.warc.ArchiveStats`) are None where the run
    did not count them; ``summary.json`` then leaves them out.
    """

    items: int
    """Documents read."""
    bytes: int
    """UTF-8 bytes of normalised text sketched."""
    short_documents: int
    """Documents with no shingle at all, matched only by their exact fingerprint."""
    empty_documents: int
    """Documents with no token at all, matched with nothing."""
    exact_duplicates: int
    candidate_pairs: int
    already_joined: int
    """Candidate pairs not measured: their documents were already in one cluster when reached
    (connected components with the spanning pairs or none; 0 when every candidate is measured)."""
    verified_pairs: int
    """Pairs measured and accepted."""
    pairs_reported: int
    clusters: int
    """Clusters of two or more documents."""
    documents_in_clusters: int
    removed: int
    kept: int
    giant_buckets: int
    largest_bucket: int
    against_index: int | None = None
    bad_records_skipped: int | None = None
    non_html_skipped: int | None = None
    not_ok_skipped: int | None = None
    revisits_resolved: int | None = None
    unresolved_revisits: int | None = None
    duplicate_payloads: int | None = None
    size_rejected: int | None = None
    """Candidate pairs rejected unmeasured (not joined when reached): the sizes of their
    shingle sets alone keep their Jaccard similarity below the threshold (``min / max`` of the
    sizes is below it). Counted under exact verification of the Jaccard similarity, else None."""

    def to_dict(self) -> dict[str, int]:
        """The counts by name, those not counted left out."""
        return {
            f.name: value
            for f in dataclasses.fields(self)
            if (value := getattr(self, f.name)) is not None
        }


class ClusterSize(NamedTuple):
    """A cluster (the id of its first document) and its number of documents."""

    cluster: str
    size: int


@dataclass(frozen=True, slots=True)
class StageTimes:
    """Seconds per stage (rounded to 0.1 ms), their total, the throughput, and compiling.

    ``compile_seconds``: what numba spent compiling kernels (a first run on a cold cache),
    counted in no stage, nor in the total or the throughput.

    Examples
    --------
    >>> times = StageTimes.measured({"sketch": 1.23456, "cluster": 0.76544}, num_bytes=5_000_000)
    >>> times.seconds, times.total, times.throughput_mb_s, times.compile_seconds
    ({'sketch': 1.2346, 'cluster': 0.7654}, 2.0, 2.5, 0.0)
    """

    seconds: Mapping[str, float]
    total: float
    throughput_mb_s: float | None
    compile_seconds: float = 0.0

    @classmethod
    def measured(
        cls,
        seconds: Mapping[str, float],
        num_bytes: int,
        total: float | None = None,
        *,
        compile_seconds: float = 0.0,
    ) -> StageTimes:
        """The times of stages that took ``seconds`` over ``num_bytes`` of text.

        ``total``: the run's wall time, when it is not the sum of the stages (less
        ``compile_seconds``, the seconds spent compiling kernels).
        """
        rounded = stage_timings(seconds, total)
        total = sum(seconds.values()) if total is None else total
        return cls(
            seconds={name: s for name, s in rounded.items() if name != "total"},
            total=rounded["total"],
            throughput_mb_s=round(num_bytes / 1e6 / total, 2) if total > 0 else None,
            compile_seconds=round(compile_seconds, 4),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    """Every parameter, count and timing of a dedup run.

    Attributes
    ----------
    config
        The algorithm's parameters.
    read, write
        How a file job read its inputs and wrote its kept corpus (``params.read`` and
        ``params.output`` of ``summary.json``); None where the run read no files (texts in
        memory, a data frame).
    lsh
        The candidate scheme's description (its parameters, its chance of pairing two
        documents at the threshold, and a one-line ``label``).
    signatures
        How the signatures were made (:func:`~neardup.sketch.signatures.provenance_of`).
    counts
        What was counted.
    biggest_clusters
        The five largest clusters of two or more documents, largest first (ties to the
        cluster of the earlier first document).
    times
        Seconds per stage.
    idf
        The digest of the IDF weights of a TF-IDF SimHash, else None.
    spark_master
        The Spark master a Spark run ran on; None for the local engine.
    against
        The header of the index given with ``--against``, else None.
    inputs
        The input files, where the run read files.
    outputs
        The files written, by role, where the run wrote them.
    similarity_histogram
        The candidate and verified pairs by similarity, where the run measured them.
    resumed_after
        The last stage (``"sketch"`` or ``"find"``) a resumed run took from the checkpoints
        of an interrupted one, else None.
    host_templates
        How the hosts' templates were learned (``--host-templates``:
        :meth:`neardup.templates.HostTemplates.describe`), else None.
    """

    config: DedupConfig
    lsh: Mapping[str, Any]
    signatures: Mapping[str, Any]
    counts: Counts
    biggest_clusters: tuple[ClusterSize, ...]
    times: StageTimes
    idf: Mapping[str, Any] | None = None
    spark_master: str | None = None
    against: Mapping[str, Any] | None = None
    inputs: tuple[str, ...] | None = None
    outputs: Mapping[str, str] | None = None
    similarity_histogram: SimilarityHistogram | None = None
    resumed_after: str | None = None
    host_templates: Mapping[str, Any] | None = None
    read: ReadSpec | None = None
    write: OutputSpec | None = None
    neardup_version: str = __version__

    @property
    def verify(self) -> VerifyMode:
        """The verification in use."""
        return self.config.verify_mode

    @property
    def measure(self) -> Measure:
        """What ``pairs.jsonl``'s ``similarity`` measures (:attr:`DedupConfig.measure`)."""
        return self.config.measure

    @property
    def scheme_label(self) -> str:
        """The candidate scheme in a few words (``"b=16, r=8"``)."""
        return str(self.lsh["label"])

    def to_record(self) -> RunRecord:
        """The run record of ``summary.json``: the common keys, then dedup's own."""
        times = self.times
        details: dict[str, Any] = {
            **({"spark_master": self.spark_master} if self.spark_master is not None else {}),
            "lsh": dict(self.lsh),
            "verify": self.verify,
            "measure": self.measure,
            "signatures": dict(self.signatures),
            **({"idf": dict(self.idf)} if self.idf is not None else {}),
            **(
                {"host_templates": dict(self.host_templates)}
                if self.host_templates is not None
                else {}
            ),
            "biggest_clusters": [c._asdict() for c in self.biggest_clusters],
            **(
                {"similarity_histogram": self.similarity_histogram.to_dict()}
                if self.similarity_histogram is not None
                else {}
            ),
            "compile_s": times.compile_seconds,
            "throughput_mb_s": times.throughput_mb_s,
            **({"against": dict(self.against)} if self.against is not None else {}),
            **({"resumed_after": self.resumed_after} if self.resumed_after is not None else {}),
        }
        return RunRecord(
            command="dedup",
            engine="spark" if self.spark_master is not None else "local",
            inputs=self.inputs or (),
            outputs=self.outputs or {},
            params={
                **self.config.to_dict(),
                **({"read": self.read.to_dict()} if self.read is not None else {}),
                **({"output": self.write.to_dict()} if self.write is not None else {}),
            },
            counts=self.counts.to_dict(),
            timings_s={**times.seconds, "total": times.total},
            details=details,
            neardup_version=self.neardup_version,
        )

    def to_dict(self) -> dict[str, Any]:
        """``summary.json``'s content (:meth:`to_record`)."""
        return self.to_record().to_dict()
