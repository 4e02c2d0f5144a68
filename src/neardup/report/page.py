"""The report page: one self-contained HTML document (inline CSS and SVG, no link, nothing run).

Every text that comes from the run (ids, texts, parameters) goes through :func:`html.escape`;
nothing on the page points outside it but its own ``#section`` anchors. The page holds no date
and no path but the run directory as given, so the same run gives the same bytes, but for the
timings of the report's own run record (:func:`with_run_record`, a JSON data block that no
browser runs).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from neardup.explain import merged_spans, shared_passages
from neardup.io.output import REPORT_MARK
from neardup.report.charts import (
    cluster_sizes_chart,
    histogram_chart,
    s_curve_chart,
    timings_chart,
)
from neardup.report.data import Band, Cluster, Pair, Run, Texts

__all__ = [
    "RUN_RECORD_ID",
    "flat_rows",
    "html_page",
    "missing",
    "render_page",
    "run_section",
    "table",
    "timings_section",
    "with_run_record",
]

CONTEXT = 160
"""Characters of unshared text shown on each side of a passage; longer stretches are elided."""

LONGEST = 1200
"""Characters of one passage shown whole; a longer one keeps its two ends."""

NOT_RECORDED = "not recorded by this run"

RUN_RECORD_ID = "neardup-run"
"""The id of the ``<script type="application/json">`` element holding the report's run record."""

_JSON_IN_HTML = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})
"""JSON escapes of the characters that could end a script element or open a comment in it."""

SECTIONS = (
    ("run", "Parameters and counts"),
    ("timings", "Stage timings"),
    ("similarity", "Pair similarities"),
    ("s-curve", "Candidate probability"),
    ("cluster-sizes", "Cluster sizes"),
    ("clusters", "Biggest clusters"),
    ("pairs", "Sample pairs"),
    ("outliers", "Giant buckets and short documents"),
)

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; color: #1d1d1f; margin: 0 auto; max-width: 1180px;
  padding: 0 24px 48px; }
