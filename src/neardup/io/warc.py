"""Web archives in: the HTML responses of WARC and ARC files (plain or gzip), one page a document.

WARC is read by FastWARC (``fastwarc.warc.ArchiveIterator``): on the shared web archives and
on a 218 MB synthetic crawl it read records 2.7 times (``.warc.gz``) to 9 times (``.warc``)
faster than warcio (see ``docs/web.md``). FastWARC reads no ARC, so ARC files (the web
archives of 1996–2008) go through a small parser of neardup's own (:mod:`neardup.io.arc`);
the HTTP of both is decoded by :mod:`neardup.io.http_payloads`.

Every record counts in the numbering (``WebRecord.number``, 1-based), also those that are not
documents. Of the records:

- ``response`` and ``resource`` records are pages: the HTTP body, dechunked (a body that is
  not really chunked, as some crawlers store it, is kept as it is) and with its
  ``Content-Encoding`` (gzip, deflate, br) undone; the media type and charset come from the
  HTTP ``Content-Type`` header (a resource record's from the WARC one).
- ``revisit`` records are resolved to the payload they refer to: an earlier record with the
  same ``WARC-Payload-Digest``, or the one named by ``WARC-Refers-To`` or by
  ``WARC-Refers-To-Target-URI`` and ``WARC-Refers-To-Date``. Payloads are remembered in a
  :class:`PayloadCache` bounded in bytes (least recently used out); a revisit that cannot be
  resolved is counted and skipped, not an error.
- ``request``, ``metadata``, ``warcinfo`` (and ARC's ``filedesc``) records are not documents.
- Pages whose media type is not HTML (``text/html``, ``application/xhtml+xml``; without a
  type, a body that starts with ``<html`` or ``<!doctype html``) are skipped and counted.

``WARC-Payload-Digest`` is trusted as an exact-duplicate shortcut: a payload whose digest was
seen before is counted in :attr:`ArchiveStats.duplicate_payloads`, and :class:`WarcSource`
reuses the text it extracted the first time. ARC records (and WARC records without the header)
get the digest computed the way crawlers write it: ``sha1:`` and the base-32 SHA-1 of the HTTP
body as stored.

A gzip file whose members do not match the records (a file compressed whole, or a record split
over two members) is read all the same: the records are intact, only the byte offsets lose
their use for random access (a record's offset is then that of the member it starts in).
"""

from __future__ import annotations

import re
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neardup.errors import InputError, MissingExtraError, advice, remedy
from neardup.io.arc import arc_records
from neardup.io.archive_records import READ_ERRORS, BadRecord, BadRecordError, RawRecord
from neardup.io.compression import open_raw
from neardup.io.http_payloads import (
    clean_url,
    decode_body,
    http_headers,
    http_status,
    media_type,
    sha1_digest,
    split_http,
)
from neardup.io.source import Source, skip_advice
from neardup.params import ReadSpec

if TYPE_CHECKING:
    from neardup.params import HtmlExtract

__all__ = [
    "ArchiveStats",
    "PayloadCache",
    "WarcSource",
    "WebRecord",
    "archive_texts",
    "iter_web_records",
    "read_web_records",
]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
"""The media types read as HTML pages."""


PAYLOAD_CACHE_BYTES = 256 << 20
"""Bytes of payloads (and their texts) remembered for revisits and the digest shortcut."""


MAX_REFS = 1 << 20
"""Record ids and ``URI DATE`` keys remembered for revisits that name their original."""


_PAGE_TYPES = frozenset({"response", "resource", "revisit"})


_SNIFF = re.compile(
    rb"\s*(?:\xef\xbb\xbf)?\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html)", re.I | re.S
)


