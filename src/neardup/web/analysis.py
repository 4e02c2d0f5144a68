"""What a crawl holds: URL aliases, mirror hosts, page clusters and the contracted link graph.

:func:`analyse_crawl` runs the analyses in order on a crawl already read; ``neardup mirrors``
(:mod:`neardup.jobs.mirrors`) reads the crawl and writes what it finds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from neardup.io.records import Ids
from neardup.params import MirrorSpec
from neardup.text.urls import url_host
from neardup.web.aliases import canonical_urls, learn_alias_parameters
from neardup.web.crawl import Crawl
from neardup.web.links import LinkGraph, contract_links
from neardup.web.mirrors import MirrorPair, find_mirrors, page_copies
from neardup.web.pages import PageClusters, cluster_pages

__all__ = ["MirrorReport", "analyse_crawl"]


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
