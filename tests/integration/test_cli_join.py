"""``neardup join`` as a user runs it: real data in files, the installed command, the outputs.

Truth is plain NumPy or Python over every pair; the command's pairs must all be close (with
their exact values) and the close pairs it misses must stay within what the amplified family
predicts. Bad input gets one line, an exit code, and no output directory.
"""

from __future__ import annotations

import csv
import json
import math
import random
import re
import subprocess
import sys
import zlib
from itertools import combinations
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sklearn.datasets import load_digits

from tests.integration.conftest import run

pytestmark = pytest.mark.usefixtures("installed")

TF_DIM = 256


@pytest.fixture(scope="module")
def licence_tf(licenses: list[dict[str, object]]) -> np.ndarray:
    """Word counts of the bundled licence texts hashed into 256 buckets (float32)."""
    out = np.zeros((len(licenses), TF_DIM), dtype=np.float32)
    for row, record in enumerate(licenses):
        words = re.findall(r"\w+", str(record["text"]).lower())
        out[row] = np.bincount([zlib.crc32(w.encode()) % TF_DIM for w in words], minlength=TF_DIM)
    return out[out.any(axis=1)]


def _pairs(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]


def _truth(metric: str, rows: np.ndarray, threshold: float) -> set[tuple[int, int]]:
    """Every close pair by brute force in NumPy."""
    x = rows.astype(np.float64)
    if metric == "cosine":
        unit = x / np.linalg.norm(x, axis=1, keepdims=True)
        close = unit @ unit.T >= threshold
    elif metric == "l2":
        sq = (x * x).sum(axis=1)
        close = np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2 * x @ x.T, 0)) <= threshold
    elif metric == "l1":
        close = np.abs(x[:, None, :] - x[None, :, :]).sum(axis=2) <= threshold
    else:  # hamming over 0/1 columns
        close = (x[:, None, :] != x[None, :, :]).sum(axis=2) <= threshold
    first, second = np.nonzero(np.triu(close, 1))
    return set(zip(first.tolist(), second.tolist(), strict=True))


