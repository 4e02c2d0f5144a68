"""Mirror hosts (seed 002): URL shingles find candidate host pairs, page content confirms them.

Seed 002's method, in two steps:

1. **Candidates.** Each host is the set of positional bigrams of its URLs' paths
   (:func:`~neardup.text.urls.url_shingles`); MinHash LSH over those sets finds host pairs whose
   URL sets overlap (``url_threshold``). Hosts that publish the same pages under another path
   layout share no bigram, so host pairs that share a near-copy page (found by the content step
   below) are candidates too: the seed's "corroborative info".
2. **The thorough check.** Every page has a *copy* on another host when their word-shingle
   Jaccard reaches ``copy_threshold``. For a candidate pair, the share of the smaller host's
   pages with a copy on the other (its *coverage*) decides: below ``min_coverage`` (or fewer than
   ``min_pages`` shared pages), not mirrors — two sites built by the same generator share their
   search and index pages, not their content; else a **partial** mirror when the larger host's
   coverage is below ``min_coverage`` (the smaller holds a subset of its pages), a **stale**
   mirror when at least ``stale_share`` of the shared pages were edited (Jaccard with the copy
   below ``unchanged``), else a **full** mirror.

A host's pages are its distinct canonical URLs (:mod:`neardup.web.aliases`): a page crawled
under several aliases counts once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neardup._types import F64Array, I64Array, U64Array
from neardup.join import JoinResult, similarity_join
from neardup.params import JoinSpec, MirrorSpec
from neardup.text import Shingler
from neardup.text.shingle import ShingleSets
from neardup.text.urls import url_shingles
from neardup.verify import jaccard_of_sets

__all__ = ["MirrorPair", "find_mirrors", "page_copies"]


@dataclass(frozen=True, slots=True)
class MirrorPair:
    """Two hosts found to be mirrors (``a < b``), as ``mirrors.jsonl`` lists them.

    ``similarity`` is the mean, over the smaller host's pages, of each page's Jaccard with its
    best copy on the other host (0 for a page with none); ``shared_pages`` the number of the
    smaller host's pages with a copy; ``url_similarity`` the Jaccard of the two hosts'
    URL-shingle sets.
    """

    a: str
    b: str
    kind: str
    similarity: float
    shared_pages: int
    url_similarity: float

    def to_dict(self) -> dict[str, object]:
        """The ``mirrors.jsonl`` record."""
        return {
            "a": self.a,
            "b": self.b,
            "kind": self.kind,
            "similarity": round(self.similarity, 6),
            "shared_pages": self.shared_pages,
            "url_similarity": round(self.url_similarity, 6),
        }


def page_copies(
    texts: Sequence[str], hosts: Sequence[str], threshold: float, spec: MirrorSpec
) -> JoinResult:
    """Every pair of ``texts`` whose shingle sets, less their hosts' templates, reach ``threshold``.

    A host's *template* is the shingles found on at least half of its pages (and on at least
    three): navigation, footers, a mirror banner. They say which site a page belongs to, not
    what it holds, so they are left out before pages are compared: two sites built by one
    generator then share little, and a mirror's banner is no edit. The result's ``values`` are
    the pairs' exact Jaccard.
    """
    sets = _without_templates(Shingler(spec.shingle).shingle_sets(texts), hosts)
    return similarity_join(sets, JoinSpec(metric="jaccard", threshold=threshold, seed=spec.seed))


def _without_templates(sets: ShingleSets, hosts: Sequence[str]) -> ShingleSets:
    """``sets`` less each host's template shingles (on half or more of its pages, and >= 3)."""
    if sets.hashes.shape[0] == 0:
        return sets
    _, host_of = np.unique(np.asarray(hosts, dtype=object), return_inverse=True)
    host_of = host_of.astype(np.int64)
    sizes = sets.sizes()
    element_host = np.repeat(host_of, sizes)
    order = np.lexsort((sets.hashes, element_host))
    h, x = element_host[order], sets.hashes[order]
    starts = np.flatnonzero(np.r_[True, (h[1:] != h[:-1]) | (x[1:] != x[:-1])])
    runs = np.diff(np.r_[starts, h.shape[0]])
    pages = np.bincount(host_of)
    frequent = runs >= np.maximum(3, np.ceil(0.5 * pages[h[starts]]))
    template = np.empty(h.shape[0], dtype=bool)
    template[order] = np.repeat(frequent, runs)
    kept = ~template
    offsets = np.zeros(sizes.shape[0] + 1, dtype=np.int64)
    doc_of = np.repeat(np.arange(sizes.shape[0]), sizes)
    offsets[1:] = np.cumsum(np.bincount(doc_of[kept], minlength=sizes.shape[0]))
    return ShingleSets(hashes=sets.hashes[kept], offsets=offsets)


