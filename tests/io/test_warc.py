"""Web archives in: WARC and ARC files against warcio's view, revisits, digests and broken files."""

from __future__ import annotations

import gzip
import io
import json
import re
import uuid
import zlib
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup import DedupConfig, InputError, dedup_files
from neardup.cli.main import cli
from neardup.io.readers import open_sources
from neardup.io.warc import ArchiveStats, WarcSource, read_web_records
from neardup.params import ReadSpec
from tests.conftest import SHARED_DATA, shared

warcio = pytest.importorskip("warcio")
from warcio.archiveiterator import ArchiveIterator  # noqa: E402

WEB = "web_archives"
SMALL = f"{WEB}/ukwa_webarchive_test_suite/small-arcs-and-warcs"
IAH = f"{SMALL}/IAH-20080430204825-00000-blackbook-truncated"
PYWB = f"{WEB}/pywb_sample_archive"
WARCIO = f"{WEB}/warcio_test_data"
BROKEN = ("bad.arc", "example-trunc.warc")
"""The deliberately broken files of the shared data."""
REGROUPED = ("example-bad-non-chunked.warc.gz", "example-wrong-chunks.warc.gz",
             "example-bad.warc.gz.bad")  # fmt: skip
"""Intact records in gzip members that do not match them (warcio refuses these; we read them)."""


def _good_archives() -> list[Path]:
    root = SHARED_DATA / WEB
    if not root.exists():
        return []
    found = sorted(p for p in root.rglob("*") if re.search(r"\.w?arc(\.gz)?$", p.name))
    return [p for p in found if p.name not in BROKEN + REGROUPED]


def _warcio_view(stream: io.BufferedIOBase | io.BytesIO) -> list[tuple[int, int, str, bytes]]:
    """``(number, offset, url, payload)`` of every response/resource record, as warcio reads it."""
    records = []
    iterator = ArchiveIterator(stream, arc2warc=True)
    for number, record in enumerate(iterator, 1):
        if record.rec_type in ("response", "resource"):
            url = record.rec_headers.get_header("WARC-Target-URI")
            payload = record.content_stream().read()  # before the offset, which reads to the end
            records.append((number, iterator.get_record_offset(), url, payload))
    return records


@pytest.mark.parametrize("path", _good_archives(), ids=lambda p: p.name)
def test_pages_are_warcios_pages(path: Path) -> None:
    """Same records, numbers, offsets, URLs and payload bytes (dechunked, decoded) as warcio."""
    with path.open("rb") as stream:
        expected = _warcio_view(stream)
    stats = ArchiveStats()
    ours = [
        (r.number, r.offset, r.url, r.payload)
        for r in read_web_records(path, html_only=False, stats=stats)
        if r.kind != "revisit"
    ]
    assert ours == expected
    assert stats.bad == 0


def test_the_shared_data_is_there() -> None:
    shared(WEB)
    assert len(_good_archives()) >= 20


@pytest.mark.parametrize("name", REGROUPED)
def test_gzip_members_that_do_not_match_records_are_read(name: str) -> None:
    """A whole-file gzip, or a record split over two members: the records are intact."""
    path = shared(f"{WARCIO}/{name}")
    data = path.read_bytes()
    plain = b""
    while data:  # every member, however the records lie in them
        member = zlib.decompressobj(31)
        plain += member.decompress(data)
        data = member.unused_data
    expected = [(url, payload) for _, _, url, payload in _warcio_view(io.BytesIO(plain))]
    records = read_web_records(path, html_only=False)
    ours = [(r.url, r.payload) for r in records if r.kind != "revisit"]
    assert ours == expected != []


def test_arc_and_warc_copies_of_one_crawl_give_the_same_documents() -> None:
    documents = {}
    digests = {}
    for suffix in ("arc", "arc.gz", "warc", "warc.gz"):
        path = shared(f"{IAH}.{suffix}")
        (source,) = open_sources([path], ReadSpec())
        documents[suffix] = list(source.records())
        digests[suffix] = [r.payload_digest for r in read_web_records(path)]
    assert [doc_id for doc_id, _ in documents["warc"]] == [
        "http://www.archive.org/",
        "http://www.archive.org/index.php",
    ]
    assert all(text for _, text in documents["warc"])
    assert documents["arc"] == documents["arc.gz"] == documents["warc"] == documents["warc.gz"]
    # ARC records carry no digest: the one computed is the one the WARC copy was written with.
    assert digests["arc"] == digests["warc"] == digests["warc.gz"]


