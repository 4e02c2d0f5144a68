"""``neardup report``: a real run of the bundled licences, its page read back with lxml.

What the page claims is checked against the run's own files read in plain Python (cluster sizes
counted with a Counter, pairs binned by hand, short documents by their word count), not against
the report's code.
"""

from __future__ import annotations

import gzip
import itertools
import json
import re
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from lxml import html as lxml_html

from neardup.errors import InputError, MissingExtraError, ParameterError
from neardup.jobs.dedup import dedup_files
from neardup.jobs.report import write_report
from neardup.params import DedupConfig
from neardup.report.charts import timings_chart
from neardup.report.data import load_run
from neardup.report.page import CONTEXT, LONGEST, SECTIONS, excerpt
from tests.conftest import SAMPLE, SUMMARY_SCHEMA
from tests.integration.conftest import run as run_cli
from tests.report.conftest import run_record

CHARTS = ("timings-chart", "histogram-chart", "s-curve-chart", "cluster-sizes-chart")
NAMESPACES = {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}


def _page(path: Path) -> Any:
    return lxml_html.fromstring(path.read_bytes())


def _lines(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _table_rows(page: Any, key: str) -> dict[str, str]:
    """Every ``<th>name</th><td>value</td>`` row of a section's tables."""
    rows = page.get_element_by_id(key).iter("tr")
    return {tr.find("th").text_content(): tr.find("td").text_content() for tr in rows}


def _section_text(page: Any, key: str) -> str:
    return " ".join(page.get_element_by_id(key).text_content().split())


@pytest.fixture(scope="module")
def page(licence_report: Path) -> Any:
    return _page(licence_report)


@pytest.fixture(scope="module")
def sample_texts() -> dict[str, str]:
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        return {r["id"]: r["text"] for r in map(json.loads, f)}


def test_the_report_has_every_section_in_order(page: Any, licence_run: Path) -> None:
    ids = [s.get("id") for s in page.iter("section")]
    assert ids == [key for key, _ in SECTIONS]
    counts = json.loads((licence_run / "summary.json").read_text())["counts"]
    rows = _table_rows(page, "run")
    assert rows["items"] == f"{counts['items']:,}"
    assert rows["short documents"] == f"{counts['short_documents']:,}"
    assert rows["candidate scheme"] == "bands: b=16, r=8"
    assert rows["sketch.shingle.k"] == "5"
    assert rows["lsh.threshold"] == "0.8"


def test_every_chart_is_an_inline_svg_with_drawn_paths(page: Any) -> None:
    for name in CHARTS:
        svg = page.get_element_by_id(name)
        assert svg.tag == "svg"
        assert float(svg.get("width").removesuffix("pt")) > 0
        paths = [p for p in svg.iter("path") if p.get("d", "").strip()]
        assert len(paths) >= 3, name
    # ids stay unique although four charts share the page
    all_ids = [e.get("id") for e in page.iter() if e.get("id")]
    assert len(all_ids) == len(set(all_ids))


def _scripts(page: Any) -> list[tuple[str | None, ...]]:
    """Every script element's type, id and source."""
    return [(s.get("type"), s.get("id"), s.get("src")) for s in page.iter("script")]


def test_nothing_on_the_page_points_outside_it(licence_report: Path, page: Any) -> None:
    # the one script element is the run record, a JSON data block that no browser runs
    assert _scripts(page) == [("application/json", "neardup-run", None)]
    assert not list(page.iter("link", "img", "iframe", "object", "embed", "base"))
    for element in page.iter():
        for name, value in element.attrib.items():
            if name in ("href", "src") or name.endswith("href"):
                assert value.startswith("#"), (element.tag, name, value)
            elif "http" in value:  # only the SVG namespaces (URLs in the texts are text)
                assert value in NAMESPACES, (element.tag, name, value)
    for reference in re.findall(r"url\(([^)]*)\)", licence_report.read_text(encoding="utf-8")):
        assert reference.startswith("#"), reference


def test_the_same_run_gives_the_same_bytes_but_for_the_reports_timings(
    licence_run: Path, licence_report: Path, tmp_path: Path
) -> None:
    again = write_report(licence_run, tmp_path / "report.html")  # the same name: the same record
    assert again == tmp_path / "report.html"
    record, rest = run_record(again)
    first_record, first_rest = run_record(licence_report)
    assert rest == first_rest
    assert record.pop("timings_s").keys() == first_record.pop("timings_s").keys()
    assert record == first_record


def test_the_page_records_the_reports_own_run(
    page: Any, licence_run: Path, licence_report: Path, sample_texts: dict[str, str]
) -> None:
    record = json.loads(page.get_element_by_id("neardup-run").text)
    SUMMARY_SCHEMA.validate(record)
    assert (record["command"], record["engine"]) == ("report", "local")
    assert (record["inputs"], record["outputs"]) == ([str(licence_run)], {"report": "report.html"})
    assert record["params"] == {
        "num_clusters": 10, "pairs_per_band": 3, "seed": 42, "with_texts": True
    }  # fmt: skip
    shown = {c.text_content() for c in page.get_element_by_id("pairs").iter("code")}
    lines = len(_lines(licence_run / "clusters.jsonl")) + len(_lines(licence_run / "pairs.jsonl"))
    assert record["counts"] == {
        "items": len(sample_texts),  # every document read again, for the short ones
        "run_records": lines,
        "clusters_shown": 10,
        "pairs_shown": 12,
        "texts_found": len(shown),
    }
    timings = record["timings_s"]
    assert list(timings) == ["load", "texts", "render", "total"]
    assert sum(v for k, v in timings.items() if k != "total") <= timings["total"] + 1e-3
    assert timings["texts"] > 0


def test_a_report_without_texts_records_that_it_read_none(
    licence_run: Path, tmp_path: Path
) -> None:
    record, _ = run_record(write_report(licence_run, tmp_path / "ids.html", with_texts=False))
    SUMMARY_SCHEMA.validate(record)
    assert record["outputs"] == {"report": "ids.html"}
    assert record["params"]["with_texts"] is False
    assert (record["counts"]["items"], record["counts"]["texts_found"]) == (0, 0)
    assert list(record["timings_s"]) == ["load", "render", "total"]


def test_the_command_shows_its_progress_unless_quiet(
    licence_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("neardup._progress.LOG_EVERY_S", 0.0)  # a line at every report
    done = run_cli("report", licence_run, "-o", tmp_path / "loud.html")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    loaded = sum((licence_run / name).stat().st_size for name in ("clusters.jsonl", "pairs.jsonl"))
    shown = [line.split(",")[0] for line in lines]
    assert f"load: 100% of {loaded / 1e3:,.1f} kB" in shown, lines  # the run's files
    assert f"read: 100% of {SAMPLE.stat().st_size / 1e6:,.1f} MB" in shown, lines  # its input
    quiet = run_cli("report", licence_run, "-o", tmp_path / "quiet.html", "-q")
    assert quiet.returncode == 0, quiet.stderr
    assert (quiet.stdout, quiet.stderr) == ("", "")


def test_the_biggest_clusters_are_the_runs_biggest(page: Any, licence_run: Path) -> None:
    rows = _lines(licence_run / "clusters.jsonl")
    sizes = Counter(r["cluster"] for r in rows)
    first_seen = {label: i for i, label in reversed(list(enumerate(r["cluster"] for r in rows)))}
    expected = sorted(
        (label for label in sizes if sizes[label] > 1), key=lambda c: (-sizes[c], first_seen[c])
    )[:10]
    table = page.find_class("clusters")[0]
    shown = [tr.findall("td") for tr in table.iter("tr")][1:]
    assert [cells[0].text_content() for cells in shown] == expected
    assert [int(cells[1].text_content()) for cells in shown] == [sizes[c] for c in expected]
    kept = {r["cluster"]: r["id"] for r in rows if r["keep"]}
    least = {r["cluster"]: r["min_similarity"] for r in rows}
    for cells in shown:
        label = cells[0].text_content()
        assert cells[2].text_content() == kept[label]
        assert bool(cells[3].find_class("chained")) == (least[label] < 0.8)
    assert any(cells[3].find_class("chained") for cells in shown)  # the licences do chain


def test_pairs_are_counted_per_band_and_sampled_by_seed(page: Any, licence_run: Path) -> None:
    pairs = _lines(licence_run / "pairs.jsonl")
    near = [p["similarity"] for p in pairs if not p["identical"]]
    edges = [0.8, 0.85, 0.9, 0.95, 1.0]
    expected = [
        sum(lo <= s < hi or (hi == 1.0 and s == 1.0) for s in near)
        for lo, hi in itertools.pairwise(edges)
    ]
    headings = [h.text_content() for h in page.get_element_by_id("pairs").iter("h3")]
    assert [
        int(re.search(r": ([\d,]+) pairs", h).group(1).replace(",", "")) for h in headings
    ] == expected
    assert f"{len(pairs) - len(near)} exact-duplicate links are left out" in _section_text(
        page, "pairs"
    )
    one, same, other = (load_run(licence_run, seed=s).bands for s in (1, 1, 2))
    assert one == same
    assert one != other


def test_shared_passages_are_marked_in_the_real_texts(
    page: Any, sample_texts: dict[str, str]
) -> None:
    pairs = page.get_element_by_id("pairs").find_class("pair")
    assert len(pairs) == 12  # 3 in each of the 4 bands
    for pair in pairs:
        sides = pair.find_class("sides")[0].getchildren()
        for side in sides:
            doc = side.find("code").text_content()
            marks = [m.text_content() for m in side.iter("mark")]
            assert marks, doc
            for mark in marks:
                assert len(mark) <= LONGEST // 2 or mark in sample_texts[doc]
                assert mark[:100] in sample_texts[doc]


def test_passages_recorded_by_the_run_are_shown_as_they_are(
    licence_run: Path, tmp_path: Path, sample_texts: dict[str, str]
) -> None:
    run = tmp_path / "explained"
    shutil.copytree(licence_run, run)
    pairs = _lines(run / "pairs.jsonl")
    for pair in pairs:
        pair["passages"] = [[0, 12, 3, 20, 1]]
    (run / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    page = _page(write_report(run, pairs_per_band=1, overwrite=True))  # the copy has a report
    for pair in page.get_element_by_id("pairs").find_class("pair"):
        assert "1 shared passage, 1 shingle" in pair.text_content()
        a, b = (side.find("code").text_content() for side in pair.find_class("sides")[0])
        marks = [m.text_content() for m in pair.iter("mark")]
        assert marks == [sample_texts[a][0:12], sample_texts[b][3:20]]


def test_short_documents_are_named_from_the_inputs(
    page: Any, licence_run: Path, sample_texts: dict[str, str]
) -> None:
    short = json.loads((licence_run / "summary.json").read_text())["counts"]["short_documents"]
    listed = [c.text_content() for c in page.get_element_by_id("outliers").iter("code")]
    assert len(listed) == min(short, 20) > 0
    assert all(len(sample_texts[doc].split()) < 5 for doc in listed)
    truly_short = [doc for doc, text in sample_texts.items() if len(text.split()) < 5]
    assert listed == truly_short[:20]
    assert "changed since the run" not in _section_text(page, "outliers")


def test_ids_and_texts_are_escaped(tmp_path: Path) -> None:
    words = " ".join(f"word{i}" for i in range(60))
    records = [
        {"id": "<script>alert(1)</script>", "text": f"<b>bold</b> {words} & more"},
        {"id": "b&\"q'", "text": f"<b>bold</b> {words} & less"},
    ]
    corpus = tmp_path / "evil.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    dedup_files([corpus], tmp_path / "out", DedupConfig())
    report = write_report(tmp_path / "out")
    text = report.read_text(encoding="utf-8")
    assert "<script>alert" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    page = _page(report)
    assert _scripts(page) == [("application/json", "neardup-run", None)]
    marks = " ".join(m.text_content() for m in page.iter("mark"))
    assert "<b>bold</b>" in marks  # shown as text, not markup
    assert all(b.text_content() != "bold" for b in page.iter("b"))


def test_missing_inputs_still_render_and_say_so(tmp_path: Path) -> None:
    corpus = tmp_path / "licences.jsonl.gz"
    shutil.copy(SAMPLE, corpus)
    dedup_files([corpus], tmp_path / "out", DedupConfig())
    corpus.unlink()
    page = _page(write_report(tmp_path / "out"))
    assert f"the run's inputs could not be found: {corpus}" in _section_text(page, "pairs")
    assert "not available" in _section_text(page, "outliers")
    assert not list(page.iter("mark"))
    assert all(page.get_element_by_id(name).tag == "svg" for name in CHARTS)


def test_an_older_run_says_what_it_did_not_record(licence_run: Path, tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.mkdir()
    summary = json.loads((licence_run / "summary.json").read_text())
    del summary["similarity_histogram"]
    summary["lsh"] = {"scheme": "hamming", "label": "SimHash within 7 of 64 bits"}
    (old / "summary.json").write_text(json.dumps(summary))
    clusters = [
        {k: v for k, v in r.items() if k not in ("similarity", "min_similarity")}
        for r in _lines(licence_run / "clusters.jsonl")
    ]
    (old / "clusters.jsonl").write_text("".join(json.dumps(r) + "\n" for r in clusters))
    shutil.copy(licence_run / "pairs.jsonl", old / "pairs.jsonl")
    page = _page(write_report(old, with_texts=False))
    assert "not recorded by this run" in _section_text(page, "similarity")
    assert "hamming (SimHash within 7 of 64 bits), not LSH banding" in _section_text(
        page, "s-curve"
    )
    assert "not recorded by this run" in _section_text(page, "clusters")
    assert "not read (--no-texts)" in _section_text(page, "pairs")
    assert page.get_element_by_id("cluster-sizes-chart").tag == "svg"
    assert page.get_element_by_id("timings-chart").tag == "svg"


def test_excerpt_elides_long_unshared_text_and_long_passages() -> None:
    text = "a" * 1000 + "<" + "b" * 2000 + "c" * 1000
    shown = excerpt(text, [(1000, 3001)])
    page = lxml_html.fragment_fromstring(shown, create_parent="div")
    marks = [m.text_content() for m in page.iter("mark")]
    assert "".join(marks) == text[1000 : 1000 + LONGEST // 2] + text[3001 - LONGEST // 2 : 3001]
    assert marks[0].startswith("<")
    elided = [int(e.text_content().split()[1].replace(",", "")) for e in page.find_class("elided")]
    assert elided == [1000 - CONTEXT, 2001 - LONGEST, 1000 - CONTEXT]
    assert len(page.text_content()) < len(text) / 2


def test_bad_arguments_and_a_missing_run_are_errors(licence_run: Path, tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="num_clusters"):
        write_report(licence_run, tmp_path / "x.html", num_clusters=-1)
    with pytest.raises(InputError, match=r"no summary\.json"):
        write_report(tmp_path)


def test_without_matplotlib_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'neardup\[report\]'"):
        timings_chart({"read": 1.0})


def test_the_command_writes_the_report_and_prints_its_path(
    licence_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "r.html"
    done = run_cli("report", licence_run, "--output", out, "--no-texts", "--clusters", "3")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out)
    page = _page(out)
    assert len(list(page.find_class("clusters")[0].iter("tr"))) == 1 + 3
    missing = run_cli("report", tmp_path)
    assert missing.returncode == 1
    assert missing.stderr.startswith("error:")
    assert "no summary.json" in missing.stderr
    assert run_cli("report", licence_run, "--pairs-per-band", "-2").returncode == 2


def test_the_output_of_another_command_is_named(tmp_path: Path) -> None:
    other = tmp_path / "joined"
    other.mkdir()
    record = {"neardup_version": "0.1.0", "command": "join", "params": {"metric": "cosine"}}
    (other / "summary.json").write_text(json.dumps(record), encoding="utf-8")
    done = run_cli("report", other)
    assert done.returncode == 1
    assert done.stderr == (
        f"error: {other}: this is the output of neardup join; neardup report reads the output "
        "directories of neardup dedup, substrings and contamination\n"
    )
