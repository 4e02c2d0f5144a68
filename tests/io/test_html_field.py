"""``--html-field``: JSONL, Parquet and CSV records of HTML, read as the pages' text."""

from __future__ import annotations

import csv
import gzip
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from neardup import InputError, dedup_files
from neardup.io.html_field import HTMLFieldSource, with_html_field
from neardup.io.jsonl import JSONLinesSource
from neardup.io.source import Source
from neardup.io.tabular import CSVSource, ParquetSource
from neardup.params import ReadSpec

ARTICLE = (
    "the licence grants every person a perpetual worldwide royalty free right to use copy and "
    "modify the work provided that this notice appears in every copy"
)
OTHER = "a completely different page about the weather in spring and summer and the rain in autumn"

PAGES = [
    {
        "id": "a",
        "url": "http://a.example.org/licence.html",
        "html": f"<html><body><h1>Licence</h1><p>{ARTICLE}</p><script>x()</script></body></html>",
    },
    {  # the same text under other markup: an exact duplicate of a once extracted
        "id": "b",
        "url": "http://b.example.org/copy/licence.html",
        "html": (
            '<!doctype html><html lang="en"><head><style>h2 {color: red}</style></head><body>'
            f'<div class="t"><h2>Licence</h2></div>\n\n<div><span>{ARTICLE}</span></div>'
            "<!-- mirrored --></body></html>"
        ),
    },
    {"id": "c", "url": "http://c.example.org/", "html": f"<p>{OTHER}</p>"},
]
TEXTS = {"a": f"Licence {ARTICLE}", "b": f"Licence {ARTICLE}", "c": OTHER}


def _write(path: Path, records: Sequence[Mapping[str, object]]) -> Path:
    if path.suffix == ".csv":
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(records[0]))
            writer.writeheader()
            writer.writerows(records)
    elif path.suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(records), path)
    else:
        data = "".join(json.dumps(r) + "\n" for r in records).encode()
        path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


SOURCES: dict[str, type[Source]] = {
    "in.jsonl": JSONLinesSource,
    "in.jsonl.gz": JSONLinesSource,
    "in.parquet": ParquetSource,
    "in.csv": CSVSource,
}


def _open(path: Path, **options: object) -> HTMLFieldSource:
    source = SOURCES[path.name](path, ReadSpec(html_field="html", **options))  # type: ignore[arg-type]
    wrapped = with_html_field(source)
    assert isinstance(wrapped, HTMLFieldSource)
    return wrapped


@pytest.mark.parametrize("name", list(SOURCES))
def test_records_are_the_pages_text(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path / name, PAGES)
    source = _open(path)
    assert isinstance(source, HTMLFieldSource)
    assert source.options.text_field == "html"  # reopened to read the HTML field
    assert source.format == source.inner.format == SOURCES[name].format
    assert dict(source.records()) == TEXTS
    batches = list(source.batches(1 << 20))
    assert all(b.lines is None and b.stats is None for b in batches)
    assert [i for b in batches for i in b.ids] == ["a", "b", "c"]
    assert source.consumed == source.inner.consumed
    assert source.size == path.stat().st_size
    assert list(source.raw_records()) == list(source.inner.raw_records())


def test_extract_option_is_followed(tmp_path: Path) -> None:
    page = {
        "id": "p",
        "html": (
            "<nav><a href='/'>Home</a> <a href='/x'>Other</a></nav>"
            f"<article><p>{ARTICLE}</p><p>see <a href='../l.html'>the licence</a></p></article>"
            "<footer>© 2024 Example</footer>"
        ),
    }
    path = _write(tmp_path / "in.jsonl", [page])
    assert dict(_open(path, html_extract="altavista").records())["p"] == (
        f"/ Home /x Other {ARTICLE} see ../l.html the licence © 2024 Example"
    )
    main = dict(_open(path, html_extract="main").records())["p"]
    assert ARTICLE in main
    assert "Home" not in main
    assert "©" not in main


def test_without_html_field_the_source_is_unchanged(tmp_path: Path) -> None:
    path = _write(tmp_path / "in.jsonl", PAGES)
    plain = JSONLinesSource(path, ReadSpec(text_field="html"))
    assert with_html_field(plain) is plain
    wrapped = _open(path)
    assert with_html_field(wrapped) is wrapped


@pytest.mark.parametrize("name", ["in.jsonl", "in.parquet"])
def test_bad_records_name_the_html_field(tmp_path: Path, name: str) -> None:
    records: list[Mapping[str, object]] = [
        PAGES[0],
        {"id": "x", "html": None},
        PAGES[2],
        {"id": "y", "body": "<p>no html</p>"} if name == "in.jsonl" else PAGES[1],
    ]
    path = _write(tmp_path / name, records)
    with pytest.raises(InputError, match=r"in\.\w+:2: field 'html' is null.*--skip-bad-records"):
        list(_open(path).records())
    source = _open(path, skip_bad_records=True)
    assert [i for i, _ in source.records()] == (
        ["a", "c"] if name == "in.jsonl" else ["a", "c", "b"]
    )
    assert source.num_bad == source.inner.num_bad == (2 if name == "in.jsonl" else 1)
    assert source.bad_lines == ([2, 4] if name == "in.jsonl" else [2])
    if name == "in.jsonl":
        path = _write(tmp_path / name, [PAGES[0], records[3]])
        with pytest.raises(InputError, match=r"in\.jsonl:2: record has no 'html' field") as info:
            list(_open(path).records())
        assert "choose the HTML field with --html-field" in str(info.value)
        assert "--text-field" not in str(info.value)


@pytest.mark.parametrize("name", ["in.csv", "in.parquet"])
def test_a_missing_html_column_names_the_option(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path / name, [{"id": r["id"], "body": r["html"]} for r in PAGES])
    with pytest.raises(InputError, match=r"no column 'html'.*--html-field") as info:
        list(_open(path).records())
    assert "--text-field" not in str(info.value)


def _keep_flags(output: Path) -> list[bool]:
    lines = (output / "clusters.jsonl").read_text().splitlines()
    return [json.loads(line)["keep"] for line in lines]


@pytest.mark.parametrize("name", ["in.jsonl", "in.jsonl.gz", "in.parquet", "in.csv"])
def test_dedup_files_reads_html_fields(tmp_path: Path, name: str) -> None:
    """Two pages differing in markup only are exact duplicates; the kept corpus is the HTML."""
    path = _write(tmp_path / name, PAGES)
    out = tmp_path / "out"
    dedup_files([path], out, read=ReadSpec(html_field="html"))
    assert _keep_flags(out) == [True, False, True]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["exact_duplicates"] == 1
    kept = [PAGES[0], PAGES[2]]
    if name.endswith(".parquet"):
        assert pq.read_table(out / "kept.parquet").to_pylist() == kept
    elif name.endswith(".csv"):
        with (out / "kept.csv").open(newline="", encoding="utf-8") as f:
            assert list(csv.DictReader(f)) == kept
    else:
        lines = (out / "kept.jsonl").read_text().splitlines()
        assert [json.loads(line) for line in lines] == kept
    # Read as plain text, the markup keeps them apart.
    dedup_files([path], tmp_path / "plain", read=ReadSpec(text_field="html"))
    assert _keep_flags(tmp_path / "plain") == [True, True, True]