@dataclass(frozen=True, slots=True)
class WebRecord:
    """One page of a web archive.

    Attributes
    ----------
    url
        The ``WARC-Target-URI`` (ARC: the URL of the header line), without surrounding ``<>``
        and spaces; spaces inside it are written ``%20`` (as warcio writes them).
    date
        The ``WARC-Date`` as given (ISO 8601); ARC: its 14-digit date as ISO 8601
        (``2008-04-30T20:48:25Z``).
    kind
        ``"response"``, ``"resource"`` or ``"revisit"`` (resolved to the payload it refers to).
    content_type
        The payload's media type, lower case, without parameters (``"text/html"``); ``""``
        when none is given.
    charset
        The charset of the HTTP ``Content-Type`` header, if any.
    payload
        The HTTP body: dechunked, its ``Content-Encoding`` undone.
    payload_digest
        ``WARC-Payload-Digest`` (``"sha1:..."``); computed from the body as stored when the
        record has none (ARC records never do).
    number
        The record's 1-based number in its file (every record counts).
    offset
        The record's byte offset in the file (of its gzip member, for gzip files).
    """

    url: str
    date: str
    kind: str
    content_type: str
    charset: str | None
    payload: bytes
    payload_digest: str | None
    number: int
    offset: int


@dataclass
class ArchiveStats:
    """Counts of one pass over web archives (summed with ``+``).

    Attributes
    ----------
    records
        Every record read (documents or not).
    used
        Pages returned (HTML pages, unless ``html_only`` is off).
    non_html
        Pages skipped because they are not HTML.
    revisits
        Revisit records resolved to a payload and returned.
    unresolved_revisits
        Revisit records whose payload was not found (skipped).
    duplicate_payloads
        Returned pages whose payload digest was seen before in the pass.
    not_ok
        HTML responses whose HTTP status is not 2xx (redirects, errors), skipped: their body
        is not the page of their URL.
    bad
        Malformed records skipped (``skip_bad_records``).
    truncated
        Files whose reading ended at an unreadable tail (after a bad record that left no way to
        find the next one); their remaining records are lost.
    """

    records: int = 0
    used: int = 0
    non_html: int = 0
    revisits: int = 0
    unresolved_revisits: int = 0
    duplicate_payloads: int = 0
    not_ok: int = 0
    bad: int = 0
    truncated: int = 0

    def __add__(self, other: ArchiveStats) -> ArchiveStats:
        return ArchiveStats(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    def to_dict(self) -> dict[str, int]:
        """The counts by name."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(slots=True)
class _Payload:
    content_type: str
    charset: str | None
    payload: bytes | None  # None: not kept (not HTML while only HTML is read)
    texts: dict[str | None, str]


class PayloadCache:
    """Payloads by digest (and digests by record id and by URI + date), bounded in bytes.

    One cache serves every file of a run, so a revisit may refer to a record of an earlier
    file; :meth:`clear` it at the start of each pass, so that every pass resolves alike.
    Extracted texts are kept with their payload, by charset (:meth:`text`, :meth:`keep_text`).

    Parameters
    ----------
    max_bytes
        Bytes of payloads and texts kept; the least recently used go first.
    """

    def __init__(self, max_bytes: int = PAYLOAD_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._payloads: OrderedDict[str, _Payload] = OrderedDict()
        self._refs: OrderedDict[str, str] = OrderedDict()
        self._bytes = 0
        self.ids: set[str] = set()
        """Document ids given out in the current pass (:class:`WarcSource`)."""

    def clear(self) -> None:
        """Forget everything (a new pass)."""
        self._payloads.clear()
        self._refs.clear()
        self._bytes = 0
        self.ids.clear()

    def get(self, digest: str) -> _Payload | None:
        """The payload kept under ``digest`` (now the most recently used), if any."""
        entry = self._payloads.get(digest)
        if entry is not None:
            self._payloads.move_to_end(digest)
        return entry

    def put(self, digest: str, entry: _Payload, *refs: str) -> None:
        """Keep ``entry`` under ``digest`` (unless kept already) and ``refs`` as names of it."""
        for ref in refs:
            if ref:
                self._refs[ref] = digest
        while len(self._refs) > MAX_REFS:
            self._refs.popitem(last=False)
        old = self._payloads.get(digest)
        if old is not None and (old.payload is not None or entry.payload is None):
            return
        self._payloads[digest] = entry
        self._grow(len(entry.payload or b"") + 100)

    def resolve(self, ref: str) -> str | None:
        """The digest of the record that ``ref`` (a record id or ``URI DATE``) names."""
        return self._refs.get(ref)

    def text(self, digest: str | None, charset: str | None) -> str | None:
        """The text extracted before from the payload ``digest`` read with ``charset``."""
        entry = self._payloads.get(digest) if digest else None
        return None if entry is None else entry.texts.get(charset)

    def keep_text(self, digest: str | None, charset: str | None, text: str) -> None:
        """Remember the text extracted from the payload ``digest`` (if it is still kept)."""
        entry = self._payloads.get(digest) if digest else None
        if entry is not None and charset not in entry.texts:
            entry.texts[charset] = text
            self._grow(len(text))

    def _grow(self, size: int) -> None:
        self._bytes += size
        while self._bytes > self.max_bytes and len(self._payloads) > 1:
            _, old = self._payloads.popitem(last=False)
            self._bytes -= len(old.payload or b"") + 100 + sum(map(len, old.texts.values()))


def read_web_records(
    path: Path,
    *,
    html_only: bool = True,
    skip_bad_records: bool = False,
    stats: ArchiveStats | None = None,
    cache: PayloadCache | None = None,
) -> Iterator[WebRecord]:
    """The pages of one WARC or ARC file (plain or gzip), in file order.

    Parameters
    ----------
    path
        The file; its format is told by its first bytes, not by its name.
    html_only
        Return HTML pages with a 2xx status only (others are counted in ``stats.non_html``
        and ``stats.not_ok``); off: every
        response, resource and resolved revisit record.
    skip_bad_records
        Count malformed records in ``stats.bad`` and go on where the file allows, instead of
        raising.
    stats
        Counts to add this pass to (see :class:`ArchiveStats`).
    cache
        The payloads remembered for revisits and the digest shortcut; share one between the
        files of a run so revisits may refer to earlier files. A new one by default.

    Yields
    ------
    WebRecord
        Each page.

    Raises
    ------
    InputError
        The file is not a web archive, or a record is malformed (without
        ``skip_bad_records``): the message names the file, the record's number and byte
        offset, and what is wrong.
    MissingExtraError
        FastWARC is not installed (``pip install 'neardup[web]'``).
    """
    stats = stats if stats is not None else ArchiveStats()
    for item in iter_web_records(path, html_only=html_only, stats=stats, cache=cache):
        if isinstance(item, InputError):
            if not skip_bad_records:
                raise item
            continue
        yield item


def iter_web_records(
    path: Path,
    *,
    html_only: bool = True,
    stats: ArchiveStats,
    cache: PayloadCache | None = None,
) -> Iterator[WebRecord | InputError]:
    """As :func:`read_web_records`, with each malformed record as an InputError in its place.

    Bad records are counted in ``stats.bad``; the caller raises or skips them.
    """
    cache = cache if cache is not None else PayloadCache()
    head = _sniff(path)
    if head.startswith(b"filedesc://"):
        raw = arc_records(path)
    elif head.startswith(b"WARC/") or head.startswith(b"\x28\xb5\x2f\xfd"):
        raw = _warc_records(path)
    elif not head.strip():
        raise InputError("the web archive is empty; check the file", path=path)
    else:
        shown = head[:40].decode("latin-1").encode("unicode_escape").decode("ascii")
        raise InputError(
            f"not a WARC or ARC file: it starts with {shown!r} (a WARC file starts with "
            "'WARC/1.0', an ARC file with 'filedesc://')"
            + remedy("check the file", advice("--format", "name its format with --format")),
            path=path,
        )
    for item in raw:
        if isinstance(item, BadRecord):
            stats.bad += 1
            stats.truncated += item.fatal
            at = f" at byte {item.offset}" if item.offset >= 0 else ""
            message = f"record {item.number}{at}: {item.reason}"
            if item.fatal:
                message += " (the rest of the file cannot be read)"
            yield InputError(message + remedy(skip_advice()), path=path, line=item.number)
            continue
        stats.records += 1
        if item.kind not in _PAGE_TYPES:
            continue
        record = _resolve(item, cache, html_only, stats)
        if record is not None:
            stats.used += 1
            yield record


def _resolve(
    raw: RawRecord, cache: PayloadCache, html_only: bool, stats: ArchiveStats
) -> WebRecord | None:
    """The page of a raw record (None: skipped and counted), the cache updated."""
    content_type, charset, payload, digest = raw.content_type, raw.charset, raw.payload, raw.digest
    if raw.kind == "revisit":
        if html_only and content_type and content_type not in HTML_TYPES:
            stats.non_html += 1
            return None
        found = _original(raw, cache)
        if found is None or found[1].payload is None:
            if found is not None and html_only and found[1].content_type not in HTML_TYPES:
                stats.non_html += 1
            else:
                stats.unresolved_revisits += 1
            return None
        digest, original = found
        payload = original.payload
        content_type = content_type or original.content_type
        charset = charset or original.charset
    assert payload is not None
    if not content_type and _SNIFF.match(payload[:1024]):
        content_type = "text/html"
    is_html = content_type in HTML_TYPES
    is_ok = raw.status is None or 200 <= raw.status < 300
    if raw.kind != "revisit" and digest is not None:
        seen = cache.get(digest)
        returned = not html_only or (is_html and is_ok)
        if seen is not None and seen.payload is not None and returned:
            stats.duplicate_payloads += 1
        keep = payload if (is_html or not html_only) else None
        entry = _Payload(content_type, charset, keep, {})
        cache.put(digest, entry, raw.record_id, f"{raw.url} {raw.date}")
    if html_only and not is_html:
        stats.non_html += 1
        return None
    if html_only and not is_ok:
        stats.not_ok += 1  # a redirect or an error page is not the page of its URL
        return None
    if raw.kind == "revisit":
        stats.revisits += 1
    return WebRecord(
        url=raw.url,
        date=raw.date,
        kind=raw.kind,
        content_type=content_type,
        charset=charset,
        payload=payload,
        payload_digest=digest,
        number=raw.number,
        offset=raw.offset,
    )


def _original(raw: RawRecord, cache: PayloadCache) -> tuple[str, _Payload] | None:
    """The digest and payload a revisit refers to (by digest, record id, or URI and date)."""
    for digest in (
        raw.digest,
        *(cache.resolve(ref) for ref in (raw.refers_to, raw.refers_to_target) if ref),
    ):
        found = cache.get(digest) if digest else None
        if found is not None and digest is not None:
            return digest, found
    return None


def _sniff(path: Path) -> bytes:
    """The first bytes of the file's content (decompressed when it is gzip)."""
    with open_raw(path) as raw:
        head = raw.read(1 << 16)
    if head.startswith(b"\x1f\x8b"):
        try:
            head = zlib.decompressobj(31).decompress(head, 1 << 12)
        except zlib.error as exc:
            raise InputError(f"gzip data is corrupt ({exc}) at its start", path=path) from None
    return head.lstrip(b"\r\n")


def _fastwarc() -> Any:
    try:
        from fastwarc import warc
    except ImportError as exc:  # pragma: no cover - the test extras install it
        raise MissingExtraError(
            "reading WARC files needs FastWARC: pip install 'neardup[web]'"
        ) from exc
    return warc


def _warc_records(path: Path) -> Iterator[RawRecord | BadRecord]:
    """The records of a WARC file, read by FastWARC; a stream error ends the file."""
    warc = _fastwarc()
    number, offset = 0, 0
    with open_raw(path) as stream:
        records = iter(warc.ArchiveIterator(stream, parse_http=False))
        while True:
            try:
                record = next(records)
            except StopIteration:
                return
            except READ_ERRORS as exc:
                where = f" (after record {number} at byte {offset})" if number else ""
                yield BadRecord(
                    number + 1, -1, f"not a readable WARC record{where}: {exc}; the record "
                    "before it may have a wrong Content-Length, or the file is truncated or "
                    "garbled", fatal=True,
                )  # fmt: skip
                return
            number += 1
            offset = record.stream_pos
            try:
                yield _warc_record(record, number, offset)
            except BadRecordError as exc:
                yield BadRecord(number, offset, str(exc), exc.fatal)
                if exc.fatal:
                    return
            except READ_ERRORS as exc:
                yield BadRecord(number, offset, f"record cannot be read ({exc})", True)
                return


def _warc_record(record: Any, number: int, offset: int) -> RawRecord:
    """A WARC record as read: its block checked against its Content-Length, HTTP parsed."""
    headers = record.headers
    if not headers.get("WARC-Type"):
        raise BadRecordError("the record has no WARC-Type header (truncated or garbled)")
    kind = str(record.record_type)
    url = clean_url(headers.get("WARC-Target-URI") or "")
    raw = RawRecord(kind, url, headers.get("WARC-Date") or "", number, offset, "", None, None, None)
    if kind not in _PAGE_TYPES:
        return raw
    if not url:
        raise BadRecordError(f"{kind} record without a WARC-Target-URI")
    raw.record_id = headers.get("WARC-Record-ID") or ""
    raw.digest = headers.get("WARC-Payload-Digest") or None
    block: bytes = record.reader.read()
    declared = int(headers.get("Content-Length") or 0)
    if len(block) < declared:
        raise BadRecordError(
            f"the file ends {declared - len(block)} bytes into the record's {declared}-byte "
            "block (truncated)",
            fatal=True,
        )
    media, charset = media_type(headers.get("Content-Type"))
    http: dict[str, str] | None = None
    body = block
    if media == "application/http":
        if not block.startswith(b"HTTP/"):
            raise BadRecordError(f"the {kind} record's block is not an HTTP response")
        head, body = split_http(block)
        http = http_headers(head)
        raw.status = http_status(head)
        media, charset = media_type(http.get("content-type"))
    raw.content_type, raw.charset = media, charset
    if kind == "revisit":
        target = clean_url(headers.get("WARC-Refers-To-Target-URI") or "")
        refers_date = headers.get("WARC-Refers-To-Date") or ""
        raw.refers_to = headers.get("WARC-Refers-To") or ""
        raw.refers_to_target = f"{target} {refers_date}" if target else ""
        return raw
    raw.digest = raw.digest or sha1_digest(body)
    if http is not None:
        body = decode_body(body, http.get("transfer-encoding"), http.get("content-encoding"))
    raw.payload = body
    return raw


class WarcSource(Source):
    """One WARC or ARC file as documents: each HTML page's text, its target URI the id.

    A URI seen before in the pass (over every file of the run that shares the source's
    :attr:`cache`) gets ``URI@DATE``, and if that repeats too ``URI@DATE#N`` (N = 2, 3, ...),
    so ids are unique and the same in every pass. The text is
    :func:`neardup.text.html.html_text` of the payload, as ``options.html_extract`` says;
    a payload seen before (same digest and charset) reuses its text. :attr:`stats` holds the
    counts of the last pass over this file.
    """

    format = "warc"

    def __init__(
        self,
        path: Path,
        options: ReadSpec,
        label: str | None = None,
        cache: PayloadCache | None = None,
        first: bool = True,
    ) -> None:
        super().__init__(path, options, label)
        self.cache = cache if cache is not None else PayloadCache()
        """Shared by the sources of one run (:func:`~neardup.io.readers.open_sources`)."""
        self.first = first
        """Whether this is the run's first web archive (its pass clears the cache)."""
        self.stats = ArchiveStats()

    def _scan(self) -> Iterator[tuple[str, str, Any] | InputError]:
        if self.first:
            self.cache.clear()
        self.stats = ArchiveStats()
        ids = self.cache.ids
        extract = self.options.html_extract
        for item in archive_texts(self.path, extract, stats=self.stats, cache=self.cache):
            if isinstance(item, InputError):
                yield item
                continue
            record, text = item
            self.consumed = record.offset
            doc_id = record.url
            if doc_id in ids:
                doc_id = base = f"{record.url}@{record.date}"
                n = 1
                while doc_id in ids:
                    n += 1
                    doc_id = f"{base}#{n}"
            ids.add(doc_id)
            yield doc_id, text, (doc_id, text)
        self.consumed = self.size


def archive_texts(
    path: Path,
    extract: HtmlExtract = "text",
    *,
    stats: ArchiveStats | None = None,
    cache: PayloadCache | None = None,
) -> Iterator[tuple[WebRecord, str] | InputError]:
    """Each HTML page of a web archive with its text, or an InputError for a bad record.

    The text is :func:`neardup.text.html.html_text` of the payload, as ``extract`` says; a
    payload seen before (same digest and charset, still in ``cache``) reuses its text.
    """
    from neardup.text.html import html_text

    stats = stats if stats is not None else ArchiveStats()
    cache = cache if cache is not None else PayloadCache()
    for item in iter_web_records(path, stats=stats, cache=cache):
        if isinstance(item, InputError):
            yield item
            continue
        text = cache.text(item.payload_digest, item.charset)
        if text is None:
            text = html_text(item.payload, charset=item.charset, url=item.url, extract=extract)
            cache.keep_text(item.payload_digest, item.charset, text)
        yield item, text
