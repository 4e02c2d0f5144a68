"""Scattered pieces of a file read through windows of a memory map: the bytes, and read-ahead."""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from neardup.io import mapped


class _Recording(mmap.mmap):
    """A memory map that notes the advice it is given."""

    advice: ClassVar[list[int]] = []

    def madvise(self, option: int, *args: int) -> None:
        _Recording.advice.append(option)
        super().madvise(option, *args)


@pytest.mark.skipif(not hasattr(mmap, "MADV_RANDOM"), reason="no madvise on this platform")
@pytest.mark.parametrize(("gap", "random"), [(200_000, True), (1_000, False)])
def test_sparse_pieces_are_asked_for_at_once_without_read_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gap: int, random: bool
) -> None:
    data = np.random.default_rng(0).integers(0, 256, size=4_000_000, dtype=np.uint8)
    path = tmp_path / "big.bin"
    path.write_bytes(data.tobytes())
    starts = np.arange(100, 3_900_000, gap, dtype=np.int64)
    lengths = np.full(starts.shape[0], 300, dtype=np.int64)
    out = np.zeros(int(lengths.sum()), dtype=np.uint8)
    monkeypatch.setattr(mmap, "mmap", _Recording)
    _Recording.advice = []
    with path.open("rb") as f:
        mapped.read_spans(f, starts, lengths, out, np.arange(starts.shape[0]) * 300)
    expected = np.concatenate([data[s : s + 300] for s in starts.tolist()])
    assert np.array_equal(out, expected)
    # Sparse: no read-ahead, and every piece's pages asked for at once; dense: no advice at all.
    assert _Recording.advice[:1] == ([mmap.MADV_RANDOM] if random else [])
    assert _Recording.advice[1:] == ([mmap.MADV_WILLNEED] * starts.shape[0] if random else [])
