"""A realistic test crawl of mirror hosts, built from real HTML and written as WARC files.

The pages are the Sphinx documentation of four Debian packages (``data/web``): Click, Jinja,
ItsDangerous (three Pallets sites sharing one theme) and six. Each set is published on an origin
host, and copies of it on other hosts under other path layouts, with links rewritten and a mirror
banner added: full mirrors, a partial mirror (a subset of the pages) and a stale mirror (every
page, some of them edited as an older release would differ). The decoys are hosts that only share
the site generator (the other Pallets sites) or a few copied pages. Some pages are also crawled
under URL aliases: ``http`` and ``https``, ``index.html`` and ``/``, a session parameter. The
expected mirror pairs, with their kind, come with the crawl.

Used by ``tests/web`` and by ``bench/web.py`` (which builds crawls of hundreds of hosts).
"""

from __future__ import annotations

import io
import random
import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "data" / "web" / "debian-sphinx-docs.tar.xz"

SETS = ("click", "jinja2", "itsdangerous", "six")
"""The documentation sets, by the name of their Debian package ``python-NAME-doc``."""


@dataclass
class Crawl:
    """The pages written, and the truth about them."""

    files: list[Path]
    pages: dict[str, str] = field(default_factory=dict)
    """URL of every HTML page written -> the host it was published on."""
    mirrors: dict[tuple[str, str], str] = field(default_factory=dict)
    """Each expected mirror pair (hosts in sorted order) -> its kind."""
    hosts: dict[str, int] = field(default_factory=dict)
    """Host -> number of distinct pages it publishes (aliases not counted)."""
    copies: dict[str, str] = field(default_factory=dict)
    """URL of every page copied from another host -> the URL of its original."""
    edited: set[str] = field(default_factory=set)
    """The copies a stale mirror edited (the others are the original under a mirror's chrome)."""


def load_docs() -> dict[str, dict[str, str]]:
    """Each documentation set's pages: file name -> HTML."""
    docs: dict[str, dict[str, str]] = {name: {} for name in SETS}
    with tarfile.open(DOCS) as tar:
        for member in tar.getmembers():
            match = re.search(r"python-([a-z0-9]+)-doc/html/([^/]+\.html)$", member.name)
            if match and match.group(1) in docs:
                data = tar.extractfile(member)
                assert data is not None
                docs[match.group(1)][match.group(2)] = data.read().decode("utf-8")
    return docs


def banner(html: str, text: str) -> str:
    """The page with a mirror banner as the first thing in its body."""
    return re.sub(
        r"(<body[^>]*>)", rf'\1<div class="mirror-banner"><p>{text}</p></div>', html, count=1
    )


def edit(html: str, rng: random.Random) -> str:
    """The page as an older release might have had it: one paragraph in six missing, and a
    remark added to a quarter of the rest."""
    # Paragraphs without links: an edit of the wording leaves the page's links as they were.
    paragraphs = [m for m in re.finditer(r"<p>.*?</p>", html, re.S) if "<a " not in m.group(0)]
    if len(paragraphs) < 3:
        return re.sub(
            r"(<body[^>]*>)",
            r"\1<p>This page was rewritten for the next release.</p>",
            html,
            count=1,
        )
    drop = {m.start() for m in paragraphs[2::6]}
    out, last = [], 0
    for m in paragraphs:
        out.append(html[last : m.start()])
        if m.start() not in drop:
            words = m.group(0).split(" ")
            if rng.random() < 0.25 and len(words) > 6:
                words.insert(len(words) // 2, "(changed in an earlier release)")
            out.append(" ".join(words))
        last = m.end()
    out.append(html[last:])
    return "".join(out)


def relink(html: str, origin: str, host: str) -> str:
    """Absolute links to the origin host rewritten to point at the mirror."""
    return html.replace(f"https://{origin}/", f"https://{host}/")


class CrawlWriter:
    """Writes response records (with HTTP headers) to a WARC file, gzipped per record."""

    def __init__(self, path: Path) -> None:
        from warcio.statusandheaders import StatusAndHeaders
        from warcio.warcwriter import WARCWriter

        self._headers = StatusAndHeaders
        self._file = path.open("wb")
        self._writer = WARCWriter(self._file, gzip=True)
        self.count = 0

    def page(self, url: str, body: bytes, content_type: str = "text/html; charset=utf-8") -> None:
        headers = self._headers(
            "200 OK",
            [("Content-Type", content_type), ("Content-Length", str(len(body)))],
            protocol="HTTP/1.1",
        )
        date = f"2024-01-{1 + self.count % 28:02d}T{self.count % 24:02d}:00:00Z"
        record = self._writer.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(body),
            length=len(body),  # known: warcio then needs no spooled temporary copy
            http_headers=headers,
            warc_headers_dict={"WARC-Date": date},
        )
        self._writer.write_record(record)
        self.count += 1

    def close(self) -> None:
        self._file.close()


@dataclass(frozen=True)
class Site:
    """One host's copy of a documentation set."""

    host: str
    docs: str
    prefix: str
    role: str  # origin | full | partial | stale | copied
    origin: str


