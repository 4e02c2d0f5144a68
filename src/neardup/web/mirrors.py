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
3. **Directories.** A host may mirror another under one directory beside pages of its own (a
   documentation site under ``/mirror/click/``): seed 002's mirrors are collections with the
   same internal structure, and here the collection is a directory. When the hosts fail the
   check, each copied page and its best copy are cut at their longest common trailing path
   (``/mirror/click/api`` and ``/click/api`` give ``/mirror/`` and ``/``); the most common
   pair of cuts, narrowed to the directories all its copies lie in (``/mirror/click/`` and
   ``/click/``), is checked as two hosts would be, over the pages under them, and a pair that
   passes is reported with its ``prefixes``.

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
from neardup.templates import template_mask
from neardup.text import Shingler
from neardup.text.shingle import ShingleSets
from neardup.text.urls import url_parts, url_shingles
from neardup.verify import jaccard_of_sets

__all__ = ["MirrorPair", "find_mirrors", "page_copies"]


@dataclass(frozen=True, slots=True)
class MirrorPair:
    """Two hosts found to be mirrors (``a < b``), as ``mirrors.jsonl`` lists them.

    ``similarity`` is the mean, over the smaller host's pages, of each page's Jaccard with its
    best copy on the other host (0 for a page with none); ``shared_pages`` the number of the
    smaller host's pages with a copy; ``url_similarity`` the Jaccard of the two hosts'
    URL-shingle sets. ``prefixes``: for a mirror of one directory by another, the two path
    prefixes (of ``a``, then of ``b``), the counts and similarity being those of the pages
    under them; ``None`` for whole hosts.
    """

    a: str
    b: str
    kind: str
    similarity: float
    shared_pages: int
    url_similarity: float
    prefixes: tuple[str, str] | None = None

    def to_dict(self) -> dict[str, object]:
        """The ``mirrors.jsonl`` record."""
        return {
            "a": self.a,
            "b": self.b,
            "kind": self.kind,
            "similarity": round(self.similarity, 6),
            "shared_pages": self.shared_pages,
            "url_similarity": round(self.url_similarity, 6),
            "prefixes": list(self.prefixes) if self.prefixes else None,
        }

    def holds(self, host: str, url: str) -> bool:
        """Whether the page ``url`` of ``host`` is in the mirrored part (its directory)."""
        if self.prefixes is None:
            return True
        prefix = self.prefixes[0] if host == self.a else self.prefixes[1]
        return _under(url_parts(url)[1], prefix)


def page_copies(
    texts: Sequence[str], hosts: Sequence[str], threshold: float, spec: MirrorSpec
) -> JoinResult:
    """Every pair of ``texts`` whose shingle sets, less their hosts' templates, reach ``threshold``.

    A host's *template* is the shingles found on at least half of its pages (and on at least
    three; :mod:`neardup.templates`): navigation, footers, a mirror banner. They say which
    site a page belongs to, not what it holds, so they are left out before pages are compared:
    two sites built by one generator then share little, and a mirror's banner is no edit. The
    result's ``values`` are the pairs' exact Jaccard.
    """
    sets = _without_templates(Shingler(spec.shingle).shingle_sets(texts), hosts)
    return similarity_join(sets, JoinSpec(metric="jaccard", threshold=threshold, seed=spec.seed))


def _without_templates(sets: ShingleSets, hosts: Sequence[str]) -> ShingleSets:
    """``sets`` less each host's template shingles (:func:`~neardup.templates.template_mask`)."""
    if sets.hashes.shape[0] == 0:
        return sets
    _, host_of = np.unique(np.asarray(hosts, dtype=object), return_inverse=True)
    host_of = host_of.astype(np.int64)
    sizes = sets.sizes()
    kept = ~template_mask(sets.hashes, np.repeat(host_of, sizes), np.bincount(host_of))
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
    # Each page's best copy on each other host: (page, host) -> the best Jaccard, and its page.
    page = np.concatenate([first, second])
    partner = np.concatenate([second, first])
    other = np.concatenate([host_of[second], host_of[first]])
    best = np.concatenate([jaccard, jaccard])
    order = np.lexsort((partner, -best, other, page))
    page, partner, other, best = page[order], partner[order], other[order], best[order]
    head = np.ones(page.shape[0], dtype=bool)
    head[1:] = (page[1:] != page[:-1]) | (other[1:] != other[:-1])
    copies_of = _Copies(page[head], partner[head], other[head], best[head], host_of, pages)
    host_sets = _host_url_sets(host_of, urls, num_hosts)
    candidates = _candidate_hosts(host_of[copies_of.page], copies_of.other, host_sets, spec)
    paths = [url_parts(url)[1] for url in urls]
    found = []
    for a, b in candidates:
        checked = copies_of.check(a, b, spec) or copies_of.check_directories(a, b, paths, spec)
        if checked is not None:
            url_similarity = jaccard_of_sets(host_sets.set_of(a), host_sets.set_of(b))
            kind, similarity, shared, prefixes = checked
            found.append(
                MirrorPair(
                    str(host_names[a]),
                    str(host_names[b]),
                    kind,
                    similarity,
                    shared,
                    url_similarity,
                    prefixes,
                )
            )
    return sorted(found, key=lambda m: (m.a, m.b))


Checked = tuple[str, float, int, tuple[str, str] | None]
"""``(kind, similarity, shared pages, prefixes)`` of a mirror pair found."""


