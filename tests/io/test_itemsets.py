"""Reading item sets, (entity, item, rating) rows and strings for a join: every format against a
plain-Python reference, the item hash frozen, and one clear error per bad input naming the
file, the line or record, and what to do."""

from __future__ import annotations

import functools
import gzip
import json
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from neardup.errors import InputError, ParameterError
from neardup.io import columns as columns_module
from neardup.io.itemsets import (
    ItemSets,
    hash_items,
    read_item_rows,
    read_item_sets,
    read_strings,
)
from neardup.io.records import Ids
from tests.conftest import shared

MASK = 2**64 - 1


def reference_item_hash(item: str | int) -> int:
    """The item64-v1 scheme in plain Python: FNV-1a-64 of the UTF-8 text, xor its length, fmix64."""
    data = str(item).encode("utf-8")
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & MASK
    h ^= len(data)
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & MASK
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & MASK
    return h ^ (h >> 33)


def reference_sets(records: list[list[Any]]) -> list[list[int]]:
    return [sorted({reference_item_hash(item) for item in items}) for items in records]


def as_lists(sets: ItemSets) -> list[list[int]]:
    return [sets.sets.set_of(i).tolist() for i in range(len(sets))]


def write_jsonl(path: Path, records: list[Any], *, raw_lines: list[str] | None = None) -> Path:
    text = (
        "".join(json.dumps(r) + "\n" for r in records) if raw_lines is None else "".join(raw_lines)
    )
    data = text.encode("utf-8")
    if path.suffix == ".gz":
        data = gzip.compress(data)
    elif path.suffix == ".zst":
        data = zstandard.ZstdCompressor().compress(data)
    path.write_bytes(data)
    return path


RECORDS = [
    {"id": "r1", "items": ["apple", "pear", "apple"], "note": 1},
    {"id": "r2", "items": [], "note": "a string this time"},
    {"id": "r3", "items": ["pear", "plum", "é"], "note": {"nested": [1, "x"]}},
]


# --- the item hash ------------------------------------------------------------------------


def test_item_hash_is_frozen_and_matches_the_plain_python_scheme() -> None:
    assert int(hash_items(pa.array(["rose"]))[0]) == 0xA952FF1F9E267AD1  # golden: never change
    items = ["", "a", "rose", "é", "日本語", "x" * 300, "-5", "18446744073709551615"]
    got = hash_items(pa.array(items)).tolist()
    assert got == [reference_item_hash(i) for i in items]


def test_integer_items_hash_as_their_decimal_text() -> None:
    numbers = [0, 7, -5, 2**63 - 1]
    assert (
        hash_items(pa.array(numbers)).tolist()
        == hash_items(pa.array([str(n) for n in numbers])).tolist()
    )
    assert hash_items(pa.array([2**64 - 1], pa.uint64())).tolist() == [
        reference_item_hash(2**64 - 1)
    ]


def test_hash_items_refuses_other_types() -> None:
    with pytest.raises(ParameterError, match="strings or integers; got double"):
        hash_items(pa.array([1.5]))
    with pytest.raises(ParameterError, match="no nulls"):
        hash_items(pa.array(["a", None]))


# --- item sets in every format --------------------------------------------------------------


@pytest.mark.parametrize("name", ["sets.jsonl", "sets.jsonl.gz", "sets.ndjson.zst"])
def test_jsonl_item_sets_match_the_reference(tmp_path: Path, name: str) -> None:
    path = write_jsonl(tmp_path / name, RECORDS)
    sets = read_item_sets(path, id_field="id")
    assert list(sets.ids) == ["r1", "r2", "r3"]
    assert as_lists(sets) == reference_sets([r["items"] for r in RECORDS])
    numbered = read_item_sets(path)
    assert numbered.ids.tolist() == [0, 1, 2]


def test_jsonl_integer_items_and_ids(tmp_path: Path) -> None:
    records = [{"k": 10, "tags": [3, 1, 3]}, {"k": -4, "tags": [1, 2]}]
    sets = read_item_sets(
        write_jsonl(tmp_path / "n.jsonl", records), items_field="tags", id_field="k"
    )
    assert sets.ids.dtype == np.int64
    assert sets.ids.tolist() == [10, -4]
    assert as_lists(sets) == reference_sets([[3, 1], [1, 2]])


