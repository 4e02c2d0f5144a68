"""The run record: what every command that writes an output directory puts in ``summary.json``.

One schema for ``dedup`` (either engine), ``join``, ``mirrors``, ``contamination`` and
``substrings``, and for ``report``, which writes one HTML page and embeds its record there
(:func:`neardup.jobs.report.write_report`): which neardup made it (``neardup_version``), the
``command`` and ``engine``, the ``inputs`` read and the ``outputs`` written (by role), every
parameter (``params``, chosen or default), the ``counts`` (``items`` read and
``bad_records_skipped`` whatever the command calls its items) and ``timings_s`` (per stage,
and ``total``); then what only that command reports, under keys of its own. The JSON Schemas
are ``neardup/summary.schema.json`` (:data:`SCHEMA_PATH`) and, for the pair records the
commands write, ``neardup/pair.schema.json`` (:data:`PAIR_SCHEMA_PATH`), checked by the tests
against every command's real output.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neardup._version import __version__

__all__ = ["PAIR_SCHEMA_PATH", "SCHEMA_PATH", "RunRecord", "stage_timings", "upgraded"]

SCHEMA_PATH = Path(__file__).parent / "summary.schema.json"
"""The JSON Schema of ``summary.json``."""

PAIR_SCHEMA_PATH = Path(__file__).parent / "pair.schema.json"
"""The JSON Schema of a pair record: a line of ``pairs.jsonl`` (dedup, join) or
``mirrors.jsonl``."""

COMMON_KEYS = (
    "neardup_version",
    "command",
    "engine",
    "inputs",
    "outputs",
    "params",
    "counts",
    "timings_s",
)
"""The keys every run record has, in the order ``summary.json`` lists them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecord:
    """What a command's run did, as ``summary.json`` records it.

    Attributes
    ----------
    command
        ``"dedup"``, ``"join"``, ``"mirrors"``, ``"contamination"``, ``"substrings"`` or
        ``"report"``.
    params
        Every parameter of the run, chosen or default.
    counts
        What was counted: ``items`` (documents, vectors, pages) and, where malformed records
        can be skipped, ``bad_records_skipped``, then the command's own counts.
    timings_s
        Seconds per stage, and ``total``.
    engine
        ``"local"`` or ``"spark"``.
    inputs
        The input files, as given.
    outputs
        The files written, by role (``{"pairs": "pairs.jsonl", ...}``).
    details
        What only this command reports, each under a key of its own after the common ones.
    """

    command: str
    params: Mapping[str, Any]
    counts: Mapping[str, Any]
    timings_s: Mapping[str, float]
    engine: str = "local"
    inputs: tuple[str, ...] = ()
    outputs: Mapping[str, str] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)
    neardup_version: str = __version__

    def __post_init__(self) -> None:
        if "total" not in self.timings_s:
            raise ValueError("a run record's timings_s needs a 'total'")
        if "items" not in self.counts:
            raise ValueError("a run record's counts need 'items'")
        clash = set(self.details) & set(COMMON_KEYS)
        if clash:
            raise ValueError(f"details may not reuse the common keys {sorted(clash)}")

    def to_dict(self) -> dict[str, Any]:
        """``summary.json``'s content: the common keys in order, then the details."""
        return {
            "neardup_version": self.neardup_version,
            "command": self.command,
            "engine": self.engine,
            "inputs": list(self.inputs),
            "outputs": dict(self.outputs),
            "params": dict(self.params),
            "counts": dict(self.counts),
            "timings_s": dict(self.timings_s),
            **self.details,
        }


def stage_timings(seconds: Mapping[str, float], total: float | None = None) -> dict[str, float]:
    """Seconds per stage rounded to 0.1 ms, and their ``total`` (or ``total`` as given).

    Examples
    --------
    >>> stage_timings({"read": 1.23456, "write": 0.5})
    {'read': 1.2346, 'write': 0.5, 'total': 1.7346}
    """
    total = sum(seconds.values()) if total is None else total
    return {**{name: round(s, 4) for name, s in seconds.items()}, "total": round(total, 4)}


def upgraded(summary: Mapping[str, Any]) -> dict[str, Any]:
    """A ``summary.json`` of an earlier neardup, in this version's names (for one version).

    Before the one run record: dedup wrote ``config``, ``total_s`` and ``counts.documents``;
    join ``spec`` and ``times``; mirrors ``parameters``, ``timings``, ``counts.pages``,
    ``counts.bad_records`` and ``counts.alias_parameters``. A record in today's names comes
    back unchanged.

    Examples
    --------
    >>> old = {"config": {"seed": 42}, "counts": {"documents": 3}, "timings_s": {"read": 1.0},
    ...        "total_s": 1.0}
    >>> new = upgraded(old)
    >>> new["params"], new["counts"], new["timings_s"]
    ({'seed': 42}, {'items': 3}, {'read': 1.0, 'total': 1.0})
    """
    out = dict(summary)
    for old in ("config", "spec", "parameters"):
        if old in out and "params" not in out:
            out["params"] = out.pop(old)
    for old in ("times", "timings"):
        if old in out and "timings_s" not in out:
            out["timings_s"] = out.pop(old)
    if "total_s" in out:
        total = out.pop("total_s")
        out["timings_s"] = {**out.get("timings_s", {}), "total": total}
    counts = dict(out.get("counts") or {})
    for old, new in (
        ("documents", "items"),
        ("pages", "items"),
        ("bad_records", "bad_records_skipped"),
    ):
        if old in counts and new not in counts:
            counts[new] = counts.pop(old)
    if "alias_parameters" in counts:  # mirrors listed them among its counts
        out.setdefault("alias_parameters", counts.pop("alias_parameters"))
    out["counts"] = counts
    return out
