"""Every message tells the truth: an option it names exists on the command that printed it.

Two nets. The first reads every string in the package and checks that each ``--option`` it
names is an option of some command (a renamed option leaves no stale advice behind). The
second drives every command that reads records through a table of bad inputs, in-process, and
checks each error and warning it prints against that command's own options.
"""

from __future__ import annotations

import ast
import gzip
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

import neardup
from neardup.cli.main import command_options, leaf_commands, main

OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]")

NOT_OPTIONS = frozenset({"--help", "--version", "--debug"})
"""Options of the ``neardup`` group itself, which every command has."""


def _strings(tree: ast.AST) -> list[str]:
    """The string constants of a module, docstrings left out (they explain, not advise)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in docstrings
    ]


def test_every_option_a_message_names_exists() -> None:
    known = set(NOT_OPTIONS).union(*map(command_options, leaf_commands().values()))
    root = Path(neardup.__file__).parent
    unknown = {
        f"{path.relative_to(root)}: {option}"
        for path in root.rglob("*.py")
        for text in _strings(ast.parse(path.read_text(encoding="utf-8")))
        for option in OPTION.findall(text)
        if option not in known
    }
    assert not unknown, sorted(unknown)


# driving each command through bad inputs ---------------------------------------------------

GOOD = {"id": "g", "url": "http://a.example/", "text": "a good record of several words"}


def _jsonl(*records: object) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def _truncated_warc() -> bytes:
    body = b"<html><body><p>" + b"words of a page " * 50 + b"</p></body></html>"
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body
    record = (
        b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://a.example/\r\n"
        b"WARC-Record-ID: <urn:uuid:1>\r\nContent-Type: application/http; msgtype=response\r\n"
        + f"Content-Length: {len(http)}\r\n\r\n".encode()
        + http
        + b"\r\n\r\n"
    )
    return gzip.compress(record * 3)[:-40]


BAD_INPUTS: dict[str, tuple[str, Callable[[], bytes]]] = {
    "a number for the text": ("in.jsonl", lambda: _jsonl(GOOD, {**GOOD, "text": 5})),
    "malformed JSON": ("in.jsonl", lambda: _jsonl(GOOD) + b'{"text": "a\n'),
    "not an object": ("in.jsonl", lambda: _jsonl(GOOD, [1, 2])),
    "no text field": ("in.jsonl", lambda: _jsonl(GOOD, {"id": "x", "url": "http://b/"})),
    "a null id": ("in.jsonl", lambda: _jsonl(GOOD, {**GOOD, "id": None, "url": None})),
    "not UTF-8": ("in.jsonl", lambda: _jsonl(GOOD) + b'{"text": "caf\xe9"}\n'),
    "unknown format": ("in.data", lambda: _jsonl(GOOD)),
    "a CSV row too short": ("in.csv", lambda: b"id,url,text\ng,http://a/,good words\nx,y\n"),
    "a CSV not in UTF-8": ("in.csv", lambda: b"id,url,text\ng,http://a/,caf\xe9 words\n"),
    "no CSV column": ("in.csv", lambda: b"id,body\ng,good words\n"),
    "not a WARC": ("in.warc", lambda: b"this is no archive at all\n"),
    "a truncated WARC": ("in.warc.gz", _truncated_warc),
}

COMMANDS: dict[str, Callable[[Path], list[str]]] = {
    "dedup": lambda path: ["dedup", str(path), "-o", "out", "-q"],
    "plan": lambda path: ["plan", str(path), "-o", "plan.toml"],
    "index add": lambda path: ["index", "add", "seen.ndx", str(path)],
    "join": lambda path: ["join", str(path), "--metric", "edit", "--threshold", "2", "-o", "out"],
    "mirrors": lambda path: (
        ["mirrors", str(path), "-o", "out", "-q"]
        + ([] if ".warc" in path.name else ["--url-field", "url", "--text-field", "text"])
    ),
    "compare": lambda path: ["compare", str(path), str(path)],
    "contamination": lambda path: [
        "contamination",
        str(path),
        "--against",
        str(path),
        "-o",
        "out",
        "-q",
    ],
    "substrings": lambda path: ["substrings", str(path), "-o", "out", "-q"],
}
"""How each command that reads records reads one bad input."""


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_messages_name_only_the_options_of_their_command(
    name: str,
    case: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    file_name, make = BAD_INPUTS[case]
    path = tmp_path / file_name
    path.write_bytes(make())
    if name == "index add":
        assert main(["index", "create", "seen.ndx"]) == 0
        capsys.readouterr()
    main(COMMANDS[name](path))
    printed = capsys.readouterr().err
    messages = [line for line in printed.splitlines() if line.startswith(("error:", "warning:"))]
    own = command_options(leaf_commands()[name]) | NOT_OPTIONS
    for message in messages:
        foreign = set(OPTION.findall(message)) - own
        assert not foreign, f"neardup {name} printed {message!r}"


def test_the_table_covers_every_command_that_reads_records() -> None:
    readers = {name for name, c in leaf_commands().items() if "--text-field" in command_options(c)}
    assert readers - {"index query"} <= set(COMMANDS)


def test_mirrors_names_the_html_field_it_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pages.jsonl").write_bytes(_jsonl({"url": "http://a.example/", "html": "<p>a"}))
    argv = ["mirrors", "pages.jsonl", "--url-field", "url", "--html-field", "nope", "-o", "out"]
    assert main(argv) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "'nope'" in line
    assert "--html-field" in line
    assert "--text-field" not in line
