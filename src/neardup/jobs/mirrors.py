"""The ``neardup mirrors`` job: a crawl in; mirror hosts, page clusters and the link graph out.

Output directory (written atomically):

- ``hosts.jsonl``: ``{"host", "pages"}``, pages counted by canonical URL;
- ``mirrors.jsonl``: ``{"a", "b", "kind", "similarity", "shared_pages", "url_similarity",
  "prefixes"}``
  (:class:`~neardup.web.mirrors.MirrorPair`);
- ``pages.jsonl``: ``{"url", "host", "representative", "reason"}`` for every page crawled
  (:mod:`neardup.web.pages`);
- ``graph/nodes.parquet`` (``node``, ``url``, ``host``, ``pages``) and ``graph/edges.parquet``
  (``source``, ``target``, ``count``): the contracted link graph (:mod:`neardup.web.links`);
- ``summary.json``: the run record (:class:`~neardup.record.RunRecord`): parameters, counts
  and timings.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from neardup._faults import crash_point
from neardup._progress import Progress
from neardup.io.output import AtomicDirectory
from neardup.io.results import write_json, write_records
from neardup.params import HtmlExtract, MirrorSpec
from neardup.record import RunRecord, stage_timings
from neardup.web.analysis import MirrorReport, analyse_crawl
from neardup.web.crawl import read_crawl
from neardup.web.links import LinkGraph

__all__ = ["mirrors_files"]


def mirrors_files(
    inputs: Sequence[Path | str],
    output: Path | str,
    *,
    spec: MirrorSpec | None = None,
    threshold: float = 0.8,
    url_field: str | None = None,
    html_field: str | None = None,
    text_field: str | None = None,
    extract: HtmlExtract = "text",
    skip_bad_records: bool = False,
    overwrite: bool = False,
    show_progress: bool = False,
) -> dict[str, Any]:
    """Run the mirror analysis on ``inputs`` and write the output directory; return the summary.

    ``show_progress``: the pages read so far on stderr.
    """
    spec = spec if spec is not None else MirrorSpec()
    with AtomicDirectory(output, kind="mirrors", overwrite=overwrite, inputs=inputs) as directory:
        start = time.perf_counter()
        with Progress("read", 0, unit="pages", enabled=show_progress) as bar:
            crawl = read_crawl(
                inputs,
                url_field=url_field,
                html_field=html_field,
                text_field=text_field,
                extract=extract,
                skip_bad_records=skip_bad_records,
                progress=bar,
            )
        read_seconds = time.perf_counter() - start
        crash_point("crawl-read")
        report = analyse_crawl(crawl, spec, threshold)
        start = time.perf_counter()
        write_records(
            directory / "hosts.jsonl",
            ({"host": h, "pages": n} for h, n in report.host_pages.items()),
        )
        write_records(directory / "mirrors.jsonl", (m.to_dict() for m in report.mirrors))
        rep = report.clusters.representative
        write_records(
            directory / "pages.jsonl",
            (
                {
                    "url": crawl.urls[i],
                    "host": report.hosts[i],
                    "representative": crawl.urls[int(rep[i])],
                    "reason": report.clusters.reasons[i],
                }
                for i in range(len(crawl))
            ),
        )
        _write_graph(directory / "graph", report.graph)
        report.timings["write"] = time.perf_counter() - start
        summary = _summary(report, spec, threshold, extract, read_seconds, inputs)
        write_json(directory / "summary.json", summary)
    return summary


def _summary(
    report: MirrorReport,
    spec: MirrorSpec,
    threshold: float,
    extract: HtmlExtract,
    read_seconds: float,
    inputs: Sequence[Path | str],
) -> dict[str, Any]:
    """The run record of ``summary.json`` (:class:`~neardup.record.RunRecord`)."""
    kinds = {
        kind: sum(m.kind == kind for m in report.mirrors) for kind in ("full", "partial", "stale")
    }
    reasons = {
        str(reason): report.clusters.reasons.count(reason)
        for reason in ("alias", "mirror", "exact", "near")
    }
    spec_dict = asdict(spec)
    spec_dict["shingle"] = str(spec.shingle)
    return RunRecord(
        command="mirrors",
        inputs=tuple(str(path) for path in inputs),
        outputs={
            "hosts": "hosts.jsonl",
            "mirrors": "mirrors.jsonl",
            "pages": "pages.jsonl",
            "graph": "graph/",
            "summary": "summary.json",
        },
        params={"threshold": threshold, "html_extract": extract, **spec_dict},
        counts={
            "items": len(report.crawl),
            "bad_records_skipped": report.crawl.num_bad,
            "hosts": len(report.host_pages),
            "distinct_urls": sum(report.host_pages.values()),
            "mirror_pairs": len(report.mirrors),
            "mirror_kinds": kinds,
            "pages_by_reason": reasons,
            "archive": report.crawl.stats.to_dict(),
            "graph": {
                "nodes_before": report.graph.num_nodes_before,
                "edges_before": report.graph.num_edges_before,
                "nodes": len(report.graph.urls),
                "edges": int(report.graph.source.shape[0]),
                "rounds": report.graph.rounds,
            },
        },
        timings_s=stage_timings({"read": read_seconds, **report.timings}),
        details={"alias_parameters": report.alias_parameters, "path_crumbs": report.path_crumbs},
    ).to_dict()


def _write_graph(directory: Path, graph: LinkGraph) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory.mkdir()
    nodes = pa.table(
        {
            "node": pa.array(np.arange(len(graph.urls), dtype=np.int64)),
            "url": pa.array(graph.urls, type=pa.string()),
            "host": pa.array(graph.hosts, type=pa.string()),
            "pages": pa.array(graph.members),
        }
    )
    edges = pa.table(
        {
            "source": pa.array(graph.source),
            "target": pa.array(graph.target),
            "count": pa.array(graph.count),
        }
    )
    pq.write_table(nodes, directory / "nodes.parquet")
    pq.write_table(edges, directory / "edges.parquet")