def _cdx(name: str) -> list[list[str]]:
    """The rows of a pywb CDX file: urlkey, timestamp, url, mime, status, digest, ..., offset."""
    lines = shared(f"{PYWB}/{name}").read_text().splitlines()
    return [line.split() for line in lines[1:]]


def test_iana_pages_are_the_cdx_html_captures_in_file_order() -> None:
    """Pages, offsets and digests against the CDX index written by pywb; counts against warcio."""
    path = shared(f"{PYWB}/iana.warc.gz")
    html = [row for row in _cdx("iana.cdx") if row[3] == "text/html"]
    captures = sorted((int(row[9]), row[2], row[5]) for row in html if row[4].startswith("2"))
    stats = ArchiveStats()
    pages = list(read_web_records(path, stats=stats))
    assert [(r.offset, r.url, r.payload_digest) for r in pages] == [
        (offset, url, f"sha1:{digest}") for offset, url, digest in captures
    ]
    # Redirects (301, 302) are not the pages of their URLs: skipped and counted.
    assert stats.not_ok == len(html) - len(captures) > 0
    digest_repeats = len(captures) - len({digest for *_, digest in captures})
    assert stats.duplicate_payloads == digest_repeats
    with path.open("rb") as stream:
        kinds = Counter(
            (r.rec_type, (r.http_headers.get_header("Content-Type") or "").split(";")[0])
            for r in ArchiveIterator(stream)
            if r.rec_type in ("response", "revisit")
        )
    not_html = sum(n for (_, media), n in kinds.items() if media != "text/html")
    assert stats.non_html == not_html > 100
    assert stats.records == 343
    assert stats.used == len(pages) == len(captures)
    assert stats.revisits == stats.unresolved_revisits == 0  # iana's revisits are all non-HTML


def test_revisits_are_resolved_to_their_payload() -> None:
    path = shared(f"{WARCIO}/example.warc.gz")
    with path.open("rb") as stream:
        original = [p for *_, p in _warcio_view(stream)]
    stats = ArchiveStats()
    pages = list(read_web_records(path, stats=stats))
    assert [r.kind for r in pages] == ["response", "revisit"]
    assert pages[1].payload == pages[0].payload == original[0]
    assert stats.revisits == 1


def test_a_revisit_may_refer_to_an_earlier_file_of_the_run() -> None:
    orig, revisit = (
        shared(f"{PYWB}/example-url-agnostic-{n}.warc.gz") for n in ("orig", "revisit")
    )
    alone = ArchiveStats()
    assert list(read_web_records(revisit, stats=alone)) == []
    assert alone.unresolved_revisits == 1
    sources = open_sources([orig, revisit], ReadSpec())
    documents = [doc for source in sources for doc in source.records()]
    assert [doc_id for doc_id, _ in documents] == [
        "http://example.iana.org/",
        "http://test@example.com/",
    ]
    assert documents[0][1] == documents[1][1] != ""
    stats = [s.stats for s in sources if isinstance(s, WarcSource)]
    assert stats[1].revisits == 1
    assert stats[1].unresolved_revisits == 0


def test_dupes_revisits_are_counted() -> None:
    path = shared(f"{PYWB}/dupes.warc.gz")
    with path.open("rb") as stream:
        kinds = Counter(
            (r.rec_type, r.http_headers.get_header("Content-Type", "").startswith("text/html"))
            for r in ArchiveIterator(stream)
            if r.rec_type in ("response", "revisit")
        )
    stats = ArchiveStats()
    pages = list(read_web_records(path, stats=stats))
    # example.com's revisit refers to the response in the file; iana.org's to another crawl.
    assert stats.revisits + stats.unresolved_revisits == kinds["revisit", True] == 2
    assert stats.revisits == 1
    assert stats.non_html == kinds["revisit", False] + kinds["response", False]
    assert [r.url for r in pages if r.kind == "revisit"] == ["http://example.com"]


