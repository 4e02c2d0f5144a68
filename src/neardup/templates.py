"""Host templates: the shingles a web host repeats on most of its pages, left out of its pages.

A host's *template* is its chrome: navigation, footers, a theme's boilerplate, a mirror's
banner, the shingles found on at least half of its pages (:data:`TEMPLATE_SHARE`) and on at
least :data:`TEMPLATE_MIN_PAGES` of them. They say which site a page belongs to, not what it
holds: a short page and its mirrored copy share their words but not their chrome, and the chrome
can outweigh the words. ``neardup mirrors`` leaves them out of every page before comparing
(:func:`template_mask`); ``dedup --host-templates`` learns each host's template from the first
:data:`SAMPLE_PAGES` pages it serves (a first pass over the inputs) and compares each page's
normalised text without it (:class:`HostTemplates`).

A page's host is the host name of its id when that is an ``http(s)`` URL, as web archives give
it (their records' target URI); other records keep their text. Templates are learned on word
:data:`TEMPLATE_WORDS`-shingles, whatever shingles the run compares.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from urllib.parse import urlsplit

import numpy as np

from neardup._kernels.compiling import read_only
from neardup._kernels.spans import span_hashes
from neardup._parallel import in_blocks
from neardup._types import Batch, BoolArray, I64Array, U64Array
from neardup.errors import ParameterError
from neardup.io.records import RecordBatch
from neardup.params import NormalizeSpec
from neardup.text.lexicon import word_spans
from neardup.text.normalize import byte_word_table, codepoint_classes, normalize_bytes
from neardup.text.spans import byte_pieces, concat

__all__ = [
    "LEARN_SHINGLES",
    "SAMPLE_PAGES",
    "TEMPLATE_MIN_PAGES",
    "TEMPLATE_SHARE",
    "TEMPLATE_WORDS",
    "HostTemplates",
    "host_of",
    "template_mask",
]

TEMPLATE_SHARE = 0.5
"""A shingle on at least this share of a host's pages is of its template."""

TEMPLATE_MIN_PAGES = 3
"""... and on at least this many of them (two pages sharing a paragraph make no template)."""

SAMPLE_PAGES = 64
"""Pages of each host, the first in input order, that ``dedup`` learns its template from."""

TEMPLATE_WORDS = 4
"""Words per shingle of a template."""

_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


def host_of(record_id: str) -> str | None:
    """The host name of an ``http(s)`` URL id (lower case), else None.

    Examples
    --------
    >>> host_of("https://Docs.Example/en/api.html"), host_of("corpus.jsonl:4")
    ('docs.example', None)
    """
    if not record_id.startswith(("http://", "https://")):
        return None
    try:
        return urlsplit(record_id).hostname
    except ValueError:  # a malformed URL (e.g. an unclosed IPv6 bracket) has no host
        return None


def template_mask(hashes: U64Array, element_host: I64Array, pages: I64Array) -> BoolArray:
    """Which shingles are of their host's template.

    ``hashes``: the distinct shingles of each page, concatenated; ``element_host``: each
    shingle's host (its page's); ``pages``: each host's number of pages. A shingle is of the
    template when at least ``max(3, ceil(0.5 * pages))`` of its host's pages have it.

    Examples
    --------
    >>> hashes = np.array([7, 8, 7, 9, 7, 8], dtype=np.uint64)  # three pages of host 0
    >>> template_mask(hashes, np.zeros(6, dtype=np.int64), np.array([3])).tolist()
    [True, False, True, False, True, False]
    """
    if hashes.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    order = np.lexsort((hashes, element_host))
    h, x = element_host[order], hashes[order]
    starts = np.flatnonzero(np.r_[True, (h[1:] != h[:-1]) | (x[1:] != x[:-1])])
    runs = np.diff(np.r_[starts, h.shape[0]])
    needed = np.maximum(TEMPLATE_MIN_PAGES, np.ceil(TEMPLATE_SHARE * pages[h[starts]]))
    template = np.empty(h.shape[0], dtype=bool)
    template[order] = np.repeat(runs >= needed, runs)
    return template


def _host_key(host: str) -> np.uint64:
    """A stable 64-bit key of a host name (Python's own string hash changes per process)."""
    return np.uint64(int.from_bytes(hashlib.blake2b(host.encode(), digest_size=8).digest()))


