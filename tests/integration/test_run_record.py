"""One run record: every command's ``summary.json`` and pair records against their JSON Schemas.

Each command runs as a user runs it, on real data (the bundled licences, vectors made from
them, the crawl of real Sphinx pages); the outputs must validate against the schemas shipped in
the package (``neardup report``'s record is the one its page holds), and a run directory
written with the names of the version before must still be read back (``neardup report``).
"""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
from lxml import html as lxml_html

import neardup
from neardup.record import upgraded
from tests.conftest import PAIR_SCHEMA, SAMPLE, SUMMARY_SCHEMA
from tests.integration.conftest import run
from tests.web.sitegen import build_crawl


def _check(directory: Path, pair_files: tuple[str, ...]) -> dict[str, Any]:
    """The directory's summary, validated, after the lines of its pair files.

    At most 1,000 lines a file, spread over it (a join writes hundreds of thousands).
    """
    summary = json.loads((directory / "summary.json").read_text(encoding="utf-8"))
    SUMMARY_SCHEMA.validate(summary)
    for name in pair_files:
        lines = (directory / name).read_text(encoding="utf-8").splitlines()
        assert lines, f"{name} is empty: nothing validated"
        for line in lines[:: max(1, len(lines) // 1000)]:
            PAIR_SCHEMA.validate(json.loads(line))
    for role, name in summary["outputs"].items():
        assert (directory / name).exists(), (role, name)
    return summary


def test_dedup_writes_the_run_record(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("dedup", SAMPLE, "-o", out, "-q").returncode == 0
    summary = _check(out, ("pairs.jsonl",))
    assert (summary["command"], summary["engine"]) == ("dedup", "local")
    assert summary["inputs"] == [str(SAMPLE)]
    assert summary["counts"]["items"] == 2310
    assert summary["timings_s"]["total"] == pytest.approx(
        sum(v for k, v in summary["timings_s"].items() if k != "total"), abs=1e-3
    )


def test_a_run_in_memory_gives_a_valid_record_that_lists_no_output(
    licenses: list[dict[str, object]],
) -> None:
    texts = [str(r["text"]) for r in licenses[:300]]
    record = neardup.dedup(texts).summary.to_record().to_dict()
    SUMMARY_SCHEMA.validate(json.loads(json.dumps(record)))
    assert (record["inputs"], record["outputs"]) == ([], {})
    record["outputs"] = {"pairs": "pairs.jsonl"}  # written files list summary.json too
    with pytest.raises(jsonschema.ValidationError, match="summary"):
        SUMMARY_SCHEMA.validate(record)


def test_pairs_without_exact_verification_validate(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("dedup", SAMPLE, "-o", out, "-q", "--verify", "signature").returncode == 0
    _check(out, ("pairs.jsonl",))
    lines = (out / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    assert any(json.loads(line)["similarity"] is None for line in lines)


def test_dedup_counts_the_bad_records_it_skipped(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        '{"id": "a", "text": "one two three four five six seven"}\n'
        "not json\n"
        '{"id": "b", "text": "one two three four five six seven"}\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert run("dedup", corpus, "-o", out, "-q", "--skip-bad-records").returncode == 0
    summary = _check(out, ("pairs.jsonl",))
    assert (summary["counts"]["items"], summary["counts"]["bad_records_skipped"]) == (2, 1)


@pytest.mark.parametrize(("metric", "threshold"), [("cosine", "0.9"), ("l2", "3")])
def test_join_writes_the_run_record(
    tmp_path: Path, licenses: list[dict[str, object]], metric: str, threshold: str
) -> None:
    # Word counts of the licences hashed into 64 buckets: real vectors with near copies.
    vectors = np.zeros((len(licenses), 64), dtype=np.float32)
    for row, record in enumerate(licenses):
        for word in re.findall(r"\w+", str(record["text"]).lower()):
            vectors[row, zlib.crc32(word.encode()) % 64] += 1
    vectors = vectors[vectors.any(axis=1)]  # a licence without words has no cosine
    if metric == "l2":
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9) / 10
    np.save(tmp_path / "vectors.npy", vectors)
    out = tmp_path / "out"
    done = run("join", tmp_path / "vectors.npy", "--metric", metric, "--threshold", threshold,
               "-o", out, "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = _check(out, ("pairs.jsonl",))
    assert (summary["command"], summary["metric"]) == ("join", metric)
    assert summary["counts"]["items"] == vectors.shape[0]
    assert summary["params"]["threshold"] == float(threshold)


@pytest.mark.slow
def test_mirrors_writes_the_run_record(tmp_path: Path) -> None:
    crawl = build_crawl(tmp_path / "crawl")
    out = tmp_path / "out"
    assert run("mirrors", *crawl.files, "-o", out, "-q").returncode == 0
    summary = _check(out, ("mirrors.jsonl",))
    assert summary["command"] == "mirrors"
    assert summary["counts"]["items"] == len(crawl.pages)
    assert summary["inputs"] == [str(f) for f in crawl.files]


def test_report_reads_a_run_written_with_the_names_before(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("dedup", SAMPLE, "-o", out, "-q").returncode == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    timings = dict(summary["timings_s"])
    old = {
        **{k: v for k, v in summary.items() if k not in ("params", "counts", "timings_s")},
        "config": summary["params"],
        "counts": {("documents" if k == "items" else k): v for k, v in summary["counts"].items()},
        "timings_s": {k: v for k, v in timings.items() if k != "total"},
        "total_s": timings["total"],
    }
    assert upgraded(old) == summary
    (out / "summary.json").write_text(json.dumps(old), encoding="utf-8")
    page = tmp_path / "report.html"
    done = run("report", out, "-o", page, "-q")
    assert done.returncode == 0, done.stderr
    assert f"{summary['counts']['items']:,}" in page.read_text(encoding="utf-8")


def test_report_reads_the_reading_settings_an_older_summary_held_at_the_top(
    tmp_path: Path,
) -> None:
    """Summaries before ``params.read`` and ``params.output`` held their keys beside the
    algorithm's; the report still reads the inputs with them (here, the text in ``body``)."""
    corpus = tmp_path / "in.jsonl"
    base = "zanzibar quartz falcon meadow lantern orchid harbor velvet canyon ember"
    records = [
        {"id": "a", "body": base},
        {"id": "b", "body": base + " today"},
        {"id": "c", "body": "an unrelated sentence about cats and their long naps"},
    ]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "out"
    done = run("dedup", corpus, "-o", out, "-q", "--text-field", "body", "--compress", "gzip")
    assert done.returncode == 0, done.stderr
    summary = _check(out, ("pairs.jsonl",))
    params = summary["params"]
    assert params["read"] == {**neardup.ReadSpec(text_field="body").to_dict()}
    assert params["output"] == {"compress": "gzip", "annotate": None}
    assert not {"text_field", "compress", "batch_bytes"} & set(params)
    old = {k: v for k, v in params.items() if k not in ("read", "output")}
    old = {**old, **params["read"], **params["output"]}
    (out / "summary.json").write_text(json.dumps({**summary, "params": old}), encoding="utf-8")
    page = tmp_path / "report.html"
    done = run("report", out, "-o", page, "-q")
    assert done.returncode == 0, done.stderr
    text = page.read_text(encoding="utf-8")
    assert "zanzibar" in text
    assert "could not be" not in text


def test_report_records_its_own_run_in_its_page(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("dedup", SAMPLE, "-o", out, "-q").returncode == 0
    page = tmp_path / "page.html"
    done = run("report", out, "-o", page, "--clusters", "4", "--seed", "7", "-q")
    assert done.returncode == 0, done.stderr
    element = lxml_html.fromstring(page.read_bytes()).get_element_by_id("neardup-run")
    assert element.tag == "script"
    assert element.get("type") == "application/json"
    record = json.loads(element.text)
    SUMMARY_SCHEMA.validate(record)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert record["neardup_version"] == summary["neardup_version"] == neardup.__version__
    assert (record["command"], record["inputs"]) == ("report", [str(out)])
    assert record["outputs"] == {"report": "page.html"}
    assert record["params"] == {
        "num_clusters": 4, "pairs_per_band": 3, "seed": 7, "with_texts": True
    }  # fmt: skip
    assert record["counts"]["items"] == summary["counts"]["items"]  # its inputs read again
    assert record["counts"]["clusters_shown"] == 4
    with pytest.raises(jsonschema.ValidationError, match="report"):
        SUMMARY_SCHEMA.validate({**record, "outputs": {"summary": "summary.json"}})


def test_contamination_writes_the_run_record(
    tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    item = " ".join(str(licenses[10]["text"]).split()[20:50])
    (tmp_path / "eval.jsonl").write_text(json.dumps({"id": "q", "text": item}) + "\n")
    out = tmp_path / "out"
    done = run("contamination", SAMPLE, "--against", tmp_path / "eval.jsonl", "-o", out)
    assert done.returncode == 0, done.stderr
    assert "1 of 1 items contaminated" in done.stdout
    summary = _check(out, ())
    assert summary["command"] == "contamination"
    assert summary["params"]["read"] == neardup.ReadSpec().to_dict()  # as dedup records it
    assert summary["counts"]["items"] == len(licenses)
    assert summary["benchmarks"][0]["contaminated_items"] == 1
    first = json.loads((out / "contaminated.jsonl").read_text().splitlines()[0])
    assert set(first) == {"eval_id", "train_id", "shared_ngrams", "spans"}
