"""The Spark engine (real Spark, local[2]) against the local engine and union-find."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings

from neardup import (
    DedupConfig,
    DedupResult,
    LSHSpec,
    NeardupWarning,
    OutputSpec,
    ReadSpec,
    SketchSpec,
    dedup,
    dedup_files,
)
from neardup._faults import FAIL_ONCE_PROPERTY
from neardup.cluster import connected_components
from neardup.engine.spark import (
    SparkDedupResult,
    dedup_dataframe,
    dedup_files_spark,
)
from neardup.engine.spark_components import component_labels
from neardup.errors import InputError, ParameterError
from tests.conftest import SAMPLE, SUMMARY_SCHEMA, read_rfcs
from tests.integration.conftest import run, run_process
from tests.strategies import graphs
from tests.test_keep_by import kept_by_reference, scored_licences

pytestmark = [
    pytest.mark.spark,
    # pyspark's collect() leaves its local result sockets to the garbage collector.
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    # pyspark 3.5 compares pyarrow versions with distutils' LooseVersion.
    pytest.mark.filterwarnings("ignore:distutils Version classes are deprecated"),
]


def _same_outputs(local: Path, distributed: Path) -> None:
    for name in ("clusters.jsonl", "pairs.jsonl"):
        assert (distributed / name).read_bytes() == (local / name).read_bytes(), name


def test_outputs_equal_the_local_engines_on_the_bundled_sample_though_a_task_failed(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = DedupConfig(keep="longest")
    dedup_files([SAMPLE], tmp_path / "local", config)
    marker = tmp_path / "failed-once"
    context = spark.sparkContext
    context.setLocalProperty(FAIL_ONCE_PROPERTY, str(marker))
    monkeypatch.setattr("neardup._progress.LOG_EVERY_S", 0.0)  # a line at every report
    try:
        summary = dedup_files_spark(
            spark, [str(SAMPLE)], str(tmp_path / "spark"), config, show_progress=True
        )
    finally:
        context.setLocalProperty(FAIL_ONCE_PROPERTY, None)
    assert marker.exists()  # a task did fail, and was retried
    shown = capsys.readouterr().err.splitlines()
    for stage in ("read_sketch", "candidates", "verify", "write"):
        lines = [line for line in shown if line.startswith(f"spark {stage}: ")]
        assert lines, (stage, shown)
        assert all(" tasks" in line for line in lines), lines
    _same_outputs(tmp_path / "local", tmp_path / "spark")
    local = json.loads((tmp_path / "local" / "summary.json").read_text())
    written = json.loads((tmp_path / "spark" / "summary.json").read_text())
    assert written == json.loads(json.dumps(summary.to_dict()))
    assert (local["engine"], written["engine"]) == ("local", "spark")
    assert [key for key in written if key != "spark_master"] == list(local)
    SUMMARY_SCHEMA.validate(written)
    # Every count but the bad records, which only the local readers count.
    assert local["counts"].pop("bad_records_skipped") == 0
    assert written["counts"] == local["counts"]
    assert written["biggest_clusters"] == local["biggest_clusters"]
    assert written["similarity_histogram"] == local["similarity_histogram"]
    kept = spark.read.parquet(str(tmp_path / "spark" / "kept.parquet"))
    assert kept.count() == summary.counts.kept


@pytest.mark.parametrize("mode", ["components", "center"])
def test_rfc_sample_equals_the_local_engine_across_files(
    spark: Any, tmp_path: Path, mode: str
) -> None:
    texts = read_rfcs(limit=400)
    if not texts:
        pytest.skip("the RFC corpus is not in ../shared/data")
    items = sorted(texts.items())
    paths = []
    for part in range(2):  # two files, one gzipped: order is (file, line) in both engines
        path = tmp_path / f"rfc{part}.jsonl{'.gz' if part else ''}"
        lines = "".join(
            json.dumps({"id": f"rfc{n}", "text": t}) + "\n" for n, t in items[part::2]
        ).encode()
        path.write_bytes(gzip.compress(lines) if part else lines)
        paths.append(path)
    config = DedupConfig(
        lsh=LSHSpec(threshold=0.5),
        keep="longest",
        cluster=mode,  # type: ignore[arg-type]
        pairs="all" if mode == "components" else "spanning",
    )
    dedup_files(paths, tmp_path / "local", config)
    dedup_files_spark(spark, [str(p) for p in paths], str(tmp_path / "spark"), config)
    _same_outputs(tmp_path / "local", tmp_path / "spark")
    assert (tmp_path / "local" / "pairs.jsonl").read_text().count("\n") > 20
    lines = (tmp_path / "local" / "clusters.jsonl").read_text().splitlines()
    least = [json.loads(line)["min_similarity"] for line in lines]
    if mode == "center":  # the revisions chain at 0.5; centers do not
        assert min(least) >= 0.5
    else:
        assert min(least) < 0.5


@pytest.mark.parametrize(
    "sketch",
    [
        SketchSpec(kind="minhash"),
        SketchSpec(kind="bbit", bbits=2),
        SketchSpec(kind="bottomk"),
        SketchSpec(kind="weighted", num_perm=64),
    ],
    ids=lambda s: s.kind,
)
def test_dataframe_entry_point_equals_library_dedup(
    spark: Any, licenses: list[dict[str, object]], sketch: SketchSpec
) -> None:
    records = [(str(r["id"]), str(r["text"])) for r in licenses[:400]]
    config = DedupConfig(sketch=sketch, lsh=LSHSpec(threshold=0.7), keep="longest")
    expected = dedup([t for _, t in records], [i for i, _ in records], config)
    frame = spark.createDataFrame(
        [(n, i, t) for n, (i, t) in enumerate(records)], "n long, id string, text string"
    )
    result = dedup_dataframe(frame, config, order_column="n")
    _same_result(result, expected)


def _same_result(result: SparkDedupResult, expected: DedupResult) -> None:
    rows = sorted(result.clusters.select("doc", "cluster", "keep").collect())
    ids = expected.ids
    assert [r.cluster for r in rows] == [ids[i] for i in expected.clusters.labels.tolist()]
    assert [r.keep for r in rows] == expected.clusters.keep.tolist()
    near = {(r.a_doc, r.b_doc) for r in result.pairs.where("NOT exact").collect()}
    assert near == _near_pairs(expected)
    assert result.summary.counts == expected.summary.counts


def _near_pairs(result: DedupResult) -> set[tuple[int, int]]:
    return set(zip(result.pairs.first.tolist(), result.pairs.second.tolist(), strict=True))


@pytest.mark.parametrize("kind", ["oph", "bottomk"])
def test_the_bucket_cap_is_the_local_engines(
    spark: Any, licenses: list[dict[str, object]], kind: str
) -> None:
    # Buckets above max_bucket_size pair each document with the cap - 1 before it, by key:
    # with a cap of 3 the sample's families of variants lose candidates, and Spark loses the
    # same ones (bands, and bottom-k's one namespace of keys).
    records = [(str(r["id"]), str(r["text"])) for r in licenses[:400]]
    texts, ids = [t for _, t in records], [i for i, _ in records]
    sketch = SketchSpec(kind=kind)  # type: ignore[arg-type]
    config = DedupConfig(sketch=sketch, lsh=LSHSpec(max_bucket_size=3), pairs="all")
    everything = dedup(texts, ids, DedupConfig(sketch=sketch, pairs="all"))
    with pytest.warns(NeardupWarning, match="LSH buckets held more than 3 documents"):
        expected = dedup(texts, ids, config)
    assert expected.summary.counts.giant_buckets > 0
    assert expected.summary.counts.candidate_pairs < everything.summary.counts.candidate_pairs
    assert _near_pairs(expected) < _near_pairs(everything)  # the cap does change the pairs
    frame = spark.createDataFrame(
        [(n, i, t) for n, (i, t) in enumerate(records)], "n long, id string, text string"
    )
    with pytest.warns(NeardupWarning, match="LSH buckets held more than 3 documents"):
        result = dedup_dataframe(frame, config, order_column="n")
    _same_result(result, expected)


def _labels(spark: Any, num_nodes: int, edges: list[tuple[int, int]]) -> list[int]:
    frame = spark.createDataFrame(edges or [(0, 0)], "src long, dst long")
    found = dict(component_labels(frame).collect())
    return [found.get(node, node) for node in range(num_nodes)]


def _union_find(num_nodes: int, edges: list[tuple[int, int]]) -> list[int]:
    pairs = np.array(edges or [(0, 0)], dtype=np.int64)
    return connected_components(num_nodes, pairs[:, 0], pairs[:, 1]).labels.tolist()


@settings(max_examples=6, deadline=None)
@given(graphs(max_nodes=30))
def test_components_equal_union_find_on_random_graphs(
    shared_spark: Any, graph: tuple[int, list[tuple[int, int]]]
) -> None:
    num_nodes, edges = graph
    assert _labels(shared_spark, num_nodes, edges) == _union_find(num_nodes, edges)


@pytest.mark.parametrize("shape", ["chain", "reversed chain", "star", "two stars"])
def test_components_on_long_chains_and_stars(spark: Any, shape: str) -> None:
    n = 300
    order = np.random.default_rng(3).permutation(n).tolist()
    edges = {
        "chain": [(order[i], order[i + 1]) for i in range(n - 1)],
        "reversed chain": [(i + 1, i) for i in range(n - 1)],
        "star": [(n - 1, i) for i in range(n - 1)],
        "two stars": [(7, i) for i in range(0, n, 2)] + [(9, i) for i in range(1, n, 2)],
    }[shape]
    assert _labels(spark, n, edges) == _union_find(n, edges)


def test_an_unsupported_sketch_kind_is_refused(spark: Any) -> None:
    frame = spark.createDataFrame([("a", "text")], "id string, text string")
    with pytest.raises(ParameterError, match="local engine"):
        dedup_dataframe(frame, DedupConfig(sketch=SketchSpec(kind="supershingle")))


@pytest.mark.subprocess
def test_the_command_line_engine_flag(spark: Any, tmp_path: Path) -> None:
    local = run("dedup", SAMPLE, "-o", tmp_path / "local", "-q")
    assert local.returncode == 0, local.stderr
    spark_flags = ["--engine", "spark", "--spark-master", "local[2]",
                   "--spark-conf", "spark.sql.shuffle.partitions=4"]  # fmt: skip
    # The installed command, starting a Spark of its own.
    spark_run = run_process("dedup", SAMPLE, "-o", tmp_path / "spark", *spark_flags)
    assert spark_run.returncode == 0, spark_run.stderr
    assert "near-duplicate pairs" in spark_run.stdout
    _same_outputs(tmp_path / "local", tmp_path / "spark")
    # In this process the command takes the running session of these tests (local[2] too).
    quiet = run("dedup", SAMPLE, "-o", tmp_path / "none", *spark_flags, "--pairs", "none")
    assert quiet.returncode == 0, quiet.stderr
    assert not (tmp_path / "none" / "pairs.jsonl").exists()
    assert (tmp_path / "none" / "clusters.jsonl").read_bytes() == (
        tmp_path / "local" / "clusters.jsonl"
    ).read_bytes()
    bad = run("dedup", SAMPLE, "-o", tmp_path / "x", "--engine", "spark",
              "--spark-conf", "no-equals-sign")  # fmt: skip
    assert bad.returncode == 2
    assert "KEY=VALUE" in bad.stderr


def test_a_bad_record_names_the_file_and_byte_offset(spark: Any, tmp_path: Path) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_text('{"id": "a", "text": "one two three"}\n{"id": "b", "text": 7}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl at byte 37: bad record"):
        dedup_files_spark(spark, [str(source)], str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_keep_by_fields_and_annotations_equal_the_local_engine(
    spark: Any, tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    """Center clustering (the keep rule chooses the components' representatives, then the
    centers' order) and the annotated corpus."""
    records = scored_licences(licenses)
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    config = DedupConfig(
        lsh=LSHSpec(threshold=0.6),
        keep_by=("score", "name:min"),
        cluster="center",
    )
    write = OutputSpec(annotate="nd")
    dedup_files([path], tmp_path / "local", config, write=write)
    dedup_files_spark(spark, [str(path)], str(tmp_path / "spark"), config, write=write)
    _same_outputs(tmp_path / "local", tmp_path / "spark")
    kept_by_reference(tmp_path / "local" / "clusters.jsonl", records, list(config.keep_by))
    local = [json.loads(line) for line in (tmp_path / "local" / "annotated.jsonl").open()]
    annotated = spark.read.parquet(str(tmp_path / "spark" / "annotated.parquet")).collect()
    assert len(annotated) == len(local) == len(records)
    written = {row["id"]: row["nd"].asDict() for row in annotated}
    for record in local:
        note = written[record["id"]]
        assert {**note, "similarity": round(note["similarity"], 6)} == record["nd"]


def test_keep_by_parquet_dates_equals_the_local_engine(spark: Any, tmp_path: Path) -> None:
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    rfcs = read_rfcs(limit=300)
    if not rfcs:
        pytest.skip("the RFC corpus is not in ../shared/data")
    numbers, texts = zip(*sorted(rfcs.items()), strict=True)
    day = [dt.date(1990, 1, 1) + dt.timedelta(days=(i * 7919) % 4000) for i in range(len(texts))]
    table = pa.table(
        {
            "id": [f"rfc{n}" for n in numbers],
            "text": list(texts),
            "day": pa.array([d if i % 5 else None for i, d in enumerate(day)], pa.date32()),
        }
    )
    path = tmp_path / "rfcs.parquet"
    pq.write_table(table, path)
    config = DedupConfig(lsh=LSHSpec(threshold=0.5), keep_by=("day",))
    read = ReadSpec(id_field="id")
    dedup_files([path], tmp_path / "local", config, read=read)
    dedup_files_spark(spark, [str(path)], str(tmp_path / "spark"), config, read=read)
    _same_outputs(tmp_path / "local", tmp_path / "spark")
    kept = [json.loads(line) for line in (tmp_path / "local" / "clusters.jsonl").open()]
    assert sum(not row["keep"] for row in kept) > 10


def test_keep_by_field_of_two_types_is_named(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    lines = [
        {"id": "a", "text": "one two three four five six", "q": 1},
        {"id": "b", "text": "seven eight nine ten eleven twelve", "q": "high"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    config = DedupConfig(keep_by=("q",))
    with pytest.raises(InputError, match=r"'q' holds numbers .* and strings"):
        dedup_files_spark(spark, [str(path)], str(tmp_path / "spark"), config)
    assert not (tmp_path / "spark").exists()
