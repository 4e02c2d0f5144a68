"""Web archives on the Spark engine (real Spark, local[2]): the local engine's clusters, pairs."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from neardup import DedupConfig, ReadSpec, dedup_files
from neardup.engine.spark import dedup_files_spark
from tests.conftest import shared

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings("ignore:distutils Version classes are deprecated"),
]


def _same_outputs(local: Path, distributed: Path) -> None:
    for name in ("clusters.jsonl", "pairs.jsonl"):
        assert (distributed / name).read_bytes() == (local / name).read_bytes(), name


def test_a_warc_gives_the_local_engines_clusters_and_pairs(spark: Any, tmp_path: Path) -> None:
    path = shared("web_archives/pywb_sample_archive/iana.warc.gz")
    config = DedupConfig(pairs="all")
    local = dedup_files([path], tmp_path / "local", config)
    dedup_files_spark(spark, [str(path)], str(tmp_path / "spark"), config)
    _same_outputs(tmp_path / "local", tmp_path / "spark")
    assert local.summary.counts.items == 16  # the HTML pages with a 2xx status
    assert local.summary.counts.not_ok_skipped == 4  # the redirects
    kept = spark.read.parquet(str(tmp_path / "spark" / "kept.parquet")).collect()
    local_kept = (tmp_path / "local" / "kept.jsonl").read_text().splitlines()
    assert [(row.id, row.text) for row in kept] == [
        (r["id"], r["text"]) for r in map(json.loads, local_kept)
    ]


def _record(url: str, date: str, html: str) -> bytes:
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + html.encode()
    headers = (
        f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\nWARC-Date: {date}\r\n"
        f"Content-Type: application/http; msgtype=response\r\nContent-Length: {len(http)}\r\n\r\n"
    )
    return gzip.compress(headers.encode() + http + b"\r\n\r\n")


def test_repeated_uris_over_two_files_get_the_local_ids(spark: Any, tmp_path: Path) -> None:
    url, day1, day2 = "http://a.example/", "2020-01-01T00:00:00Z", "2020-01-02T00:00:00Z"
    text = "the same page about spark and web archives with enough words for shingles"
    first = tmp_path / "one.warc.gz"
    first.write_bytes(_record(url, day1, f"<p>{text}</p>") + _record(url, day2, "<p>other</p>"))
    second = tmp_path / "two.warc.gz"
    second.write_bytes(_record(url, day2, f"<p>{text}!</p>") + _record(url, day1, f"<p>{text}</p>"))
    inputs = [first, second]
    local = dedup_files(inputs, tmp_path / "local")
    assert list(local.ids) == [url, f"{url}@{day2}", f"{url}@{day2}#2", f"{url}@{day1}"]
    dedup_files_spark(spark, [str(p) for p in inputs], str(tmp_path / "spark"))
    _same_outputs(tmp_path / "local", tmp_path / "spark")


def test_an_html_field_is_extracted_as_locally(spark: Any, tmp_path: Path) -> None:
    from tests.web.sitegen import load_docs

    pages = load_docs()["click"]
    path = tmp_path / "pages.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for name, html in sorted(pages.items()):
            out.write(json.dumps({"url": f"https://a.example/{name}", "html": html}) + "\n")
            # The same page under another host, its markup changed: the same text.
            copy = html.replace("<div", '<div data-copy="1"')
            out.write(json.dumps({"url": f"https://b.example/{name}", "html": copy}) + "\n")
    config = DedupConfig(pairs="all")
    read = ReadSpec(html_field="html", id_field="url", html_extract="main")
    local = dedup_files([path], tmp_path / "local", config, read=read)
    dedup_files_spark(spark, [str(path)], str(tmp_path / "spark"), config, read=read)
    _same_outputs(tmp_path / "local", tmp_path / "spark")
    assert local.summary.counts.exact_duplicates >= len(pages) - 1
