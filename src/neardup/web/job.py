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
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neardup._faults import crash_point
from neardup._progress import Progress
from neardup.io.output import AtomicDirectory
from neardup.io.records import Ids
from neardup.io.results import write_json, write_records
from neardup.params import HtmlExtract, MirrorSpec
from neardup.record import RunRecord, stage_timings
from neardup.text.urls import url_host
from neardup.web.aliases import canonical_urls, learn_alias_parameters
from neardup.web.crawl import Crawl, read_crawl
from neardup.web.links import LinkGraph, contract_links
from neardup.web.mirrors import MirrorPair, find_mirrors, page_copies
from neardup.web.pages import PageClusters, cluster_pages

__all__ = ["MirrorReport", "analyse_crawl", "mirrors_files"]


@dataclass(frozen=True, slots=True)
class MirrorReport:
    """Everything the job finds in a crawl (what the output files hold)."""

    crawl: Crawl
    canonical: list[str]
    hosts: list[str]
    alias_parameters: list[str]
    path_crumbs: list[str]
    mirrors: list[MirrorPair]
    clusters: PageClusters
    graph: LinkGraph
    host_pages: dict[str, int]
    timings: dict[str, float]


def analyse_crawl(crawl: Crawl, spec: MirrorSpec, threshold: float = 0.8) -> MirrorReport:
    """Aliases, mirror hosts, page clusters (near duplicates at ``threshold``) and the graph."""
    timings: dict[str, float] = {}
    start = time.perf_counter()
    fingerprints = Ids.of(crawl.texts).hashes()[:, 0].copy()
    lengths = np.fromiter((len(t.strip()) for t in crawl.texts), np.int64, len(crawl))
    has_text = lengths > 0
    # Pages without text say nothing of which parameters change a page.
    with_text = np.flatnonzero(has_text)
    aliases = learn_alias_parameters([crawl.urls[i] for i in with_text], fingerprints[with_text])
    canonical = canonical_urls(crawl.urls, aliases)
    hosts = [url_host(url) for url in canonical]
    # A site's navigation links repeat on every page: canonicalise each distinct link once.
    distinct = list(dict.fromkeys(url for out in crawl.links for url in out))
    canonical_of = dict(zip(distinct, canonical_urls(distinct, aliases), strict=True))
    links = [tuple(canonical_of[url] for url in out) for out in crawl.links]
    # One page per canonical URL, the one with the most text, in crawl order.
    _, by_url = np.unique(np.asarray(canonical, dtype=object), return_inverse=True)
    order = np.lexsort((np.arange(len(crawl)), -lengths, by_url))
    starts = np.r_[True, by_url[order][1:] != by_url[order][:-1]]
    first = np.sort(order[starts])
    timings["aliases"] = time.perf_counter() - start
    start = time.perf_counter()
    unit_hosts = [hosts[i] for i in first]
    copies = page_copies(
        [crawl.texts[i] for i in first], unit_hosts, min(threshold, spec.copy_threshold), spec
    )
    timings["content"] = time.perf_counter() - start
    start = time.perf_counter()
    mirrors = find_mirrors(unit_hosts, [canonical[i] for i in first], copies, spec)
    host_pages: dict[str, int] = {}
    for host in unit_hosts:
        host_pages[host] = host_pages.get(host, 0) + 1
    timings["mirrors"] = time.perf_counter() - start
    start = time.perf_counter()
    near = copies.values >= threshold
    clusters = cluster_pages(
        canonical,
        hosts,
        fingerprints,
        has_text,
        (first[copies.first[near]], first[copies.second[near]]),
        mirrors,
    )
    # Only whole hosts fold into one another; a mirrored directory's pages fold as copies.
    whole_hosts = [m for m in mirrors if m.prefixes is None]
    graph = contract_links(canonical, links, clusters.representative, whole_hosts)
    timings["graph"] = time.perf_counter() - start
    return MirrorReport(
        crawl,
        canonical,
        hosts,
        sorted(name for name in aliases.names if name in aliases.evidence),
        [str(crumb) for crumb in sorted(aliases.crumbs)],
        mirrors,
        clusters,
        graph,
        dict(sorted(host_pages.items())),
        timings,
    )


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
