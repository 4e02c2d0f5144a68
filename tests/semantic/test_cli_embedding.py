"""``neardup dedup --method embedding`` as a user runs it: outputs, saved vectors, refusals."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import PAIR_SCHEMA, SUMMARY_SCHEMA
from tests.integration.conftest import run, run_process

pytestmark = pytest.mark.slow  # the real model, whose kernels compile on a cold cache

TEXTS = [
    "The cat sat on the mat and looked out of the window.",
    "A cat was sitting on the mat, looking out through the window.",
    "Stock markets fell sharply on Monday after the announcement.",
    "The cat sat on the mat and looked out of the window.",
    "Fresh bread needs flour, water, salt and a long, slow rise.",
    "",
]


def _write(path: Path, texts: list[str]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i, text in enumerate(texts):
            f.write(json.dumps({"id": f"d{i}", "text": text}) + "\n")
    return path


def _outputs(directory: Path) -> dict[str, bytes]:
    return {
        name: (directory / name).read_bytes()
        for name in ("clusters.jsonl", "pairs.jsonl", "kept.jsonl")
    }


def test_paraphrases_cluster_and_saved_vectors_give_the_same_run(
    minilm: Path, tmp_path: Path
) -> None:
    """A paraphrase joins its original at the default cosine 0.9; the vectors saved with the
    run, given back with --embeddings, skip encoding and give identical outputs."""
    corpus = _write(tmp_path / "in.jsonl", TEXTS)
    first = run(
        "dedup", corpus, "-o", tmp_path / "a", "--method", "embedding", "--model", minilm,
        "--save-embeddings", "-q",
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    a = tmp_path / "a"
    clusters = [json.loads(line) for line in (a / "clusters.jsonl").read_text().splitlines()]
    assert [c["cluster"] for c in clusters] == ["d0", "d0", "d2", "d0", "d4", "d5"]
    pairs = [json.loads(line) for line in (a / "pairs.jsonl").read_text().splitlines()]
    for pair in pairs:
        PAIR_SCHEMA.validate(pair)
    assert {(p["a"], p["b"], p["identical"]) for p in pairs} == {
        ("d0", "d3", True),
        ("d0", "d1", False),
    }
    summary = json.loads((a / "summary.json").read_text())
    SUMMARY_SCHEMA.validate(summary)
    assert summary["measure"] == "cosine"
    assert summary["params"]["lsh"]["threshold"] == 0.9
    assert summary["lsh"]["scheme"] == "cosine"
    assert summary["outputs"]["embeddings"] == "embeddings.npy"
    vectors = np.load(a / "embeddings.npy")
    assert vectors.shape == (6, 384)
    np.testing.assert_array_equal(vectors[3], vectors[0])
    info = json.loads((a / "embeddings.json").read_text())
    assert (info["num_docs"], info["dim"], info["model"]) == (6, 384, str(minilm))

    reported = run("report", a, "-o", tmp_path / "report.html", "-q")
    assert reported.returncode == 0, reported.stderr
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "random hyperplanes over the embeddings" in page

    again = run(
        "dedup", corpus, "-o", tmp_path / "b", "--method", "embedding",
        "--embeddings", a / "embeddings.npy", "-q",
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert _outputs(tmp_path / "b") == _outputs(a)
    timings = json.loads((tmp_path / "b" / "summary.json").read_text())["timings_s"]
    assert timings["embed"] < summary["timings_s"]["embed"]

    other = _write(tmp_path / "other.jsonl", TEXTS[:5])
    refused = run(
        "dedup", other, "-o", tmp_path / "c", "--method", "embedding",
        "--embeddings", a / "embeddings.npy",
    )  # fmt: skip
    assert refused.returncode == 2
    assert "made for 6 documents, not this run's 5" in refused.stderr
    assert not (tmp_path / "c").exists()


def test_either_measure_finds_a_pair_and_says_which(minilm: Path, tmp_path: Path) -> None:
    """``--method minhash+embedding``: a paraphrase found by its embedding alone, a longer copy
    by its shingles alone (cosine 0.88), a reworded sentence by its embedding though it shares
    shingles below the threshold; pairs.jsonl gives both values and what found the pair."""
    texts = [
        *TEXTS,
        "The cat sat on the mat and looked out of the window at the rain.",
        "Stock markets fell sharply on Monday after the announcement by the bank.",
    ]
    corpus = _write(tmp_path / "in.jsonl", texts)
    done = run(
        "dedup", corpus, "-o", tmp_path / "out", "--method", "minhash+embedding", "--model",
        minilm, "--threshold", "0.5", "--pairs", "all", "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    pairs = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    for pair in pairs:
        PAIR_SCHEMA.validate(pair)
    assert {(p["a"], p["b"]): p["found_by"] for p in pairs} == {
        ("d0", "d3"): "both",
        ("d0", "d1"): "embedding",
        ("d0", "d6"): "shingles",
        ("d2", "d7"): "embedding",
    }
    by_pair = {(p["a"], p["b"]): p for p in pairs}
    assert by_pair["d0", "d6"]["similarity"] == pytest.approx(7 / 12, abs=1e-6)
    assert by_pair["d0", "d6"]["cosine"] < 0.9 <= by_pair["d0", "d1"]["cosine"]
    assert by_pair["d0", "d3"]["cosine"] == 1.0
    clusters = [json.loads(line) for line in (out / "clusters.jsonl").read_text().splitlines()]
    assert [c["cluster"] for c in clusters] == ["d0", "d0", "d2", "d0", "d4", "d5", "d0", "d2"]
    # d1 joined by its meaning: a Jaccard of 0 to d0, its cosine the pair's
    assert (clusters[1]["similarity"], clusters[1]["cosine"]) == (
        0.0,
        by_pair["d0", "d1"]["cosine"],
    )
    assert clusters[0]["cosine"] == clusters[3]["cosine"] == 1.0
    summary = json.loads((out / "summary.json").read_text())
    SUMMARY_SCHEMA.validate(summary)
    assert summary["measure"] == "jaccard"
    assert summary["params"]["embedding"]["with_shingles"] is True
    assert (summary["lsh"]["scheme"], summary["lsh"]["cosine"]["scheme"]) == ("bands", "cosine")
    assert summary["lsh"]["cosine"]["threshold"] == 0.9  # the default, as resolved


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--model", "m"], "--model applies to --method embedding"),
        (["--cosine-threshold", "0.9"], "applies to --method minhash+embedding"),
        (["--method", "embedding", "--cosine-threshold", "0.9"], "the cosine is --threshold"),
        (["--method", "minhash+embedding", "--cluster", "center"], "--cluster center"),
        (["--method", "minhash+embedding", "--sketch", "simhash"], "conflicts with --sketch"),
        (["--method", "minhash+embedding", "--verify", "none"], "--verify none"),
        (["--method", "minhash+embedding"], "needs a model"),
        (
            ["--method", "minhash+embedding", "--model", "m", "--cosine-threshold", "1.5"],
            "--cosine-threshold must be",
        ),
        (["--save-embeddings"], "--save-embeddings applies to --method embedding"),
        (["--method", "embedding", "--sketch", "minhash"], "drop --sketch"),
        (["--method", "embedding", "--shingle", "char:5"], "drop --shingle"),
        (["--method", "embedding", "--bands", "4", "--rows", "2"], "drop --bands"),
        (["--method", "embedding", "--measure", "containment"], "drop --measure"),
        (["--method", "embedding", "--verify", "signature"], "--verify signature"),
        (["--method", "embedding", "--engine", "spark"], "local engine"),
        (["--method", "embedding", "--unit", "line"], "--unit"),
        (["--method", "embedding"], "needs a model"),
        (["--method", "embedding", "--model", "missing"], "not a directory"),
        (["--method", "embedding", "--embeddings", "missing.npy"], "no such file"),
    ],
)
def test_what_does_not_apply_is_refused(options: list[str], message: str, tmp_path: Path) -> None:
    """One line naming the option, and no output."""
    corpus = _write(tmp_path / "in.jsonl", TEXTS)
    done = run("dedup", corpus, "-o", tmp_path / "out", *options, cwd=tmp_path)
    assert done.returncode in (1, 2)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert message in lines[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("point", "resumed_after", "method"),
    [
        ("verifying", "sketch", "embedding"),
        ("found", "find", "embedding"),
        ("found", "find", "minhash+embedding"),
    ],
)
def test_a_killed_embedding_run_resumes_to_the_same_outputs(
    minilm: Path, tmp_path: Path, point: str, resumed_after: str, method: str
) -> None:
    """Killed outright while verifying (the vectors made again) or after the checkpoint of
    everything before writing (the vectors, and the pairs' cosines, in it), the resumed run
    writes the same files."""
    corpus = _write(tmp_path / "in.jsonl", TEXTS)
    options = ("--method", method, "--model", minilm, "--save-embeddings", "--pairs", "all", "-q")
    reference = run("dedup", corpus, "-o", tmp_path / "reference", *options)
    assert reference.returncode == 0, reference.stderr
    out = tmp_path / "out"
    killed = run_process("dedup", corpus, "-o", out, *options, env={"NEARDUP_CRASH_AT": point})
    assert killed.returncode == -signal.SIGKILL
    assert not out.exists()
    resumed = run("dedup", corpus, "-o", out, *options, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((out / "summary.json").read_text())["resumed_after"] == resumed_after
    assert _outputs(out) == _outputs(tmp_path / "reference")
    for name in ("embeddings.npy", "embeddings.json"):
        assert (out / name).read_bytes() == (tmp_path / "reference" / name).read_bytes()


def test_vectors_from_a_parquet_table_need_no_model(tmp_path: Path) -> None:
    """``--embeddings FILE.parquet`` (an id and an embedding per document): pairs by their
    cosine, no model read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    corpus = _write(tmp_path / "in.jsonl", TEXTS[:3])
    vectors = {"d0": [1.0, 0.1, 0.0], "d1": [1.0, 0.15, 0.0], "d2": [0.0, 0.0, 1.0]}
    table = tmp_path / "vectors.parquet"
    pq.write_table(pa.table({"id": list(vectors), "embedding": list(vectors.values())}), table)
    done = run(
        "dedup", corpus, "-o", tmp_path / "out", "--method", "embedding", "--embeddings", table,
        "--pairs", "all", "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    pairs = [
        json.loads(line) for line in (tmp_path / "out" / "pairs.jsonl").read_text().splitlines()
    ]
    assert [(p["a"], p["b"]) for p in pairs] == [("d0", "d1")]
    assert pairs[0]["similarity"] == pytest.approx((1 + 0.015) / np.sqrt(1.01 * 1.0225), abs=1e-6)
