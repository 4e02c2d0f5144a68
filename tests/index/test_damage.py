"""A damaged index file is found and reported in one line, never a traceback.

A real index is built, copied, and in each copy one byte is flipped (all eight bits), at offsets
spread over the whole file and at the fields of the SQLite header page. ``neardup index check``
must then exit 1 with one line naming the file, or exit 0 only where the damage changed nothing
that is stored: SQLite's own integrity check passes on the copy and every row of every table
reads back byte for byte as in the original (the byte was in unused space of a page, or in a
header field SQLite does not rely on). ``index info`` and ``index query`` on the same copies
must answer or refuse in one line too.
"""

from __future__ import annotations

import random
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import pytest

from neardup.index import LSHIndex
from tests.integration.conftest import run

# Fields of the 100-byte database header (https://sqlite.org/fileformat.html#the_database_header)
# and the first page's b-tree header and cells.
HEADER_OFFSETS = [0, 16, 18, 19, 20, 21, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 68, 92, 96]
PAGE_ONE_OFFSETS = [100, 101, 103, 105, 107, 108, 300, 2000, 3900, 4000, 4090]
SPREAD = 32


def _texts(count: int) -> list[str]:
    rng = random.Random(5)
    words = [f"w{i}" for i in range(400)]
    return [" ".join(rng.choices(words, k=rng.randint(20, 100))) for _ in range(count)]


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small real index: 300 documents (a third with metadata) and two empty ones."""
    path = tmp_path_factory.mktemp("original") / "seen.ndx"
    texts = _texts(300)
    with LSHIndex.open(path, create=True) as index:
        index.add(
            [f"doc-{i}" for i in range(300)],
            texts,
            [{"n": i, "source": "test"} if i % 3 == 0 else None for i in range(300)],
        )
        index.add(["empty-1", "empty-2"], ["", "   "])
        assert index.verify_integrity() == []
    assert not path.with_name(path.name + "-wal").exists()  # everything is in the one file
    return path


def _content(path: Path) -> tuple[list[object], list[tuple[object, ...]]] | str:
    """Every row of every table, as raw bytes, and SQLite's integrity check; or the error."""
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            conn.text_factory = bytes
            tables = conn.execute("SELECT * FROM sqlite_master ORDER BY name").fetchall()
            rows = [
                sorted(conn.execute(f'SELECT * FROM "{name.decode()}"').fetchall())
                for kind, name, *_ in tables
                if kind == b"table"
            ]
            integrity = conn.execute("PRAGMA integrity_check").fetchall()
            return [tables, rows], integrity
    except sqlite3.Error as exc:
        return repr(exc)


def _assert_one_line_refusal(result: subprocess.CompletedProcess[str], path: Path) -> str:
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {path}: "), lines[0]
    return lines[0]


def test_every_detectable_flipped_byte_is_reported_in_one_line(
    original: Path, tmp_path: Path
) -> None:
    data = original.read_bytes()
    size = len(data)
    offsets = sorted(
        set(HEADER_OFFSETS + PAGE_ONE_OFFSETS + [i * size // SPREAD + 37 for i in range(SPREAD)])
    )
    assert len(offsets) >= 60
    intact = _content(original)
    assert not isinstance(intact, str)
    query_text = _texts(300)[123]

    def damage(offset: int) -> tuple[int, Path, subprocess.CompletedProcess[str]]:
        folder = tmp_path / f"at-{offset}"
        folder.mkdir()
        copy = folder / "seen.ndx"
        flipped = bytearray(data)
        flipped[offset] ^= 0xFF
        copy.write_bytes(bytes(flipped))
        return offset, copy, run("index", "check", copy)

    outcomes = [damage(offset) for offset in offsets]

    reported = unchanged = 0
    for offset, copy, result in outcomes:
        if result.returncode == 0:
            # Passing the check is only right where nothing stored was changed.
            assert result.stdout.startswith("ok: 302 documents"), (offset, result.stdout)
            content = _content(copy)
            assert not isinstance(content, str), (offset, content)
            assert content[1] == [(b"ok",)], (offset, content[1])
            assert content == intact, f"offset {offset}: changed content passed the check"
            unchanged += 1
        else:
            line = _assert_one_line_refusal(result, copy)
            assert "damaged" in line or "not an SQLite database" in line, (offset, line)
            reported += 1
    print(
        f"\n{len(offsets)} flipped bytes: {reported} reported, {unchanged} changed nothing stored"
    )
    assert reported >= 2 * len(offsets) // 3, (reported, unchanged)

    # The other commands on the same damaged copies answer or refuse in one line.
    others = [
        (offset, copy, args)
        for offset, copy, _ in outcomes[::3]
        for args in (["info", copy], ["query", copy, "--text", query_text])
    ]
    answers = [run("index", *args) for _, _, args in others]
    for (offset, copy, args), result in zip(others, answers, strict=True):
        assert "Traceback" not in result.stderr, (offset, args, result.stderr)
        if result.returncode != 0:
            _assert_one_line_refusal(result, copy)


def test_a_damaged_page_is_one_line_for_every_command(original: Path, tmp_path: Path) -> None:
    """The documents table's root page overwritten: check, info, query, add, delete refuse."""
    copy = tmp_path / "seen.ndx"
    copy.write_bytes(original.read_bytes())
    with closing(sqlite3.connect(copy)) as conn:
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'documents'")
        page = root.fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    raw = bytearray(copy.read_bytes())
    raw[(page - 1) * page_size : page * page_size] = b"\xa5" * page_size
    copy.write_bytes(bytes(raw))
    records = tmp_path / "in.jsonl"
    records.write_text('{"id": "new", "text": "' + _texts(301)[300] + '"}\n')
    commands = [
        ["index", "check", copy],
        ["index", "query", copy, "--text", _texts(300)[5]],
        ["index", "add", copy, records],
        ["index", "delete", copy, "doc-5"],
    ]
    for args in commands:
        line = _assert_one_line_refusal(run(*args), copy)
        assert "damaged" in line, line
        assert "restore it from a copy, or rebuild it" in line, line


def test_a_damaged_header_is_one_line_for_every_command(original: Path, tmp_path: Path) -> None:
    copy = tmp_path / "seen.ndx"
    copy.write_bytes(original.read_bytes())
    with closing(sqlite3.connect(copy)) as conn:
        conn.execute("UPDATE meta SET value = substr(value, 1, 40) WHERE key = 'header'")
        conn.commit()
    for args in (["check"], ["info"], ["query", "--text", "x"], ["delete", "x"]):
        result = run("index", args[0], copy, *args[1:])
        line = _assert_one_line_refusal(result, copy)
        assert "the header is not valid JSON" in line, line