def test_jsonl_blank_lines_a_bom_and_crlf_are_read_like_the_text_reader(tmp_path: Path) -> None:
    lines = [
        '\ufeff{"items": ["a"]}\r\n',
        "\n",
        "   \t\n",
        '{"items": ["b", "c"]}\r\n',
    ]
    sets = read_item_sets(write_jsonl(tmp_path / "b.jsonl", [], raw_lines=lines))
    assert as_lists(sets) == reference_sets([["a"], ["b", "c"]])


def test_jsonl_chunks_keep_line_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(columns_module, "CHUNK_BYTES", 100)
    lines = [json.dumps({"items": [f"i{n}", f"i{n + 1}"]}) + "\n" for n in range(300)]
    lines[57] = "\n"
    lines[250] = '{"items": null}\n'
    path = write_jsonl(tmp_path / "c.jsonl", [], raw_lines=lines)
    with pytest.raises(InputError, match=r"c\.jsonl:251: no 'items' value"):
        read_item_sets(path)
    del lines[250]
    sets = read_item_sets(write_jsonl(path, [], raw_lines=lines))
    expected = [json.loads(line)["items"] for line in lines if line.strip()]
    assert as_lists(sets) == reference_sets(expected)


def test_well_formed_jsonl_is_read_by_arrow_not_line_by_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("read line by line")

    monkeypatch.setattr(columns_module, "_jsonl_by_value", refuse)
    sets = read_item_sets(write_jsonl(tmp_path / "a.jsonl", RECORDS), id_field="id")
    assert as_lists(sets) == reference_sets([r["items"] for r in RECORDS])


def test_jsonl_that_arrow_cannot_read_is_read_line_by_line(tmp_path: Path) -> None:
    """A repeated key: json takes the last value, as the text reader does."""
    lines = ['{"items": ["a"]}\n', '{"items": ["x"], "items": ["b", "c"]}\n']
    sets = read_item_sets(write_jsonl(tmp_path / "d.jsonl", [], raw_lines=lines))
    assert as_lists(sets) == reference_sets([["a"], ["b", "c"]])


@pytest.mark.parametrize(
    "item_type", [pa.list_(pa.string()), pa.large_list(pa.large_string()), pa.list_(pa.int32())]
)
def test_parquet_item_sets(tmp_path: Path, item_type: pa.DataType) -> None:
    is_int = pa.types.is_integer(item_type.value_type)
    items = [[1, 2, 2], [], [5]] if is_int else [["a", "b", "b"], [], ["c"]]
    path = tmp_path / "s.parquet"
    pq.write_table(pa.table({"id": [7, 8, 9], "items": pa.array(items, item_type)}), path)
    sets = read_item_sets(path, id_field="id")
    assert sets.ids.tolist() == [7, 8, 9]
    assert as_lists(sets) == reference_sets(items)


@pytest.mark.parametrize(("separator", "cell"), [(None, "a  b\tc a"), (";", "a;b;;c;a;")])
def test_csv_item_sets_split_a_text_field(tmp_path: Path, separator: str | None, cell: str) -> None:
    path = tmp_path / "s.csv"
    path.write_text(f'id,items\nx,"{cell}"\ny,\n', encoding="utf-8")
    sets = read_item_sets(path, id_field="id", item_separator=separator)
    assert list(sets.ids) == ["x", "y"]
    assert as_lists(sets) == reference_sets([["a", "b", "c"], []])


