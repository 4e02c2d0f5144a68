"""``neardup index ...``, ``neardup serve`` and ``neardup dedup --against``, run as a user runs
them: exit codes, one-line messages, and files left exactly as they were on every refusal."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from neardup import JoinSpec, VectorIndex
from neardup.index import LSHIndex, SQLiteStore, recall_at
from neardup.kinds import INDEX_KINDS
from tests.conftest import SAMPLE
from tests.integration.conftest import NEARDUP, run

pytestmark = pytest.mark.usefixtures("installed")


def neardup(
    *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The command (in this process) with ``env`` set and $NEARDUP_TOKENS otherwise unset."""
    return run(*args, env={"NEARDUP_TOKENS": None, **(env or {})})


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single ``error: ...`` line on stderr (asserting there is exactly one, no traceback)."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), result.stderr
    return lines[0]


def snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file and directory under ``folder``: content hash (or "dir") and mtime."""
    out: dict[str, tuple[str, int]] = {}
    for path in sorted(folder.rglob("*")):
        digest = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
        out[str(path.relative_to(folder))] = (digest, path.stat().st_mtime_ns)
    return out


def write_jsonl(path: Path, records: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def make_index(path: Path, *extra: str) -> Path:
    created = neardup("index", "create", path, *extra)
    assert created.returncode == 0, created.stderr
    return path


def count_documents(path: Path) -> int:
    with LSHIndex.open(path, create=False) as index:
        return len(index)


def test_index_lifecycle(tmp_path: Path, licenses: list[dict[str, object]]) -> None:
    index = tmp_path / "seen.ndx"
    created = run("index", "create", index, "--threshold", "0.7", "--num-perm", "64")
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["header"]["lsh"]["threshold"] == 0.7
    assert run("index", "create", index).returncode == 1  # never overwrites
    added = run("index", "add", index, SAMPLE)
    assert added.returncode == 0, added.stderr
    assert "added 2,310 documents" in added.stdout
    again = run("index", "add", index, SAMPLE)
    assert again.returncode == 1  # an id conflict is bad data
    line = one_error_line(again)
    assert "2,310 ids already in the index" in line
    assert "--upsert" in line
    assert "--skip-existing" in line
    assert run("index", "add", index, SAMPLE, "--upsert").returncode == 0
    kept = run("index", "add", index, SAMPLE, "--skip-existing")
    assert kept.returncode == 0, kept.stderr
    assert "added 0 documents, skipped 2,310 already in the index" in kept.stdout

    text = str(licenses[100]["text"])
    query = run("index", "query", index, "--text", text, "-k", "2")
    assert query.returncode == 0, query.stderr
    line = json.loads(query.stdout)
    assert line["query"] == "text:1"
    assert line["matches"][0]["similarity"] == 1.0
    assert licenses[100]["id"] in {m["id"] for m in line["matches"]} or len(line["matches"]) == 2

    queries = tmp_path / "q.jsonl"
    queries.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "text": str(r["text"])}) + "\n"
            for i, r in enumerate(licenses[:5])
        )
    )
    lines = [json.loads(x) for x in run("index", "query", index, queries).stdout.splitlines()]
    assert [x["query"] for x in lines] == ["q0", "q1", "q2", "q3", "q4"]
    assert all(x["matches"] for x in lines)

    deleted = run("index", "delete", index, str(licenses[0]["id"]), "no-such-id")
    assert "deleted 1; not in the index: no-such-id" in deleted.stdout
    info = json.loads(run("index", "info", index).stdout)
    assert info["documents"] == 2309
    assert info["header"]["sketch"]["num_perm"] == 64
    check = run("index", "check", index)
    assert check.returncode == 0
    assert check.stdout.startswith("ok: 2,309 documents")


def test_one_document_is_counted_in_the_singular(tmp_path: Path) -> None:
    index = make_index(tmp_path / "x.ndx")
    one = write_jsonl(tmp_path / "one.jsonl", [{"id": "a", "text": "just one text here"}])
    added = neardup("index", "add", index, one)
    assert added.stdout.strip() == "added 1 document; the index holds 1"


def test_info_check_and_delete_take_a_vector_index_too(tmp_path: Path) -> None:
    path = tmp_path / "vectors.ndx"
    spec = JoinSpec(metric="cosine", threshold=0.9, num_bands=16, num_rows=4)
    rows = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.9, 0.1, 0.0]])
    with VectorIndex.open(path, spec=spec, dim=3, create=True) as index:
        index.add(["a", "b", "c"], rows)
    info = json.loads(run("index", "info", path).stdout)
    assert (info["documents"], info["measure"]) == (3, "cosine")
    assert run("index", "check", path).stdout.strip() == "ok: 3 documents, postings consistent"
    deleted = run("index", "delete", path, "b", "z")
    assert deleted.stdout.strip() == "deleted 1; not in the index: z"
    with VectorIndex.open(path) as index:
        assert (len(index), index.get("b")) == (2, None)


def test_commands_on_a_missing_index_say_how_to_create_one(tmp_path: Path) -> None:
    result = run("index", "query", tmp_path / "nope.ndx", "--text", "x")
    assert result.returncode == 1
    assert "create one with: neardup index create" in one_error_line(result)
    assert not (tmp_path / "nope.ndx").exists()


def _foreign_sqlite(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.execute("INSERT INTO t VALUES (1)")
    conn.close()


def _empty_sqlite(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 7")  # a valid database file with no table
    conn.close()


def _headerless_index(path: Path) -> None:
    SQLiteStore(path, create=True).close()  # the schema of an index whose creation stopped


BAD_PATHS: dict[str, tuple[Callable[[Path], object] | None, str]] = {
    "missing": (None, "no index at"),
    "empty file": (lambda p: p.write_bytes(b""), "an empty file, not a neardup index"),
    "directory": (lambda p: p.mkdir(), "a directory, not an index file"),
    "text file": (lambda p: p.write_text("id,text\n1,hello\n"), "not an SQLite database"),
    "foreign SQLite": (_foreign_sqlite, "an SQLite database, but not a neardup index"),
    "SQLite without tables": (_empty_sqlite, "an SQLite database, but not a neardup index"),
    "index without header": (_headerless_index, "an index without a header"),
}
COMMANDS: dict[str, list[str]] = {
    "info": ["index", "info", "{path}"],
    "check": ["index", "check", "{path}"],
    "query": ["index", "query", "{path}", "--text", "some words to look up here"],
    "add": ["index", "add", "{path}", "{input}"],
    "delete": ["index", "delete", "{path}", "some-id"],
    "serve": ["serve", "{path}", "--port", "0"],
}


@pytest.mark.parametrize("kind", list(BAD_PATHS))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_path_that_is_no_index_is_refused_and_left_unchanged(
    tmp_path: Path, kind: str, command: str
) -> None:
    make, message = BAD_PATHS[kind]
    folder = tmp_path / "place"
    folder.mkdir()
    path = folder / "x.ndx"
    if make is not None:
        make(path)
    records = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "text": "one two three four"}])
    before = snapshot(folder)
    args = [a.format(path=path, input=records) for a in COMMANDS[command]]
    result = neardup(*args, env={"NEARDUP_TOKENS": "t0ken"})
    assert result.returncode == 1, result.stderr
    line = one_error_line(result)
    assert message in line
    assert str(path) in line
    assert snapshot(folder) == before  # nothing created, nothing modified


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (None, "the directory {parent} does not exist; create it first"),
        (lambda p: p.parent.mkdir() or p.write_bytes(b""), "already exists; choose another path"),
        (lambda p: p.parent.mkdir() or p.mkdir(), "already exists; choose another path"),
        (lambda p: p.parent.mkdir() or _foreign_sqlite(p), "already exists; choose another path"),
        (lambda p: p.parent.write_text("a file"), "the directory {parent} is not a directory"),
    ],
    ids=["missing directory", "existing file", "existing directory", "foreign SQLite", "file"],
)
def test_index_create_refuses_bad_places_unchanged(
    tmp_path: Path, make: Callable[[Path], object] | None, message: str
) -> None:
    path = tmp_path / "no" / "such" / "x.ndx" if make is None else tmp_path / "dir" / "x.ndx"
    if make is not None:
        make(path)
    before = snapshot(tmp_path)
    result = neardup("index", "create", path)
    assert result.returncode == 1
    assert message.format(parent=path.parent) in one_error_line(result)
    assert snapshot(tmp_path) == before


@pytest.fixture
def good_index(tmp_path: Path) -> Path:
    (tmp_path / "good").mkdir()
    index = make_index(tmp_path / "good" / "seen.ndx")
    records = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "text": "one two three four five"}])
    assert neardup("index", "add", index, records).returncode == 0
    return index


OPTION_ERRORS: list[tuple[list[str], dict[str, str], str]] = [
    (["index", "add", "{path}", "{input}", "--batch-size", "0"], {}, "--batch-size must be"),
    (["index", "add", "{path}", "{input}", "--batch-size", "-3"], {}, "--batch-size must be"),
    (["index", "add", "{path}", "{input}", "--upsert", "--skip-existing"], {}, "not both"),
    (["index", "query", "{path}", "--text", "x", "--top-k", "0"], {}, "--top-k must be"),
    (["index", "query", "{path}", "--text", "x", "--threshold", "1.5"], {}, "--threshold must"),
    (["index", "query", "{path}", "--text", "x", "--threshold", "-0.1"], {}, "--threshold must"),
    (["index", "query", "{path}", "--text", "x", "--threshold", "nan"], {}, "--threshold must"),
    (
        ["index", "create", "{new}", "--sketch", "bottomk"],
        {},
        "--sketch: 'bottomk' is not one of 'oph',",
    ),
    (
        ["index", "create", "{new}", "--method", "simhash", "--weighting", "tfidf"],
        {},
        "No such option '--weighting'",
    ),
    (
        ["index", "create", "{new}", "--method", "simhash", "--search", "psm", "--hamming", "9"],
        {},
        "--search psm flips at most 8 bits",
    ),
    (["index", "create", "{new}", "--threshold", "0"], {}, "--threshold must"),
    (["index", "create", "{new}", "--num-perm", "0"], {}, "--num-perm must"),
    (["serve", "{path}", "--max-batch", "0"], {"NEARDUP_TOKENS": "t"}, "--max-batch must be >= 1"),
    (["serve", "{path}", "--max-body-mb", "-1"], {"NEARDUP_TOKENS": "t"}, "--max-body-mb must"),
    (["serve", "{path}", "--max-body-mb", "0"], {"NEARDUP_TOKENS": "t"}, "--max-body-mb must"),
    (["serve", "{path}", "--max-body-mb", "nan"], {"NEARDUP_TOKENS": "t"}, "--max-body-mb must"),
    (["serve", "{path}", "--max-body-mb", "inf"], {"NEARDUP_TOKENS": "t"}, "--max-body-mb must"),
    (["serve", "{path}", "--port", "70000"], {"NEARDUP_TOKENS": "t"}, "--port must be"),
    (["serve", "{path}", "--port", "-1"], {"NEARDUP_TOKENS": "t"}, "--port must be"),
    (["serve", "{path}", "--no-auth"], {"NEARDUP_TOKENS": "t"}, "--no-auth with tokens"),
    (["serve", "{path}", "--no-auth", "--token-file", "{tokens}"], {}, "--no-auth with tokens"),
    (["serve", "{path}", "--no-auth", "--auth-reads"], {}, "--no-auth with --auth-reads"),
    (["serve", "{path}"], {}, "no tokens"),
    (["serve", "{path}", "--token-file", "{comments}"], {}, "no tokens"),
]


def test_index_create_lists_only_what_an_index_can_be_built_with() -> None:
    from neardup.cli.main import cli

    create = cli.commands["index"].commands["create"]  # type: ignore[attr-defined]
    listed = {name for param in create.params for name in param.opts}
    sketch = next(param for param in create.params if param.name == "sketch_kind")
    assert list(sketch.type.choices) == list(INDEX_KINDS)
    for refused in ("--family", "--bbits", "--preset", "--idf-low"):
        assert refused not in listed  # the index would refuse each of them
    assert {"--shingle", "--num-perm", "--threshold", "--bands", "--rows"} <= listed
    assert {"--method", "--hamming", "--simhash-bits", "--search", "--psm-budget"} <= listed


@pytest.mark.parametrize(("args", "env", "message"), OPTION_ERRORS)
def test_bad_options_are_refused_before_any_work(
    tmp_path: Path, good_index: Path, args: list[str], env: dict[str, str], message: str
) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text("s3cret\n")
    comments = tmp_path / "comments.txt"
    comments.write_text("# no token yet\n\n   \n")
    records = write_jsonl(tmp_path / "more.jsonl", [{"id": "b", "text": "six seven eight nine"}])
    new = tmp_path / "good" / "new.ndx"
    filled = [
        a.format(path=good_index, input=records, new=new, tokens=tokens, comments=comments)
        for a in args
    ]
    before = snapshot(tmp_path / "good")
    result = neardup(*filled, env=env)  # a server that started would time out
    assert result.returncode == 2, result.stderr
    assert message in one_error_line(result)
    assert snapshot(tmp_path / "good") == before
    assert not new.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["serve", "{path}", "--port", "eighty"],
        ["serve", "{path}", "--max-batch", "1.5"],
        ["index", "query", "{path}", "--text", "x", "--top-k", "three"],
        ["index", "add", "{path}", "in.jsonl", "--batch-size", "many"],
    ],
)
def test_an_option_of_the_wrong_type_is_a_usage_error(good_index: Path, args: list[str]) -> None:
    before = snapshot(good_index.parent)
    result = neardup(*[a.format(path=good_index) for a in args], env={"NEARDUP_TOKENS": "t"})
    assert result.returncode == 2
    assert one_error_line(result).startswith("error: --")
    assert snapshot(good_index.parent) == before


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        ("s3cret # the crawler\n", 1, "it holds whitespace"),
        ("# tokens\n\ngood-token\n  s3c ret\n", 4, "it holds whitespace"),
        ("good-token\ns3cret#crawler\n", 2, "it holds '#'"),
        ("caf\u00e9-token\n", 1, "printable ASCII"),
        ("ok\ttab\n", 1, "it holds whitespace"),
    ],
)
def test_a_token_file_line_that_is_no_plain_token_is_refused(
    tmp_path: Path, good_index: Path, content: str, line: int, message: str
) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(content, encoding="utf-8")
    result = neardup("serve", good_index, "--token-file", tokens)
    assert result.returncode == 1
    error = one_error_line(result)
    assert f"{tokens}:{line}: not a plain token" in error
    assert message in error
    assert "s3c" not in error.replace(str(tokens), "")  # the secret is never echoed


def test_a_bad_token_in_the_environment_is_refused(good_index: Path) -> None:
    result = neardup("serve", good_index, env={"NEARDUP_TOKENS": "good, bad token"})
    assert result.returncode == 1
    assert "$NEARDUP_TOKENS, token 2: not a plain token" in one_error_line(result)


def test_an_unreadable_token_file_is_an_input_error(tmp_path: Path, good_index: Path) -> None:
    result = neardup("serve", good_index, "--token-file", tmp_path / "none.txt")
    assert result.returncode == 1
    assert "cannot read the token file" in one_error_line(result)
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00token")
    result = neardup("serve", good_index, "--token-file", binary)
    assert result.returncode == 1
    assert "not UTF-8 text" in one_error_line(result)


def _corpus(licenses: list[dict[str, object]], copies: int) -> list[dict[str, str]]:
    return [
        {"id": f"c{c}-{r['id']}", "text": str(r["text"])} for c in range(copies) for r in licenses
    ]


def test_a_failing_add_says_what_was_committed_and_how_to_resume(
    tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    index = make_index(tmp_path / "x.ndx")
    records = _corpus(licenses, 2)  # ~11 MB of text: the reader yields it in 4 MiB blocks
    path = tmp_path / "in.jsonl"
    good = "".join(json.dumps(r) + "\n" for r in records)
    path.write_text(good + '{"id": "broken", "text": \n' + '{"id": "last", "text": "the end"}\n')
    failed = neardup("index", "add", index, path, "--batch-size", "500", "-q")
    assert failed.returncode == 1
    line = one_error_line(failed)
    assert f"{path}:{len(records) + 1}: " in line
    match = re.search(r"; ([\d,]+) documents of this run were committed", line)
    assert match is not None, line
    committed = int(match[1].replace(",", ""))
    assert "(in whole batches of 500)" in line
    assert "to resume, fix the input, then run the same command with --skip-existing" in line
    assert committed == count_documents(index) > 0
    assert committed % 500 == 0

    path.write_text(good + '{"id": "fixed", "text": "now good"}\n{"id": "last", "text": "end"}\n')
    resumed = neardup("index", "add", index, path, "--batch-size", "500", "--skip-existing")
    assert resumed.returncode == 0, resumed.stderr
    total = len(records) + 2
    assert resumed.stdout.strip() == (
        f"added {total - committed:,} documents, skipped {committed:,} already in the index; "
        f"the index holds {total:,}"
    )
    assert neardup("index", "check", index).returncode == 0


def test_an_id_conflict_midway_keeps_earlier_batches_and_says_how_to_go_on(
    tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    index = make_index(tmp_path / "x.ndx")
    first = write_jsonl(tmp_path / "first.jsonl", [{"id": "c0-mit", "text": "an older text"}])
    assert neardup("index", "add", index, first).returncode == 0
    records = [r for r in _corpus(licenses, 1) if r["id"] != "c0-mit"][:1000]
    records.insert(700, {"id": "c0-mit", "text": "a new text for an old id"})
    path = write_jsonl(tmp_path / "in.jsonl", records)
    failed = neardup("index", "add", index, path, "--batch-size", "300")
    assert failed.returncode == 1
    line = one_error_line(failed)
    assert "1 id already in the index ('c0-mit'); nothing of this batch was added" in line
    assert "600 documents of this run were committed (in whole batches of 300)" in line
    assert "--skip-existing to keep the indexed documents, or with --upsert" in line
    assert count_documents(index) == 601
    resumed = neardup("index", "add", index, path, "--batch-size", "300", "--skip-existing")
    assert resumed.returncode == 0, resumed.stderr
    assert "added 400 documents, skipped 601 already in the index" in resumed.stdout
    with LSHIndex.open(index, create=False) as opened:  # the older document was kept
        assert opened.query(["an older text"])[0][0].id == "c0-mit"


def _adding(index: Path, path: Path, batch_size: int) -> subprocess.Popen[str]:
    """``neardup index add`` of ``path`` running, once its first batch is committed."""
    env = {k: v for k, v in os.environ.items() if k != "NEARDUP_TOKENS"}
    args = [str(NEARDUP), "index", "add", str(index), str(path), "--batch-size", str(batch_size)]
    child = subprocess.Popen([*args, "-q"], stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        with closing(sqlite3.connect(f"file:{index}?mode=ro", uri=True)) as conn:
            if conn.execute("SELECT count(*) FROM documents").fetchone()[0] > 0:
                break
        time.sleep(0.02)
    assert child.poll() is None, "the add finished before it could be stopped"
    return child


@pytest.mark.subprocess
def test_an_interrupted_add_says_what_was_committed_and_resumes(
    tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    index = make_index(tmp_path / "x.ndx")
    records = _corpus(licenses, 4)
    path = write_jsonl(tmp_path / "in.jsonl", records)
    child = _adding(index, path, 200)
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=120)
    assert child.returncode == 130
    assert "Traceback" not in stderr
    [line] = stderr.strip().splitlines()
    match = re.fullmatch(
        r"interrupted: ([\d,]+) documents of this run were committed \(in whole batches of 200\); "
        r"to resume, run the same command with --skip-existing \(committed documents are "
        r"skipped\)",
        line,
    )
    assert match is not None, line
    committed = int(match[1].replace(",", ""))
    assert committed == count_documents(index) > 0
    assert committed % 200 == 0
    resumed = neardup("index", "add", index, path, "--batch-size", "2000", "--skip-existing")
    assert resumed.returncode == 0, resumed.stderr
    assert f"skipped {committed:,} already in the index" in resumed.stdout
    assert count_documents(index) == len(records)


@pytest.mark.subprocess
def test_a_psm_index_killed_during_add_keeps_whole_batches_and_answers_with_distances(
    tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    """``kill -9`` of ``index add`` on a PSM index: whole committed batches, the flip model
    with its batch, ``index check`` sound; the resumed add completes and queries find copies."""
    index = make_index(
        tmp_path / "p.ndx", "--method", "simhash", "--hamming", "3", "--search", "psm",
        "--psm-budget", "8",
    )  # fmt: skip
    records = _corpus(licenses, 4)
    path = write_jsonl(tmp_path / "in.jsonl", records)
    child = _adding(index, path, 1200)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=120)
    committed = count_documents(index)
    assert committed > 0
    assert committed % 1200 == 0
    checked = neardup("index", "check", index)
    assert checked.returncode == 0, checked.stderr
    with LSHIndex.open(index, create=False) as opened:
        assert opened.flips is not None  # fitted on the first batch, committed with it
    resumed = neardup("index", "add", index, path, "--batch-size", "1200", "--skip-existing")
    assert resumed.returncode == 0, resumed.stderr
    assert count_documents(index) == len(records)
    record = records[-1]
    found = neardup("index", "query", index, "--text", str(record["text"]), "-k", "1")
    [match] = json.loads(found.stdout)["matches"]
    assert match["distance"] == 0
    assert match["similarity"] == 1.0


def test_a_query_measures_what_the_index_measures(tmp_path: Path) -> None:
    index = make_index(tmp_path / "s.ndx", "--method", "simhash", "--hamming", "3")
    records = [{"id": "a", "text": "one two three four five six seven eight nine ten"}]
    added = neardup("index", "add", index, write_jsonl(tmp_path / "in.jsonl", records))
    assert added.returncode == 0, added.stderr
    text = records[0]["text"]
    own = neardup("index", "query", index, "--text", text)
    cosine = neardup("index", "query", index, "--text", text, "--measure", "cosine")
    assert own.returncode == cosine.returncode == 0, own.stderr + cosine.stderr
    assert own.stdout == cosine.stdout
    assert json.loads(own.stdout)["matches"] == [{"id": "a", "similarity": 1.0, "distance": 0}]
    refused = neardup("index", "query", index, "--text", text, "--measure", "jaccard")
    assert refused.returncode == 2
    line = one_error_line(refused)
    assert "--measure" in line
    assert "this index measures cosine" in line


def test_a_query_below_the_index_threshold_warns_with_the_recall(
    tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    index = make_index(tmp_path / "x.ndx")
    assert neardup("index", "add", index, SAMPLE, "-q").returncode == 0
    text = str(licenses[7]["text"])
    low = neardup("index", "query", index, "--text", text, "--threshold", "0.6")
    assert low.returncode == 0, low.stderr
    [warning] = low.stderr.strip().splitlines()
    header = json.loads(neardup("index", "info", index).stdout)["header"]
    expected = recall_at(header, 0.6)
    assert warning.startswith("warning: the index was built for similarity 0.8 (16 bands of 8")
    assert f"a pair at similarity 0.6 with probability {expected:.2f} only" in warning
    assert "neardup index create --threshold 0.6" in warning
    assert json.loads(low.stdout)["matches"]
    for threshold in ("0.8", "0.95"):
        quiet = neardup("index", "query", index, "--text", text, "--threshold", threshold)
        assert quiet.returncode == 0
        assert quiet.stderr == ""


def test_empty_texts_match_nothing(tmp_path: Path) -> None:
    index = make_index(tmp_path / "x.ndx")
    records = [
        {"id": "empty-1", "text": ""},
        {"id": "empty-2", "text": "   \n\t "},
        {"id": "short", "text": "two words"},
        {"id": "long", "text": "one two three four five six seven eight"},
    ]
    assert (
        neardup("index", "add", index, write_jsonl(tmp_path / "in.jsonl", records)).returncode == 0
    )
    result = neardup(
        "index", "query", index, "--text", "", "--text", "  ", "--text", "two words", "--top-k", "5"
    )
    assert result.returncode == 0, result.stderr
    answers = [json.loads(x)["matches"] for x in result.stdout.splitlines()]
    assert answers[0] == answers[1] == []
    assert [m["id"] for m in answers[2]] == ["short"]


@pytest.mark.parametrize(
    "kind", [[], ["--method", "simhash", "--hamming", "3", "--search", "psm", "--psm-budget", "8"]]
)
def test_dedup_against_an_index(
    tmp_path: Path, licenses: list[dict[str, object]], kind: list[str]
) -> None:
    """A MinHash index, and a SimHash one searched by PSM (its run uses the index's h)."""
    index = tmp_path / "seen.ndx"
    seen = tmp_path / "seen.jsonl"
    seen.write_text(
        "".join(
            json.dumps({"id": str(r["id"]), "text": str(r["text"])}) + "\n" for r in licenses[:1000]
        )
    )
    new = tmp_path / "new.jsonl"
    new.write_text(
        "".join(
            json.dumps({"id": f"new-{r['id']}", "text": str(r["text"])}) + "\n"
            for r in licenses[900:1100]
        )
    )
    assert run("index", "create", index, *kind).returncode == 0
    assert run("index", "add", index, seen).returncode == 0
    out = tmp_path / "out"
    result = run("dedup", new, "-o", out, "--against", index, "--add-to-index")
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr
    summary = json.loads((out / "summary.json").read_text())
    # The first 100 new records are copies of indexed ones: none is kept (most are dropped for
    # their copy in the index, the others already as near-duplicates within the input).
    dropped = [json.loads(x) for x in (out / "index_matches.jsonl").read_text().splitlines()]
    assert summary["counts"]["against_index"] == len(dropped) >= 90
    kept = [json.loads(x)["id"] for x in (out / "kept.jsonl").read_text().splitlines()]
    assert not set(kept) & {f"new-{r['id']}" for r in licenses[900:1000]}
    assert not set(kept) & {d["id"] for d in dropped}
    assert all(d["matches"][0]["similarity"] >= 0.8 for d in dropped)
    assert all(("distance" in d["matches"][0]) == bool(kind) for d in dropped)
    info = json.loads(run("index", "info", index).stdout)
    assert info["documents"] == 1000 + len(kept)
    assert run("index", "check", index).returncode == 0


def test_dedup_adding_to_an_index_never_replaces_what_it_holds(
    tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    # The kept documents' ids are checked before anything is written: an id the index holds
    # (with another text) stops the run, as `index add` does; nothing is written or changed.
    index = tmp_path / "seen.ndx"
    seen = tmp_path / "seen.jsonl"
    seen.write_text(
        "".join(json.dumps({"id": f"d{i}", "text": str(r["text"])}) + "\n" for i, r in
                enumerate(licenses[:50]))
    )  # fmt: skip
    assert run("index", "create", index).returncode == 0
    assert run("index", "add", index, seen).returncode == 0
    before = index.read_bytes()
    new = tmp_path / "new.jsonl"
    new.write_text(
        "".join(json.dumps({"id": f"d{i}", "text": str(r["text"])}) + "\n" for i, r in
                enumerate(licenses[500:520]))
    )  # fmt: skip
    result = run("dedup", new, "-o", tmp_path / "out", "--against", index, "--add-to-index")
    assert result.returncode == 1, result.stderr
    assert "ids already in the index ('d0'" in result.stderr
    assert "--add-to-index adds and never replaces" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
    assert index.read_bytes() == before
    query = run("index", "query", index, "--text", str(licenses[0]["text"]))
    assert json.loads(query.stdout)["matches"][0]["id"] == "d0"


def test_dedup_against_an_index_below_its_threshold_says_what_it_misses(
    tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    index = tmp_path / "seen.ndx"
    assert run("index", "create", index, "--threshold", "0.8").returncode == 0
    new = tmp_path / "new.jsonl"
    new.write_text(
        "".join(json.dumps({"id": f"n{i}", "text": str(r["text"])}) + "\n" for i, r in
                enumerate(licenses[:20]))
    )  # fmt: skip
    result = run("dedup", new, "-o", tmp_path / "out", "--against", index, "--threshold", "0.5")
    assert result.returncode == 0, result.stderr
    assert "warning: --against the index was built for similarity 0.8" in result.stderr
    assert "similarity 0.5 with probability" in result.stderr


def test_index_add_reads_inputs_as_dedup_does_with_their_encoding(tmp_path: Path) -> None:
    index = make_index(tmp_path / "x.ndx")
    text = "les bûcherons français coupent les arbres près de la rivière où l'été est chaud"
    csv = tmp_path / "in.csv"
    csv.write_bytes(f"id,text\nfr-1,{text}\n".encode("cp1252"))
    added = neardup("index", "add", index, csv, "--encoding", "cp1252")
    assert added.returncode == 0, added.stderr
    found = neardup("index", "query", index, "--text", text)
    assert json.loads(found.stdout)["matches"] == [{"id": "fr-1", "similarity": 1.0}]
