"""A crawl's pages in memory: URL, host, text and out-links, read from archives or tables.

Web archives (WARC/ARC) give each HTML response; JSON Lines, Parquet and CSV give one page per
record, its URL in ``url_field`` and its HTML in ``html_field`` (links are then read from the
HTML) or its text in ``text_field`` (no links). The mirror analysis needs every page's text and
links at once, so a crawl is held in memory: about the size of its extracted text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from neardup.errors import InputError, ParameterError
from neardup.io.html_field import naming_the_html_field
from neardup.io.readers import detect_format, open_sources
from neardup.io.warc import ArchiveStats, PayloadCache, read_web_records
from neardup.params import HtmlExtract, ReadSpec
from neardup.text.html import parse_page

__all__ = ["Crawl", "read_crawl"]


@dataclass
class Crawl:
    """The pages of a crawl: the web archives' in input order, then the tables'.

    Attributes
    ----------
    urls, texts
        Each page's URL as crawled, and its text.
    links
        Each page's out-links: absolute URLs in document order (empty without HTML).
    stats
        Web archives only: records read, skipped and resolved, summed over the files.
    num_bad
        Records skipped as malformed (with ``skip_bad_records``).
    """

    urls: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    links: list[tuple[str, ...]] = field(default_factory=list)
    stats: ArchiveStats = field(default_factory=ArchiveStats)
    num_bad: int = 0

    def __len__(self) -> int:
        return len(self.urls)

    def add(self, url: str, text: str, links: tuple[str, ...] = ()) -> None:
        """Append one page."""
        self.urls.append(url)
        self.texts.append(text)
        self.links.append(links)


def read_crawl(
    inputs: Sequence[Path | str],
    *,
    url_field: str | None = None,
    html_field: str | None = None,
    text_field: str | None = None,
    extract: HtmlExtract = "text",
    skip_bad_records: bool = False,
    progress: Callable[[int], object] | None = None,
) -> Crawl:
    """Read every page of ``inputs``: web archives, or tables naming the URL and HTML/text fields.

    ``progress`` is told the pages read so far, page by page.

    Raises
    ------
    ParameterError
        A table input without ``url_field``, or without exactly one of ``html_field`` and
        ``text_field``.
    InputError
        A malformed record (unless ``skip_bad_records``), or no page at all.
    """
    crawl = Crawl()
    paths = [Path(p) for p in inputs]
    for path in paths:
        if not path.exists():
            raise InputError("no such file or directory; check the path", path=path)
    archives = [p for p in paths if detect_format(p) == "warc"]
    tables = [p for p in paths if p not in archives]
    cache = PayloadCache()  # revisits may refer to payloads of earlier files
    for path in archives:
        stats = ArchiveStats()
        records = read_web_records(
            path, skip_bad_records=skip_bad_records, stats=stats, cache=cache
        )
        for record in records:
            page = parse_page(
                record.payload, charset=record.charset, url=record.url, extract=extract
            )
            crawl.add(record.url, page.text, page.links)
            if progress is not None:
                progress(len(crawl))
        crawl.stats += stats
        crawl.num_bad += stats.bad
    if tables:
        _read_tables(
            crawl, tables, url_field, html_field, text_field, extract, skip_bad_records, progress
        )
    if not crawl.urls:
        raise InputError(
            "no HTML page found in the inputs; a crawl needs WARC/ARC files with HTML "
            "responses, or tables with --url-field and --html-field (or --text-field)"
        )
    return crawl


def _read_tables(
    crawl: Crawl,
    paths: Sequence[Path],
    url_field: str | None,
    html_field: str | None,
    text_field: str | None,
    extract: HtmlExtract,
    skip_bad_records: bool,
    progress: Callable[[int], object] | None,
) -> None:
    if url_field is None or (html_field is None) == (text_field is None):
        raise ParameterError(
            f"{paths[0]}: a table of pages needs --url-field and one of --html-field or "
            "--text-field"
        )
    field_name = html_field if html_field is not None else text_field
    assert field_name is not None
    options = ReadSpec(text_field=field_name, id_field=url_field, skip_bad_records=skip_bad_records)
    for source in open_sources(paths, options):
        try:
            for url, body in source.records():
                if html_field is None:
                    crawl.add(url, body)
                else:
                    page = parse_page(body, url=url, extract=extract)
                    crawl.add(url, page.text, page.links)
                if progress is not None:
                    progress(len(crawl))
        except InputError as exc:
            raise (exc if html_field is None else naming_the_html_field(exc)) from None
        crawl.num_bad += source.num_bad