def test_item_separator_applies_to_csv_only(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", RECORDS)
    with pytest.raises(ParameterError, match="item_separator applies to CSV input"):
        read_item_sets(path, item_separator=",")


@functools.cache
def reuters_tags() -> list[tuple[str, list[str]]]:
    """Real data: each Reuters-21578 story's NEWID and its topic, place, people, organisation and
    exchange tags (an item set per story)."""
    import re

    archive = shared("reuters21578/reuters21578_sgm.tar.xz")
    stories = []
    tag = re.compile(r"<(TOPICS|PLACES|PEOPLE|ORGS|EXCHANGES)>(.*?)</\1>", re.S)
    with tarfile.open(archive, "r:xz") as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            f = tar.extractfile(member)
            if f is None or not member.name.endswith(".sgm"):
                continue
            text = f.read().decode("latin-1")
            for story in re.finditer(r'<REUTERS [^>]*NEWID="(\d+)">(.*?)</REUTERS>', text, re.S):
                head = story.group(2).split("<TEXT", 1)[0]
                items = [
                    f"{kind.lower()}:{d}"
                    for kind, body in tag.findall(head)
                    for d in re.findall(r"<D>(.*?)</D>", body)
                ]
                stories.append((story.group(1), items))
    return stories


@pytest.fixture(scope="module")
def reuters() -> list[tuple[str, list[str]]]:
    return reuters_tags()


@pytest.mark.slow
def test_reuters_tag_sets_read_from_jsonl_gz_and_parquet_match_the_reference(
    tmp_path: Path, reuters: list[tuple[str, list[str]]]
) -> None:
    assert len(reuters) == 21578
    records = [{"id": int(i), "items": items, "title": "x"} for i, items in reuters]
    expected = reference_sets([items for _, items in reuters])
    sets = read_item_sets(write_jsonl(tmp_path / "r.jsonl.gz", records), id_field="id")
    assert sets.ids.tolist() == [int(i) for i, _ in reuters]
    assert as_lists(sets) == expected
    path = tmp_path / "r.parquet"
    pq.write_table(pa.Table.from_pylist(records), path)
    assert as_lists(read_item_sets(path)) == expected
    assert sum(1 for s in expected if not s) > 1000  # untagged stories: empty sets, kept


# --- bad item sets --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "kwargs", "pieces"),
    [
        (['{"items": ["a"]}\n', '{"id": 1}\n'], {}, [":2: no 'items' value", "--items-field"]),
        (['{"items": ["a"]}\n', '{"items": null}\n'], {}, [":2: no 'items' value"]),
        (['{"items": ["a"]}\n', '{"items": "a b"}\n'], {}, [":2: 'items' is a string", "array"]),
        (['{"items": ["a"]}\n', '{"items": [1.5]}\n'], {}, [":2: 'items' holds a number 1.5"]),
        (['{"items": [1.5]}\n'], {}, [":1: 'items' holds a number 1.5", "write other values"]),
        (['{"items": [true]}\n'], {}, [":1: 'items' holds a boolean True"]),
        (['{"items": ["a", null]}\n'], {}, [":1: an item of 'items' is null", "drop it"]),
        (
            ['{"items": ["a"]}\n', "\n", '{"items": ["b", 2]}\n'],
            {},
            [":3: 'items' holds a number 2, but line 1 has strings", "write them all alike"],
        ),
        (['{"items": [1]}\n', '{"items": [2]}\n', '{"items": [x]}\n'], {}, [":3: not valid JSON"]),
        (['{"items": [1]}\n', "[1, 2]\n"], {}, [":2: the line holds an array, expected an object"]),
        (['{"items": [1]}{"items": [2]}\n'], {}, [":1: not valid JSON", "Extra data"]),
        (['{"items": [99999999999999999999]}\n'], {}, [":1: ", "beyond 64-bit integers"]),
        (
            [
                '{"id": "a", "items": []}\n',
                '{"id": "b", "items": []}\n',
                '{"id": "a", "items": []}\n',
            ],
            {"id_field": "id"},
            [":3: the id 'a' ('id') was given before, at line 1", "its own id"],
        ),
        (
            ['{"id": "a", "items": []}\n', '{"items": []}\n'],
            {"id_field": "id"},
            [":2: no 'id' value", "--id-field"],
        ),
        (
            ['{"id": "a", "items": []}\n', '{"id": 2, "items": []}\n'],
            {"id_field": "id"},
            [":2: 'id' holds a number 2, but line 1 has strings"],
        ),
        (["\n", "  \n"], {}, ["holds no records"]),
    ],
    ids=[
        "missing",
        "null",
        "string",
        "float-later",
        "float-first",
        "bool",
        "null-item",
        "mixed",
        "malformed",
        "array-line",
        "two-objects",
        "huge-int",
        "repeated-id",
        "missing-id",
        "mixed-ids",
        "empty",
    ],
)
def test_bad_jsonl_item_sets_name_file_line_and_remedy(
    tmp_path: Path, lines: list[str], kwargs: dict[str, str], pieces: list[str]
) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [], raw_lines=lines)
    with pytest.raises(InputError) as info:
        read_item_sets(path, **kwargs)
    message = str(info.value)
    assert message.startswith(str(path))
    assert "\n" not in message
    for piece in pieces:
        assert piece in message


