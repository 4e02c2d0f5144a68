"""A crawl as input to the other commands: ``dedup``, ``index add``/``query`` and ``join``.

The crawl is the mirror test crawl (tests/web/sitegen.py): real Sphinx HTML on several hosts,
written as WARC files. Each command's result is checked against a plain computation (brute-force
Jaccard, the generator's truth) over the pages as the library reads and extracts them.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from neardup import Shingler
from neardup.io.readers import open_sources
from neardup.params import ReadSpec
from neardup.verify import jaccard_of_sets
from tests.integration.conftest import NEARDUP, run
from tests.web.sitegen import Crawl, build_crawl


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Crawl:
    if not NEARDUP.exists():
        pytest.skip(f"the neardup command is not installed: {NEARDUP}")
    return build_crawl(tmp_path_factory.mktemp("crawl"), num_files=1)


def _pages(crawl: Crawl, extract: str = "text") -> dict[str, str]:
    (source,) = open_sources(crawl.files, ReadSpec(html_extract=extract))  # type: ignore[arg-type]
    return dict(source.records())


def test_join_on_a_web_archive_equals_brute_force(crawl: Crawl, tmp_path: Path) -> None:
    pages = _pages(crawl)
    ids = list(pages)
    sets = Shingler().shingle_sets(list(pages.values()))
    truth = {
        (ids[a], ids[b])
        for a, b in itertools.combinations(range(len(ids)), 2)
        if jaccard_of_sets(sets.set_of(a), sets.set_of(b)) >= 0.9
    }
    done = run(
        "join",
        crawl.files[0],
        "--metric",
        "jaccard",
        "--threshold",
        "0.9",
        "--exact",
        "-o",
        tmp_path / "out",
    )
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "out" / "pairs.jsonl").read_text().splitlines()
    found = {(r["a"], r["b"]) for r in map(json.loads, lines)}
    assert {tuple(sorted(p)) for p in found} == {tuple(sorted(p)) for p in truth}
    assert len(truth) > 50  # mirrors and aliases: plenty of pairs to get right


def test_join_refuses_a_vector_metric_on_a_web_archive(crawl: Crawl, tmp_path: Path) -> None:
    done = run(
        "join", crawl.files[0], "--metric", "cosine", "--threshold", "0.9", "-o", tmp_path / "o"
    )
    assert done.returncode == 2
    assert "--metric jaccard" in done.stderr
    assert not (tmp_path / "o").exists()


def test_index_add_and_query_a_web_archive(crawl: Crawl, tmp_path: Path) -> None:
    index = tmp_path / "crawl.ndx"
    assert run("index", "create", index, "--threshold", "0.8").returncode == 0
    added = run("index", "add", index, crawl.files[0], "--skip-existing")
    assert added.returncode == 0, added.stderr
    pages = _pages(crawl)
    url = "https://click-mirror.example.net/docs/click/api.html"
    found = run("index", "query", index, "--text", pages[url])
    assert found.returncode == 0, found.stderr
    (answer,) = [json.loads(line) for line in found.stdout.splitlines() if line.strip()]
    matches = {match["id"] for match in answer["matches"]}
    assert url in matches
    assert "https://click.palletsprojects.example/en/8.1.x/api.html" in matches


@pytest.mark.parametrize("extract", ["text", "main", "altavista"])
def test_dedup_a_web_archive(crawl: Crawl, tmp_path: Path, extract: str) -> None:
    out = tmp_path / "out"
    done = run("dedup", crawl.files[0], "--html-extract", extract, "-o", out)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    counts = summary["counts"]
    assert counts["items"] == len(crawl.pages)
    assert counts["non_html_skipped"] == len(crawl.hosts)
    assert summary["params"]["read"]["html_extract"] == extract
    clusters = [json.loads(line) for line in (out / "clusters.jsonl").read_text().splitlines()]
    by_id = {c["id"]: c["cluster"] for c in clusters}
    assert set(by_id) == set(crawl.pages)
    # A full mirror's copy of a page is a near duplicate of the origin's, whatever is extracted.
    assert (
        by_id["https://www.click.example.org/en/8.1.x/api.html"]
        == by_id["https://click.palletsprojects.example/en/8.1.x/api.html"]
    )
    kept = (out / "kept.jsonl").read_text().splitlines()
    assert len(kept) == counts["kept"]


def _share_with_original(clusters: dict[str, str], crawl: Crawl) -> tuple[float, list[str]]:
    """The share of the crawl's unedited page copies in their original's cluster, and the
    copies that are not."""
    copies = {url: origin for url, origin in crawl.copies.items() if url not in crawl.edited}
    apart = sorted(url for url, origin in copies.items() if clusters[url] != clusters[origin])
    return 1 - len(apart) / len(copies), apart


def test_host_templates_join_short_pages_to_their_mirrored_copies(
    crawl: Crawl, tmp_path: Path
) -> None:
    """With all the visible text, a mirror's banner outweighs a short page's words (the module
    index, the search page); without each host's template every mirrored or verbatim copy
    joins its original. The kept corpus keeps the pages whole."""
    found = {}
    for name, options in (("plain", []), ("templates", ["--host-templates"])):
        done = run("dedup", crawl.files[0], "-o", tmp_path / name, "--pairs", "all", *options)
        assert done.returncode == 0, done.stderr
        lines = (tmp_path / name / "clusters.jsonl").read_text().splitlines()
        clusters = [json.loads(line) for line in lines]
        found[name] = _share_with_original({c["id"]: c["cluster"] for c in clusters}, crawl)
    share, apart = found["plain"]
    assert share < 0.95
    assert any(url.endswith(("/py-modindex.html", "/search.html")) for url in apart)
    assert found["templates"] == (1.0, [])
    summary = json.loads((tmp_path / "templates" / "summary.json").read_text())
    described = summary["host_templates"]
    assert described["hosts"] == len(crawl.hosts)
    assert described["hosts_with_template"] == len(crawl.hosts)
    assert summary["params"]["host_templates"] is True
    pages = _pages(crawl)
    lines = (tmp_path / "templates" / "kept.jsonl").read_text().splitlines()
    kept = [json.loads(line) for line in lines]
    assert all(record["text"] == pages[record["id"]] for record in kept)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--engine", "spark"], "local engine only"),
        (["--unit", "line"], "--host-templates"),
        (["--against", "seen.ndx"], "whole pages"),
    ],
)
def test_host_templates_refused_where_they_cannot_apply(
    options: list[str], message: str, tmp_path: Path
) -> None:
    corpus = tmp_path / "in.jsonl"
    corpus.write_text('{"id": "https://a.example/", "text": "one two three"}\n')
    created = run("index", "create", tmp_path / "seen.ndx")
    assert created.returncode == 0, created.stderr
    done = run("dedup", corpus, "-o", tmp_path / "out", "--host-templates", *options, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "out").exists()
