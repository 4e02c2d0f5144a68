"""Opening plain, gzip and zstd files by their extension, with errors that name the file."""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import IO, Literal, cast

from neardup.errors import InputError

__all__ = ["COMPRESSED_SUFFIXES", "open_binary", "open_binary_write", "strip_compression"]

COMPRESSED_SUFFIXES = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd"}


def strip_compression(path: Path) -> tuple[str, str | None]:
    """The file's format suffix (lower case) and its compression, e.g. ``('.jsonl', 'gzip')``."""
    suffixes = [s.lower() for s in path.suffixes]
    compression = COMPRESSED_SUFFIXES.get(suffixes[-1]) if suffixes else None
    if compression is not None:
        suffixes = suffixes[:-1]
    return (suffixes[-1] if suffixes else ""), compression


def open_binary(path: Path) -> IO[bytes]:
    """Open ``path`` for reading bytes, decompressing gzip or zstd as its extension says."""
    _, compression = strip_compression(path)
    try:
        if compression == "gzip":
            return cast(IO[bytes], gzip.GzipFile(filename=path, mode="rb"))
        raw = path.open("rb")
    except FileNotFoundError:
        raise InputError("no such file; check the path", path=path) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", path=path) from None
    except PermissionError:
        raise InputError("permission denied; check the file's permissions", path=path) from None
    if compression == "zstd":
        import zstandard

        return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, closefd=True))
    return raw


def open_binary_write(path: Path, compression: Literal["none", "gzip", "zstd"]) -> IO[bytes]:
    """Open ``path`` for writing bytes, compressing as asked."""
    if compression == "gzip":
        return cast(IO[bytes], gzip.GzipFile(filename=path, mode="wb", mtime=0))
    raw = path.open("wb")
    if compression == "zstd":
        import zstandard

        return cast(IO[bytes], zstandard.ZstdCompressor().stream_writer(raw, closefd=True))
    return raw
