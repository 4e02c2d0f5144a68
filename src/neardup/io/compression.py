"""Opening plain, gzip and zstd files by their extension, with errors that name the file."""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import IO, BinaryIO, Literal, cast

from neardup.errors import InputError

__all__ = [
    "COMPRESSED_SUFFIXES",
    "decompressing",
    "open_binary",
    "open_binary_write",
    "open_raw",
    "strip_compression",
]

COMPRESSED_SUFFIXES = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd"}


def strip_compression(path: Path) -> tuple[str, str | None]:
    """The file's format suffix (lower case) and its compression, e.g. ``('.jsonl', 'gzip')``."""
    suffixes = [s.lower() for s in path.suffixes]
    compression = COMPRESSED_SUFFIXES.get(suffixes[-1]) if suffixes else None
    if compression is not None:
        suffixes = suffixes[:-1]
    return (suffixes[-1] if suffixes else ""), compression


def open_raw(path: Path) -> BinaryIO:
    """Open ``path`` for reading its bytes as stored (no decompression)."""
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise InputError("no such file; check the path", path=path) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", path=path) from None
    except PermissionError:
        raise InputError("permission denied; check the file's permissions", path=path) from None


def decompressing(raw: BinaryIO, path: Path) -> IO[bytes]:
    """``raw`` decompressed as ``path``'s extension says (``raw`` itself when plain).

    Closing the result does not always close ``raw`` (gzip does not): close both.
    """
    _, compression = strip_compression(path)
    if compression == "gzip":
        return cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb"))
    if compression == "zstd":
        import zstandard

        return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, closefd=True))
    return raw


def open_binary(path: Path) -> IO[bytes]:
    """Open ``path`` for reading bytes, decompressing gzip or zstd as its extension says."""
    raw = open_raw(path)
    if strip_compression(path)[1] == "gzip":
        raw.close()
        return cast(IO[bytes], gzip.GzipFile(filename=path, mode="rb"))
    return decompressing(raw, path)


def open_binary_write(path: Path, compression: Literal["none", "gzip", "zstd"]) -> IO[bytes]:
    """Open ``path`` for writing bytes, compressing as asked."""
    if compression == "gzip":
        return cast(IO[bytes], gzip.GzipFile(filename=path, mode="wb", mtime=0))
    raw = path.open("wb")
    if compression == "zstd":
        import zstandard

        return cast(IO[bytes], zstandard.ZstdCompressor().stream_writer(raw, closefd=True))
    return raw
