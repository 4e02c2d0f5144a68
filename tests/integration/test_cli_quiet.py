"""``-q/--quiet`` means one thing on every command: nothing printed on success."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.conftest import run

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "licenses.jsonl.gz"

PAGE = "<html><body><p>{}</p><a href='/b'>next</a></body></html>"


def _write_inputs(root: Path) -> None:
    sets = [{"id": f"s{i}", "items": [f"x{j}" for j in range(i, i + 20)]} for i in range(5)]
    (root / "sets.jsonl").write_text("".join(json.dumps(s) + "\n" for s in sets))
    pages = [
        {"url": f"http://{host}/{page}", "html": PAGE.format(f"page {page} of the same site")}
        for host in ("a.example", "b.example")
        for page in ("a", "b", "c")
    ]
    (root / "pages.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pages))


COMMANDS: list[list[str]] = [
    ["dedup", str(SAMPLE), "-o", "dedup{run}"],
    ["join", "sets.jsonl", "--metric", "jaccard", "--threshold", "0.5", "-o", "join{run}"],
    ["mirrors", "pages.jsonl", "--url-field", "url", "--html-field", "html", "-o", "web{run}"],
    ["plan", str(SAMPLE), "--sample", "200", "-o", "plan{run}.toml"],
    ["report", "dedup{run}"],
    ["index", "add", "seen{run}.ndx", str(SAMPLE)],
]


def test_quiet_commands_print_nothing_on_success(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # progress logs a line at every report: -q must silence it, not only be too quick for it
    monkeypatch.setattr("neardup._progress.LOG_EVERY_S", 0.0)
    _write_inputs(tmp_path)
    for run_name, flags in (("loud", []), ("quiet", ["-q"])):
        assert run("index", "create", f"seen{run_name}.ndx", cwd=tmp_path).returncode == 0
        for args in COMMANDS:
            done = run(*[a.format(run=run_name) for a in args], *flags, cwd=tmp_path)
            assert done.returncode == 0, (args, done.stderr)
            printed = done.stdout + done.stderr
            assert (printed == "") == (run_name == "quiet"), (args, printed)