def test_bad_csv_and_parquet_item_sets(tmp_path: Path) -> None:
    csv_path = tmp_path / "s.csv"
    csv_path.write_text("id,tags\n1,a b\n", encoding="utf-8")
    with pytest.raises(
        InputError, match=r"s\.csv:1: no column 'items' .*'id', 'tags'.*--items-field"
    ):
        read_item_sets(csv_path)
    csv_path.write_text("id,items\n1,a b\n2\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"s\.csv: malformed CSV .*Expected 2 columns, got 1"):
        read_item_sets(csv_path)
    pq_path = tmp_path / "s.parquet"
    pq.write_table(pa.table({"items": [[1.5], [2.5]]}), pq_path)
    with pytest.raises(InputError, match=r"holds lists of double, expected strings or integers"):
        read_item_sets(pq_path)
    pq.write_table(pa.table({"items": ["a b"]}), pq_path)
    with pytest.raises(InputError, match=r"holds string, expected a list of items"):
        read_item_sets(pq_path)
    pq.write_table(pa.table({"items": pa.array([["a"], None], pa.list_(pa.string()))}), pq_path)
    with pytest.raises(InputError, match=r"s\.parquet:2: no 'items' value"):
        read_item_sets(pq_path)
    pq.write_table(pa.table({"items": pa.array([["a"], ["b", None]])}), pq_path)
    with pytest.raises(InputError, match=r"s\.parquet:2: an item of 'items' is null"):
        read_item_sets(pq_path)
    with pytest.raises(
        InputError, match=r"no column 'key' \(columns: items\); choose it with --id-field"
    ):
        read_item_sets(pq_path, id_field="key")
    txt = tmp_path / "notes.txt"
    txt.write_text("a b\n")
    with pytest.raises(InputError, match="cannot read item sets from txt input"):
        read_item_sets(txt)


def test_truncated_gzip_is_named(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl.gz", RECORDS * 100)
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(InputError, match=r"t\.jsonl\.gz: .*truncated"):
        read_item_sets(path)


# --- (entity, item, rating) rows ------------------------------------------------------------

ROWS = [("u2", "m1", 4.0), ("u1", "m1", 5.0), ("u2", "m3", 1.0), ("u3", "m2", 3.5)]


def _write_rows(path: Path, rows: list[tuple[Any, ...]]) -> Path:
    names = ["user", "movie", "stars"]
    if ".csv" in path.suffixes:
        body = "".join(",".join(str(v) for v in row) + "\n" for row in rows)
        data = (",".join(names) + "\n" + body).encode("utf-8")
        path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    elif path.suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist([dict(zip(names, r, strict=True)) for r in rows]), path)
    else:
        write_jsonl(path, [dict(zip(names, r, strict=True)) for r in rows])
    return path


@pytest.mark.parametrize("name", ["r.csv", "r.csv.gz", "r.parquet", "r.jsonl"])
def test_rows_number_entities_in_first_seen_order(tmp_path: Path, name: str) -> None:
    path = _write_rows(tmp_path / name, ROWS)
    rows = read_item_rows(path, entity_field="user", item_field="movie", rating_field="stars")
    assert list(rows.entity_ids) == ["u2", "u1", "u3"]
    assert rows.entities.tolist() == [0, 1, 0, 2]
    assert rows.items.tolist() == [reference_item_hash(r[1]) for r in ROWS]
    assert rows.ratings is not None
    assert rows.ratings.tolist() == [r[2] for r in ROWS]
    first = 1 if name.endswith(".parquet") or name.endswith(".jsonl") else 2
    assert rows.lines.tolist() == list(range(first, first + 4))
    plain = read_item_rows(path, entity_field="user", item_field="movie")
    assert plain.ratings is None
    assert len(plain) == 4


def test_integer_entities_come_back_as_int64(tmp_path: Path) -> None:
    path = _write_rows(tmp_path / "r.parquet", [(30, 1, 1.0), (10, 2, 2.0), (30, 3, 1.0)])
    rows = read_item_rows(path, entity_field="user", item_field="movie")
    assert rows.entity_ids.dtype == np.int64
    assert rows.entity_ids.tolist() == [30, 10]


@pytest.mark.parametrize(
    ("name", "rows", "pieces"),
    [
        ("r.csv", [("u1", "m1", "four")], [":2: the 'stars' value 'four' is not a number"]),
        ("r.csv", [("u1", "m1", "")], [":2: the 'stars' value '' is not a number"]),
        ("r.csv", [("u1", "m1", 1), ("u1", "m2", "nan")], [":3: the 'stars' value is nan"]),
        ("r.jsonl", [("u1", "m1", 1), ("u1", "m2", "5")], [":2: the 'stars' value '5' is not"]),
        ("r.jsonl", [("u1", "m1", 1), (None, "m2", 5)], [":2: no 'user' value", "--entity-field"]),
        ("r.jsonl", [("u1", "m1", 1), ("u1", 2.5, 5)], [":2: 'movie' holds a number 2.5"]),
        (
            "r.parquet",
            [("u1", "m1", 1.0), ("u1", "m2", float("inf"))],
            [":2: the 'stars' value is inf"],
        ),
        ("r.parquet", [("u1", "m1", 1.0), ("u1", None, 2.0)], [":2: no 'movie' value"]),
    ],
    ids=["word", "empty", "nan", "string", "null-entity", "float-item", "inf", "null-item"],
)
def test_bad_rows_name_file_line_and_remedy(
    tmp_path: Path, name: str, rows: list[tuple[Any, ...]], pieces: list[str]
) -> None:
    path = _write_rows(tmp_path / name, rows)
    with pytest.raises(InputError) as info:
        read_item_rows(path, entity_field="user", item_field="movie", rating_field="stars")
    message = str(info.value)
    assert message.startswith(str(path))
    assert "\n" not in message
    for piece in pieces:
        assert piece in message


def test_rows_with_a_column_of_another_type_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"user": [1.5], "movie": ["m"], "stars": ["x"]}), path)
    with pytest.raises(InputError, match="'user' holds double, expected strings or integers"):
        read_item_rows(path, entity_field="user", item_field="movie")
    pq.write_table(pa.table({"user": ["u"], "movie": ["m"], "stars": [[1]]}), path)
    with pytest.raises(InputError, match=r"'stars' holds list<.*int64>, expected numbers"):
        read_item_rows(path, entity_field="user", item_field="movie", rating_field="stars")


