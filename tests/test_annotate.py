"""``--annotate``: every input record written back with one field added, nothing else changed."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import SAMPLE
from tests.integration.conftest import run


def clusters_by_id(out: Path) -> dict[str, dict[str, Any]]:
    """``clusters.jsonl`` as the annotation each document should carry."""
    rows = [json.loads(line) for line in (out / "clusters.jsonl").read_text().splitlines()]
    return {r["id"]: {k: r[k] for k in ("cluster", "keep", "similarity")} for r in rows}


def _dedup(*args: str | Path) -> None:
    result = run("dedup", *args, "-q", "--threshold", "0.6")
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_jsonl_lines_are_the_input_lines_with_the_field_inserted(tmp_path: Path) -> None:
    lines = gzip.decompress(SAMPLE.read_bytes()).splitlines(keepends=True)
    lines[3] = lines[3].rstrip(b"\n") + b"  \r\n"  # trailing space and CRLF stay
    lines.insert(5, b"\n")  # a blank line is no record
    lines.insert(9, b'{"id": "bad", "text": 7}\n')  # skipped as a bad record
    lines[-1] = lines[-1].rstrip(b"\n")  # no newline at the end
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"".join(lines))
    _dedup(path, "-o", tmp_path / "out", "--annotate", "--skip-bad-records")
    expected = clusters_by_id(tmp_path / "out")
    assert sum(not a["keep"] for a in expected.values()) > 100
    written = (tmp_path / "out" / "annotated.jsonl").read_bytes().splitlines(keepends=True)
    records = [line for line in lines if line.strip() and b'"bad"' not in line]
    assert len(written) == len(records) == len(expected)
    for line, out in zip(records, written, strict=True):
        note = json.loads(out)["neardup"]
        doc_id = json.loads(line)["id"]
        assert note == expected[doc_id]
        inserted = f', "neardup": {json.dumps(note)}'.encode()
        assert out.replace(inserted, b"", 1) == (line if line.endswith(b"\n") else line + b"\n")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["outputs"]["annotated"] == "annotated.jsonl"
    assert "kept" not in summary["outputs"]


@pytest.mark.parametrize(
    "line",
    [
        '{"text": "one two three four five six", "neardup": 1}',
        '{"text": "a b c", "\\u006eeardup": null}',
    ],
)
def test_a_record_holding_the_field_is_named(tmp_path: Path, line: str) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"text": "seven eight nine ten"}\n' + line + "\n", encoding="utf-8")
    result = run("dedup", path, "-o", tmp_path / "out", "--annotate")
    assert result.returncode == 1
    assert "in.jsonl:2: records have a field 'neardup' already" in result.stderr
    assert "--annotate FIELD" in result.stderr
    assert not (tmp_path / "out").exists()
    result = run("dedup", path, "-o", tmp_path / "out", "--annotate", "dedup", "-q")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "annotated.jsonl").read_text().count('"dedup": {') == 2


def _licence_rows() -> list[dict[str, Any]]:
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        return [{"id": r["id"], "text": r["text"], "kind": r["kind"]} for r in map(json.loads, f)]


@pytest.mark.slow
def test_csv_and_parquet_carry_the_annotation_as_columns(tmp_path: Path) -> None:
    rows = _licence_rows()
    table = pa.Table.from_pylist(rows)
    pq.write_table(table, tmp_path / "in.parquet")
    with (tmp_path / "in.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, ["id", "text", "kind"])
        writer.writeheader()
        writer.writerows(rows)
    _dedup(tmp_path / "in.parquet", "-o", tmp_path / "p", "--annotate", "nd")
    _dedup(tmp_path / "in.csv", "-o", tmp_path / "c", "--annotate", "nd")
    expected = clusters_by_id(tmp_path / "p")
    assert expected == clusters_by_id(tmp_path / "c")
    written = pq.read_table(tmp_path / "p" / "annotated.parquet")
    assert written.drop_columns(["nd"]).equals(table)
    notes = written.column("nd").to_pylist()
    assert [{**n, "similarity": round(n["similarity"], 6)} for n in notes] == [
        expected[r["id"]] for r in rows
    ]
    with (tmp_path / "c" / "annotated.csv").open(newline="", encoding="utf-8") as f:
        read = list(csv.DictReader(f))
    assert [{k: r[k] for k in ("id", "text", "kind")} for r in read] == rows
    for r in read:
        note = expected[r["id"]]
        assert r["nd.cluster"] == note["cluster"]
        assert r["nd.keep"] == ("true" if note["keep"] else "false")
        assert float(r["nd.similarity"]) == note["similarity"]


def test_other_inputs_and_options(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    text = "one two three four five six seven eight nine ten"
    (docs / "a.txt").write_text(text, encoding="utf-8")
    (docs / "b.txt").write_text(text + " eleven", encoding="utf-8")
    _dedup(docs, "-o", tmp_path / "t", "--annotate", "--compress", "gzip")
    with gzip.open(tmp_path / "t" / "annotated.jsonl.gz", "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    assert [r["neardup"]["keep"] for r in records] == [True, False]
    assert records[1]["neardup"]["cluster"] == records[0]["id"]
    table = tmp_path / "in.csv"
    table.write_text("id,text,x.keep\n1,one two three four five six,\n", encoding="utf-8")
    result = run("dedup", table, "-o", tmp_path / "o1", "--annotate", "x")
    assert "records have a field 'x.keep' already" in result.stderr
    result = run("dedup", docs, "-o", tmp_path / "o2", "--annotate", "--unit", "line")
    assert "--annotate marks whole records" in result.stderr
