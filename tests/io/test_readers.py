"""Reading every format, and bad input: clear errors naming file and line, nothing half-written."""

from __future__ import annotations

import csv
import gzip
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup import InputError, OutputSpec, ReadSpec, dedup_files

BASE = (
    "the licence grants every person a perpetual worldwide royalty free right to use copy and "
    "modify the work"
)
RECORDS = [
    {"id": "a", "text": BASE, "extra": 1},
    {"id": "b", "text": BASE + " forever", "extra": 2},
    {
        "id": "c",
        "text": "a completely different document about the weather in spring and summer",
        "extra": 3,
    },
    {"id": "d", "text": BASE.upper(), "extra": 4},
]
EXPECTED_KEEP = [
    True,
    False,
    True,
    False,
]  # b is a near copy of a, d an exact copy (after case folding)


def _jsonl_lines(records: list[dict[str, object]]) -> list[bytes]:
    return [json.dumps(r).encode() + b"\n" for r in records]


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    data = b"".join(_jsonl_lines(records))
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(data))
    elif path.suffix == ".zst":
        path.write_bytes(zstandard.ZstdCompressor().compress(data))
    elif path.suffix == ".csv":
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(records[0]))
            writer.writeheader()
            writer.writerows(records)
    elif path.suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(records), path)
    else:
        path.write_bytes(data)
    return path


def _keep_flags(output: Path) -> list[bool]:
    lines = (output / "clusters.jsonl").read_text().splitlines()
    return [json.loads(line)["keep"] for line in lines]


@pytest.mark.parametrize(
    "name", ["in.jsonl", "in.jsonl.gz", "in.jsonl.zst", "in.csv", "in.parquet"]
)
def test_every_format_is_read_and_kept_records_are_unchanged(tmp_path: Path, name: str) -> None:
    source = _write(tmp_path / name, RECORDS)
    out = tmp_path / "out"
    dedup_files([source], out)
    assert _keep_flags(out) == EXPECTED_KEEP
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["exact_duplicates"] == 1
    assert summary["counts"]["verified_pairs"] == 1
    kept = [r for r, k in zip(RECORDS, EXPECTED_KEEP, strict=True) if k]
    if name.endswith(".parquet"):
        assert pq.read_table(out / "kept.parquet").to_pylist() == kept
    elif name.endswith(".csv"):
        with (out / "kept.csv").open(newline="", encoding="utf-8") as f:
            assert list(csv.DictReader(f)) == [{k: str(v) for k, v in r.items()} for r in kept]
    else:
        assert (out / "kept.jsonl").read_bytes() == b"".join(_jsonl_lines(kept))


