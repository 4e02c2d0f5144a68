"""``neardup plan`` end to end: the config it writes, run by ``neardup dedup --config``, reaches
the recall it promised at the threshold, against exact all-pairs Jaccard of its own shingles."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import neardup
from neardup import Shingler
from neardup.params import load_config
from tests.conftest import SAMPLE, read_rfcs
from tests.integration.conftest import run
from tests.reference_allpairs import all_pairs_above

pytestmark = pytest.mark.usefixtures("installed")


def _plan(*args: str | Path) -> str:
    """Run ``neardup plan`` and return what it printed."""
    done = run("plan", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _recall_at_threshold(
    inputs: Path, texts: list[str], ids: list[str], tmp_path: Path, threshold: float, *args: str
) -> tuple[float, int]:
    """Plan (with ``args``), run dedup with the plan, and measure the recall of the pairs at or
    above the threshold (brute force over the plan's shingle sets): found = in one cluster."""
    plan_path = tmp_path / "plan.toml"
    printed = _plan(inputs, "--threshold", str(threshold), *args, "-o", plan_path)
    assert f"wrote {plan_path}" in printed
    assert "recommended" in printed
    config = load_config(plan_path).config
    assert config.lsh.threshold == threshold
    out = tmp_path / "out"
    done = run("dedup", inputs, "--config", plan_path, "-o", out, "-q")
    assert done.returncode == 0, done.stderr
    with (out / "clusters.jsonl").open(encoding="utf-8") as f:
        cluster = {r["id"]: r["cluster"] for r in map(json.loads, f)}
    sets = Shingler(config.sketch.shingle, config.sketch.normalize).shingle_sets(texts)
    truth = all_pairs_above(sets, threshold)
    found = sum(cluster[ids[a]] == cluster[ids[b]] for a, b in truth)
    return found / len(truth), len(truth)


@pytest.mark.slow
def test_plan_for_the_licences_reaches_its_recall(tmp_path: Path) -> None:
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    texts = [str(r["text"]) for r in records]
    ids = [str(r["id"]) for r in records]
    observed, num_true = _recall_at_threshold(SAMPLE, texts, ids, tmp_path, 0.8, "--recall", "0.9")
    assert num_true > 500, "the licences hold many pairs at or above 0.8"
    assert observed >= 0.9, (observed, num_true)


def test_plan_refuses_a_recall_above_one() -> None:
    done = run("plan", SAMPLE, "--recall", "1.5")
    assert done.returncode == 2, done.stderr
    assert "recall must be a float in (0, 1)" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_plan_for_a_sample_of_rfcs_reaches_its_recall(tmp_path: Path) -> None:
    rfcs = read_rfcs(limit=1200)
    ids = [f"rfc{n}" for n in rfcs]
    texts = list(rfcs.values())
    inputs = tmp_path / "rfcs.jsonl"
    with inputs.open("w", encoding="utf-8") as f:
        for doc_id, text in zip(ids, texts, strict=True):
            f.write(json.dumps({"id": doc_id, "text": text}) + "\n")
    # Planned from 600 of the 1,200 (the scaling to the whole input is exercised).
    observed, num_true = _recall_at_threshold(
        inputs, texts, ids, tmp_path, 0.7, "--recall", "0.95", "--sample", "600"
    )
    assert num_true > 20
    assert observed >= 0.95, (observed, num_true)


def test_plan_refuses_an_output_in_a_missing_directory_before_any_work(tmp_path: Path) -> None:
    done = run("plan", SAMPLE, "-o", tmp_path / "nodir" / "plan.toml")
    assert done.returncode == 2, done.stderr
    assert "no directory" in done.stderr
    assert "nodir" in done.stderr


def test_the_plan_is_an_ordinary_readable_file(tmp_path: Path) -> None:
    path = tmp_path / "plan.toml"
    _plan(SAMPLE, "--sample", "300", "-o", path)
    assert path.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["plan.toml"]  # no temporary left
    # It records what it read and which neardup made it, as every run does.
    assert f"# Made by neardup {neardup.__version__} (plan) from: {SAMPLE}\n" in path.read_text()


def test_plan_keeps_the_settings_of_its_config(tmp_path: Path) -> None:
    base = tmp_path / "base.toml"
    base.write_text(
        'keep = "longest"\n\n[sketch]\nkind = "minhash"\n\n'
        "[sketch.normalize]\nstrip_punctuation = true\n\n[lsh]\nthreshold = 0.7\n\n"
        '[output]\ncompress = "gzip"\n',
        encoding="utf-8",
    )
    path = tmp_path / "plan.toml"
    _plan(SAMPLE, "--config", base, "--sample", "300", "-o", path)
    config = load_config(path).config
    assert load_config(path).write.compress == "gzip"  # carried into the plan as it was
    assert (config.keep, config.sketch.kind) == ("longest", "minhash")
    assert config.sketch.normalize.strip_punctuation
    bands, rows = config.lsh.num_bands, config.lsh.num_rows
    assert bands is not None
    assert rows is not None
    assert bands * rows <= config.sketch.num_perm
    assert config.lsh.threshold == 0.7  # the config's, as no --threshold was given
    _plan(
        SAMPLE, "--config", base, "--threshold", "0.9", "--sample", "300", "-o", path, "--overwrite"
    )
    assert load_config(path).config.lsh.threshold == 0.9  # the flag over the config