h1 { margin: 28px 0 4px; font-size: 26px; }
h2 { margin-top: 40px; border-bottom: 1px solid #ddd; padding-bottom: 4px; font-size: 20px; }
h3 { font-size: 16px; margin: 24px 0 8px; }
nav a { margin-right: 14px; color: #1f5f99; }
table { border-collapse: collapse; margin: 8px 0; font-size: 14px; }
td, th { border-bottom: 1px solid #eee; padding: 3px 10px 3px 0; text-align: left;
  vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.columns { display: flex; flex-wrap: wrap; gap: 40px; }
svg.chart { width: 100%; max-width: 800px; height: auto; display: block; }
.note { color: #666; }
.missing { color: #8a5a00; background: #fff6e0; padding: 6px 10px; border-radius: 4px; }
.chained { color: #fff; background: #c0392b; border-radius: 3px; padding: 0 5px;
  font-size: 12px; }
table.clusters { width: 100%; }
table.clusters td { overflow-wrap: anywhere; }
table.clusters td:nth-child(1), table.clusters td:nth-child(3) { min-width: 150px;
  max-width: 220px; }
.members { font-size: 13px; color: #333; }
.pair { border: 1px solid #ddd; border-radius: 6px; margin: 12px 0; padding: 8px 12px; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; font: 12.5px/1.4 ui-monospace, monospace;
  background: #fafafa; padding: 8px; border-radius: 4px; max-height: 520px; overflow: auto;
  margin: 4px 0; }
mark { background: #ffe27a; }
.elided { color: #888; font-style: italic; }
code { font-size: 13px; }
"""


def render_page(run: Run, texts: Texts | None) -> str:
    """The report of ``run`` as one HTML document.

    Parameters
    ----------
    run
        The run (:func:`~neardup.report.data.load_run`).
    texts
        The texts re-read from its inputs (:func:`~neardup.report.data.read_texts`); None when
        they were not read (``--no-texts``).
    """
    bodies = (
        _run_section(run),
        _timings_section(run),
        _similarity_section(run),
        _s_curve_section(run),
        _cluster_sizes_section(run),
        _clusters_section(run),
        _pairs_section(run, texts),
        _outliers_section(run, texts),
    )
    sections = [(key, title, body) for (key, title), body in zip(SECTIONS, bodies, strict=True)]
    return html_page(run.directory, run.summary, "A dedup run", sections)


def html_page(
    directory: Path, summary: Mapping[str, Any], what: str, sections: Sequence[tuple[str, str, str]]
) -> str:
    """The page of the run in ``directory``: its ``(key, title, body)`` sections and a menu."""
    name = escape(directory.resolve().name)
    version = escape(str(summary.get("neardup_version", "unknown")))
    nav = " ".join(f'<a href="#{key}">{escape(title)}</a>' for key, title, _ in sections)
    bodies = "\n".join(
        f'<section id="{key}">\n<h2>{escape(title)}</h2>\n{body}\n</section>'
        for key, title, body in sections
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'{REPORT_MARK} {version}">\n'
        f"<title>neardup report: {name}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<h1>neardup report: {name}</h1>\n"
        f'<p class="note">{escape(what)} of neardup {version}.</p>\n<nav>{nav}</nav>\n'
        f"{bodies}\n</body>\n</html>\n"
    )


def with_run_record(page: str, record: Mapping[str, Any]) -> str:
    r"""``page`` with ``record`` (a run record's dict) as JSON at the end of its head.

    The element is ``<script type="application/json" id="neardup-run">``: a data block, which
    browsers parse as text and never run. The JSON is ASCII, with ``<``, ``>`` and ``&`` as
    ``\u`` escapes, so no string of the record (a run directory named ``</script>``) can end
    the element early. It goes in after the page is rendered, since the record's timings
    count the rendering; the page's first ``</head>`` is its own (every text of the run on
    the page is escaped).

    Examples
    --------
    >>> page = with_run_record("<head></head>", {"inputs": ["</script>"]})
    >>> page.startswith('<head><script type="application/json" id="neardup-run">{')
    True
    >>> print(page[page.index(">{") + 1 :])
    {"inputs": ["\u003c/script\u003e"]}</script>
    </head>
    """
    data = json.dumps(record, ensure_ascii=True).translate(_JSON_IN_HTML)
    element = f'<script type="application/json" id="{RUN_RECORD_ID}">{data}</script>\n'
    return page.replace("</head>", element + "</head>", 1)


def table(rows: Iterable[tuple[str, str]], *, numeric: bool = False) -> str:
    """A two-column table of already escaped cells."""
    cell = '<td class="num">' if numeric else "<td>"
    body = "".join(f"<tr><th>{k}</th>{cell}{v}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>"


def missing(what: str) -> str:
    """A note that something the page would show is not there."""
    return f'<p class="missing">{escape(what)}</p>'


def flat_rows(data: Mapping[str, Any], prefix: str = "") -> Iterable[tuple[str, str]]:
    """``("sketch.shingle.k", "5")`` rows of a nested dict (strings as they are, else JSON)."""
    for key, value in data.items():
        if isinstance(value, Mapping):
            yield from flat_rows(value, f"{prefix}{key}.")
        else:
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            yield escape(f"{prefix}{key}"), escape(shown)


def _measure(run: Run) -> str:
    """What the pairs' similarity is: the kind's exact measure, or its signature estimate."""
    measure = run.config.measure.replace("-", " ").replace("jaccard", "Jaccard")
    how = "exact" if run.config.verify_mode == "exact" else "estimated from signatures"
    return f"{measure} similarity ({how})"


def _run_section(run: Run) -> str:
    summary = run.summary
    lsh = summary.get("lsh") or {}
    facts = [
        ("candidate scheme", escape(f"{lsh.get('scheme', '?')}: {lsh.get('label', '?')}")),
        ("verification", escape(str(summary.get("verify", run.config.verify_mode)))),
        ("clustering", escape(run.config.cluster)),
    ]
    return run_section(summary, facts)


def run_section(summary: Mapping[str, Any], facts: Sequence[tuple[str, str]]) -> str:
    """The run's facts (escaped cells) and inputs, its counts and its parameters."""
    inputs = summary.get("inputs")
    facts = [*facts, ("inputs", escape(", ".join(inputs)) if inputs else escape(NOT_RECORDED))]
    counts = summary.get("counts") or {}
    count_rows = [
        (
            escape(key.replace("_", " ")),
            f"{value:,}" if isinstance(value, int) else escape(str(value)),
        )
        for key, value in counts.items()
    ]
    return (
        '<div class="columns">'
        f"<div><h3>Run</h3>{table(facts)}<h3>Counts</h3>{table(count_rows, numeric=True)}</div>"
        f"<div><h3>Parameters</h3>{table(flat_rows(summary.get('params') or {}))}</div>"
        "</div>"
    )


def _timings_section(run: Run) -> str:
    return timings_section(run.summary)


def timings_section(summary: Mapping[str, Any]) -> str:
    """The stage timings chart, the total and the throughput where recorded."""
    timings = summary.get("timings_s") or {}
    seconds = {k: float(v) for k, v in timings.items() if k != "total"}
    if not seconds:
        return missing(f"Stage timings: {NOT_RECORDED}.")
    total = timings.get("total")
    speed = summary.get("throughput_mb_s")
    line = f"Total {total} s" if total is not None else "Total not recorded"
    if speed is not None:
        line += f", {speed} MB/s of normalised text"
    return f'{timings_chart(seconds)}<p class="note">{escape(line)}.</p>'


def _similarity_section(run: Run) -> str:
    histogram = run.summary.get("similarity_histogram")
    if not histogram:
        return missing(f"The histogram of pair similarities was {NOT_RECORDED}.")
    chart = histogram_chart(
        histogram["edges"], histogram["candidates"], histogram["verified"], run.threshold,
        _measure(run),
    )  # fmt: skip
    verified = sum(histogram["verified"])
    counts = run.summary.get("counts") or {}
    unmeasured = [
        f"{number:,} {why}"
        for number, why in (
            (int(counts.get("already_joined") or 0), "whose documents were already in one cluster"),
            (
                int(counts.get("size_rejected") or 0),
                "whose sets' sizes keep them below the threshold",
            ),
        )
        if number
    ]
    which = (
        f"Every candidate pair measured (light; not measured: {' and '.join(unmeasured)})"
        if unmeasured
        else "Every candidate pair (light)"
    )
    return (
        f'{chart}<p class="note">{which} by its {escape(_measure(run))}; '
        f"the {verified:,} verified ones (dark) reach the threshold {run.threshold:g}. Candidates "
        "far below the threshold cost verification time only; a mass just below it suggests "
        "duplicates a lower threshold would join.</p>"
    )


def _s_curve_section(run: Run) -> str:
    lsh = run.summary.get("lsh") or {}
    if lsh.get("scheme") == "cosine" and "num_bands" in lsh:
        b, r = int(lsh["num_bands"]), int(lsh["num_rows"])
        probability = float(lsh["candidate_probability_at_threshold"])
        return missing(
            f"Candidates came from b = {b} bands of r = {r} random hyperplanes over the "
            "embeddings: a pair at cosine s falls on one side of a hyperplane together with "
            f"probability 1 - arccos(s)/π (seed 002), and is a candidate with probability "
            f"{probability:.4f} at the threshold {run.threshold:g}."
        )
    if lsh.get("scheme") != "bands":
        what = f"{lsh.get('scheme', 'unknown')} ({lsh.get('label', '')})"
        return missing(
            f"This run's candidate scheme is {what}, not LSH banding: it has no S-curve."
        )
    b, r = int(lsh["num_bands"]), int(lsh["num_rows"])
    probability = float(lsh["candidate_probability_at_threshold"])
    chart = s_curve_chart(b, r, run.threshold, probability)
    return (
        f'{chart}<p class="note">With b = {b} bands of r = {r} rows, a pair of similarity s '
        f"becomes a candidate with probability 1 - (1 - s<sup>r</sup>)<sup>b</sup> "
        f"(MMDS §3.4); at the threshold {run.threshold:g} that is {probability:.4f}: about "
        f"{(1 - probability) * 100:.1f}% of the pairs exactly at the threshold are missed.</p>"
    )


def _cluster_sizes_section(run: Run) -> str:
    if run.cluster_sizes is None:
        return missing(f"Clusters: {NOT_RECORDED} (no clusters.jsonl).")
    sizes, counts = run.cluster_sizes
    if sizes.shape[0] == 0:
        return missing("The run found no cluster of two or more documents.")
    return (
        f'{cluster_sizes_chart(sizes, counts)}<p class="note">{int(counts.sum()):,} clusters '
        f"of two or more documents, the largest of {int(sizes.max()):,}. A straight line on "
        "these log-log axes is a power law; a lone point far right is a cluster worth "
        "opening (boilerplate, or a chain).</p>"
    )


def _clusters_section(run: Run) -> str:
    if not run.biggest:
        return missing("No cluster of two or more documents to show.")
    rows = "".join(_cluster_row(cluster, run.threshold) for cluster in run.biggest)
    return (
        '<table class="clusters"><tr><th>cluster</th><th>size</th><th>representative</th>'
        f"<th>least similarity</th><th>members (similarity to the representative)</th></tr>"
        f'{rows}</table><p class="note">A cluster whose least similar member is below the '
        f'threshold {run.threshold:g} is <span class="chained">chained</span>: single-link '
        "clustering joined it through intermediate documents (--cluster center avoids it).</p>"
    )


def _similarity(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _cluster_row(cluster: Cluster, threshold: float) -> str:
    if cluster.min_similarity is None:
        least = escape(NOT_RECORDED)
    else:
        least = _similarity(cluster.min_similarity)
        if cluster.min_similarity < threshold:
            least += ' <span class="chained">chained</span>'
    members = ", ".join(f"{escape(m.id)} ({_similarity(m.similarity)})" for m in cluster.members)
    more = cluster.size - 1 - len(cluster.members)
    if more > 0:
        members += f", and {more:,} more"
    return (
        f'<tr><td>{escape(cluster.label)}</td><td class="num">{cluster.size:,}</td>'
        f"<td>{escape(cluster.representative)}</td><td>{least}</td>"
        f'<td class="members">{members}</td></tr>'
    )


def _pairs_section(run: Run, texts: Texts | None) -> str:
    if run.bands is None:
        return missing(f"Pairs: {NOT_RECORDED} (no pairs.jsonl).")
    intro = (
        f'<p class="note">Reported pairs by {escape(_measure(run))}, a few from each band '
        "(a seeded sample), with the passages they share highlighted: maximal runs of shared "
        "shingles. Long unshared stretches are elided."
    )
    if run.exact_links:
        intro += f" {run.exact_links:,} exact-duplicate links are left out: their texts are equal."
    parts = [intro + "</p>"]
    if texts is None:
        parts.append(missing("The texts were not read (--no-texts): ids only."))
    elif texts.problem is not None:
        parts.append(missing(f"The texts were not available: {texts.problem}."))
    parts.extend(_band(band, run, texts) for band in run.bands)
    return "\n".join(parts)


def _band(band: Band, run: Run, texts: Texts | None) -> str:
    closing = "]" if band.high >= 1.0 else ")"
    title = (
        f"<h3>[{band.low:.2f}, {band.high:.2f}{closing}: {band.num_pairs:,} pairs"
        f"{f', {len(band.sample)} shown' if band.sample else ''}</h3>"
    )
    if not band.sample:
        return title
    return title + "".join(_pair(pair, run, texts) for pair in band.sample)


def _pair(pair: Pair, run: Run, texts: Texts | None) -> str:
    head = (
        f"<p><b>{escape(pair.a)}</b> and <b>{escape(pair.b)}</b>: similarity {pair.similarity:.3f}"
    )
    if texts is None or texts.problem is not None:
        return f'<div class="pair">{head}</p></div>'
    a, b = texts.by_id.get(pair.a), texts.by_id.get(pair.b)
    if a is None or b is None:
        lost = pair.a if a is None else pair.b
        return (
            f'<div class="pair">{head}</p>'
            f"{missing(f'{lost} was not found in the inputs (changed since the run?)')}</div>"
        )
    passages = (
        pair.passages if pair.passages is not None else shared_passages(a, b, run.config.sketch)
    )
    shingles = sum(p.num_shingles for p in passages)
    head += f"; {_counted(len(passages), 'shared passage')}, {_counted(shingles, 'shingle')}</p>"
    sides = (
        _side(pair.a, a, [(p.a_start, p.a_end) for p in passages]),
        _side(pair.b, b, [(p.b_start, p.b_end) for p in passages]),
    )
    return f'<div class="pair">{head}<div class="sides">{"".join(sides)}</div></div>'


def _counted(num: int, noun: str) -> str:
    """``"1 shingle"``, ``"2,300 shingles"``."""
    return f"{num:,} {noun}{'' if num == 1 else 's'}"


def _side(doc_id: str, text: str, spans: Sequence[tuple[int, int]]) -> str:
    return (
        f"<div><code>{escape(doc_id)}</code> ({len(text):,} characters)"
        f'<div class="text">{excerpt(text, spans)}</div></div>'
    )


def _elided(num: int) -> str:
    return f'<span class="elided">[… {num:,} characters …]</span>'


def excerpt(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` as HTML with ``spans`` in ``<mark>``, long stretches around them elided.

    Unshared text keeps :data:`CONTEXT` characters next to each passage; a passage longer
    than :data:`LONGEST` keeps its two ends. Every piece of text is escaped.

    Examples
    --------
    >>> excerpt("a <b> c", [(2, 5)])
    'a <mark>&lt;b&gt;</mark> c'
    >>> excerpt("x" * 500 + "shared", [(500, 506)])[:40]
    '<span class="elided">[… 340 characters …'
    """
    pieces: list[str] = []
    position = 0
    merged = merged_spans(spans)
    for start, end in merged:
        pieces.append(_gap(text[position:start], head=position == 0, tail=False))
        pieces.append(_passage(text[start:end]))
        position = end
    pieces.append(_gap(text[position:], head=not merged, tail=True))
    return "".join(pieces)


def _gap(gap: str, *, head: bool, tail: bool) -> str:
    """Unshared text between passages (or before the first, ``head``, or after the last)."""
    keep_start = 0 if head else CONTEXT
    keep_end = 0 if tail else CONTEXT
    if head and tail:  # no passage at all: the beginning of the text
        keep_start = 2 * CONTEXT
    if len(gap) <= keep_start + keep_end + CONTEXT // 2:
        return escape(gap)
    end_part = gap[len(gap) - keep_end :] if keep_end else ""
    return escape(gap[:keep_start]) + _elided(len(gap) - keep_start - keep_end) + escape(end_part)


def _passage(passage: str) -> str:
    """A shared passage in ``<mark>``, its middle elided when it is very long."""
    if len(passage) <= LONGEST:
        return f"<mark>{escape(passage)}</mark>"
    half = LONGEST // 2
    return (
        f"<mark>{escape(passage[:half])}</mark>{_elided(len(passage) - 2 * half)}"
        f"<mark>{escape(passage[-half:])}</mark>"
    )


def _outliers_section(run: Run, texts: Texts | None) -> str:
    counts = run.summary.get("counts") or {}
    max_bucket = run.config.lsh.max_bucket_size
    giant = counts.get("giant_buckets")
    parts = []
    if giant is None:
        parts.append(missing(f"Giant buckets: {NOT_RECORDED}."))
    else:
        parts.append(
            f"<p>{giant:,} LSH buckets held more than {max_bucket:,} documents (the largest: "
            f"{counts.get('largest_bucket', 0):,}); in those each document was paired only "
            f"with the {max_bucket - 1:,} before it. Many giant buckets mean boilerplate that "
            "many documents share.</p>"
        )
    short = counts.get("short_documents")
    if short is None:
        parts.append(missing(f"Short documents: {NOT_RECORDED}."))
        return "".join(parts)
    parts.append(
        f"<p>{short:,} documents had no shingle at all (fewer tokens than k = "
        f"{run.config.sketch.shingle.k}), {counts.get('empty_documents', 0):,} of them no "
        "token: they are matched by their exact fingerprint only.</p>"
    )
    if texts is None:
        parts.append(missing("Their ids need the texts, which were not read (--no-texts)."))
    elif texts.problem is not None:
        parts.append(
            missing(f"Their ids need the texts, which were not available: {texts.problem}.")
        )
    elif texts.short_ids:
        items = "".join(f"<li><code>{escape(doc)}</code></li>" for doc in texts.short_ids)
        parts.append(f"<p>The first {len(texts.short_ids)} in input order:</p><ul>{items}</ul>")
        if texts.num_short != short:
            parts.append(
                missing(
                    f"The inputs hold {texts.num_short:,} short documents now, the run counted "
                    f"{short:,}: they changed since the run."
                )
            )
    return "".join(parts)