# --- strings for edit -----------------------------------------------------------------------


def test_read_strings_gives_raw_texts_and_ids(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "s.jsonl", [{"name": "Kitten ", "k": "a"}, {"name": "sitting", "k": 5}]
    )
    ids, batch = read_strings(path, text_field="name")
    assert ids.tolist() == [0, 1]
    assert [
        bytes(batch.data[a:b]).decode()
        for a, b in zip(batch.offsets, batch.offsets[1:], strict=False)
    ] == [
        "Kitten ",
        "sitting",
    ]
    named, _ = read_strings(path, text_field="name", id_field="k")
    assert isinstance(named, Ids)
    assert list(named) == ["a", "5"]


def test_read_strings_errors_name_the_record(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [{"t": "a", "k": "x"}, {"t": "b", "k": "x"}])
    with pytest.raises(
        InputError, match=r"s\.jsonl:2: the id 'x' \('k'\) was given before, at record 1"
    ):
        read_strings(path, text_field="t", id_field="k")
    with pytest.raises(InputError, match=r"s\.jsonl:1: record has no 'text' field"):
        read_strings(path)
    empty = tmp_path / "e.csv"
    empty.write_text("text\n")
    with pytest.raises(InputError, match="holds no records"):
        read_strings(empty)


def test_items_of_a_type_the_first_records_do_not_show_are_read_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Types are learnt from the first records only; a later surprise is read line by line."""
    monkeypatch.setattr(columns_module, "_SAMPLE_LINES", 5)
    records = [{"items": []}] * 10 + [{"items": [4, 5]}]
    sets = read_item_sets(write_jsonl(tmp_path / "late.jsonl", records))
    assert as_lists(sets) == reference_sets([[]] * 10 + [[4, 5]])
