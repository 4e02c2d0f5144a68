"""Ctrl-C or SIGTERM in the middle of each long command: exit 130 (143), one line, nothing left.

Each command sends itself the signal at a named point mid-work (``NEARDUP_CRASH_AT=POINT:INT``,
:mod:`neardup._faults`): after its output (or work) directory was started and before anything
is committed, whatever the machine's speed. Nothing is left but, for ``dedup``, the finished
stages it keeps for ``--resume`` (``.NAME.work``), which the resumed run uses and removes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.conftest import run, run_process

pytestmark = pytest.mark.subprocess

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "licenses.jsonl.gz"

# (command line, the point it is interrupted at)
LONG_COMMANDS: list[tuple[list[str], str]] = [
    (["dedup", "{sample}", "-o", "{out}"], "verifying"),
    (["dedup", "{sample}", "-o", "{out}", "--unit", "line"], "units-sketched"),
    (["join", "{sets}", "--metric", "jaccard", "--threshold", "0.5", "-o", "{out}"], "joined"),
    (
        ["mirrors", "{pages}", "--url-field", "url", "--html-field", "html", "-o", "{out}"],
        "crawl-read",
    ),
    (["contamination", "{sample}", "--against", "{items}", "-o", "{out}"], "scanned-batch"),
    (["substrings", "{sample}", "-o", "{out}"], "tokenized"),
    (["plan", "{sample}", "-o", "{out}"], "sampled"),
    (["report", "{run}", "-o", "{out}"], "run-loaded"),
]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Small real inputs of every kind, and a finished dedup run for the report."""
    folder = tmp_path_factory.mktemp("inputs")
    sets = folder / "sets.jsonl"
    sets.write_text(
        "".join(json.dumps({"id": f"s{i}", "items": [i % 7, i % 5, 1]}) + "\n" for i in range(40))
    )
    pages = folder / "pages.jsonl"
    html = "<html><body><p>The same page, served by {host}.</p></body></html>"
    pages.write_text(
        "".join(
            json.dumps({"url": f"https://{host}/{i}.html", "html": html.format(host=host)}) + "\n"
            for host in ("a.example", "b.example")
            for i in range(5)
        )
    )
    items = folder / "items.jsonl"
    items.write_text(json.dumps({"id": "q1", "text": "permission is hereby granted"}) + "\n")
    finished = run("dedup", SAMPLE, "-o", folder / "run", "-q")
    assert finished.returncode == 0, finished.stderr
    return {"sample": SAMPLE, "sets": sets, "pages": pages, "items": items, "run": folder / "run"}


@pytest.mark.parametrize(
    ("args", "point"), LONG_COMMANDS, ids=[f"{a[0]}@{p}" for a, p in LONG_COMMANDS]
)
@pytest.mark.parametrize(("signal_name", "code", "said"), [("INT", 130, "interrupted")])
def test_an_interrupted_command_leaves_nothing(
    inputs: dict[str, Path],
    tmp_path: Path,
    args: list[str],
    point: str,
    signal_name: str,
    code: int,
    said: str,
) -> None:
    out = tmp_path / (
        "out.toml" if args[0] == "plan" else "out.html" if args[0] == "report" else "out"
    )
    command = [a.format(out=out, **inputs) for a in args]
    done = run_process(*command, env={"NEARDUP_CRASH_AT": f"{point}:{signal_name}"}, cwd=tmp_path)
    assert done.returncode == code, done.stderr
    assert done.stderr.strip().splitlines()[-1] == said, done.stderr
    kept = [".out.work"] if point == "verifying" else []  # dedup's finished stages, to resume
    assert sorted(p.name for p in tmp_path.iterdir()) == kept  # no output, no temporary sibling
    if kept:
        resumed = run_process(*command, "--resume", cwd=tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]


def test_sigterm_ends_a_command_as_ctrl_c_does(inputs: dict[str, Path], tmp_path: Path) -> None:
    done = run_process(
        "join", inputs["sets"], "--metric", "jaccard", "--threshold", "0.5", "-o", tmp_path / "out",
        env={"NEARDUP_CRASH_AT": "joined:TERM"},
    )  # fmt: skip
    assert done.returncode == 143, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "terminated"
    assert list(tmp_path.iterdir()) == []
