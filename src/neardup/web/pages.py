"""Which page stands for which: clusters of a crawl's pages, each member with its reason.

A page joins its cluster through one of four links, checked in this order against the
cluster's representative:

- ``alias``: the same canonical URL (another spelling of the URL, or a session parameter);
- ``mirror``: a page on a mirror host of the representative's host;
- ``exact``: the same text under another URL;
- ``near``: a near-duplicate text (Jaccard at or above the threshold).

The representative of a cluster is a page with text, on the host with the most pages (distinct
canonical URLs: the origin of a set of mirrors, as a rule), the first crawled among those. A page
joined through a chain of links (an alias of an exact copy of a near duplicate ...) gets the
reason of the first test its representative passes, ``near`` when none does. Pages without text
are exact copies of nothing: they join a cluster only as aliases.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neardup._types import I64Array
from neardup.cluster import connected_components
from neardup.web.mirrors import MirrorPair

__all__ = ["PageClusters", "cluster_pages"]


@dataclass(frozen=True, slots=True)
class PageClusters:
    """Each page's representative (a page number) and the reason it is not its own (or None)."""

    representative: I64Array
    reasons: list[str | None]


def cluster_pages(
    canonical: Sequence[str],
    hosts: Sequence[str],
    fingerprints: np.ndarray,
    has_text: np.ndarray,
    near: tuple[I64Array, I64Array],
    mirrors: Sequence[MirrorPair],
) -> PageClusters:
    """Cluster pages by canonical URL, exact text and the ``near`` pairs; name each link.

    ``fingerprints`` identify equal texts (of the pages that ``has_text``); ``near`` are page
    pairs at the near-duplicate threshold (exact copies included or not: they are found by
    fingerprint anyway).
    """
    n = len(canonical)
    numbers = np.arange(n, dtype=np.int64)
    _, url_first, by_url = np.unique(
        np.asarray(canonical, dtype=object), return_index=True, return_inverse=True
    )
    texts = np.flatnonzero(has_text)
    _, text_first, by_text = np.unique(fingerprints[texts], return_index=True, return_inverse=True)
    firsts = [near[0], url_first[by_url], texts[text_first[by_text]]]
    seconds = [near[1], numbers, texts]
    labels = connected_components(
        n, np.concatenate(firsts).astype(np.int64), np.concatenate(seconds).astype(np.int64)
    ).labels
    host_names, host_of = np.unique(np.asarray(hosts, dtype=object), return_inverse=True)
    host_pages = np.bincount(host_of[url_first], minlength=len(host_names))
    # The representative: the first page with text, on the host with the most pages.
    order = np.lexsort((numbers, -host_pages[host_of], ~has_text, labels))
    sorted_labels = labels[order]
    starts = np.ones(n, dtype=bool)
    starts[1:] = sorted_labels[1:] != sorted_labels[:-1]
    chosen = np.empty(int(labels.max()) + 1 if n else 0, dtype=np.int64)
    chosen[sorted_labels[starts]] = order[starts]
    representative = chosen[labels]
    mirror_of = {(m.a, m.b): m for m in mirrors} | {(m.b, m.a): m for m in mirrors}
    reasons: list[str | None] = []
    for page, rep in enumerate(representative.tolist()):
        if rep == page:
            reasons.append(None)
        elif by_url[page] == by_url[rep]:
            reasons.append("alias")
        elif _mirrored(mirror_of.get((hosts[page], hosts[rep])), page, rep, hosts, canonical):
            reasons.append("mirror")
        elif has_text[page] and fingerprints[page] == fingerprints[rep]:
            reasons.append("exact")
        else:
            reasons.append("near")
    return PageClusters(representative.astype(np.int64), reasons)


def _mirrored(
    pair: MirrorPair | None, page: int, rep: int, hosts: Sequence[str], canonical: Sequence[str]
) -> bool:
    """Whether both pages lie in the mirrored part of a mirror pair of their hosts."""
    return pair is not None and all(pair.holds(hosts[i], canonical[i]) for i in (page, rep))
