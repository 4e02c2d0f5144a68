"""The report of a run that cuts parts out of documents or drops a few of them.

``neardup dedup --unit`` (repeated lines, paragraphs, sentences), ``neardup substrings``
(repeated runs of tokens) and ``neardup contamination`` (training documents holding benchmark
items) write no clusters or pairs; their page shows the run's parameters, counts and timings,
what was found most (the most repeated units; the contaminated items per benchmark and the
items found in most documents) and the documents that lost most. It reads only the output
directory: ``summary.json`` and the per-document file (``removed.jsonl``, ``repeats.jsonl``,
``contaminated.jsonl``), streamed.
"""

from __future__ import annotations

import heapq
import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from html import escape
from pathlib import Path
from typing import Any

from neardup.errors import InputError
from neardup.report.page import html_page, missing, run_section, timings_section

__all__ = ["is_removal_run", "render_removals"]

SHOWN = 20
"""Rows of each table: documents that lost most, items found most."""

SHOWN_CHARS = 200
"""Characters of a repeated unit shown."""

TELL_EVERY = 1 << 20
"""Bytes of the run's file read between two reports to ``progress``."""


def is_removal_run(summary: Mapping[str, Any]) -> bool:
    """Whether ``summary`` is that of a run this page reports (not a whole-document dedup)."""
    command = summary.get("command")
    params = summary.get("params") or {}
    return command in ("substrings", "contamination") or (
        command == "dedup" and isinstance(params, Mapping) and "unit" in params
    )


def render_removals(
    directory: Path,
    summary: Mapping[str, Any],
    progress: Callable[[int, int], object] | None = None,
) -> tuple[str, int]:
    """The report page of the removal run in ``directory``, and the records read to make it.

    ``progress`` is told the bytes of the run's per-document file read so far and its size.
    """
    command = summary["command"]
    outputs = summary.get("outputs") or {}
    if command == "contamination":
        what = "A contamination run"
        path = directory / outputs.get("contaminated", "contaminated.jsonl")
        records = _RunFile(path, progress)
        found = ("items", "Contaminated items", _contamination(records, summary))
        facts = [("n-gram", escape(str(summary["params"].get("ngram"))))]
    else:
        unit = (summary["params"].get("unit") or {}) if command == "dedup" else {}
        what = "A passage dedup run" if command == "dedup" else "A repeated-substrings run"
        name = "repeats" if command == "substrings" else "removed"
        records = _RunFile(directory / outputs.get(name, f"{name}.jsonl"), progress)
        found = ("documents", "Documents that lost most", _documents_that_lost_most(records))
        label = unit.get("kind", "")
        if label == "sentences":
            label = f"sentences:{unit.get('num_sentences')}"
        facts = [("unit", escape(label or f"runs of {summary['params'].get('min_tokens')} tokens"))]
    sections = [
        ("run", "Parameters and counts", run_section(summary, facts)),
        ("timings", "Stage timings", timings_section(summary)),
    ]
    if command == "dedup":
        sections.append(("repeated", "Most repeated units", _repeated_units(summary)))
    sections.append(found)
    return html_page(directory, summary, what, sections), records.num_records


class _RunFile:
    """The run's per-document JSON Lines file, read once: its records, counted.

    ``progress`` is told the bytes read so far and the file's size, every
    :data:`TELL_EVERY` bytes and at the end.
    """

    def __init__(self, path: Path, progress: Callable[[int, int], object] | None) -> None:
        self.path = path
        self.progress = progress
        self.num_records = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        try:
            size = self.path.stat().st_size
            f = self.path.open("rb")
        except FileNotFoundError:
            raise InputError(
                "the run's file is missing; run the command again", path=self.path
            ) from None
        done = told = 0
        with f:
            for number, line in enumerate(f, start=1):
                try:
                    record = json.loads(line.decode("utf-8", "surrogatepass"))
                except json.JSONDecodeError as exc:
                    raise InputError(
                        f"not JSON Lines ({exc.msg})", path=self.path, line=number
                    ) from None
                self.num_records += 1
                done += len(line)
                if self.progress is not None and done - told >= TELL_EVERY:
                    self.progress(done, size)
                    told = done
                yield record
        if self.progress is not None:
            self.progress(done, size)


def _documents_that_lost_most(records: _RunFile) -> str:
    """The documents with the most characters removed, and their spans."""
    biggest = heapq.nsmallest(
        SHOWN,
        ((-sum(s[1] - s[0] for s in r["spans"]), n, r) for n, r in enumerate(records)),
    )
    if not biggest:
        return missing("No document lost anything.")
    rows = "".join(
        f'<tr><td>{escape(str(record["id"]))}</td><td class="num">{-lost:,}</td>'
        f'<td class="num">{len(record["spans"]):,}</td>'
        f"<td>{escape(_kept_copies(record['spans']))}</td></tr>"
        for lost, _, record in biggest
    )
    return (
        "<table><tr><th>document</th><th>characters removed</th><th>spans</th>"
        f"<th>kept copies in</th></tr>{rows}</table>"
    )


def _kept_copies(spans: list[list[Any]]) -> str:
    """The documents whose copies were kept (``dedup --unit`` spans name them), most first."""
    named = Counter(str(span[2]) for span in spans if len(span) > 2)
    return ", ".join(doc for doc, _ in named.most_common(5)) or "(earlier in the corpus)"


def _repeated_units(summary: Mapping[str, Any]) -> str:
    repeated = summary.get("repeated_units") or []
    if not repeated:
        return missing("No unit was repeated.")
    rows = "".join(
        f'<tr><td class="num">{entry["copies"]:,}</td><td>{escape(entry["kept_in"])}</td>'
        f'<td><div class="text">{escape(entry["text"][:SHOWN_CHARS])}</div></td></tr>'
        for entry in repeated
    )
    return (
        '<p class="note">Each unit as its kept copy reads, digits read as 0.</p>'
        f"<table><tr><th>copies</th><th>kept in</th><th>unit</th></tr>{rows}</table>"
    )


def _contamination(records: _RunFile, summary: Mapping[str, Any]) -> str:
    """Per benchmark the items contaminated, and the items found in most training documents."""
    benchmarks = "".join(
        f'<tr><td>{escape(b["input"])}</td><td class="num">{b["items"]:,}</td>'
        f'<td class="num">{b["too_short"]:,}</td><td class="num">{b["contaminated_items"]:,}</td>'
        "</tr>"
        for b in summary.get("benchmarks") or []
    )
    hits: Counter[str] = Counter()
    example: dict[str, str] = {}
    for record in records:
        hits[record["eval_id"]] += 1
        example.setdefault(record["eval_id"], str(record["train_id"]))
    items = "".join(
        f'<tr><td>{escape(item)}</td><td class="num">{count:,}</td>'
        f"<td>{escape(example[item])}</td></tr>"
        for item, count in hits.most_common(SHOWN)
    )
    found = (
        "<h3>Items found in most training documents</h3><table><tr><th>item</th>"
        f"<th>training documents</th><th>first of them</th></tr>{items}</table>"
        if items
        else missing("No item was found in the training corpus.")
    )
    return (
        "<table><tr><th>benchmark</th><th>items</th><th>too short</th><th>contaminated</th>"
        f"</tr>{benchmarks}</table>{found}"
    )
