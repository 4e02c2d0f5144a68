"""``keep_by``: representatives chosen by fields of the records, against a plain-Python order."""

from __future__ import annotations

import csv
import json
import math
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from neardup import DedupConfig, LSHSpec, dedup
from neardup.cluster import preference_order
from neardup.errors import InputError, ParameterError
from neardup.io.readers import open_sources
from neardup.keep import KeepValues, comparable
from neardup.params import ReadSpec
from tests.integration.conftest import run


def reference_order(values: list[list[Any]], directions: list[str]) -> list[int]:
    """Documents most preferred first: each field towards its end, None last, ties in order.

    Stable sorts from the least significant field up (Python's sort keeps ties in place,
    ``reverse=True`` too).
    """
    order = list(range(len(values[0]) if values else 0))
    for column, direction in reversed(list(zip(values, directions, strict=True))):
        present = [d for d in order if column[d] is not None]
        absent = [d for d in order if column[d] is None]
        present.sort(key=lambda d: column[d], reverse=direction == "max")
        order = present + absent
    return order


def _is_nan(value: Any) -> bool:
    """NaN is no value."""
    return isinstance(value, float) and math.isnan(value)


def _values(columns: list[list[Any]], directions: list[str]) -> KeepValues:
    arrays = [
        comparable(pa.array(c, from_pandas=True), f"f{i}", "test") for i, c in enumerate(columns)
    ]
    return KeepValues(tuple(arrays), tuple(directions))  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(6))
def test_preference_order_equals_the_plain_python_order(seed: int) -> None:
    rng = random.Random(seed)
    n = 300
    numbers = [rng.choice([None, float("nan"), *range(5)]) for _ in range(n)]
    strings = [rng.choice([None, "2024-01-02", "2023-12-31", "Zoë", "zoe", "é"]) for _ in range(n)]
    integers = [rng.choice([None, -3, 7, 2**40]) for _ in range(n)]
    columns = [numbers, strings, integers]
    directions = [rng.choice(["max", "min"]) for _ in columns]
    expected_columns = [[None if _is_nan(v) else v for v in c] for c in columns]
    got = preference_order(n, values=_values(columns, directions)).tolist()
    assert got == reference_order(expected_columns, directions)


def test_representatives_follow_the_fields_within_each_cluster() -> None:
    config = DedupConfig(keep_by=("quality", "date:min"))
    base = "the quick brown fox jumps over the lazy dog and runs far away into the woods today"
    texts = [base, base + " again", base + " once more", "an entirely different sentence here"]
    fields = {"quality": [0.5, 0.9, 0.9, None], "date": ["2021", "2023", "2022", None]}
    result = dedup(texts, config=config, fields=fields)
    assert result.clusters.labels.tolist() == [0, 0, 0, 3]
    assert result.clusters.keep.tolist() == [False, False, True, True]
    with pytest.raises(InputError, match="fields=\\{name: values\\}"):
        dedup(texts, config=config)
    with pytest.raises(InputError, match="'date'"):
        dedup(texts, config=config, fields={"quality": fields["quality"]})


def test_config_spells_fields_once_and_refuses_a_second_rule() -> None:
    config = DedupConfig.from_dict({"keep_by": ["quality", "date:min", "meta:score:max"]})
    assert config.keep_fields == (("quality", "max"), ("date", "min"), ("meta:score", "max"))
    assert DedupConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    with pytest.raises(ParameterError, match="keep_by"):
        DedupConfig(keep_by=("a", "a:min"))
    with pytest.raises(ParameterError, match="--keep longest"):
        DedupConfig(keep="longest", keep_by=("a",))
    with pytest.raises(ParameterError, match="container"):
        DedupConfig(lsh=LSHSpec(family="containment"), keep="longest", keep_by=("a",))


LINES = [
    '{"text": "a", "q": 1, "s": "plain"}',
    "",
    '{"text": "b", "\\u0071": 2.5, "s": "caf\\u00e9 \\"x\\""}',  # an escaped key: json reads it
    '{"text": "c", "q": 1, "q": -3e2}',  # a repeated key: json keeps the last
    '{"text": "d", "q": null, "s": null}',
    '{"text": "e"}',
    '{"text": 5, "q": 9}',  # a bad record, skipped
    '{"text": "g", "q": NaN, "s": "z"}',
    '{"s": "\\ud83d\\ude00", "nested": {"q": 4}, "text": "h", "q": 0.125}',
]


def _field_values(path: Path, names: list[str]) -> list[list[Any]]:
    source = open_sources([path], ReadSpec(skip_bad_records=True))[0]
    for _ in source.batches(1 << 20):
        pass
    return [column.to_pylist() for column in source.field_values(names, 64)]


def test_jsonl_fields_are_read_as_json_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    records = [json.loads(line) for line in LINES if line and line != LINES[6]]
    expected_q = [r.get("q") for r in records]
    expected_q = [None if v is None or math.isnan(v) else float(v) for v in expected_q]
    assert _field_values(path, ["q", "s", "absent"]) == [
        expected_q,
        [r.get("s") for r in records],
        [None] * len(records),
    ]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"text": "a", "q": true}'], "in.jsonl:1: .*'q' is a boolean"),
        (['{"text": "a", "q": [1]}'], "in.jsonl:1: .*'q' is an array"),
        (
            ['{"text": "a", "q": 1}', '{"text": "b", "q": "x"}'],
            "number on line 1 and a string on line 2",
        ),
    ],
)
def test_jsonl_fields_of_no_order_are_named(tmp_path: Path, lines: list[str], message: str) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=message):
        _field_values(path, ["q"])