def test_a_duplicate_payload_reuses_its_text(tmp_path: Path) -> None:
    """The test crawl holds pages under several URLs (aliases); equal digests, equal texts."""
    from tests.web.sitegen import build_crawl

    (path,) = build_crawl(tmp_path / "crawl", num_files=1).files
    (source,) = open_sources([path], ReadSpec())
    assert isinstance(source, WarcSource)
    texts = dict(source.records())
    records = list(read_web_records(path))
    by_digest: dict[str | None, set[str]] = {}
    for record in records:
        by_digest.setdefault(record.payload_digest, set()).add(texts[record.url])
    assert all(len(group) == 1 for group in by_digest.values())
    assert source.stats.duplicate_payloads == len(records) - len(by_digest) > 0


# --------------------------------------------------------------------------- broken files


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _record(kind: str, url: str, date: str, media: str, block: bytes) -> bytes:
    """One WARC record, as the WARC 1.0 standard lays it out."""
    headers = [
        "WARC/1.0",
        f"WARC-Type: {kind}",
        f"WARC-Record-ID: <urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, url + date + kind)}>",
        f"WARC-Target-URI: {url}",
        f"WARC-Date: {date}",
        *([f"Content-Type: {media}"] if media else []),
        f"Content-Length: {len(block)}",
    ]
    return "\r\n".join(headers).encode() + b"\r\n\r\n" + block + b"\r\n\r\n"


def _warc(records: list[tuple[str, str, bytes]], gz: bool = True) -> bytes:
    """A WARC of HTML responses ``(url, date, html)``, each record its own gzip member."""
    out = b""
    for url, date, html in records:
        http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + html
        record = _record("response", url, date, "application/http; msgtype=response", http)
        out += gzip.compress(record) if gz else record
    return out


PAGES = [
    ("http://a.example/", "2020-01-01T00:00:00Z", b"<html><body><p>first page</p></body></html>"),
    ("http://b.example/", "2020-01-01T00:00:00Z", b"<html><body><p>second page</p></body></html>"),
    ("http://c.example/", "2020-01-01T00:00:00Z", b"<html><body><p>third page</p></body></html>"),
]


def _truncated_gzip(tmp: Path) -> tuple[Path, int]:
    data = _warc(PAGES)
    return _write(tmp / "cut.warc.gz", data[: len(data) - 40]), 3


def _garbled_header(tmp: Path) -> tuple[Path, int]:
    data = _warc(PAGES, gz=False)
    third = data.index(b"WARC/1.0", data.index(b"http://b.example/"))
    return _write(tmp / "garbled.warc", data[:third] + b"XXXX" + data[third + 4 :]), 3


def _no_target_uri(tmp: Path) -> tuple[Path, int]:
    data = _warc(PAGES, gz=False).replace(b"WARC-Target-URI: http://b.example/\r\n", b"")
    return _write(tmp / "nouri.warc", data), 2


def _arc_cut_short(tmp: Path) -> tuple[Path, int]:
    data = shared(f"{IAH}.arc").read_bytes()
    return _write(tmp / "short.arc", data[:4000]), 5


def _arc_bad_length(tmp: Path) -> tuple[Path, int]:
    data = shared(f"{WARCIO}/example.arc").read_bytes()
    header = re.search(rb"\nhttp://example.com/ \S+ \d+ text/html (\d+)\n", data)
    assert header is not None
    return _write(tmp / "length.arc", data.replace(header.group(1), b"12x", 1)), 2


