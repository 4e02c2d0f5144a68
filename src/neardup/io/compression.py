"""Opening plain, gzip and zstd files by their extension, with errors that name the file."""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal, cast

from neardup.errors import InputError

__all__ = [
    "COMPRESSED_SUFFIXES",
    "decompressing",
    "is_read_error",
    "open_binary",
    "open_binary_write",
    "open_raw",
    "read_error",
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
        return io.BufferedReader(_ZstdFrames(raw), buffer_size=1 << 20)
    return raw


class _ZstdFrames(io.RawIOBase):
    """The zstd frames of ``raw`` decompressed one after another.

    Unlike zstandard's stream reader, which ends quietly where the data ends, a stream that
    ends inside a frame (a truncated file) raises :class:`EOFError`. Closing closes ``raw``.
    """

    def __init__(self, raw: BinaryIO) -> None:
        import zstandard

        self._raw = raw
        self._context = zstandard.ZstdDecompressor()
        self._frame: Any = None
        self._out = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        """Fill ``buffer`` with decompressed bytes; 0 at the end of the last frame."""
        while not self._out:
            data = self._raw.read(1 << 18)
            if not data:
                if self._frame is not None:
                    raise EOFError("a frame is cut short")
                return 0
            self._out = memoryview(self._decompress(data))
        size = min(len(buffer), len(self._out))
        buffer[:size] = self._out[:size]
        self._out = self._out[size:]
        return size

    def _decompress(self, data: bytes) -> bytes:
        pieces = []
        while data:
            if self._frame is None:
                self._frame = self._context.decompressobj()
            pieces.append(self._frame.decompress(data))
            data = b""
            if self._frame.eof:  # the frame is done: what follows is the next frame
                data = self._frame.unused_data
                self._frame = None
        return b"".join(pieces)

    def close(self) -> None:
        self._raw.close()
        super().close()


def is_read_error(exc: BaseException) -> bool:
    """An I/O error, a truncated stream, or data that is not gzip or zstd as its name says."""
    return isinstance(exc, OSError | EOFError) or type(exc).__name__ == "ZstdError"


def read_error(path: Path, exc: BaseException) -> InputError:
    """The one-line error for :func:`is_read_error` errors while ``path`` was read."""
    compression = strip_compression(path)[1]
    if isinstance(exc, EOFError):
        return InputError(
            f"the {compression or 'file'} data ends too early ({exc}): the file is truncated; "
            "fetch or copy it again",
            path=path,
        )
    if type(exc).__name__ in ("ZstdError", "BadGzipFile"):
        return InputError(
            f"cannot read it as {compression} ({exc}): its name ends in "
            f"{path.suffixes[-1]} but it is not {compression} data, or is damaged",
            path=path,
        )
    return InputError(f"cannot read: {exc}", path=path)


def open_binary(path: Path) -> IO[bytes]:
    """Open ``path`` for reading bytes, decompressing gzip or zstd as its extension says."""
    raw = open_raw(path)
    if strip_compression(path)[1] == "gzip":
        raw.close()
        return cast(IO[bytes], gzip.GzipFile(filename=path, mode="rb"))
    return decompressing(raw, path)


def open_binary_write(path: Path, compression: Literal["none", "gzip", "zstd"]) -> IO[bytes]:
    """Open ``path`` for writing bytes, compressing as asked.

    zstd compresses on every core (``threads=-1``): its multi-threaded format is the same bytes
    whatever the number of threads, 1 or many, so a run writes the same file on any machine
    (100 MB of JSONL: 0.52 s on one thread, 0.31 s on two, identical bytes).
    """
    if compression == "gzip":
        return cast(IO[bytes], gzip.GzipFile(filename=path, mode="wb", mtime=0))
    raw = path.open("wb")
    if compression == "zstd":
        import zstandard

        compressor = zstandard.ZstdCompressor(threads=-1)
        return cast(IO[bytes], compressor.stream_writer(raw, closefd=True))
    return raw