@dataclass(frozen=True, slots=True)
class _Shingles:
    """The word shingles of a batch of normalised texts, each keyed with its page's host."""

    starts: I64Array
    ends: I64Array
    """Each word's bytes in the batch's buffer."""
    keys: U64Array
    """Per word: the key of the shingle starting there, mixed with the page's host."""
    valid: BoolArray
    """Per word: whether a whole shingle starts there (within its text, on a page of a host)."""
    doc: I64Array
    """Per word: its text."""


class _Tokens:
    """What reading words needs: the tables of ``normalize``'s tokenising."""

    def __init__(self, normalize: NormalizeSpec) -> None:
        self.classes = codepoint_classes()
        self.byte_words = byte_word_table(self.classes, normalize)
        self.strip_punctuation = normalize.strip_punctuation

    def shingles(self, normalized: Batch, hosts: U64Array, has_host: BoolArray) -> _Shingles:
        """The :data:`TEMPLATE_WORDS`-word shingles of ``normalized``, keyed with ``hosts``."""
        words = word_spans(normalized, self.classes, self.byte_words, self.strip_punctuation)
        counts = np.diff(words.offsets)
        doc = np.repeat(np.arange(counts.shape[0]), counts)
        keys = words.hashes.copy()
        n, k = keys.shape[0], TEMPLATE_WORDS
        with np.errstate(over="ignore"):
            for j in range(1, k):
                keys[: n - j] = keys[: n - j] * _MULTIPLIER ^ words.hashes[j:]
            keys ^= hosts[doc]
            keys *= _MULTIPLIER
        keys ^= keys >> np.uint64(29)
        place = np.arange(n) - words.offsets[doc]
        valid = (place + k <= counts[doc]) & has_host[doc]
        ends = words.starts + words.lengths
        return _Shingles(words.starts, ends, keys, valid, doc)


LEARN_SHINGLES = 1 << 23
"""Distinct shingles of sampled pages held at most while learning (128 MB)."""


class _Learning:
    """The pages sampled so far, by host, and the templates settled."""

    def __init__(self, sample_pages: int) -> None:
        self.sample_pages = sample_pages
        self.texts: dict[str, set[int]] = {}
        """Each host's sampled texts, by digest (a page under several URLs counts once)."""
        self.counted: dict[str, int] = {}
        """Each host's pages sampled in all (a host sampled afresh counts them all)."""
        self.settled: set[str] = set()
        self.sizes: dict[str, int] = {}
        self.found: list[U64Array] = []
        self._pages: list[U64Array] = []
        self._page_host: list[int] = []
        self._hosts: dict[str, int] = {}
        self._held = 0

    def wants(self, host: str | None) -> bool:
        """Whether a page of ``host`` may be sampled."""
        if host is None or host in self.settled:
            return False
        return len(self.texts.get(host, ())) < self.sample_pages

    def add(self, host: str, digest: int, page: U64Array) -> None:
        """Sample a page (its distinct shingles), unless its host is done or has its text."""
        texts = self.texts.setdefault(host, set())
        if not self.wants(host) or digest in texts:
            return
        texts.add(digest)
        self.counted[host] = self.counted.get(host, 0) + 1
        self._pages.append(page)
        self._page_host.append(self._hosts.setdefault(host, len(self._hosts)))
        self._held += page.shape[0]
        if self._held > LEARN_SHINGLES:
            self.settle()

    def settle(self) -> None:
        """The templates of the hosts sampled so far; they are sampled no further.

        A host with too few pages for a template yet (:data:`TEMPLATE_MIN_PAGES`) is sampled
        afresh from its next page on: in a crawl whose hosts interleave, most hosts have few
        pages at any one point.
        """
        names = list(self._hosts)
        if names:
            pages = np.array([len(self.texts[name]) for name in names], dtype=np.int64)
            sizes = np.array([page.shape[0] for page in self._pages], dtype=np.int64)
            hashes = np.concatenate(self._pages)
            element_host = np.repeat(np.array(self._page_host, dtype=np.int64), sizes)
            template = template_mask(hashes, element_host, pages)
            found, first = np.unique(hashes[template], return_index=True)
            per_host = np.bincount(element_host[template][first], minlength=len(names))
            self.sizes.update(
                {name: int(per_host[i]) for i, name in enumerate(names) if per_host[i]}
            )
            self.found.append(found)
        for name in names:
            if len(self.texts[name]) >= TEMPLATE_MIN_PAGES:
                self.settled.add(name)
            else:
                self.texts[name] = set()
        self._pages, self._page_host, self._hosts, self._held = [], [], {}, 0

    def keys(self) -> U64Array:
        """Every settled template's keys, sorted."""
        return np.sort(np.concatenate([np.empty(0, dtype=np.uint64), *self.found]))

    def sampled(self) -> dict[str, int]:
        """The distinct texts sampled of each host."""
        return dict(self.counted)