def plan(copies: int = 1) -> list[Site]:
    """The hosts of the crawl: ``copies`` rounds of mirrors per documentation set.

    With ``copies=1``: 4 origins, 2 full mirrors of Click (one with another path layout), a
    partial mirror of Jinja, a stale mirror of ItsDangerous, and a host with a few Click pages
    and of two other sets (not a mirror) — 9 hosts.
    """
    origins = {
        "click": Site("click.palletsprojects.example", "click", "/en/8.1.x/", "origin", ""),
        "jinja2": Site("jinja.palletsprojects.example", "jinja2", "/en/3.1.x/", "origin", ""),
        "itsdangerous": Site(
            "itsdangerous.palletsprojects.example", "itsdangerous", "/en/2.1.x/", "origin", ""
        ),
        "six": Site("six.readthedocs.example", "six", "/en/latest/", "origin", ""),
    }
    sites = list(origins.values())
    for n in range(copies):
        tag = "" if n == 0 else str(n + 1)
        click, jinja, its = origins["click"], origins["jinja2"], origins["itsdangerous"]
        sites += [
            Site(f"click-mirror{tag}.example.net", "click", "/docs/click/", "full", click.host),
            Site(f"www.click{tag}.example.org", "click", "/en/8.1.x/", "full", click.host),
            Site(f"jinja-partial{tag}.example.com", "jinja2", "/jinja/", "partial", jinja.host),
            Site(f"old-itsdangerous{tag}.example.com", "itsdangerous", "/", "stale", its.host),
            Site(f"blog{tag}.example.com", "click", "/notes/", "copied", click.host),
        ]
    return sites


def expected_mirrors(sites: list[Site]) -> dict[tuple[str, str], str]:
    """Every pair of hosts that are mirrors, with the kind neardup must report."""
    kinds: dict[tuple[str, str], str] = {}
    by_docs: dict[str, list[Site]] = {}
    for site in sites:
        if site.role != "copied":
            by_docs.setdefault(site.docs, []).append(site)
    for group in by_docs.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                roles = {a.role, b.role}
                if roles <= {"origin", "full"}:
                    kind = "full"
                elif roles in ({"origin", "partial"}, {"full", "partial"}):
                    kind = "partial"
                elif roles in ({"origin", "stale"}, {"full", "stale"}):
                    kind = "stale"
                else:  # two partial or two stale copies: their relation depends on the draw
                    continue
                kinds[(min(a.host, b.host), max(a.host, b.host))] = kind
    return kinds


def build_crawl(directory: Path, *, copies: int = 1, seed: int = 7, num_files: int = 2) -> Crawl:
    """Write the crawl as ``num_files`` WARC files in ``directory``; return them and the truth."""
    rng = random.Random(seed)
    docs = load_docs()
    sites = plan(copies)
    directory.mkdir(parents=True, exist_ok=True)
    files = [directory / f"crawl-{i:02d}.warc.gz" for i in range(num_files)]
    writers = [CrawlWriter(path) for path in files]
    crawl = Crawl(files=files, mirrors=expected_mirrors(sites))
    origins = {site.docs: site for site in sites if site.role == "origin"}
    for n, site in enumerate(sites):
        pages = dict(sorted(docs[site.docs].items()))
        if site.role == "partial":
            names = sorted(pages)
            keep = set(rng.sample(names, k=len(names) // 2))
            pages = {name: html for name, html in pages.items() if name in keep}
        if site.role == "copied":
            names = sorted(pages)
            copied = rng.sample(names, k=3)
            pages = {name: pages[name] for name in copied}
            for other, names in (
                ("six", ("index.html", "genindex.html")),
                ("itsdangerous", ("changes.html", "license.html")),
            ):
                pages.update({f"{other}-{name}": docs[other][name] for name in names})
        writer = writers[n % num_files]
        for name, original in pages.items():
            html = original
            url = f"https://{site.host}{site.prefix}{name}"
            if site.role != "origin":  # a copied page of another set is named SET-PAGE
                other, _, page = name.partition("-")
                origin = origins[other] if other in origins else origins[site.docs]
                page = page if other in origins else name
                crawl.copies[url] = f"https://{origin.host}{origin.prefix}{page}"
            if site.role in ("full", "partial", "stale"):
                html = relink(html, site.origin, site.host)
                html = banner(
                    html, f"This is a mirror of {site.origin}, kindly hosted by {site.host}."
                )
            if site.role == "stale" and rng.random() < 0.4:
                html = edit(html, rng)
                crawl.edited.add(url)
            writer.page(url, html.encode("utf-8"))
            crawl.pages[url] = site.host
            if site.role == "origin" and name == "index.html":
                for alias in (
                    f"https://{site.host}{site.prefix}",
                    f"http://{site.host.upper()}{site.prefix}index.html",
                    f"https://{site.host}{site.prefix}index.html?sessionid=a81f{n}",
                    f"https://{site.host}{site.prefix}index.html?sessionid=77c2{n}",
                ):
                    writer.page(alias, html.encode("utf-8"))
                    crawl.pages[alias] = site.host
        writer.page(
            f"https://{site.host}{site.prefix}_static/basic.css", b"body { margin: 0 }", "text/css"
        )
        crawl.hosts[site.host] = len(pages)
    for writer in writers:
        writer.close()
    return crawl
