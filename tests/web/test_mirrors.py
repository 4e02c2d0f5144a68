"""Mirror hosts on a crawl built from real HTML (four Debian Sphinx doc sets), end to end.

The crawl (tests/web/sitegen.py) publishes Click on three hosts (two full mirrors, one of them
under another path layout), Jinja on an origin and a partial mirror, ItsDangerous on an origin
and a stale mirror, six alone, and a host with a few pages copied from three sets. Every
expected mirror pair must be found with its kind, and no other pair: the three Pallets sites
share their Sphinx theme, search and index pages, and the copied pages are only a few.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from neardup.jobs.mirrors import mirrors_files
from tests.integration.conftest import NEARDUP, run
from tests.web.sitegen import Crawl, CrawlWriter, banner, build_crawl, load_docs


@pytest.fixture
def installed() -> None:
    if not NEARDUP.exists():
        pytest.skip(f"the neardup command is not installed: {NEARDUP}")


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Crawl:
    return build_crawl(tmp_path_factory.mktemp("crawl"))


@pytest.fixture(scope="module")
def result(crawl: Crawl, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mirrors") / "out"
    mirrors_files(crawl.files, out)
    return out


def _jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_mirror_pair_found_with_its_kind_and_no_decoy(crawl: Crawl, result: Path) -> None:
    found = {(m["a"], m["b"]): m["kind"] for m in _jsonl(result / "mirrors.jsonl")}
    assert found == crawl.mirrors


def test_mirror_records_are_consistent(crawl: Crawl, result: Path) -> None:
    for m in _jsonl(result / "mirrors.jsonl"):
        a, b = str(m["a"]), str(m["b"])
        smaller = min(crawl.hosts[a], crawl.hosts[b])
        assert a < b
        assert "/" not in a + b
        assert ":" not in a + b
        assert 0.8 * smaller <= int(m["shared_pages"]) <= smaller
        assert 0 < float(m["similarity"]) <= 1
        assert 0 <= float(m["url_similarity"]) <= 1
    by_pair = {(m["a"], m["b"]): m for m in _jsonl(result / "mirrors.jsonl")}
    same_layout = by_pair[("click.palletsprojects.example", "www.click.example.org")]
    other_layout = by_pair[("click-mirror.example.net", "click.palletsprojects.example")]
    assert same_layout["url_similarity"] == 1.0
    assert float(other_layout["url_similarity"]) < float(same_layout["url_similarity"])


def test_hosts_count_distinct_pages(crawl: Crawl, result: Path) -> None:
    hosts = {h["host"]: h["pages"] for h in _jsonl(result / "hosts.jsonl")}
    assert hosts == crawl.hosts


def test_pages_name_their_representative_and_reason(crawl: Crawl, result: Path) -> None:
    pages = _jsonl(result / "pages.jsonl")
    assert {p["url"] for p in pages} == set(crawl.pages)
    by_url = {p["url"]: p for p in pages}
    for page in pages:
        rep = by_url[page["representative"]]
        assert rep["representative"] == rep["url"]
        assert rep["reason"] is None
        assert (page["reason"] is None) == (page["url"] == page["representative"])
    origin = "click.palletsprojects.example"
    # The index page crawled under aliases (slash, upper-case http host, session ids).
    for url in (
        f"https://{origin}/en/8.1.x/",
        f"http://{origin.upper()}/en/8.1.x/index.html",
        f"https://{origin}/en/8.1.x/index.html?sessionid=a81f0",
    ):
        assert by_url[url]["reason"] == "alias", url
        assert by_url[url]["representative"] == f"https://{origin}/en/8.1.x/index.html"
    # A page of a full mirror is represented by the origin's copy, as a mirror.
    api = by_url["https://click-mirror.example.net/docs/click/api.html"]
    assert api["representative"] == f"https://{origin}/en/8.1.x/api.html"
    assert api["reason"] == "mirror"
    # The copied pages of the blog are plain near or exact copies, not mirrors.
    copied = [p for p in pages if p["host"] == "blog.example.com" and p["reason"] is not None]
    assert copied
    assert {p["reason"] for p in copied} <= {"exact", "near"}


def test_contracted_graph_folds_the_mirrors(crawl: Crawl, result: Path) -> None:
    nodes = pq.read_table(result / "graph" / "nodes.parquet").to_pylist()
    edges = pq.read_table(result / "graph" / "edges.parquet").to_pylist()
    summary = json.loads((result / "summary.json").read_text())
    graph = summary["counts"]["graph"]
    assert graph["nodes"] == len(nodes) < graph["nodes_before"]
    assert graph["rounds"] >= 1
    hosts = {n["host"] for n in nodes if n["pages"] > 0}
    # Every full mirror's pages collapsed into the origin's: no crawled node is left on them.
    assert "click-mirror.example.net" not in hosts
    assert "www.click.example.org" not in hosts
    assert "click.palletsprojects.example" in hosts
    assert sum(n["pages"] for n in nodes) == len(crawl.pages)
    num_nodes = len(nodes)
    assert all(0 <= e["source"] < num_nodes and 0 <= e["target"] < num_nodes for e in edges)
    assert all(e["source"] != e["target"] and e["count"] >= 1 for e in edges)


def test_summary_counts(crawl: Crawl, result: Path) -> None:
    summary = json.loads((result / "summary.json").read_text())
    counts = summary["counts"]
    assert counts["items"] == len(crawl.pages)
    assert counts["mirror_kinds"] == {
        kind: sum(k == kind for k in crawl.mirrors.values())
        for kind in ("full", "partial", "stale")
    }
    assert "sessionid" in summary["alias_parameters"]
    assert counts["archive"]["non_html"] == len(crawl.hosts)


@pytest.mark.usefixtures("installed")
def test_cli_on_warc_and_on_jsonl(crawl: Crawl, tmp_path: Path) -> None:
    out = tmp_path / "warc"
    done = run("mirrors", *crawl.files, "-o", out)
    assert done.returncode == 0, done.stderr
    assert "mirror host pairs   : 5 (3 full, 1 partial, 1 stale)" in done.stdout
    # The same pages as a JSONL table of URL and HTML give the same mirrors.
    from warcio.archiveiterator import ArchiveIterator

    table = tmp_path / "pages.jsonl"
    with table.open("w", encoding="utf-8") as f:
        for path in crawl.files:
            with path.open("rb") as stream:
                for record in ArchiveIterator(stream):
                    if record.rec_type != "response":
                        continue
                    html = record.content_stream().read()
                    if b"<html" not in html[:2000].lower():
                        continue
                    url = record.rec_headers.get_header("WARC-Target-URI")
                    f.write(json.dumps({"url": url, "html": html.decode("utf-8")}) + "\n")
    out2 = tmp_path / "jsonl"
    done = run("mirrors", table, "--url-field", "url", "--html-field", "html", "-o", out2)
    assert done.returncode == 0, done.stderr
    assert (out / "mirrors.jsonl").read_bytes() == (out2 / "mirrors.jsonl").read_bytes()
    assert (out / "pages.jsonl").read_bytes() == (out2 / "pages.jsonl").read_bytes()


@pytest.mark.usefixtures("installed")
def test_cli_table_without_url_field_is_a_clear_error(tmp_path: Path) -> None:
    table = tmp_path / "pages.jsonl"
    table.write_text('{"html": "<p>x</p>"}\n')
    done = run("mirrors", table, "-o", tmp_path / "out")
    assert done.returncode == 2
    assert "pages.jsonl: a table of pages needs --url-field" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_pages_under_cookie_crumbs_in_the_path_are_aliases(tmp_path: Path) -> None:
    # Seed 003's crutchfield.com: the same pages crawled again under a new session id in the
    # path each visit. Real documentation pages, three visits.
    pages = dict(sorted(load_docs()["six"].items())[:4])
    path = tmp_path / "crumbs.warc.gz"
    writer = CrawlWriter(path)
    for visit in ("S-fXyiE5bZS43", "S-LcNLKgc7bMg", "S-q7RvT2mWx9A"):
        for name, html in pages.items():
            writer.page(f"http://www.shop.example/{visit}/docs/{name}", html.encode())
    writer.close()
    summary = mirrors_files([path], tmp_path / "out")
    assert summary["path_crumbs"] == ["www.shop.example/S-*/ (segment 1)"]
    records = _jsonl(tmp_path / "out" / "pages.jsonl")
    assert len(records) == 12
    assert sum(r["reason"] is None for r in records) == 4  # one page per canonical URL
    assert {r["reason"] for r in records} == {None, "alias"}
    assert _jsonl(tmp_path / "out" / "hosts.jsonl") == [{"host": "www.shop.example", "pages": 4}]


def test_a_host_mirroring_a_site_in_one_directory_beside_its_own_pages(tmp_path: Path) -> None:
    # Seed 002's mirrors are collections with the same internal structure; here the collection
    # is a directory: docs.example serves click's 27 documentation pages under /click/ and
    # jinja2's 17 under /jinja/; www.tools.example mirrors /click/ under /mirror/click/ (with
    # its own banner) beside 14 pages of its own, so 66% of the smaller host is a copy, below
    # the 0.8 a whole host needs.
    docs = load_docs()
    path = tmp_path / "crawl.warc.gz"
    writer = CrawlWriter(path)
    for name, html in sorted(docs["click"].items()):
        writer.page(f"https://docs.example/click/{name}", html.encode())
        mirrored = banner(html, "Mirrored by tools.example for our users.")
        writer.page(f"https://www.tools.example/mirror/click/{name}", mirrored.encode())
    for name, html in sorted(docs["jinja2"].items()):
        writer.page(f"https://docs.example/jinja/{name}", html.encode())
    for name, html in sorted(docs["itsdangerous"].items()):
        writer.page(f"https://www.tools.example/{name}", html.encode())
    writer.close()
    mirrors_files([path], tmp_path / "out")
    (found,) = _jsonl(tmp_path / "out" / "mirrors.jsonl")
    assert (found["a"], found["b"], found["kind"]) == ("docs.example", "www.tools.example", "full")
    assert found["prefixes"] == ["/click/", "/mirror/click/"]
    assert found["shared_pages"] == 27
    pages = {str(r["url"]): r for r in _jsonl(tmp_path / "out" / "pages.jsonl")}
    assert pages["https://www.tools.example/mirror/click/api.html"]["reason"] == "mirror"
    own = [r for url, r in pages.items() if "tools.example" in url and "/mirror/" not in url]
    assert len(own) == 14
    # The host's own pages are not in the mirrored part: none joins as a mirror page (its
    # licence page is a near copy of click's, both BSD licences, and joins as such).
    assert {str(r["reason"]) for r in own} == {"None", "near"}