@dataclass(frozen=True)
class HostTemplates:
    """Each host's template, as the sorted keys of its shingles mixed with its host's.

    ``sampled``: the distinct page texts each host's template was learned from (a page
    crawled under several URLs counts once); ``sizes``: the shingles of each template.
    """

    normalize: NormalizeSpec
    keys: U64Array
    sampled: dict[str, int]
    sizes: dict[str, int] = field(default_factory=dict)
    sample_pages: int = SAMPLE_PAGES

    @classmethod
    def learn(
        cls,
        batches: Iterable[RecordBatch],
        normalize: NormalizeSpec,
        sample_pages: int = SAMPLE_PAGES,
    ) -> HostTemplates:
        """The templates of the hosts of ``batches``, from the first ``sample_pages`` of each.

        At most :data:`LEARN_SHINGLES` distinct shingles of sampled pages are held (16 bytes
        each); past that, the templates of the hosts sampled so far are settled, and those
        hosts sampled no further (one with fewer than three pages yet is sampled afresh).
        Where that happens depends on the pages alone, in input order, not on how they are
        batched.

        Raises
        ------
        ParameterError
            No record has an ``http(s)`` URL id: there is no host to learn a template of.
        """
        tokens = _Tokens(normalize)
        learning = _Learning(sample_pages)
        for batch in batches:
            hosts = [host_of(record_id) for record_id in batch.ids]
            wanted = np.array([learning.wants(host) for host in hosts], dtype=bool)
            if not wanted.any():
                continue
            normalized = normalize_bytes(batch.texts, normalize)
            digests = _digests(normalized).tolist()
            host_keys = _host_keys(hosts)
            for lo, hi in _pieces(normalized):
                shingles = tokens.shingles(
                    _part(normalized, lo, hi), host_keys[lo:hi], wanted[lo:hi]
                )
                at = np.flatnonzero(shingles.valid)
                keys, doc = shingles.keys[at], shingles.doc[at]
                order = np.lexsort((keys, doc))
                keys, doc = keys[order], doc[order]
                distinct = np.ones(keys.shape[0], dtype=bool)
                distinct[1:] = (keys[1:] != keys[:-1]) | (doc[1:] != doc[:-1])
                keys, doc = keys[distinct], doc[distinct]
                bounds = np.searchsorted(doc, np.arange(hi - lo + 1)).tolist()
                for i in np.flatnonzero(wanted[lo:hi]).tolist():
                    host = hosts[lo + i]
                    assert host is not None  # wanted
                    learning.add(host, digests[lo + i], keys[bounds[i] : bounds[i + 1]])
        learning.settle()
        if not learning.counted:
            raise ParameterError(
                "--host-templates learns each web host's template from records whose ids are "
                "http(s) URLs, and no record here has one: drop it, or take the ids from the "
                "records' URL field (--id-field)"
            )
        return cls(normalize, learning.keys(), learning.sampled(), learning.sizes, sample_pages)

    def strip(self, ids: Sequence[str], normalized: Batch) -> Batch:
        """The normalised texts without their hosts' templates.

        A text keeps the words no shingle of its host's template covers, a run of consecutive
        words as it was, one space between runs. A text of no known host, or one made of its
        template alone, is kept whole: with nothing of its own, the template is all that tells
        it apart.
        """
        hosts = [host_of(record_id) for record_id in ids]
        has_host = np.array([h is not None for h in hosts], dtype=bool)
        if not has_host.any() or self.keys.shape[0] == 0:
            return normalized
        tokens, host_keys = _Tokens(self.normalize), _host_keys(hosts)
        parts = [
            self._strip(tokens, _part(normalized, lo, hi), host_keys[lo:hi], has_host[lo:hi])
            for lo, hi in _pieces(normalized)
        ]
        return concat(parts)

    def _strip(
        self, tokens: _Tokens, normalized: Batch, host_keys: U64Array, has_host: BoolArray
    ) -> Batch:
        """:meth:`strip` of one piece of a batch."""
        shingles = tokens.shingles(normalized, host_keys, has_host)
        template = shingles.valid & np.isin(shingles.keys, self.keys)
        kept = ~_covered(template)
        num_docs = normalized.num_docs
        changed = np.bincount(shingles.doc[template], minlength=num_docs) > 0
        changed &= np.bincount(shingles.doc[kept], minlength=num_docs) > 0
        if not changed.any():
            return normalized
        return _runs_of_words(normalized, shingles, kept, ~changed)

    def describe(self) -> dict[str, object]:
        """The summary's ``host_templates`` section: hosts seen, with a template, its size."""
        sizes = list(self.sizes.values())
        return {
            "sample_pages": self.sample_pages,
            "hosts": len(self.sampled),
            "hosts_with_template": len(sizes),
            "template_shingles_median": float(np.median(sizes)) if sizes else 0.0,
            "pages_sampled": sum(self.sampled.values()),
        }