@dataclass(frozen=True, slots=True)
class _Copies:
    """Each page's best copy on each other host: parallel arrays, one row per (page, host)."""

    page: I64Array
    partner: I64Array
    other: I64Array
    best: F64Array
    host_of: I64Array
    pages: I64Array

    def between(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        """The rows of the copies of ``a``'s pages on ``b``, and of ``b``'s on ``a``."""
        on = self.host_of[self.page]
        return (on == a) & (self.other == b), (on == b) & (self.other == a)

    def check(self, a: int, b: int, spec: MirrorSpec) -> Checked | None:
        """The thorough check of hosts ``a`` and ``b`` over all their pages."""
        a_to_b, b_to_a = self.between(a, b)
        judged = _judge(a_to_b, b_to_a, self.pages[a], self.pages[b], self.best, spec)
        return None if judged is None else (*judged, None)

    def check_directories(
        self, a: int, b: int, paths: Sequence[str], spec: MirrorSpec
    ) -> Checked | None:
        """The check over the pages under the pair of directories most copies share."""
        a_to_b, b_to_a = self.between(a, b)
        cut: dict[tuple[str, str], list[str]] = {}
        for row in np.flatnonzero(a_to_b | b_to_a).tolist():
            x, y = self.page[row], self.partner[row]
            if self.host_of[x] == b:
                x, y = y, x
            key = _directories(paths[x], paths[y])
            cut.setdefault(key, []).append(paths[x][len(key[0]) :])
        if not cut:
            return None
        prefix_a, prefix_b = min(cut, key=lambda key: (-len(cut[key]), key))
        # The copies' common leading directories belong to the mirrored directory on both.
        shared_dirs = _common_directories(cut[prefix_a, prefix_b])
        prefix_a, prefix_b = prefix_a + shared_dirs, prefix_b + shared_dirs
        prefixes = (prefix_a, prefix_b)
        if prefixes == ("/", "/"):
            return None  # the whole hosts, already checked
        under = np.array([_under(path, prefix_a) for path in paths], dtype=bool)
        under_b = np.array([_under(path, prefix_b) for path in paths], dtype=bool)
        on_a = self.host_of == a
        on_b = self.host_of == b
        under &= on_a
        under |= under_b & on_b
        inside = under[self.page] & under[self.partner]
        judged = _judge(
            a_to_b & inside,
            b_to_a & inside,
            int(np.count_nonzero(under & on_a)),
            int(np.count_nonzero(under & on_b)),
            self.best,
            spec,
        )
        return None if judged is None else (*judged, prefixes)


def _judge(
    a_to_b: np.ndarray,
    b_to_a: np.ndarray,
    pages_a: int,
    pages_b: int,
    best: F64Array,
    spec: MirrorSpec,
) -> tuple[str, float, int] | None:
    """``(kind, similarity, shared)`` of two page collections, or None if not mirrors.

    ``a_to_b`` marks the rows of the copies of ``a``'s pages in ``b`` (and ``b_to_a`` the other
    way); ``pages_a`` and ``pages_b`` count the collections' pages.
    """
    small_to_large, large_to_small, small, large = a_to_b, b_to_a, pages_a, pages_b
    if pages_b < pages_a:
        small_to_large, large_to_small, small, large = b_to_a, a_to_b, pages_b, pages_a
    shared = int(np.count_nonzero(small_to_large))
    if shared < spec.min_pages or shared < spec.min_coverage * small:
        return None
    similarity = float(best[small_to_large].sum()) / float(small)
    if np.count_nonzero(large_to_small) < spec.min_coverage * large:
        return "partial", similarity, shared
    edited = int(np.count_nonzero(best[small_to_large] < spec.unchanged))
    kind = "stale" if edited >= spec.stale_share * shared else "full"
    return kind, similarity, shared


def _under(path: str, prefix: str) -> bool:
    """Whether ``path`` lies in the directory ``prefix`` (``/a/`` holds ``/a``, its index)."""
    return path.startswith(prefix) or path == prefix[:-1]


def _common_directories(rests: Sequence[str]) -> str:
    """The leading directories (``"a/b/"``) all of ``rests`` lie in.

    A rest without a directory (``"click"``: the canonical URL of ``click/index.html``) may be
    the directory itself.
    """
    parts = [rest.split("/")[:-1] for rest in rests if "/" in rest]
    common: list[str] = []
    for segments in zip(*parts, strict=False):
        if len(set(segments)) != 1 or not segments[0]:
            break
        common.append(segments[0])
    while common:
        directory = "".join(f"{segment}/" for segment in common)
        if all(rest.startswith(directory) or rest == directory[:-1] for rest in rests):
            return directory
        common.pop()
    return ""


def _directories(path_a: str, path_b: str) -> tuple[str, str]:
    """The two paths less their longest common trailing segments, as directory prefixes."""
    a, b = path_a.strip("/").split("/"), path_b.strip("/").split("/")
    common = 0
    while common < min(len(a), len(b)) and a[len(a) - 1 - common] == b[len(b) - 1 - common]:
        common += 1
    head_a, head_b = a[: len(a) - common], b[: len(b) - common]
    return (
        "/" + "".join(f"{s}/" for s in head_a if s),
        "/" + "".join(f"{s}/" for s in head_b if s),
    )


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