CASES = {
    "bad.arc": (lambda tmp: (shared(f"{WARCIO}/bad.arc"), 1), "length '-1'", 3),
    "example-trunc.warc": (lambda tmp: (shared(f"{WARCIO}/example-trunc.warc"), 4),
                           "Content-Length", 1),
    "truncated gzip": (_truncated_gzip, "", 1),
    "garbled header": (_garbled_header, "not a readable WARC record", 1),
    "no target URI": (_no_target_uri, "without a WARC-Target-URI", 1),
    "ARC cut short": (_arc_cut_short, "truncated", 1),
    "ARC bad length": (_arc_bad_length, "length '12x'", 1),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_a_broken_record_gives_one_line_naming_file_and_record(case: str, tmp_path: Path) -> None:
    make, reason, bad = CASES[case]
    path, number = make(tmp_path)
    with pytest.raises(InputError) as error:
        list(read_web_records(path))
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:{number}: record {number}")
    assert reason in message
    assert "--skip-bad-records" in message
    assert error.value.line == number
    stats = ArchiveStats()
    list(read_web_records(path, skip_bad_records=True, stats=stats))
    assert stats.bad == bad


def test_skipping_a_bad_record_goes_on_to_the_next(tmp_path: Path) -> None:
    path, _ = _no_target_uri(tmp_path)
    stats = ArchiveStats()
    urls = [r.url for r in read_web_records(path, skip_bad_records=True, stats=stats)]
    assert urls == ["http://a.example/", "http://c.example/"]
    assert (stats.bad, stats.truncated) == (1, 0)
    path, _ = _garbled_header(tmp_path)
    stats = ArchiveStats()
    urls = [r.url for r in read_web_records(path, skip_bad_records=True, stats=stats)]
    assert urls == ["http://a.example/", "http://b.example/"]
    assert (stats.bad, stats.truncated) == (1, 1)


def test_a_file_that_is_not_a_web_archive_gives_one_clear_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "crawl.warc", b'{"id": "a", "text": "not a crawl"}\n')
    with pytest.raises(InputError, match=r"crawl\.warc: not a WARC or ARC file: it starts with"):
        list(read_web_records(path, skip_bad_records=True))
    gz = _write(tmp_path / "crawl.warc.gz", gzip.compress(b"hello world\n"))
    with pytest.raises(InputError, match="not a WARC or ARC file"):
        list(read_web_records(gz))
    empty = _write(tmp_path / "empty.arc", b"")
    with pytest.raises(InputError, match=r"empty\.arc: the web archive is empty"):
        list(read_web_records(empty))


def test_bad_records_through_the_source_are_counted(tmp_path: Path) -> None:
    path, _ = _no_target_uri(tmp_path)
    (source,) = open_sources([path], ReadSpec(skip_bad_records=True))
    assert [doc_id for doc_id, _ in source.records()] == ["http://a.example/", "http://c.example/"]
    assert (source.num_bad, source.bad_lines) == (1, [2])


# --------------------------------------------------------------------------- documents


def test_repeated_uris_get_unique_ids(tmp_path: Path) -> None:
    url = "http://a.example/"
    pages = [
        (url, "2020-01-01T00:00:00Z", b"<p>one</p>"),
        (url, "2020-01-02T00:00:00Z", b"<p>two</p>"),
        (url, "2020-01-02T00:00:00Z", b"<p>three</p>"),
        (url, "2020-01-02T00:00:00Z", b"<p>four</p>"),
    ]
    path = _write(tmp_path / "repeat.warc.gz", _warc(pages))
    (source,) = open_sources([path], ReadSpec())
    first = list(source.records())
    assert first == [
        (url, "one"),
        (f"{url}@2020-01-02T00:00:00Z", "two"),
        (f"{url}@2020-01-02T00:00:00Z#2", "three"),
        (f"{url}@2020-01-02T00:00:00Z#3", "four"),
    ]
    assert list(source.records()) == first  # every pass names them alike


def test_html_is_sniffed_without_a_content_type_and_other_types_are_counted(tmp_path: Path) -> None:
    out = b""
    for url, body, media in [
        ("http://a.example/", b"  <!DOCTYPE html><p>sniffed</p>", ""),
        ("http://b.example/", b"body { color: red }", "text/css"),
        ("http://c.example/", b"<?xml version='1.0'?><html xmlns='x'><p>xhtml</p></html>",
         "application/xhtml+xml"),
    ]:  # fmt: skip
        out += gzip.compress(_record("resource", url, "2020-01-01T00:00:00Z", media, body))
    path = _write(tmp_path / "types.warc.gz", out)
    stats = ArchiveStats()
    pages = list(read_web_records(path, stats=stats))
    assert [(r.url, r.content_type) for r in pages] == [
        ("http://a.example/", "text/html"),
        ("http://c.example/", "application/xhtml+xml"),
    ]
    assert stats.non_html == 1