PIECE_BYTES = 1 << 21
"""Text read into words at once: their arrays take about 30 bytes a byte of text."""


def _pieces(texts: Batch) -> list[tuple[int, int]]:
    """Runs ``lo, hi`` of the texts, of about :data:`PIECE_BYTES` each."""
    bounds = byte_pieces(np.diff(texts.offsets), PIECE_BYTES)
    return [(lo, hi) for lo, hi in itertools.pairwise(bounds) if hi > lo]


def _part(texts: Batch, lo: int, hi: int) -> Batch:
    """Texts ``lo .. hi - 1``, in the same buffer."""
    return Batch(data=texts.data, offsets=texts.offsets[lo : hi + 1])


def _digests(texts: Batch) -> U64Array:
    """A 64-bit digest of each text's bytes."""
    out = np.empty((texts.num_docs, 2), dtype=np.uint64)
    in_blocks(partial(span_hashes, read_only(texts.data), texts.offsets, out), texts.num_docs)
    return out[:, 0]


def _host_keys(hosts: Sequence[str | None]) -> U64Array:
    """Each page's host key (0 for a page of no host)."""
    known: dict[str, np.uint64] = {}
    out = np.zeros(len(hosts), dtype=np.uint64)
    for doc, host in enumerate(hosts):
        if host is not None:
            if host not in known:
                known[host] = _host_key(host)
            out[doc] = known[host]
    return out


def _covered(shingles: BoolArray) -> BoolArray:
    """Per word: whether one of ``shingles`` (marked at their first word) covers it.

    A shingle lies within its text, so a word is covered only by shingles of its own text.
    """
    before: I64Array = np.concatenate([[0], np.cumsum(shingles, dtype=np.int64)])
    at = np.arange(shingles.shape[0])
    first = np.maximum(at - TEMPLATE_WORDS + 1, 0)
    return np.asarray(before[at + 1] - before[first] > 0)


def _runs_of_words(
    normalized: Batch, shingles: _Shingles, kept: BoolArray, whole: BoolArray
) -> Batch:
    """Each text as its runs of kept words joined by one space (``whole`` texts as they are)."""
    doc, num_docs = shingles.doc, normalized.num_docs
    previous_kept = np.r_[False, kept[:-1]] & (np.r_[-1, doc[:-1]] == doc)
    next_kept = np.r_[kept[1:], False] & (np.r_[doc[1:], -1] == doc)
    run_first = np.flatnonzero(kept & ~previous_kept & ~whole[doc])
    run_last = np.flatnonzero(kept & ~next_kept & ~whole[doc])
    starts = shingles.starts[run_first]
    ends = shingles.ends[run_last]
    run_doc = doc[run_first]
    whole_docs = np.flatnonzero(whole)
    starts = np.concatenate([starts, normalized.offsets[whole_docs]])
    ends = np.concatenate([ends, normalized.offsets[whole_docs + 1]])
    run_doc = np.concatenate([run_doc, whole_docs])
    order = np.lexsort((starts, run_doc))
    starts, ends, run_doc = starts[order], ends[order], run_doc[order]
    last_of_doc = np.r_[run_doc[1:] != run_doc[:-1], True]
    lengths = ends - starts
    sizes = lengths + ~last_of_doc  # a space after every run but a text's last
    offsets = np.zeros(num_docs + 1, dtype=np.int64)
    per_doc = np.bincount(run_doc, weights=sizes, minlength=num_docs).astype(np.int64)
    np.cumsum(per_doc, out=offsets[1:])
    out = np.full(int(offsets[-1]), ord(" "), dtype=np.uint8)
    placed = np.cumsum(sizes) - sizes
    within = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    out[np.repeat(placed, lengths) + within] = normalized.data[np.repeat(starts, lengths) + within]
    return Batch(data=out, offsets=offsets)
