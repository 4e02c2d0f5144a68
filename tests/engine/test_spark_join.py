"""``neardup join --engine spark`` (real Spark, local[2]) against the local join."""

from __future__ import annotations

import json
import re
import zlib
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from neardup.engine.spark_join import join_files_spark
from neardup.errors import InputError, NeardupWarning, ParameterError
from neardup.jobs.join import join_files
from neardup.join.inputs import JoinSource
from neardup.params import JoinSpec
from tests.conftest import SUMMARY_SCHEMA

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings("ignore:distutils Version classes are deprecated"),
]


def _words(record: dict[str, object]) -> list[str]:
    return re.findall(r"\w+", str(record["text"]).lower())


@pytest.fixture(scope="module")
def licence_table(licenses: list[dict[str, object]]) -> pa.Table:
    """The licence sample as ids, hashed TF vectors (128 dims) and word sets."""
    kept = [r for r in licenses if _words(r)][:1500]
    vectors = [
        np.bincount([zlib.crc32(w.encode()) % 128 for w in _words(r)], minlength=128).tolist()
        for r in kept
    ]
    return pa.table(
        {
            "key": [str(r["id"]) for r in kept],
            "vector": pa.array(vectors, pa.list_(pa.float64())),
            "words": [sorted(set(_words(r))) for r in kept],
        }
    )


@pytest.mark.parametrize(
    ("spec", "source"),
    [
        (JoinSpec(metric="cosine", threshold=0.95), JoinSource(vector_field="vector")),
        (JoinSpec(metric="jaccard", threshold=0.8), JoinSource(items_field="words")),
        (
            JoinSpec(metric="cosine", threshold=0.9, max_bucket_size=3),
            JoinSource(vector_field="vector", id_field="key"),
        ),
    ],
)
def test_spark_join_writes_the_local_pairs(
    spark: Any,
    licence_table: pa.Table,
    spec: JoinSpec,
    source: JoinSource,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "items.parquet"
    pq.write_table(licence_table, path, row_group_size=400)  # several batches per task
    capped = spec.max_bucket_size < 100  # both engines say what the cap left out
    with pytest.warns(NeardupWarning, match="not measured") if capped else nullcontext():
        local = join_files(path, tmp_path / "local", spec, source)
    monkeypatch.setattr("neardup._progress.LOG_EVERY_S", 0.0)  # a line at every report
    capsys.readouterr()
    with pytest.warns(NeardupWarning, match="not measured") if capped else nullcontext():
        distributed = join_files_spark(
            spark, path, str(tmp_path / "spark"), spec, source, show_progress=True
        )
    shown = capsys.readouterr().err
    assert "spark read: " in shown
    assert "spark join: " in shown
    pairs = (tmp_path / "local" / "pairs.jsonl").read_bytes()
    assert (tmp_path / "spark" / "pairs.jsonl").read_bytes() == pairs
    assert pairs.count(b"\n") > 10
    names = (
        "num_bands",
        "num_rows",
        "predicted_recall",
        "counts",
        "family",
        "bucket_pairs_skipped",
    )
    for name in names:
        assert distributed[name] == local[name], name
    written = json.loads((tmp_path / "spark" / "summary.json").read_text())
    SUMMARY_SCHEMA.validate(written)
    assert (local["engine"], written["engine"]) == ("local", "spark")


def test_spark_join_refuses_what_it_does_not_run(
    spark: Any, licence_table: pa.Table, tmp_path: Path
) -> None:
    path = tmp_path / "items.parquet"
    pq.write_table(licence_table, path)
    with pytest.raises(ParameterError, match="cosine and jaccard"):
        join_files_spark(spark, path, str(tmp_path / "a"), JoinSpec(metric="l2", threshold=1))
    with pytest.raises(InputError, match="one Parquet file"):
        join_files_spark(spark, tmp_path, str(tmp_path / "d"), JoinSpec())
    exact = JoinSpec(metric="jaccard", threshold=0.9, exact=True)
    with pytest.raises(ParameterError, match="local engine"):
        join_files_spark(spark, path, str(tmp_path / "b"), exact, JoinSource(items_field="words"))
    np.save(tmp_path / "rows.npy", np.ones((2, 2)))
    with pytest.raises(InputError, match="one Parquet file"):
        join_files_spark(
            spark, tmp_path / "rows.npy", str(tmp_path / "c"), JoinSpec(), JoinSource()
        )
    assert not any((tmp_path / name).exists() for name in "abcd")


@pytest.mark.parametrize(
    ("vectors", "ids", "words"),
    [
        ([[1.0, 2.0], [3.0, 4.0], [5.0]], ["a", "b", "c"], "record 3: the vector has 1 values"),
        (
            [[1.0, 2.0], [0.0, 0.0], [5.0, 1.0]],
            ["a", "b", "c"],
            "record 2: the vector is all zeros",
        ),
        ([[1.0, 2.0], None, [5.0, 1.0]], ["a", "b", "c"], "record 2: the value is null"),
        ([[1.0, 2.0], [2.0, 1.0], [5.0, 1.0]], ["a", "b", "a"], "id 'a' is given twice"),
    ],
)
def test_spark_join_refuses_bad_records_naming_them(
    spark: Any, vectors: list[Any], ids: list[str], words: str, tmp_path: Path
) -> None:
    path = tmp_path / "items.parquet"
    pq.write_table(pa.table({"key": ids, "v": pa.array(vectors, pa.list_(pa.float64()))}), path)
    source = JoinSource(vector_field="v", id_field="key")
    with pytest.raises(InputError, match=words):
        join_files_spark(spark, path, str(tmp_path / "out"), JoinSpec(threshold=0.5), source)
    assert not (tmp_path / "out").exists()