def _exact(metric: str, a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(np.float64), b.astype(np.float64)
    if metric == "cosine":
        return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    if metric == "l2":
        return float(np.linalg.norm(a - b))
    return float(np.abs(a - b).sum())  # l1, and hamming over 0/1 columns


def _data(metric: str, licence_tf: np.ndarray) -> tuple[np.ndarray, float]:
    """Real rows for each metric, and a threshold with a few hundred close pairs."""
    digits = load_digits().data
    if metric == "cosine":
        return licence_tf[:1200], 0.97
    if metric == "hamming":
        unit = licence_tf[:1200] / np.linalg.norm(licence_tf[:1200], axis=1, keepdims=True)
        return (unit - unit.mean(axis=0)) > 0, 12
    if metric == "l1":
        return digits[:1000].astype(np.int64), 120
    return digits[:1000].astype(np.float32), 22.0


@pytest.mark.parametrize(
    ("metric", "options", "family"),
    [
        ("cosine", "", "HyperplaneHasher"),
        ("hamming", "", "BitSampler"),
        ("l1", "", "CauchyHasher"),
        ("l1", "--family unary --max-value 16", "UnaryBitSampler"),
        ("l2", "", "PStableHasher"),
    ],
)
def test_join_of_a_npy_file_finds_close_pairs_only_and_reaches_the_predicted_recall(
    metric: str, options: str, family: str, licence_tf: np.ndarray, tmp_path: Path
) -> None:
    rows, threshold = _data(metric, licence_tf)
    np.save(tmp_path / "rows.npy", rows)
    done = run(
        "join", "rows.npy", "--metric", metric, "--threshold", threshold, *options.split(),
        "-o", "out", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["family"] == family
    found = _pairs(tmp_path / "out")
    key = "similarity" if metric == "cosine" else "distance"
    truth = _truth(metric, rows, threshold)
    for pair in found:
        a, b = int(pair["a"]), int(pair["b"])  # type: ignore[call-overload]
        assert (a, b) in truth
        assert pair[key] == pytest.approx(_exact(metric, rows[a], rows[b]), abs=1e-6)
    p = summary["predicted_recall"]
    # The pairs miss independently at most with probability 1 - p each (more similar pairs
    # miss less): recall below p by 4 binomial standard deviations fails.
    assert len(found) >= len(truth) * p - 4 * math.sqrt(len(truth) * p * (1 - p))
    assert summary["counts"] == {
        "items": rows.shape[0],
        "candidate_pairs": summary["counts"]["candidate_pairs"],
        "pairs": len(found),
    }
    assert summary["num_bands"] * summary["num_rows"] <= 1024
    amplified = summary["sensitivity"]["amplified"]  # (d1, d2, p1, p2) after AND then OR
    assert amplified["d1"] == threshold
    assert amplified["p1"] == pytest.approx(p)
    assert amplified["p2"] < summary["sensitivity"]["family"]["p2"]
    assert len(truth) > 50


@pytest.mark.slow
def test_exact_jaccard_join_of_item_sets_equals_brute_force(
    licenses: list[dict[str, object]], tmp_path: Path
) -> None:
    records = [
        {"id": str(r["id"]), "items": sorted(set(re.findall(r"\w+", str(r["text"]).lower())))}
        for r in licenses[:800]
        if str(r["text"]).strip()
    ]
    with (tmp_path / "sets.jsonl").open("w") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)
    done = run(
        "join", "sets.jsonl", "--metric", "jaccard", "--threshold", 0.8, "--exact",
        "--id-field", "id", "-o", "out", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    sets = [set(r["items"]) for r in records]
    truth = set()
    for i, j in combinations(range(len(sets)), 2):
        shared, union = len(sets[i] & sets[j]), len(sets[i] | sets[j])
        if shared >= 0.8 * union:
            truth.add((records[i]["id"], records[j]["id"], round(shared / union, 6)))
    found = {(p["a"], p["b"], p["similarity"]) for p in _pairs(tmp_path / "out")}
    assert found == truth
    assert len(truth) > 20
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["family"] == "prefix"
    assert summary["predicted_recall"] == 1.0


def test_ratings_become_sets_of_the_items_rated_at_least_n(tmp_path: Path) -> None:
    rng = random.Random(7)
    users = {
        f"u{u}": {f"m{rng.randrange(40)}": rng.randint(1, 5) for _ in range(12)} for u in range(60)
    }
    users["u60"] = dict(users["u0"])  # a user rating exactly as u0
    users["u61"] = {**users["u1"], "m99": 1}  # as u1, plus a low rating dropped by set:3
    with (tmp_path / "ratings.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["user", "movie", "stars"])
        writer.writerows((u, m, s) for u, rated in users.items() for m, s in rated.items())
    done = run(
        "join", "ratings.csv", "--metric", "jaccard", "--threshold", 1.0, "--exact",
        "--entity-field", "user", "--item-field", "movie", "--rating-field", "stars",
        "--ratings", "set:3", "-o", "out", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    liked = {u: frozenset(m for m, s in rated.items() if s >= 3) for u, rated in users.items()}
    truth = {
        tuple(sorted((a, b), key=list(users).index))
        for a, b in combinations(users, 2)
        if liked[a] == liked[b] and liked[a]
    }
    found = {(p["a"], p["b"]) for p in _pairs(tmp_path / "out")}
    assert found == truth
    assert {("u0", "u60"), ("u1", "u61")} <= found


def _levenshtein(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


@pytest.mark.slow
def test_edit_join_of_licence_names_equals_brute_force(
    licenses: list[dict[str, object]], tmp_path: Path
) -> None:
    names = sorted({str(r["meta"]["name"]) for r in licenses if r["meta"].get("name")})[:700]  # type: ignore[index, union-attr]
    rng = random.Random(3)
    typos = []
    for name in names[:100]:  # one substitution each: distance 1 from the original
        i = rng.randrange(len(name))
        typos.append(name[:i] + ("x" if name[i] != "x" else "y") + name[i + 1 :])
    strings = names + typos
    with (tmp_path / "names.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["name"])
        writer.writerows([s] for s in strings)
    done = run(
        "join", "names.csv", "--metric", "edit", "--threshold", 2, "--text-field", "name",
        "-o", "out", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    truth = {
        (i, j, d)
        for i, j in combinations(range(len(strings)), 2)
        if abs(len(strings[i]) - len(strings[j])) <= 2
        and (d := _levenshtein(strings[i], strings[j])) <= 2
    }
    found = {(p["a"], p["b"], p["distance"]) for p in _pairs(tmp_path / "out")}
    assert found == truth
    assert len(truth) >= 100


def _ragged(root: Path) -> None:
    table = pa.table({"id": ["a", "b", "c"], "v": [[1.0, 2.0], [3.0, 4.0], [5.0]]})
    pq.write_table(table, root / "in.parquet")


@pytest.mark.parametrize(
    ("make", "args", "code", "words"),
    [
        (
            lambda root: np.save(root / "in.npy", np.array([[1.0, 2.0], [np.nan, 1.0]])),
            ["in.npy", "--metric", "cosine", "--threshold", "0.9"],
            1,
            ["in.npy", "row 1", "nan"],
        ),
        (
            _ragged,
            ["in.parquet", "--metric", "l2", "--threshold", "1", "--vector-field", "v"],
            1,
            ["in.parquet", "record 3", "same length"],
        ),
        (
            lambda root: np.save(root / "in.npy", np.ones((3, 8))),
            ["in.npy", "--metric", "hamming", "--threshold", "1"],
            1,
            ["in.npy", "hamming"],
        ),
        (
            lambda root: np.save(root / "in.npy", np.ones((3, 8))),
            ["in.npy", "--metric", "cosine", "--threshold", "1.5"],
            2,
            ["threshold", "[-1, 1]", "1.5"],
        ),
        (
            lambda root: np.save(root / "in.npy", np.ones((3, 8))),
            ["in.npy", "--metric", "hamming", "--threshold", "2.5"],
            2,
            ["threshold", "whole-number"],
        ),
        (
            lambda root: np.save(root / "in.npy", np.empty((0, 8))),
            ["in.npy", "--metric", "l2", "--threshold", "1"],
            1,
            ["in.npy", "no rows"],
        ),
        (
            lambda root: np.save(root / "in.npy", np.ones((3, 8))),
            ["in.npy", "--metric", "cosine", "--threshold", "0.9", "--exact"],
            2,
            ["exact", "jaccard"],
        ),
    ],
)
def test_bad_input_gets_one_line_and_no_output(
    make: object, args: list[str], code: int, words: list[str], tmp_path: Path
) -> None:
    make(tmp_path)  # type: ignore[operator]
    done = run("join", *args, "-o", "out", cwd=tmp_path)
    assert done.returncode == code, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ")
    for word in words:
        assert word in lines[0]
    assert not (tmp_path / "out").exists()
    assert not list(tmp_path.glob(".out.tmp-*"))


# Bounded memory, refused options, ids ---------------------------------------------------------


def _random_vectors(root: Path, n: int, dim: int = 8, seed: int = 0) -> Path:
    path = root / "v.npy"
    np.save(path, np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32))
    return path


def test_a_tiny_memory_budget_spills_and_writes_the_same_bytes(tmp_path: Path) -> None:
    _random_vectors(tmp_path, 2000)
    args = ["join", "v.npy", "--metric", "cosine", "--threshold", "0.9", "-q"]
    plain = run(*args, "-o", "plain", cwd=tmp_path)
    tiny = run(*args, "--memory-gb", "0.0001", "-o", "tiny", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert tiny.returncode == 0, tiny.stderr
    expected = (tmp_path / "plain" / "pairs.jsonl").read_bytes()
    assert expected.count(b"\n") > 500
    assert (tmp_path / "tiny" / "pairs.jsonl").read_bytes() == expected
    big, small = (
        json.loads((tmp_path / d / "summary.json").read_text()) for d in ("plain", "tiny")
    )
    assert small["counts"] == big["counts"]
    assert big["spilled_runs"] == 0
    assert small["spilled_runs"] > 1
    assert small["memory_bytes"] == int(0.0001 * 2**30)
    assert big["prediction"]["measured_pairs"] == pytest.approx(
        big["counts"]["candidate_pairs"], rel=0.2
    )


IGNORED = [
    # (input, metric, the options, the option refused)
    ("in.npy", "cosine", "--qgram 3", "--qgram"),
    ("in.npy", "cosine", "--items-field x", "--items-field"),
    ("in.npy", "cosine", "--ratings bag", "--ratings"),
    ("in.npy", "cosine", "--entity-field u", "--entity-field"),
    ("in.npy", "cosine", "--item-field i", "--item-field"),
    ("in.npy", "cosine", "--rating-field r", "--rating-field"),
    ("in.npy", "cosine", "--text-field t", "--text-field"),
    ("in.npy", "cosine", "--html-extract main", "--html-extract"),
    ("in.npy", "cosine", "--spark-master local", "--spark-master"),
    ("in.npy", "cosine", "--spark-conf a=b", "--spark-conf"),
    ("in.npy", "cosine", "--id-field id", "--id-field"),
    ("in.npy", "l2", "--max-value 3", "--max-value"),
    ("in.npy", "l2", "--family unary", "--family"),
    ("in.npy", "l1", "--max-value 3", "--max-value"),  # the C of the unary code
    ("in.npy", "l1", "--family unary --bucket-width 2", "--bucket-width"),
    ("in.jsonl", "edit", "--bands 3 --rows 2", "--bands"),
    ("in.jsonl", "edit", "--recall 0.9", "--recall"),
    ("in.jsonl", "edit", "--seed 1", "--seed"),
    ("in.jsonl", "edit", "--memory-gb 1", "--memory-gb"),
    ("in.jsonl", "edit", "--exact", "--exact"),
    ("in.jsonl", "jaccard", "--exact --recall 0.9", "--recall"),
    ("in.jsonl", "jaccard", "--entity-field u --item-field i --id-field id", "--id-field"),
]


@pytest.mark.parametrize(("name", "metric", "options", "option"), IGNORED)
def test_an_option_that_does_nothing_is_refused_before_any_work(
    name: str, metric: str, options: str, option: str, tmp_path: Path
) -> None:
    np.save(tmp_path / "in.npy", np.ones((3, 4), dtype=np.float32))
    (tmp_path / "in.jsonl").write_text('{"id": "a", "items": [1, 2], "text": "ab"}\n')
    args = [name, "--metric", metric, "--threshold", "1", *options.split(), "-o", "out"]
    done = run("join", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {option} ")
    assert not (tmp_path / "out").exists()


def test_a_cosine_threshold_every_pair_meets_is_refused_naming_threshold(tmp_path: Path) -> None:
    _random_vectors(tmp_path, 200, dim=32)
    done = run(
        "join", "v.npy", "--metric", "cosine", "--threshold", "-1", "-o", "out", cwd=tmp_path
    )
    assert done.returncode == 2
    assert "--threshold" in done.stderr
    assert "max_hashes" not in done.stderr
    assert not (tmp_path / "out").exists()
    done = run(
        "join", "v.npy", "--metric", "cosine", "--threshold", "-0.99", "-o", "o", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert len(_pairs(tmp_path / "o")) == 200 * 199 // 2


def test_ids_come_from_the_id_field_as_dedup_takes_them(tmp_path: Path) -> None:
    records = [
        {"id": "ann", "items": ["a", "b", "c", "d"], "text": "kitten"},
        {"id": "bob", "items": ["a", "b", "c", "d"], "text": "sitten"},
        {"id": "cat", "items": ["x", "y"], "text": "zzzzzz"},
    ]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    for metric, threshold in (("jaccard", "0.9"), ("edit", "1")):
        args = ["join", "in.jsonl", "--metric", metric, "--threshold", threshold, "-q"]
        done = run(*args, "-o", f"out-{metric}", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert [(p["a"], p["b"]) for p in _pairs(tmp_path / f"out-{metric}")] == [("ann", "bob")]
        numbered = f"numbered-{metric}"
        done = run(*args, "--id-field", "", "-o", numbered, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert [(p["a"], p["b"]) for p in _pairs(tmp_path / numbered)] == [(0, 1)]


def test_a_zero_vector_stops_the_command_naming_its_row(tmp_path: Path) -> None:
    np.save(tmp_path / "in.npy", np.array([[1.0, 2.0], [0.0, 0.0], [2.0, 4.0]], np.float32))
    args = ["in.npy", "--metric", "cosine", "--threshold", "0.5", "-o", "out"]
    done = run("join", *args, cwd=tmp_path)
    assert done.returncode == 1
    assert "row 1" in done.stderr
    assert "all zeros" in done.stderr


_PEAK_RSS = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stderr.write(done.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(done.returncode)
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_join_of_many_candidates_stays_within_its_memory(tmp_path: Path) -> None:
    """30,000 random vectors at cosine 0.6: ~75 million bucket pairs measured.

    Gathered whole, as the join once did, the candidates alone took several GB; measured in
    chunks within --memory-gb 0.125 the whole command stays under 400 MB.
    """
    from tests.integration.conftest import NEARDUP

    path = _random_vectors(tmp_path, 30_000, dim=32, seed=1)
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, str(NEARDUP), "join", str(path), "--metric", "cosine",
         "--threshold", "0.6", "--memory-gb", "0.125", "-o", str(tmp_path / "out")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    peak_mb = int(done.stdout.strip()) / 1024
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["counts"]["candidate_pairs"] > 50_000_000
    assert "--threshold 0." in done.stderr  # the up-front warning names a threshold that cuts
    assert f"{summary['prediction']['measured_pairs']:,}" in done.stderr
    assert peak_mb < 400, f"peak RSS {peak_mb:.0f} MB"


def test_the_bucket_cap_is_an_option_and_what_it_leaves_out_is_said(tmp_path: Path) -> None:
    np.save(tmp_path / "in.npy", np.ones((30, 8), dtype=np.float32))
    args = ["in.npy", "--metric", "cosine", "--threshold", "0.9", "--bands", "2", "--rows", "4"]
    capped = run("join", *args, "--max-bucket-size", "5", "-o", "capped", "-q", cwd=tmp_path)
    assert capped.returncode == 0, capped.stderr
    assert "a larger --max-bucket-size measures them" in capped.stderr
    summary = json.loads((tmp_path / "capped" / "summary.json").read_text())
    assert summary["bucket_pairs_skipped"] == 2 * (435 - (10 + 25 * 4))
    whole = run("join", *args, "--max-bucket-size", "30", "-o", "whole", "-q", cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr
    assert len((tmp_path / "whole" / "pairs.jsonl").read_text().splitlines()) == 435
    refused = run("join", "in.npy", "--metric", "edit", "--threshold", "1",
                  "--max-bucket-size", "5", "-o", "x", cwd=tmp_path)  # fmt: skip
    assert refused.returncode == 2
    assert "--max-bucket-size applies to the LSH joins" in refused.stderr
