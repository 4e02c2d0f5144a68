"""The kept corpus: JSONL lines copied byte for byte (long runs and short ones), and the lines
written anew (edited records, text files) valid UTF-8 with every character kept.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.io import kept as kept_module
from neardup.io.jsonl import JSONLinesSource
from neardup.io.readers import all_batches, open_sources
from neardup.params import ReadSpec


def _reference(files: list[list[bytes]], keep: list[bool]) -> bytes:
    """The kept lines in order, each ending with a newline."""
    lines = [line for lines in files for line in lines]
    return b"".join(
        line if line.endswith(b"\n") else line + b"\n"
        for line, kept in zip(lines, keep, strict=True)
        if kept
    )


def _spans(files: list[list[bytes]]) -> tuple[np.ndarray, np.ndarray]:
    source, lines = [], []
    for index, file_lines in enumerate(files):
        offset = 0
        for line in file_lines:
            source.append(index)
            lines.append((offset, len(line)))
            offset += len(line)
    return np.array(source, dtype=np.int32), np.array(lines, dtype=np.int64).reshape(-1, 2)


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    num_files=st.integers(1, 3),
    copy_run=st.sampled_from([1, 40, 1 << 20]),
    window=st.sampled_from([16, 100, 32 << 20]),
    run_block=st.sampled_from([1, 3, 1 << 20]),
)
def test_kept_lines_are_copied_as_they_are(
    tmp_path_factory: pytest.TempPathFactory,
    data: st.DataObject,
    num_files: int,
    copy_run: int,
    window: int,
    run_block: int,
) -> None:
    # Long runs go through copy_file_range, short ones through a window buffer: with tiny
    # thresholds both paths, every window boundary and runs spanning blocks of records are
    # taken; the bytes must not change.
    tmp = tmp_path_factory.mktemp("kept")
    files = []
    for _ in range(num_files):
        sizes = data.draw(st.lists(st.integers(1, 30), min_size=1, max_size=25))
        lines = [b'{"text": "' + b"x" * size + b'"}\n' for size in sizes]
        if data.draw(st.booleans()):
            lines[-1] = lines[-1][:-1]  # the file's last line lacks its newline
        files.append(lines)
    paths = []
    for index, lines in enumerate(files):
        path = tmp / f"in{index}.jsonl"
        path.write_bytes(b"".join(lines))
        paths.append(path)
    keep = data.draw(
        st.lists(st.booleans(), min_size=sum(map(len, files)), max_size=sum(map(len, files)))
    )
    sources = [JSONLinesSource(path, ReadSpec()) for path in paths]
    old = kept_module.COPY_RUN, kept_module.WINDOW, kept_module.RUN_BLOCK
    kept_module.COPY_RUN, kept_module.WINDOW, kept_module.RUN_BLOCK = copy_run, window, run_block
    try:
        out = tmp / "out"
        out.mkdir()
        path = kept_module.write_kept(
            sources, np.array(keep, dtype=bool), out, line_spans=_spans(files)
        )
    finally:
        kept_module.COPY_RUN, kept_module.WINDOW, kept_module.RUN_BLOCK = old
    assert path.read_bytes() == _reference(files, keep)


def test_a_file_that_shrank_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    lines = [b'{"text": "one"}\n', b'{"text": "two"}\n']
    path.write_bytes(b"".join(lines))
    spans = _spans([lines])
    path.write_bytes(lines[0])
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(Exception, match="file changed while it was read"):
        kept_module.write_kept(
            [JSONLinesSource(path, ReadSpec())],
            np.array([True, True]),
            out,
            line_spans=spans,
        )


def test_an_edited_record_keeps_its_characters_and_escapes_only_lone_surrogates(
    tmp_path: Path,
) -> None:
    # "\ud800" is valid JSON and has no UTF-8 form: it stays the escape it was in the input,
    # while the record's other characters stay UTF-8 (not "\u00e9"); the record not edited
    # is copied byte for byte.
    edited = '{"id": "u1", "text": "body caf\u00e9 \\ud800 end", "lang": "fr\u00e9"}\n'
    untouched = '{"id": "u2\\udc80", "text": "untouched caf\u00e9 \\udc80"}\n'
    path = tmp_path / "in.jsonl"
    path.write_text(edited + untouched, encoding="utf-8")
    source = JSONLinesSource(path, ReadSpec())
    for _ in source.batches(1 << 20):  # the reading pass write_kept follows
        pass
    edits = kept_module.Edits(np.array([True, False]), lambda _, text: text.removeprefix("body "))
    (tmp_path / "out").mkdir()
    written = kept_module.write_kept(
        [source], np.array([True, True]), tmp_path / "out", edits=edits
    )
    assert written.read_bytes() == (
        '{"id": "u1", "text": "caf\u00e9 \\ud800 end", "lang": "fr\u00e9"}\n' + untouched
    ).encode("utf-8")
    first = json.loads(written.read_text(encoding="utf-8").splitlines()[0])
    assert first["text"] == "caf\u00e9 \ud800 end"


def test_a_text_file_whose_name_is_not_utf8_gives_a_utf8_record_of_its_id(
    tmp_path: Path,
) -> None:
    # A .txt file's id is its name; a byte of it that is not UTF-8 reads as a lone surrogate
    # (os.fsdecode), written as its JSON escape: the kept corpus is UTF-8 and gives back the
    # ids the run read.
    folder = tmp_path / "texts"
    folder.mkdir()
    for name, text in ((b"caf\xc3\xa9 x\xff.txt", "caf\u00e9 one"), (b"plain.txt", "two")):
        with open(os.path.join(os.fsencode(folder), name), "w", encoding="utf-8") as f:
            f.write(text)
    sources = open_sources([folder], ReadSpec())
    ids = [doc for batch in all_batches(sources, 1 << 20) for doc in batch.ids]
    assert any("\udcff" in doc for doc in ids)
    (tmp_path / "out").mkdir()
    written = kept_module.write_kept(sources, np.ones(len(ids), dtype=bool), tmp_path / "out")
    records = [json.loads(line) for line in written.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in records] == ids
    assert "\\udcff" in written.read_text(encoding="utf-8")
    assert "caf\u00e9" in written.read_text(encoding="utf-8")  # not escaped