def find_mirrors(
    hosts: Sequence[str],
    urls: Sequence[str],
    copies: JoinResult,
    spec: MirrorSpec,
) -> list[MirrorPair]:
    """The mirror host pairs among pages ``urls`` (canonical, one per page) on ``hosts``.

    ``copies`` are the page pairs :func:`page_copies` found at (or below) ``spec.copy_threshold``.
    """
    host_names, host_of = np.unique(np.asarray(hosts, dtype=object), return_inverse=True)
    host_of = host_of.astype(np.int64)
    num_hosts = len(host_names)
    pages = np.bincount(host_of, minlength=num_hosts)
    keep = (copies.values >= spec.copy_threshold) & (
        host_of[copies.first] != host_of[copies.second]
    )
    first, second, jaccard = copies.first[keep], copies.second[keep], copies.values[keep]
    # Each page's best copy on each other host: (page, host) -> the best Jaccard.
    page = np.concatenate([first, second])
    other = np.concatenate([host_of[second], host_of[first]])
    best = np.concatenate([jaccard, jaccard])
    order = np.lexsort((-best, other, page))
    page, other, best = page[order], other[order], best[order]
    head = np.ones(page.shape[0], dtype=bool)
    head[1:] = (page[1:] != page[:-1]) | (other[1:] != other[:-1])
    page, other, best = page[head], other[head], best[head]
    host_sets = _host_url_sets(host_of, urls, num_hosts)
    candidates = _candidate_hosts(host_of[page], other, host_sets, spec)
    found = []
    for a, b in candidates:
        pair = _check(a, b, host_of, page, other, best, pages, spec)
        if pair is not None:
            url_similarity = jaccard_of_sets(host_sets.set_of(a), host_sets.set_of(b))
            found.append(
                MirrorPair(
                    str(host_names[a]),
                    str(host_names[b]),
                    pair[0],
                    pair[1],
                    pair[2],
                    url_similarity,
                )
            )
    return sorted(found, key=lambda m: (m.a, m.b))


def _check(
    a: int,
    b: int,
    host_of: I64Array,
    page: I64Array,
    other: I64Array,
    best: F64Array,
    pages: I64Array,
    spec: MirrorSpec,
) -> tuple[str, float, int] | None:
    """The thorough check of hosts ``a`` and ``b``: ``(kind, similarity, shared)`` or None."""
    a_to_b = (host_of[page] == a) & (other == b)
    b_to_a = (host_of[page] == b) & (other == a)
    small, large, small_to_large, large_to_small = a, b, a_to_b, b_to_a
    if pages[b] < pages[a]:
        small, large, small_to_large, large_to_small = b, a, b_to_a, a_to_b
    shared = int(np.count_nonzero(small_to_large))
    if shared < spec.min_pages or shared < spec.min_coverage * pages[small]:
        return None
    similarity = float(best[small_to_large].sum()) / float(pages[small])
    if np.count_nonzero(large_to_small) < spec.min_coverage * pages[large]:
        return "partial", similarity, shared
    edited = int(np.count_nonzero(best[small_to_large] < spec.unchanged))
    kind = "stale" if edited >= spec.stale_share * shared else "full"
    return kind, similarity, shared


def _host_url_sets(host_of: I64Array, urls: Sequence[str], num_hosts: int) -> ShingleSets:
    """Each host's set of URL positional-bigram hashes."""
    order = np.argsort(host_of, kind="stable")
    bounds = np.searchsorted(host_of[order], np.arange(num_hosts + 1))
    parts = [
        url_shingles([urls[i] for i in order[bounds[h] : bounds[h + 1]]]) for h in range(num_hosts)
    ]
    offsets = np.zeros(num_hosts + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([p.shape[0] for p in parts])
    hashes: U64Array = (
        np.concatenate(parts).astype(np.uint64) if parts else np.empty(0, dtype=np.uint64)
    )
    return ShingleSets(hashes=hashes, offsets=offsets)


def _candidate_hosts(
    page_host: I64Array, other: I64Array, host_sets: ShingleSets, spec: MirrorSpec
) -> list[tuple[int, int]]:
    """Host pairs ``(a, b)``, ``a < b``: sharing a copied page, or close in URL shingles."""
    a = np.minimum(page_host, other)
    b = np.maximum(page_host, other)
    by_content = set(zip(a.tolist(), b.tolist(), strict=True))
    if len(host_sets) > 1:
        by_url = similarity_join(
            host_sets,
            JoinSpec(metric="jaccard", threshold=spec.url_threshold, seed=spec.seed),
        )
        by_content.update(zip(by_url.first.tolist(), by_url.second.tolist(), strict=True))
    return sorted(by_content)
