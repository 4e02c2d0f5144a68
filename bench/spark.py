"""The local engine against Spark local[2] on the RFC corpus, and Spark's cost per stage by size.

For each input size (a fraction of the 9,823 RFCs, 537 MB, written as JSONL): the wall time of
``dedup_files`` (local engine) and of ``dedup_files_spark`` on ``local[2]`` (one process, two
task threads: the same 2 cores), their ratio, and for Spark per neardup stage the wall time,
the shuffle bytes written and the bytes of the checkpointed signature rows, read from Spark's
REST API (``/jobs`` by job group ``neardup:<stage>``, ``/stages``, ``/storage/rdd``). Both
engines' ``clusters.jsonl`` and ``pairs.jsonl`` are compared byte for byte.

Run: ``.venv/bin/python bench/spark.py [--fractions 0.25 0.5 1]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpora import load_rfcs  # noqa: E402
from neardup import DedupConfig, dedup_files  # noqa: E402
from neardup.engine.spark import dedup_files_spark, spark_session  # noqa: E402


def _rest(spark: Any, path: str) -> Any:
    base = spark.sparkContext.uiWebUrl
    app = spark.sparkContext.applicationId
    with urllib.request.urlopen(f"{base}/api/v1/applications/{app}/{path}") as response:
        return json.load(response)


def _shuffle_by_stage(spark: Any, seen_jobs: set[int]) -> dict[str, int]:
    """Shuffle bytes written per neardup stage by the jobs not in ``seen_jobs``."""
    stages = {s["stageId"]: s for s in _rest(spark, "stages?status=complete")}
    out: dict[str, int] = {}
    for job in _rest(spark, "jobs"):
        if job["jobId"] in seen_jobs or not str(job.get("jobGroup", "")).startswith("neardup:"):
            continue
        seen_jobs.add(job["jobId"])
        group = job["jobGroup"].removeprefix("neardup:")
        written = sum(stages[i]["shuffleWriteBytes"] for i in job["stageIds"] if i in stages)
        out[group] = out.get(group, 0) + written
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.25, 0.5, 1.0])
    args = parser.parse_args()
    ids, texts = load_rfcs()
    spark = spark_session("local[2]", ["spark.sql.shuffle.partitions=8"])
    spark.sparkContext.setLogLevel("ERROR")
    work = Path(tempfile.mkdtemp(prefix="neardup-spark-bench-"))
    seen_jobs: set[int] = set()
    config = DedupConfig()
    rows = []
    try:
        for fraction in args.fractions:
            count = max(1, int(len(texts) * fraction))
            source = work / f"rfc-{count}.jsonl"
            with source.open("w", encoding="utf-8") as f:
                for doc_id, text in zip(ids[:count], texts[:count], strict=True):
                    f.write(json.dumps({"id": doc_id, "text": text}) + "\n")
            megabytes = source.stat().st_size / 1e6
            start = time.perf_counter()
            dedup_files([source], work / f"local-{count}", config)
            local_s = time.perf_counter() - start
            _shuffle_by_stage(spark, seen_jobs)  # forget earlier jobs
            start = time.perf_counter()
            summary = dedup_files_spark(spark, [str(source)], str(work / f"spark-{count}"), config)
            spark_s = time.perf_counter() - start
            shuffle = _shuffle_by_stage(spark, seen_jobs)
            stored = sum(r["memoryUsed"] + r["diskUsed"] for r in _rest(spark, "storage/rdd"))
            same = all(
                (work / f"local-{count}" / name).read_bytes()
                == (work / f"spark-{count}" / name).read_bytes()
                for name in ("clusters.jsonl", "pairs.jsonl")
            )
            rows.append((count, megabytes, local_s, spark_s, summary, shuffle, stored, same))
            spark.catalog.clearCache()
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()
    print("\n| docs | MB | local s | Spark local[2] s | Spark / local | identical outputs |")
    print("|---:|---:|---:|---:|---:|---|")
    for count, mb, local_s, spark_s, _, _, _, same in rows:
        print(
            f"| {count:,} | {mb:,.0f} | {local_s:.1f} | {spark_s:.1f} | {spark_s / local_s:.1f}x "
            f"| {'yes' if same else 'NO'} |"
        )
    stages = ["read_sketch", "exact", "candidates", "verify", "cluster", "write"]
    print("\nSpark, seconds and shuffle MB written per stage:\n")
    print("| docs | " + " | ".join(stages) + " | cached + checkpointed MB | per doc, bytes |")
    print("|---:|" + "---:|" * (len(stages) + 2))
    for count, _, _, spark_s, summary, shuffle, stored, _ in rows:
        timings = dict(summary.times.seconds)
        timings["write"] = round(spark_s - sum(timings.values()), 2)
        cells = [f"{timings.get(s, 0):.1f} s / {shuffle.get(s, 0) / 1e6:.1f} MB" for s in stages]
        print(
            f"| {count:,} | "
            + " | ".join(cells)
            + f" | {stored / 1e6:.1f} | {stored / count:,.0f} |"
        )


if __name__ == "__main__":
    main()
