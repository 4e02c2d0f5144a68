"""Bad files, bad paths and bad options of ``neardup dedup``: one line, an exit code, nothing
written or changed.

Each case builds a small tree of inputs in a fresh directory, runs the command there as a user
would (in this process, through its entry point: tests/integration/conftest.py), and asserts the
exit code, a one-line message (no traceback) holding the
expected words, that no output (nor a hidden half-written sibling) appeared, and that every
file that was there before is unchanged.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from tests.integration.conftest import run

pytestmark = pytest.mark.usefixtures("installed")

TEXTS = [f"the quick brown fox number {i} jumps over the lazy dog again today" for i in range(8)]


def _jsonl(records: list[dict[str, object]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


RECORDS = _jsonl([{"id": f"d{i}", "text": t} for i, t in enumerate(TEXTS)])


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` with the SHA-256 of its bytes."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _write(root: Path, name: str, data: bytes) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _basic(root: Path) -> None:
    _write(root, "in.jsonl", RECORDS)


def _truncated_zstd(root: Path) -> None:
    data = zstandard.ZstdCompressor().compress(RECORDS * 50)
    _write(root, "in.jsonl.zst", data[: len(data) // 2])


def _truncated_gzip(root: Path) -> None:
    data = gzip.compress(RECORDS * 50)
    _write(root, "in.jsonl.gz", data[: len(data) // 2])


def _parquet(root: Path) -> None:
    pq.write_table(pa.table({"id": ["a", "b"], "text": TEXTS[:2]}), root / "in.parquet")


def _cp1252(root: Path) -> None:
    _write(root, "docs/a.txt", "café crème brûlée au four".encode("cp1252"))


def _index_in_output(root: Path) -> None:
    _basic(root)
    _write(root, "out/seen.ndx", b"")


def _existing(*names: str, files: tuple[str, ...] = ()) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        _basic(root)
        for name in names:
            (root / name).mkdir(parents=True)
        for name in files:
            _write(root, name, b"not mine to replace\n")

    return make


# (name, make the inputs, arguments, exit code, words the message holds)
CASES: list[tuple[str, Callable[[Path], None], list[str], int, str]] = [
    # bad files
    ("truncated zstd", _truncated_zstd, ["in.jsonl.zst"], 1, "is truncated"),
    (
        "truncated zstd, skipping bad records",
        _truncated_zstd,
        ["in.jsonl.zst", "--skip-bad-records"],
        1,
        "is truncated",
    ),
    ("truncated gzip", _truncated_gzip, ["in.jsonl.gz", "--skip-bad-records"], 1, "is truncated"),
    (
        "not zstd",
        lambda r: _write(r, "in.jsonl.zst", RECORDS),
        ["in.jsonl.zst"],
        1,
        "it is not zstd data",
    ),
    (
        "not gzip",
        lambda r: _write(r, "in.jsonl.gz", RECORDS),
        ["in.jsonl.gz"],
        1,
        "it is not gzip data",
    ),
    (
        "one id twice",
        lambda r: _write(
            r, "in.jsonl", _jsonl([{"id": 1, "text": "a b"}, {"id": "1", "text": "c"}])
        ),
        ["in.jsonl"],
        1,
        "id '1' is given twice, at in.jsonl:1 and at in.jsonl:2",
    ),
    ("misspelt --id-field", _basic, ["in.jsonl", "--id-field", "idd"], 1, "no 'idd' field"),
    (
        "misspelt CSV --id-field",
        lambda r: _write(r, "in.csv", b"id,text\nx,some words here\n"),
        ["in.csv", "--id-field", "url"],
        1,
        "no column 'url'",
    ),
    ("not UTF-8 text", _cp1252, ["docs"], 1, "--encoding (e.g. --encoding cp1252)"),
    (
        "not cp1252 either (0x9d is no cp1252 character)",
        lambda r: _write(r, "docs/a.txt", "right”".encode()),
        ["docs", "--encoding", "cp1252"],
        1,
        "not cp1252 either: name the right one, or --encoding latin-1",
    ),
    (
        "unterminated string",
        lambda r: _write(r, "in.jsonl", b'{"text": "never closed'),
        ["in.jsonl"],
        1,
        "Unterminated string starting at column 10",
    ),
    (
        "null text",
        lambda r: _write(r, "in.jsonl", b'{"text": null}\n'),
        ["in.jsonl"],
        1,
        "field 'text' is null",
    ),
    ("one input twice", _basic, ["in.jsonl", "./in.jsonl"], 1, "input given twice"),
    # bad paths (the output is "out" unless the case says otherwise)
    ("output is here", _basic, ["in.jsonl", "-o", ".", "--overwrite"], 1, "current directory"),
    (
        "output holds here",
        _basic,
        ["in.jsonl", "-o", "..", "--overwrite"],
        1,
        "current directory",
    ),
    (
        "output is the input",
        _cp1252,
        ["docs", "--encoding", "cp1252", "-o", "docs", "--overwrite"],
        1,
        "the output is the input docs",
    ),
    (
        "output holds the input",
        lambda r: _write(r, "data/in.jsonl", RECORDS),
        ["data/in.jsonl", "-o", "data", "--overwrite"],
        1,
        "the output holds the input",
    ),
    (
        "output in the input",
        _cp1252,
        ["docs", "--encoding", "cp1252", "-o", "docs/out"],
        1,
        "the output is in the input docs",
    ),
    (
        "output holds the index",
        _index_in_output,
        ["in.jsonl", "-o", "out", "--overwrite", "--against", "out/seen.ndx"],
        1,
        "the output holds the index",
    ),
    (
        "overwrite a folder that is no output",
        _existing("out", files=("out/notes.txt",)),
        ["in.jsonl", "-o", "out", "--overwrite"],
        1,
        "is not an earlier neardup dedup output",
    ),
    (
        "overwrite a file",
        _existing(files=("result",)),
        ["in.jsonl", "-o", "result", "--overwrite"],
        1,
        "is not an earlier neardup dedup output",
    ),
    ("output cannot be made", _basic, ["in.jsonl", "-o", "/proc/neardup-out"], 1, "/proc"),
    # bad options
    ("negative --batch-mb", _basic, ["in.jsonl", "--batch-mb", "-1"], 2, "--batch-mb"),
    ("zero --memory-gb", _basic, ["in.jsonl", "--memory-gb", "0"], 2, "--memory-gb"),
    # beyond the spec's range: said in the flag's own unit, not the spec field's bytes
    ("huge --batch-mb", _basic, ["in.jsonl", "--batch-mb", "1e9"], 2, "--batch-mb must be in"),
    ("tiny --memory-gb", _basic, ["in.jsonl", "--memory-gb", "0.001"], 2, "[0.015625, "),
    ("--bbits without bbit", _basic, ["in.jsonl", "--bbits", "4"], 2, "--bbits applies to"),
    ("--preset without features", _basic, ["in.jsonl", "--preset", "bing"], 2, "--preset"),
    ("--hamming with MinHash", _basic, ["in.jsonl", "--hamming", "3"], 2, "--hamming"),
    (
        "--bands with SimHash",
        _basic,
        ["in.jsonl", "--method", "simhash", "--bands", "4", "--rows", "4"],
        2,
        "--bands applies to",
    ),
    ("--compress with Parquet", _parquet, ["in.parquet", "--compress", "zstd"], 2, "Parquet"),
    ("unknown encoding", _basic, ["in.jsonl", "--encoding", "utf-9"], 2, "encoding"),
]


@pytest.mark.parametrize(
    ("make", "args", "code", "words"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_a_bad_file_path_or_option_is_one_line_and_changes_nothing(
    tmp_path: Path, make: Callable[[Path], None], args: list[str], code: int, words: str
) -> None:
    root = tmp_path / "work" / "here"
    root.mkdir(parents=True)
    make(root)
    if "-o" not in args:
        args = [*args, "-o", "out"]
    before = _tree(tmp_path)
    done = run("dedup", *args, "-q", cwd=root)
    assert done.returncode == code, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert words in lines[0], lines[0]
    assert not re.search(r"(Spec|Config)\.", lines[0]), lines[0]  # flags, not classes
    assert _tree(tmp_path) == before  # nothing written, nothing changed, nothing half-made
    assert not [p for p in tmp_path.rglob(".*") if ".tmp-" in p.name or ".old-" in p.name]


@pytest.mark.parametrize(
    ("name", "data", "args", "ids"),
    [
        ("in.jsonl", b"\xef\xbb\xbf" + RECORDS, [], None),
        ("in.csv", b"\xef\xbb\xbfid,text\nx1,some words\nx2,other words\n", [], ["x1", "x2"]),
        ("docs/a.txt", b"\xef\xbb\xbfhello world", [], ["a.txt"]),
    ],
)
def test_a_byte_order_mark_is_no_part_of_the_first_record(
    tmp_path: Path, name: str, data: bytes, args: list[str], ids: list[str] | None
) -> None:
    _write(tmp_path, name, data)
    source = tmp_path / (name.split("/", maxsplit=1)[0])
    done = run("dedup", source, "-o", tmp_path / "out", "-q", *args)
    assert done.returncode == 0, done.stderr
    got = [json.loads(line)["id"] for line in _lines(tmp_path / "out" / "clusters.jsonl")]
    assert got == (ids if ids is not None else [f"d{i}" for i in range(len(TEXTS))])
    kept = (tmp_path / "out").glob("kept.*")
    assert all(b"\xef\xbb\xbf" not in path.read_bytes() for path in kept)


def test_default_ids_of_inputs_with_one_name_tell_them_apart(tmp_path: Path) -> None:
    for folder in ("d1", "d2"):
        _write(tmp_path, f"{folder}/x.jsonl", _jsonl([{"text": f"words of {folder} here"}]))
    done = run("dedup", "d1/x.jsonl", "d2/x.jsonl", "-o", "out", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    got = [json.loads(line)["id"] for line in _lines(tmp_path / "out" / "clusters.jsonl")]
    assert got == ["d1/x.jsonl:1", "d2/x.jsonl:1"]


def test_an_encoding_names_how_text_files_are_written(tmp_path: Path) -> None:
    _cp1252(tmp_path)
    done = run("dedup", "docs", "-o", "out", "-q", "--encoding", "cp1252", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    kept = json.loads((tmp_path / "out" / "kept.jsonl").read_text(encoding="utf-8"))
    assert kept["text"] == "café crème brûlée au four"
