"""Exact repeated substrings (neardup substrings) against a brute force over every window.

The truth (:func:`tests.reference.repeated_token_marks`) compares every window of N raw word
tokens as a tuple with every window before it; the command must remove exactly the tokens of
the later windows, whatever the number of shards the memory cuts the corpus into, and keep
everything else of every record.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup import MissingExtraError, ParameterError
from neardup.jobs.substrings import raw_token_spans, substrings_files
from tests import reference
from tests.conftest import SAMPLE, SUMMARY_SCHEMA
from tests.integration.conftest import run

words = st.sampled_from(["a", "b", "c", "a,", "漢", "dé"])
texts = st.lists(words, max_size=14).map(" ".join)
corpora = st.lists(texts, min_size=1, max_size=8)


def _write(path: Path, texts: list[str]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for number, text in enumerate(texts):
            f.write(json.dumps({"id": f"d{number}", "text": text, "n": number}) + "\n")
    return path


def _removed_marks(texts: list[str], out: Path) -> list[list[bool]]:
    """Per text, which tokens the spans of repeats.jsonl cover."""
    spans: dict[str, list[list[int]]] = {}
    for line in (out / "repeats.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        spans[record["id"]] = record["spans"]
    marks = []
    for number, text in enumerate(texts):
        covered = spans.get(f"d{number}", [])
        marks.append(
            [
                any(a <= start and end <= b for a, b in covered)
                for start, end, _ in reference.raw_word_tokens(text)
            ]
        )
    return marks


def _kept_texts(out: Path) -> list[str]:
    lines = (out / "kept.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines]


def _check(texts: list[str], out: Path, expected: list[list[bool]]) -> None:
    assert _removed_marks(texts, out) == expected
    kept = _kept_texts(out)
    for text, left, marks in zip(texts, kept, expected, strict=True):
        tokens = [
            t
            for (_, _, t), gone in zip(reference.raw_word_tokens(text), marks, strict=True)
            if not gone
        ]
        assert [t for _, _, t in reference.raw_word_tokens(left)] == tokens


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(corpus=corpora, size=st.integers(1, 4), memory=st.sampled_from([1024, 2048, 1 << 20]))
def test_removed_tokens_equal_the_brute_force_in_any_number_of_shards(
    tmp_path_factory: pytest.TempPathFactory, corpus: list[str], size: int, memory: int
) -> None:
    tmp = tmp_path_factory.mktemp("substrings")
    source = _write(tmp / "in.jsonl", corpus)
    summary = substrings_files([source], tmp / "out", min_tokens=size, memory_bytes=memory)
    _check(corpus, tmp / "out", reference.repeated_token_marks(corpus, size))
    assert summary["counts"]["tokens_removed"] == sum(
        map(sum, reference.repeated_token_marks(corpus, size))
    )


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    corpus=corpora, other=corpora, size=st.integers(1, 3), memory=st.sampled_from([1024, 1 << 20])
)
def test_against_removes_only_what_the_other_corpus_holds(
    tmp_path_factory: pytest.TempPathFactory,
    corpus: list[str],
    other: list[str],
    size: int,
    memory: int,
) -> None:
    tmp = tmp_path_factory.mktemp("against")
    source = _write(tmp / "in.jsonl", corpus)
    against = _write(tmp / "other.jsonl", other)
    substrings_files([source], tmp / "out", min_tokens=size, against=[against], memory_bytes=memory)
    _check(corpus, tmp / "out", reference.repeated_token_marks(corpus, size, other))


def test_spans_take_the_whitespace_after_a_run_or_before_a_final_one(tmp_path: Path) -> None:
    corpus = ["one two three four", "x one two three y", "z  one two three"]
    source = _write(tmp_path / "in.jsonl", corpus)
    substrings_files([source], tmp_path / "out", min_tokens=3)
    lines = (tmp_path / "out" / "repeats.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [
        {"id": "d1", "spans": [[2, 16]]},
        {"id": "d2", "spans": [[1, 16]]},
    ]
    assert _kept_texts(tmp_path / "out") == ["one two three four", "x y", "z"]
    kept = (tmp_path / "out" / "kept.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(kept[1])["n"] == 1  # other fields kept


def _licence_texts(limit_bytes: int) -> list[str]:
    out, size = [], 0
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        for line in f:
            text = json.loads(line)["text"]
            out.append(text)
            size += len(text.encode("utf-8"))
            if size >= limit_bytes:
                break
    return out


@pytest.mark.slow
def test_a_megabyte_of_licences_equals_the_brute_force_in_one_shard_or_many(
    tmp_path: Path,
) -> None:
    corpus = _licence_texts(1 << 20)
    source = _write(tmp_path / "in.jsonl", corpus)
    expected = reference.repeated_token_marks(corpus, 20)
    one = substrings_files([source], tmp_path / "one", min_tokens=20)
    many = substrings_files([source], tmp_path / "many", min_tokens=20, memory_bytes=1 << 20)
    assert (one["counts"]["shards"], many["counts"]["shards"]) == (1, 12)
    for out in (tmp_path / "one", tmp_path / "many"):
        _check(corpus, out, expected)
    assert (tmp_path / "one" / "repeats.jsonl").read_bytes() == (
        tmp_path / "many" / "repeats.jsonl"
    ).read_bytes()
    assert sum(map(sum, expected)) > 10_000  # licences repeat a lot: a test that can fail


def test_the_command_writes_a_run_record(tmp_path: Path) -> None:
    source = _write(tmp_path / "in.jsonl", ["a b c d", "a b c d e"])
    result = run("substrings", source, "-o", tmp_path / "out", "--min-tokens", "4")
    assert result.returncode == 0, result.stderr
    assert "removed 4 tokens" in result.stdout
    summary: dict[str, Any] = json.loads((tmp_path / "out" / "summary.json").read_text())
    SUMMARY_SCHEMA.validate(summary)
    assert summary["command"] == "substrings"
    assert summary["counts"]["tokens_removed"] == 4
    assert run("substrings", source, "-o", tmp_path / "out").returncode != 0  # exists


def test_raw_tokens_split_at_whitespace_and_script_without_spaces() -> None:
    starts, ends = raw_token_spans("Hi, 漢字  ok\n")
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == [
        (0, 3),
        (4, 5),
        (5, 6),
        (8, 10),
    ]


@pytest.mark.parametrize("value", [0, -1, True, 2.5])
def test_min_tokens_must_be_a_positive_int(tmp_path: Path, value: Any) -> None:
    source = _write(tmp_path / "in.jsonl", ["a b"])
    with pytest.raises(ParameterError, match="--min-tokens must be an int >= 1"):
        substrings_files([source], tmp_path / "out", min_tokens=value)


def test_without_pydivsufsort_the_error_names_the_extra_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pydivsufsort", None)  # import fails
    source = _write(tmp_path / "in.jsonl", ["a b c"])
    with pytest.raises(MissingExtraError, match=r"pip install 'neardup\[substrings\]'"):
        substrings_files([source], tmp_path / "out", min_tokens=2)
    assert not (tmp_path / "out").exists()