def test_a_directory_of_text_files_uses_relative_paths_as_ids(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    for i, record in enumerate(RECORDS):
        folder = docs / "sub" if i % 2 else docs
        (folder / f"{record['id']}.txt").write_text(str(record["text"]), encoding="utf-8")
    out = tmp_path / "out"
    dedup_files([docs], out)
    ids = [json.loads(line)["id"] for line in (out / "clusters.jsonl").read_text().splitlines()]
    assert ids == ["a.txt", "c.txt", "sub/b.txt", "sub/d.txt"]
    kept = [json.loads(line) for line in (out / "kept.jsonl").read_text().splitlines()]
    assert [k["id"] for k in kept] == ["a.txt", "c.txt"]


def test_compressed_kept_output(tmp_path: Path) -> None:
    source = _write(tmp_path / "in.jsonl", RECORDS)
    dedup_files([source], tmp_path / "gz", write=OutputSpec(compress="gzip"))
    dedup_files([source], tmp_path / "zst", write=OutputSpec(compress="zstd"))
    expected = b"".join(_jsonl_lines([RECORDS[0], RECORDS[2]]))
    assert gzip.decompress((tmp_path / "gz" / "kept.jsonl.gz").read_bytes()) == expected
    assert (
        zstandard.ZstdDecompressor()
        .decompressobj()
        .decompress((tmp_path / "zst" / "kept.jsonl.zst").read_bytes())
        == expected
    )


def test_ids_default_to_file_and_line(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(json.dumps({"text": str(r["text"])}) for r in RECORDS) + "\n")
    dedup_files([source], tmp_path / "out")
    ids = [
        json.loads(line)["id"]
        for line in (tmp_path / "out" / "clusters.jsonl").read_text().splitlines()
    ]
    assert ids == ["in.jsonl:1", "in.jsonl:2", "in.jsonl:3", "in.jsonl:4"]


BAD_LINES = [
    (b'{"id": "x", "text": "fine"\n', "malformed JSON"),
    (
        b'{"id": "x", "body": "no text field"}\n',
        "record has no 'text' field (fields: 'id', 'body')",
    ),
    (b'{"id": "x", "text": 42}\n', "field 'text' is a number, expected a string"),
    (b'{"id": "x", "text": null}\n', "field 'text' is null, expected a string"),
    (
        b'{"id": {"a": 1}, "text": "t"}\n',
        "field 'id' is an object, expected a string or an integer",
    ),
    (b'["a", "list"]\n', "record is an array, expected a JSON object"),
    (b'{"id": "x", "text": "caf\xe9"}\n', "line is not valid UTF-8 (byte 0xe9 at column 25)"),
    (
        b'{"id": "x", "n": ' + b"9" * 4301 + b', "text": "t"}\n',
        "unreadable JSON (Exceeds the limit (4300 digits) for integer string conversion",
    ),
]


@pytest.mark.parametrize(("line", "message"), BAD_LINES, ids=[m for _, m in BAD_LINES])
def test_a_bad_record_names_file_line_and_remedy(tmp_path: Path, line: bytes, message: str) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(
        b"".join(_jsonl_lines(RECORDS[:2])) + b"\n" + line + b"".join(_jsonl_lines(RECORDS[2:]))
    )
    out = tmp_path / "out"
    with pytest.raises(InputError) as info:
        dedup_files([source], out)
    assert str(info.value).startswith(f"{source}:4: {message}")
    assert "--skip-bad-records" in str(info.value) or "--text-field" in str(info.value)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [source]  # no temporary directory left behind


@pytest.mark.parametrize(("line", "message"), BAD_LINES, ids=[m for _, m in BAD_LINES])
def test_skipped_bad_records_are_counted(tmp_path: Path, line: bytes, message: str) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(line + b"".join(_jsonl_lines(RECORDS)) + line)
    out = tmp_path / "out"
    dedup_files([source], out, read=ReadSpec(skip_bad_records=True))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["bad_records_skipped"] == 2
    assert _keep_flags(out) == EXPECTED_KEEP
    assert (out / "kept.jsonl").read_bytes() == b"".join(_jsonl_lines([RECORDS[0], RECORDS[2]]))


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.jsonl", b"", "file has no records (it is empty)"),
        ("blank.jsonl", b"\n  \n", "file has no records (it is empty)"),
        ("empty.csv", b"", "file has no records (it is empty)"),
        ("data.xml", b"<a/>", "unknown input format '.xml'"),
        ("noext", b"{}", "unknown input format '(no extension)'"),
        ("bad.jsonl.gz", b"not gzip at all", "cannot read"),
        ("bad.parquet", b"PAR1 not really", "not a readable Parquet file"),
        ("no-rows.parquet", None, "no usable records in the input"),
        ("ragged.csv", b"id,text\na,hello\nb,too,many\n", "row has 3 fields, the header has 2"),
    ],
)
def test_unusable_files_get_clear_errors(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    source = tmp_path / name
    if content is None:  # a valid Parquet file without a single row group
        pq.ParquetWriter(source, pa.schema({"id": pa.string(), "text": pa.string()})).close()
        assert pq.ParquetFile(source).metadata.num_row_groups == 0
    else:
        source.write_bytes(content)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        dedup_files([source], tmp_path / "out")
    if content is not None:
        assert str(source) in str(info.value)
    assert not (tmp_path / "out").exists()


def test_ids_may_be_the_texts_themselves_and_are_written_unnormalised(tmp_path: Path) -> None:
    texts = ["ÉCOLE ÉTÉ À PARIS", "Ⱥ and Ω grow and shrink", "école été à paris"]
    for name in ("in.jsonl", "in.parquet", "in.csv"):
        source = _write(tmp_path / name, [{"text": t} for t in texts])
        out = tmp_path / f"out-{name}"
        dedup_files([source], out, read=ReadSpec(id_field="text"))
        clusters = [json.loads(line) for line in (out / "clusters.jsonl").read_text().splitlines()]
        assert [c["id"] for c in clusters] == texts, name
        assert clusters[2]["cluster"] == texts[0]  # the same normalised text: one cluster


def test_a_file_name_that_is_not_utf8_still_names_the_default_ids(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.jsonl")
    try:
        source = _write(tmp_path / name, [{"text": str(r["text"])} for r in RECORDS])
    except (OSError, UnicodeEncodeError):
        pytest.skip("the file system refuses names that are not UTF-8")
    result = dedup_files([source], tmp_path / "out")
    assert list(result.ids) == [f"{name}:{line}" for line in range(1, 5)]


def test_missing_inputs_and_existing_outputs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file or directory"):
        dedup_files([tmp_path / "missing.jsonl"], tmp_path / "out")
    source = _write(tmp_path / "in.jsonl", RECORDS)
    (tmp_path / "out").mkdir()
    with pytest.raises(
        InputError,
        match="already exists; pass --overwrite to replace it, or choose another path for --output",
    ):
        dedup_files([source], tmp_path / "out")
    dedup_files([source], tmp_path / "out", overwrite=True)
    assert _keep_flags(tmp_path / "out") == EXPECTED_KEEP


def test_a_missing_text_column_names_the_columns(tmp_path: Path) -> None:
    source = _write(tmp_path / "in.parquet", RECORDS)
    with pytest.raises(InputError, match="no column 'body' \\(columns: id, text, extra\\)"):
        dedup_files([source], tmp_path / "out", read=ReadSpec(text_field="body"))


def test_mixed_formats_are_refused(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", RECORDS)
    b = _write(tmp_path / "b.csv", RECORDS)
    with pytest.raises(InputError, match="inputs mix formats"):
        dedup_files([a, b], tmp_path / "out")


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=40)
@given(
    lines=st.lists(
        st.binary(max_size=30) | st.sampled_from([line for line, _ in BAD_LINES]), max_size=8
    )
)
def test_arbitrary_bytes_never_escape_as_other_errors(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes]
) -> None:
    folder = tmp_path_factory.mktemp("fuzz")
    source = folder / "in.jsonl"
    good = _jsonl_lines(RECORDS)
    source.write_bytes(
        b"".join(good) + b"\n".join(line.replace(b"\n", b" ") for line in lines) + b"\n"
    )
    out = folder / "out"
    dedup_files([source], out, read=ReadSpec(skip_bad_records=True))
    summary = json.loads((out / "summary.json").read_text())
    num_records = sum(1 for line in source.read_bytes().split(b"\n") if line.strip())
    assert summary["counts"]["items"] + summary["counts"]["bad_records_skipped"] == num_records
