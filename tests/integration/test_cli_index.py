"""``neardup index ...`` and ``neardup dedup --against``, run as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import SAMPLE
from tests.integration.test_cli import run


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
    assert again.returncode == 2
    assert "already in the index" in again.stderr
    assert run("index", "add", index, SAMPLE, "--upsert").returncode == 0

    text = str(licenses[100]["text"])
    query = run("index", "query", index, "--text", text, "--top-k", "2")
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


def test_commands_on_a_missing_index_say_how_to_create_one(tmp_path: Path) -> None:
    result = run("index", "query", tmp_path / "nope.ndx", "--text", "x")
    assert result.returncode == 2
    assert "create one with: neardup index create" in result.stderr


def test_dedup_against_an_index(tmp_path: Path, licenses: list[dict[str, object]]) -> None:
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
    assert run("index", "create", index).returncode == 0
    assert run("index", "add", index, seen).returncode == 0
    out = tmp_path / "out"
    result = run("dedup", new, "-o", out, "--against", index, "--add-to-index")
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    # The first 100 new records are copies of indexed ones: none is kept (most are dropped for
    # their copy in the index, the others already as near-duplicates within the input).
    dropped = [json.loads(x) for x in (out / "index_matches.jsonl").read_text().splitlines()]
    assert summary["counts"]["against_index"] == len(dropped) >= 90
    kept = [json.loads(x)["id"] for x in (out / "kept.jsonl").read_text().splitlines()]
    assert not set(kept) & {f"new-{r['id']}" for r in licenses[900:1000]}
    assert not set(kept) & {d["id"] for d in dropped}
    assert all(d["matches"][0]["similarity"] >= 0.8 for d in dropped)
    info = json.loads(run("index", "info", index).stdout)
    assert info["documents"] == 1000 + len(kept)
    assert run("index", "check", index).returncode == 0
