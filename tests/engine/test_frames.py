"""``dedup_frame`` and ``dedup_dataset``: a frame's or dataset's rows give what the command line
gives for the same records; Arrow files and saved datasets as command-line inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from neardup import DedupConfig, LSHSpec, dedup_dataset, dedup_files, dedup_frame
from neardup.engine import frames
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


def test_arrow_chunks_and_small_batches_change_nothing(
    rows: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = pa.Table.from_pylist(rows[:600])
    chunked = pa.concat_tables([whole.slice(0, 250), whole.slice(250)])
    assert chunked.column("text").num_chunks == 2
    _, one = dedup_frame(whole, DedupConfig(lsh=LSHSpec(threshold=0.6)))
    monkeypatch.setattr(frames, "DEFAULT_BATCH_BYTES", 20_000)
    kept, many = dedup_frame(chunked, DedupConfig(lsh=LSHSpec(threshold=0.6)))
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


@pytest.mark.slow
def test_a_saved_dataset_equals_the_command_line_on_its_folder(
    rows: list[dict[str, Any]], tmp_path: Path
) -> None:
    datasets = pytest.importorskip("datasets")
    datasets.disable_progress_bars()
    datasets.Dataset.from_list(rows).save_to_disk(tmp_path / "saved")
    loaded = datasets.load_from_disk(str(tmp_path / "saved"))  # memory-mapped
    expected = dedup_files([tmp_path / "saved"], tmp_path / "out", CONFIG)
    kept, result = dedup_dataset(loaded, CONFIG, id_column="id")
    assert np.array_equal(result.clusters.labels, expected.clusters.labels)
    assert np.array_equal(result.clusters.keep, expected.clusters.keep)
    on_disk = datasets.Dataset.from_file(str(tmp_path / "out" / "kept.arrow"))
    assert kept.to_list() == on_disk.to_list()
    assert kept["id"] == [r["id"] for r, k in zip(rows, expected.clusters.keep, strict=True) if k]
    annotated, _ = dedup_dataset(loaded, CONFIG, id_column="id", annotate=True)
    assert annotated.column_names == [*loaded.column_names, "neardup"]
    assert [n["keep"] for n in annotated["neardup"]] == expected.clusters.keep.tolist()


def test_a_dataset_is_read_in_its_row_order(rows: list[dict[str, Any]]) -> None:
    datasets = pytest.importorskip("datasets")
    whole = datasets.Dataset.from_list(rows[:400])
    backwards = whole.select(range(399, -1, -1))  # an indices mapping over the same table
    kept, result = dedup_dataset(backwards, DedupConfig(lsh=LSHSpec(threshold=0.6)))
    reversed_table = pa.Table.from_pylist(rows[:400]).take(np.arange(399, -1, -1))
    _, forwards = dedup_frame(reversed_table, DedupConfig(lsh=LSHSpec(threshold=0.6)))
    assert np.array_equal(result.clusters.labels, forwards.clusters.labels)
    assert kept.num_rows == int(result.clusters.keep.sum()) < 400
    assert kept["id"][0] == rows[399]["id"]


def test_a_polars_frame_comes_back_as_polars(rows: list[dict[str, Any]]) -> None:
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame(rows[:300])
    config = DedupConfig(lsh=LSHSpec(threshold=0.6))
    kept, result = dedup_frame(frame, config, id_column="id")
    _, expected = dedup_frame(pa.Table.from_pylist(rows[:300]), config, id_column="id")
    assert isinstance(kept, pl.DataFrame)
    assert kept.height == int(result.clusters.keep.sum())
    assert np.array_equal(result.clusters.labels, expected.clusters.labels)


def test_arrow_files_in_either_format_are_inputs(
    rows: list[dict[str, Any]], tmp_path: Path
) -> None:
    table = pa.Table.from_pylist(rows[:300])
    with pa.ipc.new_file(str(tmp_path / "file.arrow"), table.schema) as writer:
        writer.write_table(table, max_chunksize=70)
    with pa.ipc.new_stream(str(tmp_path / "stream.arrow"), table.schema) as writer:
        writer.write_table(table)
    config = DedupConfig(lsh=LSHSpec(threshold=0.6))
    one = dedup_files([tmp_path / "file.arrow"], tmp_path / "one", config)
    two = dedup_files([tmp_path / "stream.arrow"], tmp_path / "two", config)
    assert np.array_equal(one.clusters.labels, two.clusters.labels)
    with pa.ipc.open_stream(str(tmp_path / "one" / "kept.arrow")) as reader:
        kept = reader.read_all()
    assert kept.column("id").to_pylist() == [
        r["id"] for r, k in zip(rows, one.clusters.keep, strict=False) if k
    ]
    assert kept.schema.equals(table.schema)


def test_bad_arrow_inputs_are_named(tmp_path: Path) -> None:
    (tmp_path / "bad.arrow").write_bytes(b"not arrow at all")
    with pytest.raises(InputError, match=r"bad\.arrow.*not a readable Arrow IPC file"):
        dedup_files([tmp_path / "bad.arrow"], tmp_path / "out")
    (tmp_path / "saved").mkdir()
    (tmp_path / "saved" / "state.json").write_text("{}")
    with pytest.raises(InputError, match=r"state\.json.*does not name the dataset's files"):
        dedup_files([tmp_path / "saved"], tmp_path / "out")


def test_a_frame_of_web_pages_compares_them_without_their_hosts_templates() -> None:
    """``host_templates`` in a frame: the same clusters and similarities as ``neardup.dedup``,
    and a mirrored short page joins its original."""
    from neardup import dedup
    from tests.test_templates import _pages

    pages = _pages()
    config = DedupConfig(host_templates=True, pairs="all")
    frame = pd.DataFrame({"id": list(pages), "text": list(pages.values())})
    _, result = dedup_frame(frame, config, id_column="id")
    expected = dedup(list(pages.values()), list(pages), config)
    assert np.array_equal(result.clusters.labels, expected.clusters.labels)
    assert np.allclose(result.clusters.similarity, expected.clusters.similarity)
    ids = list(pages)
    search = ids.index("https://docs.example/search.html")
    assert result.clusters.labels[ids.index("https://mirror.example/search.html")] == search
    assert result.summary.host_templates == expected.summary.host_templates