def scored_licences(licenses: list[dict[str, object]]) -> list[dict[str, Any]]:
    """The bundled licences with a score (ties and gaps) and a name to keep by."""
    rng = random.Random(7)
    records = []
    for record in licenses:
        meta = record["meta"]
        assert isinstance(meta, dict)
        score = rng.choice([None, 0.1, 0.5, 0.5, 0.9, 2])
        records.append(
            {
                "id": record["id"],
                "text": record["text"],
                "score": score,
                "name": meta.get("short_name"),
            }
        )
    return records


def kept_by_reference(clusters: Path, records: list[dict[str, Any]], fields: list[str]) -> None:
    """Each cluster keeps the member the plain-Python order prefers."""
    names = [f.rpartition(":")[0] if f.endswith((":min", ":max")) else f for f in fields]
    directions = ["min" if f.endswith(":min") else "max" for f in fields]
    order = reference_order([[r[n] for r in records] for n in names], directions)
    rank = {records[d]["id"]: place for place, d in enumerate(order)}
    members: dict[str, list[tuple[int, str, bool]]] = {}
    for line in clusters.read_text().splitlines():
        row = json.loads(line)
        members.setdefault(row["cluster"], []).append((rank[row["id"]], row["id"], row["keep"]))
    assert sum(len(m) > 1 for m in members.values()) > 20
    for cluster in members.values():
        assert [keep for _, _, keep in cluster] == [row == min(cluster) for row in cluster]


def _write(records: list[dict[str, Any]], path: Path) -> None:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    elif path.suffix == ".csv":
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(["id", "text", "score", "name"])
            for r in records:
                writer.writerow(
                    [r[k] if r[k] is not None else "" for k in ("id", "text", "score", "name")]
                )
    else:
        pq.write_table(pa.Table.from_pylist(records), path)


@pytest.mark.slow
def test_cli_keeps_by_fields_alike_in_jsonl_csv_and_parquet(
    licenses: list[dict[str, object]], tmp_path: Path
) -> None:
    records = scored_licences(licenses)
    fields = ["score", "name:min"]
    outputs = []
    for suffix in (".jsonl", ".csv", ".parquet"):
        path = tmp_path / f"in{suffix}"
        _write(records, path)
        out = tmp_path / f"out{suffix}"
        args = ["dedup", path, "-o", out, "-q", "--threshold", "0.6"]
        result = run(*args, "--keep-by", fields[0], "--keep-by", fields[1])
        assert result.returncode == 0, result.stderr
        kept_by_reference(out / "clusters.jsonl", records, fields)
        outputs.append((out / "clusters.jsonl").read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    summary = json.loads((tmp_path / "out.jsonl" / "summary.json").read_text())
    assert summary["params"]["keep_by"] == fields


def test_cli_names_what_cannot_be_kept_by(tmp_path: Path) -> None:
    texts = tmp_path / "docs"
    texts.mkdir()
    (texts / "a.txt").write_text("one two three four five six seven", encoding="utf-8")
    result = run("dedup", texts, "-o", tmp_path / "o1", "--keep-by", "score")
    assert result.returncode != 0
    assert "no fields to keep by" in result.stderr
    rows = tmp_path / "in.csv"
    rows.write_text("id,text\n1,one two three four five six\n", encoding="utf-8")
    result = run("dedup", rows, "-o", tmp_path / "o2", "--keep-by", "score")
    assert "no column 'score' to keep by" in result.stderr
    table = tmp_path / "in.parquet"
    pq.write_table(pa.table({"text": ["one two three four five six"], "score": [[1]]}), table)
    result = run("dedup", table, "-o", tmp_path / "o3", "--keep-by", "score")
    assert "'score' is list<" in result.stderr
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text('{"text": "one two three four five six"}\n', encoding="utf-8")
    result = run("dedup", jsonl, "-o", tmp_path / "o4", "--keep-by", "s", "--keep", "longest")
    assert "drop it" in result.stderr
    result = run("dedup", jsonl, "-o", tmp_path / "o5", "--keep-by", "s", "--unit", "line")
    assert "--keep-by chooses among whole documents" in result.stderr
    assert not any((tmp_path / f"o{i}").exists() for i in range(1, 6))


def test_dates_and_times_of_parquet_keep_in_time_order(tmp_path: Path) -> None:
    import datetime as dt

    base = "the quick brown fox jumps over the lazy dog and runs far away into the woods today"
    days = [dt.date(2020, 5, 1), None, dt.date(2024, 1, 9), dt.date(1999, 12, 31)]
    table = pa.table(
        {
            "text": [base + s for s in ("", " a", " b", " c")],
            "day": pa.array(days, pa.date32()),
            "at": pa.array(
                [dt.datetime(2020, 1, 1, 0, 0, 0, i) for i in (5, 9, 1, 9)], pa.timestamp("us")
            ),
        }
    )
    path = tmp_path / "in.parquet"
    pq.write_table(table, path)
    for fields, kept in ((["day"], 2), (["day:min"], 3), (["at", "day:min"], 3)):
        out = tmp_path / "-".join(fields).replace(":", "_")
        result = run("dedup", path, "-o", out, "-q", *[a for f in fields for a in ("--keep-by", f)])
        assert result.returncode == 0, result.stderr
        keep = [
            json.loads(line)["keep"] for line in (out / "clusters.jsonl").read_text().splitlines()
        ]
        assert keep == [i == kept for i in range(4)], fields