def test_dedup_of_a_warc_end_to_end(tmp_path: Path) -> None:
    """Ids are the target URIs; equal payloads (CDX digests) are equal texts; kept is JSONL."""
    path = shared(f"{PYWB}/iana.warc.gz")
    result = dedup_files([path], tmp_path / "out", DedupConfig())
    captures = sorted(
        (int(row[9]), row[2], row[5])
        for row in _cdx("iana.cdx")
        if row[3] == "text/html" and row[4].startswith("2")
    )
    assert list(result.ids) == [url for _, url, _ in captures]
    kept = [json.loads(line) for line in (tmp_path / "out" / "kept.jsonl").read_text().splitlines()]
    (source,) = open_sources([path], ReadSpec())
    texts = dict(source.records())
    by_digest: dict[str, set[str]] = {}
    for _, url, digest in captures:
        by_digest.setdefault(digest, set()).add(texts[url])
    assert all(len(group) == 1 for group in by_digest.values())
    # Exact duplicates are the pages of equal, non-empty text. The two 302 pages of
    # /about/performance/ (different bytes, same "moved" text) are redirects: not documents.
    assert "http://www.iana.org/about/performance/ietf-statistics" not in set(result.ids)
    a, b = result.exact_pairs
    exact = {(result.ids[int(x)], result.ids[int(y)]) for x, y in zip(a, b, strict=True)}
    order = [url for _, url, _ in captures]
    same_text = {
        (u, v)
        for i, u in enumerate(order)
        for v in order[i + 1 :]
        if texts[u] == texts[v] and texts[u].strip()
    }
    assert exact == same_text
    assert [r["id"] for r in kept] == [
        u for u in order if u != "http://www.iana.org/about/performance/ietf-draft-status"
    ]
    assert all(set(r) == {"id", "text"} and r["text"] == texts[r["id"]] for r in kept)


# --------------------------------------------------------------------------- compare


def _compare(*args: object) -> dict[str, object]:
    done = CliRunner().invoke(cli, ["compare", *map(str, args), "--json"])
    assert done.exit_code == 0, done.output
    result: dict[str, object] = json.loads(done.output)
    return result


def test_compare_reads_html_files_as_their_visible_text(tmp_path: Path) -> None:
    words = "the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat"
    html = (
        "<!doctype html><html><head><title>A</title><style>p { color: red }</style>"
        "<script>var hidden = 'script words never count';</script></head>"
        f"<body><p>{words}</p><!-- a comment --></body></html>"
    )
    page = _write(tmp_path / "page.html", html.encode())
    text = _write(tmp_path / "page.txt", words.encode())  # the title is not page text
    other = _write(tmp_path / "other.htm", html.replace("lazy dog", "sleepy bear").encode())
    assert _compare(page, text)["jaccard"] == 1.0
    assert 0.3 < float(str(_compare(page, other)["jaccard"])) < 1.0


def test_compare_picks_a_page_of_a_web_archive(tmp_path: Path) -> None:
    path = shared(f"{PYWB}/iana.warc.gz")
    url = "https://www.iana.org/dnssec"
    with path.open("rb") as stream:
        payload = next(p for _, _, u, p in _warcio_view(stream) if u == url)
    page = _write(tmp_path / "dnssec.html", payload)
    assert _compare(path, page, "--url-a", url)["jaccard"] == 1.0
    assert float(str(_compare(path, page)["jaccard"])) < 0.5  # the first page is the home page
    done = CliRunner().invoke(cli, ["compare", str(path), str(page), "--url-a", "http://nope/"])
    assert isinstance(done.exception, InputError)
    assert "no HTML page with the target URI 'http://nope/'" in str(done.exception)
