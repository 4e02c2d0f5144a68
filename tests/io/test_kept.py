"""The kept corpus of plain JSONL inputs: lines copied byte for byte, long runs and short ones."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.io import kept as kept_module
from neardup.io.jsonl import JSONLinesSource
from neardup.io.readers import ReadOptions


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
    sources = [JSONLinesSource(path, ReadOptions()) for path in paths]
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
            [JSONLinesSource(path, ReadOptions())],
            np.array([True, True]),
            out,
            line_spans=spans,
        )
