"""Compressed outputs are the same bytes on any machine."""

from __future__ import annotations

import io
from pathlib import Path

import zstandard

from neardup.io.compression import open_binary_write


def test_zstd_output_does_not_depend_on_the_number_of_cores(tmp_path: Path) -> None:
    data = b"".join(
        b'{"id": "d%d", "text": "some words %d"}\n' % (i, i % 977) for i in range(300_000)
    )
    with open_binary_write(tmp_path / "out.zst", "zstd") as out:  # every core of this machine
        out.write(data)
    for threads in (1, 3):
        expected = io.BytesIO()
        with zstandard.ZstdCompressor(threads=threads).stream_writer(expected, closefd=False) as w:
            w.write(data)
        assert (tmp_path / "out.zst").read_bytes() == expected.getvalue()
    assert (
        zstandard.ZstdDecompressor().decompressobj().decompress((tmp_path / "out.zst").read_bytes())
        == data
    )
