"""The run record of a join (``summary.json``), the same on the local and the Spark engine."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from neardup.kinds import METRICS
from neardup.params import JoinSpec
from neardup.record import RunRecord, stage_timings

__all__ = ["join_summary"]


def join_summary(
    info: Mapping[str, Any],
    spec: JoinSpec,
    *,
    num_pairs: int,
    num_items: int,
    inputs: list[str],
    times: dict[str, float],
    engine: str = "local",
) -> dict[str, Any]:
    """``summary.json`` of a join: what was asked, how pairs were found, the counts and times.

    A :class:`~neardup.record.RunRecord`; ``times`` per stage, and ``total``.
    """
    metric = METRICS[spec.metric]
    info = dict(info)
    counts = {
        "items": num_items,
        "candidate_pairs": int(info.pop("num_candidates", 0)),
        "pairs": num_pairs,
    }
    info.pop("num_pairs", None)
    stages = {name: value for name, value in times.items() if name != "total"}
    return RunRecord(
        command="join",
        engine=engine,
        inputs=tuple(inputs),
        outputs={"pairs": "pairs.jsonl", "summary": "summary.json"},
        params=spec.to_dict(),
        counts=counts,
        timings_s=stage_timings(stages, times.get("total")),
        details={
            "metric": spec.metric,
            "measure": metric.measure,
            "threshold": spec.threshold,
            "family": info.pop("family", None),
            "num_bands": info.pop("num_bands", None),
            "num_rows": info.pop("num_rows", None),
            "predicted_recall": info.pop("predicted_recall", None),
            **info,
        },
    ).to_dict()
