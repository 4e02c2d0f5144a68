"""The report of runs that cut parts out of documents: dedup --unit, substrings, contamination.

Each page is made from a real run's output directory and checked for what it must show: the
run's counts, the most repeated units, the documents that lost most (with the documents whose
copies were kept), the contaminated items per benchmark.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lxml.html
import pytest

from neardup.jobs.contamination import contamination_files
from neardup.jobs.dedup_units import dedup_units_files
from neardup.jobs.report import write_report
from neardup.jobs.substrings import substrings_files
from neardup.params import DedupConfig, UnitSpec
from tests.conftest import SUMMARY_SCHEMA
from tests.report.conftest import run_record

HEADER = "Network Working Group, Request for Comments, a page header"
SHARED = "the same long passage of many words that two documents share word for word here"


def _write(path: Path, texts: list[str]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for number, text in enumerate(texts):
            f.write(json.dumps({"id": f"<d{number}>", "text": text}) + "\n")
    return path


def _rows(page: Any, key: str) -> list[list[str]]:
    """The cells of every table row of a section, each cell's text."""
    section = page.get_element_by_id(key)
    return [[" ".join(c.text_content().split()) for c in tr] for tr in section.iter("tr")]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    texts = [
        f"{HEADER}\nfirst body\n{SHARED}",
        f"{HEADER}\nsecond body\n{HEADER}\n{SHARED}",
        "nothing repeated",
    ]
    return _write(tmp_path_factory.mktemp("corpus") / "in.jsonl", texts)


def test_a_unit_run_shows_its_repeated_units_and_who_lost_most(
    corpus: Path, tmp_path: Path
) -> None:
    dedup_units_files([corpus], tmp_path / "run", DedupConfig(), UnitSpec(kind="line"))
    path = write_report(tmp_path / "run")
    page = lxml.html.parse(str(path)).getroot()
    assert "A passage dedup run" in page.text_content()
    assert ["units", "8"] in _rows(page, "run")
    assert _rows(page, "repeated")[1:] == [
        ["3", "<d0>", HEADER],
        ["2", "<d0>", SHARED],
    ]
    lost = _rows(page, "documents")
    assert [row[0] for row in lost[1:]] == ["<d1>"]
    assert lost[1][3] == "<d0>"  # where the copies stay
    (tmp_path / "again").mkdir()
    record, rest = run_record(write_report(tmp_path / "run", tmp_path / "again" / "report.html"))
    first_record, first_rest = run_record(path)
    SUMMARY_SCHEMA.validate(record)
    assert rest == first_rest  # the same run, the same bytes but for the report's timings
    assert record.pop("timings_s").keys() == first_record.pop("timings_s").keys()
    assert record == first_record
    removed = (tmp_path / "run" / "removed.jsonl").read_text(encoding="utf-8").splitlines()
    assert record["counts"] == {"items": 0, "run_records": len(removed)}  # reads no input


def test_a_substrings_run_shows_the_documents_that_lost_most(corpus: Path, tmp_path: Path) -> None:
    substrings_files([corpus], tmp_path / "run", min_tokens=8)
    page = lxml.html.parse(str(write_report(tmp_path / "run"))).getroot()
    assert "A repeated-substrings run" in page.text_content()
    assert ["unit", "runs of 8 tokens"] in _rows(page, "run")
    lost = _rows(page, "documents")
    assert [row[0] for row in lost[1:]] == ["<d1>"]
    assert lost[1][3] == "(earlier in the corpus)"


def test_a_contamination_run_shows_its_items(corpus: Path, tmp_path: Path) -> None:
    evaluation = _write(tmp_path / "eval.jsonl", [SHARED, "an item found nowhere at all here"])
    contamination_files([corpus], [evaluation], tmp_path / "run", ngram=5)
    page = lxml.html.parse(str(write_report(tmp_path / "run"))).getroot()
    items = _rows(page, "items")
    assert [str(evaluation), "2", "0", "1"] in items  # items, too short, contaminated
    assert ["<d0>", "2", "<d0>"] in items  # the item, its training documents, the first
