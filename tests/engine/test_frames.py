"""``dedup_frame``: a DataFrame's rows give what the command line gives for the same records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from neardup import DedupConfig, LSHSpec, dedup_files, dedup_frame
from neardup.errors import InputError
from tests.test_keep_by import scored_licences


@pytest.fixture(scope="module")
def rows(licenses: list[dict[str, object]]) -> list[dict[str, Any]]:
    return scored_licences(licenses)


CONFIG = DedupConfig(lsh=LSHSpec(threshold=0.6), keep_by=("score", "name:min"))


@pytest.mark.slow
def test_a_pandas_frame_equals_the_command_line_on_the_same_records(
    rows: list[dict[str, Any]], tmp_path: Path
) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    expected = dedup_files([path], tmp_path / "out", CONFIG)
    frame = pd.DataFrame(rows)
    kept, result = dedup_frame(frame, CONFIG, id_column="id")
    assert np.array_equal(result.clusters.labels, expected.clusters.labels)
    assert np.array_equal(result.clusters.keep, expected.clusters.keep)
    assert np.array_equal(result.clusters.similarity, expected.clusters.similarity)
    assert isinstance(kept, pd.DataFrame)
    kept_ids = [r["id"] for r, k in zip(rows, expected.clusters.keep, strict=True) if k]
    assert kept["id"].tolist() == kept_ids
    annotated, _ = dedup_frame(frame, CONFIG, id_column="id", annotate="nd")
    assert annotated.drop(columns="nd").equals(frame)
    lines = (tmp_path / "out" / "clusters.jsonl").read_text().splitlines()
    notes = [{k: r[k] for k in ("cluster", "keep", "similarity")} for r in map(json.loads, lines)]
    assert [{**n, "similarity": round(n["similarity"], 6)} for n in annotated["nd"]] == notes


def test_arrow_chunks_and_small_batches_change_nothing(rows: list[dict[str, Any]]) -> None:
    whole = pa.Table.from_pylist(rows[:600])
    chunked = pa.concat_tables([whole.slice(0, 250), whole.slice(250)])
    assert chunked.column("text").num_chunks == 2
    _, one = dedup_frame(whole, DedupConfig(lsh=LSHSpec(threshold=0.6)))
    kept, many = dedup_frame(chunked, DedupConfig(lsh=LSHSpec(threshold=0.6), batch_bytes=20_000))
    assert np.array_equal(one.clusters.labels, many.clusters.labels)
    assert isinstance(kept, pa.Table)
    assert kept.num_rows == int(many.clusters.keep.sum()) < 600
    assert list(many.ids)[:3] == ["0", "1", "2"]  # row numbers by default
    assert chunked.column("text").to_pylist() == [r["text"] for r in rows[:600]]  # untouched


def test_bad_frames_are_named() -> None:
    text = "one two three four five six seven"
    with pytest.raises(InputError, match="'text' is null at row 1"):
        dedup_frame(pa.table({"text": [text, None]}))
    with pytest.raises(InputError, match="rows 0 and 1 have the same id 'a'"):
        dedup_frame(pa.table({"text": [text, text], "id": ["a", "a"]}), id_column="id")
    with pytest.raises(InputError, match="no column 'body'"):
        dedup_frame(pa.table({"text": [text]}), text_column="body")
    with pytest.raises(InputError, match="no column 'q' to keep by"):
        dedup_frame(pa.table({"text": [text]}), DedupConfig(keep_by=("q",)))
    with pytest.raises(InputError, match="takes a pandas or polars DataFrame"):
        dedup_frame([text])
