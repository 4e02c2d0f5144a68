"""Passage-level dedup (``neardup dedup --unit``) from the command line.

Small corpora check the output contract (removed.jsonl spans, the kept corpus in every format,
dropped documents, refused options); the RFC corpus is checked against a brute force over its
normalised paragraphs: every paragraph with an earlier copy is removed, nothing else is, and
every first occurrence stays.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests import reference
from tests.conftest import SUMMARY_SCHEMA, read_rfcs
from tests.integration.conftest import run

HEADER = "Internet Engineering Task Force, Request for Comments, page header"
PARAGRAPH = (
    "The quick brown fox jumps over the lazy dog while the cat watches from the warm windowsill "
    "and the bird sings a long song about the coming of spring to the quiet valley"
)


def _write_jsonl(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _cut(text: str, spans: Sequence[Sequence[Any]]) -> str:
    """``text`` without the spans of a removed.jsonl line."""
    parts, at = [], 0
    for start, end, *_ in spans:
        parts.append(text[at:start])
        at = end
    return "".join(parts) + text[at:]


def _dedup(tmp_path: Path, inputs: Sequence[Path], *options: str) -> Path:
    out = tmp_path / "out"
    result = run("dedup", *inputs, "-o", out, "-q", *options)
    assert result.returncode == 0, result.stderr
    return out


def test_every_copy_but_the_first_is_removed_and_the_spans_name_the_kept_copy(
    tmp_path: Path,
) -> None:
    records = [
        {"id": "a", "text": f"{HEADER} 1\nonly in a\n", "meta": {"n": 1}},
        {"id": "b", "text": f"  {HEADER} 2\r\nonly in b\n{HEADER} 3", "meta": {"n": 2}},
        {"id": "c", "text": "nothing repeated here\nnor here", "meta": {"n": 3}},
        {"id": "d", "text": f"{HEADER} 4\n{HEADER} 5\nlast", "meta": {"n": 4}},
    ]
    source = _write_jsonl(tmp_path / "in.jsonl", records)
    out = _dedup(tmp_path, [source], "--unit", "line")
    removed = {r["id"]: r["spans"] for r in _lines(out / "removed.jsonl")}
    assert removed == {
        "b": [[0, len(HEADER) + 6, "a"], [len(HEADER) + 16, len(HEADER) * 2 + 18, "a"]],
        "d": [[0, len(HEADER) * 2 + 6, "a"]],
    }
    kept = _lines(out / "kept.jsonl")
    by_id = {r["id"]: r for r in records}
    for record in kept:
        original = by_id[record["id"]]
        assert record["text"] == _cut(original["text"], removed.get(record["id"], []))
        assert record["meta"] == original["meta"]
    texts = [r["text"] for r in kept]
    assert texts == [records[0]["text"], "only in b\n", records[2]["text"], "last"]
    raw = source.read_text(encoding="utf-8").splitlines()
    written = (out / "kept.jsonl").read_text(encoding="utf-8").splitlines()
    assert (written[0], written[2]) == (raw[0], raw[2])  # untouched records: byte for byte
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    SUMMARY_SCHEMA.validate(summary)
    counts = summary["counts"]
    assert (counts["items"], counts["units"], counts["units_removed"]) == (4, 10, 4)
    assert (counts["documents_changed"], counts["kept"], counts["removed"]) == (2, 4, 0)
    assert summary["params"]["unit"]["kind"] == "line"
    assert summary["repeated_units"][0] == {
        "text": f"{HEADER} 0",
        "copies": 5,
        "kept_in": "a",
    }


def test_digits_tell_units_apart_with_keep_digits(tmp_path: Path) -> None:
    source = _write_jsonl(
        tmp_path / "in.jsonl",
        [{"id": "a", "text": "Postel [Page 1]\nx"}, {"id": "b", "text": "Postel [Page 2]\ny"}],
    )
    out = _dedup(tmp_path, [source], "--unit", "line", "--keep-digits")
    assert _lines(out / "removed.jsonl") == []
    out2 = tmp_path / "folded"
    assert run("dedup", source, "-o", out2, "-q", "--unit", "line").returncode == 0
    assert _lines(out2 / "removed.jsonl") == [{"id": "b", "spans": [[0, 16, "a"]]}]


def test_near_copies_of_a_paragraph_are_removed_at_the_threshold(tmp_path: Path) -> None:
    edited = PARAGRAPH.replace("valley", "meadow")  # word 5-shingle Jaccard 28/30
    records = [
        {"id": "a", "text": f"Intro of a.\n\n{PARAGRAPH}\n\nEnd of a."},
        {"id": "b", "text": f"Intro of b.\n\n{edited}\n\nEnd of b."},
    ]
    source = _write_jsonl(tmp_path / "in.jsonl", records)
    out = _dedup(tmp_path, [source], "--unit", "paragraph", "--min-unit-chars", "20")
    start = len("Intro of b.\n\n")
    assert _lines(out / "removed.jsonl") == [
        {"id": "b", "spans": [[start, start + len(edited) + 2, "a"]]}
    ]
    strict = tmp_path / "strict"
    assert run("dedup", source, "-o", strict, "-q", "--unit", "paragraph", "--threshold", "0.99")
    assert _lines(strict / "removed.jsonl") == []


def test_keep_longest_keeps_the_copy_in_the_longest_document(tmp_path: Path) -> None:
    records = [
        {"id": "short", "text": f"{HEADER}\nx"},
        {"id": "long", "text": f"some longer text before it\n{HEADER}\nand after it"},
    ]
    source = _write_jsonl(tmp_path / "in.jsonl", records)
    out = _dedup(tmp_path, [source], "--unit", "line", "--keep", "longest")
    assert _lines(out / "removed.jsonl") == [
        {"id": "short", "spans": [[0, len(HEADER) + 1, "long"]]}
    ]


def test_sentence_runs_are_removed_where_they_repeat(tmp_path: Path) -> None:
    shared = "The first sentence is here. A second one follows it. And a third ends it."
    records = [
        {"id": "a", "text": f"Alpha starts. {shared} Alpha ends."},
        {"id": "b", "text": f"Beta starts differently. {shared}"},
    ]
    source = _write_jsonl(tmp_path / "in.jsonl", records)
    out = _dedup(tmp_path, [source], "--unit", "sentences:3")
    start = len("Beta starts differently. ")
    assert _lines(out / "removed.jsonl") == [
        {"id": "b", "spans": [[start, start + len(shared), "a"]]}
    ]
    assert _lines(out / "kept.jsonl")[1]["text"] == "Beta starts differently. "


def test_documents_left_too_short_are_dropped_and_listed(tmp_path: Path) -> None:
    records = [
        {"id": "a", "text": f"{HEADER}\nbody of a"},
        {"id": "b", "text": f"{HEADER}\nok"},
        {"id": "c", "text": "tiny"},
    ]
    source = _write_jsonl(tmp_path / "in.jsonl", records)
    out = _dedup(tmp_path, [source], "--unit", "line", "--min-doc-chars", "5")
    assert [r["id"] for r in _lines(out / "kept.jsonl")] == ["a", "c"]  # c lost nothing
    assert _lines(out / "dropped.jsonl") == [{"id": "b", "chars_left": 2}]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert (summary["counts"]["removed"], summary["counts"]["kept"]) == (1, 2)


def test_csv_and_parquet_keep_their_columns_and_change_only_the_text(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "text": f"{HEADER}\nfirst", "score": 1},
        {"id": "b", "text": f"{HEADER}\nsecond", "score": 2},
    ]
    with (tmp_path / "in.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, ["id", "text", "score"])
        writer.writeheader()
        writer.writerows(rows)
    out = _dedup(tmp_path, [tmp_path / "in.csv"], "--unit", "line")
    with (out / "kept.csv").open(newline="", encoding="utf-8") as f:
        assert list(csv.DictReader(f)) == [
            {"id": "a", "text": f"{HEADER}\nfirst", "score": "1"},
            {"id": "b", "text": "second", "score": "2"},
        ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "in.parquet")
    out = tmp_path / "parquet-out"
    assert run("dedup", tmp_path / "in.parquet", "-o", out, "-q", "--unit", "line").returncode == 0
    table = pq.read_table(out / "kept.parquet")
    assert table.schema == pq.read_schema(tmp_path / "in.parquet")
    assert table.to_pylist() == [rows[0], {**rows[1], "text": "second"}]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--min-doc-chars", "3"], "--min-doc-chars apply with --unit only"),
        (["--keep-digits"], "--keep-digits apply with --unit only"),
        (["--unit", "line", "--engine", "spark"], "--unit works with the local engine only"),
        (["--unit", "line", "--explain"], "drop --explain and --pairs"),
        (["--unit", "words"], "--unit must be line, paragraph or sentences:K; got 'words'"),
        (["--unit", "sentences:two"], "needs a whole number of sentences"),
    ],
)
def test_options_that_do_not_apply_are_refused(
    tmp_path: Path, options: list[str], message: str
) -> None:
    source = _write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "text": "x"}])
    result = run("dedup", source, "-o", tmp_path / "out", *options)
    assert result.returncode != 0
    assert message in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_rfc_paragraphs_agree_with_a_brute_force_over_normalised_paragraphs(
    tmp_path: Path,
) -> None:
    """300 RFCs: a paragraph is removed exactly when an equal one (normalised, digits folded)
    or one with the same word 5-shingles came before it; page footers and headers go."""
    rfcs = read_rfcs(limit=300)
    records = [{"id": f"rfc{n}", "text": t} for n, t in rfcs.items()]
    source = _write_jsonl(tmp_path / "rfc.jsonl", records)
    out = _dedup(tmp_path, [source], "--unit", "paragraph", "--threshold", "1.0")
    removed = {r["id"]: r["spans"] for r in _lines(out / "removed.jsonl")}
    seen_keys: set[tuple[str, ...]] = set()
    seen_sets: set[frozenset[int]] = set()
    footers = footers_removed = 0
    for record, kept in zip(records, _lines(out / "kept.jsonl"), strict=True):
        text, spans = record["text"], removed.get(record["id"], [])
        assert kept["text"] == _cut(text, spans)
        cut = {(a, b) for a, b, _ in spans} if spans else set()
        gone = _covered(spans)
        for start, end, content in reference.line_pieces(text, paragraphs=True):
            key = reference.unit_key(content)
            shingles = frozenset(_shingle_set(key))
            repeated = key in seen_keys or (len(key) >= 5 and shingles in seen_sets)
            is_gone = (start, end) in cut or gone(start, end)
            assert is_gone == repeated, (record["id"], start, content[:80])
            if content.rstrip().endswith("]") and "[Page" in content and "\n" not in content:
                footers += 1
                footers_removed += is_gone
            seen_keys.add(key)
            if len(key) >= 5:
                seen_sets.add(shingles)
    assert footers > 1000
    assert footers_removed > 0.9 * footers  # 6,581 of 6,900: each distinct footer kept once


def _covered(spans: Sequence[Sequence[Any]]) -> Any:
    """Whether a tile lies inside one of the (merged) spans."""

    def inside(start: int, end: int) -> bool:
        return any(a <= start and end <= b for a, b, _ in spans)

    return inside


def _shingle_set(words: tuple[str, ...]) -> set[int]:
    return {hash(words[i : i + 5]) for i in range(len(words) - 4)}


def test_bad_and_blank_lines_do_not_shift_the_edits(tmp_path: Path) -> None:
    good = [
        {"id": "a", "text": f"{HEADER}\nfirst"},
        {"id": "b", "text": f"{HEADER}\nsecond"},
        {"id": "c", "text": "third"},
    ]
    lines = [json.dumps(good[0]), "", "{not json", json.dumps(good[1]), "  ", json.dumps(good[2])]
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode("utf-8"))  # a BOM, no last \n
    out = _dedup(tmp_path, [source], "--unit", "line", "--skip-bad-records")
    assert [r["text"] for r in _lines(out / "kept.jsonl")] == [good[0]["text"], "second", "third"]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["counts"]["bad_records_skipped"] == 1
