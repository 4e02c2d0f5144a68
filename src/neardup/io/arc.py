"""ARC files (the web archives of 1996–2008), read by a small parser of their own.

FastWARC reads no ARC. This parser also names what is wrong with a malformed header (warcio
turns a length of ``-1`` or ``abc`` into an empty record), and reads a gzip file whose members
do not match the records (a file compressed whole, or a record split over two members) with its
own stream: the records are intact, only the offsets lose their use for random access.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from neardup.io.archive_records import BadRecord, BadRecordError, RawRecord
from neardup.io.compression import open_raw
from neardup.io.http_payloads import (
    clean_url,
    complete_http,
    decode_body,
    http_headers,
    http_status,
    media_type,
    sha1_digest,
    split_http,
)


class _Stream:
    """A file's bytes (decompressed member by member when gzip), read by lines and sizes.

    :meth:`origin` is the byte offset in the file of the current position: the position
    itself in a plain file, the start of the gzip member it lies in in a gzip file.
    """

    _STEP = 1 << 20

    def __init__(self, raw: BinaryIO, gzip: bool) -> None:
        self._raw = raw
        self._gzip = gzip
        self._buf = bytearray()
        self._pos = 0  # file (plain) or decompressed (gzip) position of _buf[0]
        self._members: list[tuple[int, int]] = []  # (decompressed start, member offset)
        self._z: Any = None
        self._pending = b""
        self._file_pos = 0  # file offset of _pending[0]
        self._eof = False

    def origin(self) -> int:
        if not self._gzip:
            return self._pos
        if not self._buf:
            self._fill()  # the next member starts here
        while len(self._members) > 1 and self._members[1][0] <= self._pos:
            self._members.pop(0)
        return self._members[0][1] if self._members else self._file_pos

    def _fill(self) -> bool:
        """Read more; False at the end of the file."""
        if self._eof:
            return False
        if not self._gzip:
            data = self._raw.read(self._STEP)
            self._eof = not data
            self._buf += data
            return bool(data)
        while True:
            if self._z is None:
                if not self._pending:
                    self._pending = self._raw.read(self._STEP)
                    if not self._pending:
                        self._eof = True
                        return False
                self._z = zlib.decompressobj(31)
                self._members.append((self._pos + len(self._buf), self._file_pos))
            if not self._pending:
                self._pending = self._raw.read(self._STEP)
                if not self._pending:
                    self._eof = True
                    raise BadRecordError(
                        "the gzip data ends inside a member (truncated)", fatal=True
                    )
            data = self._pending
            try:
                out = self._z.decompress(data)
            except zlib.error as exc:
                raise BadRecordError(f"the gzip data is corrupt ({exc})", fatal=True) from None
            if self._z.eof:
                unused = self._z.unused_data
                self._file_pos += len(data) - len(unused)
                self._pending = unused
                self._z = None
            else:
                self._file_pos += len(data)
                self._pending = b""
            self._buf += out
            if out:
                return True

    def readline(self) -> bytes:
        while True:
            end = self._buf.find(b"\n")
            if end >= 0 or not self._fill():
                break
        end = len(self._buf) if end < 0 else end + 1
        return self._take(end)

    def read(self, size: int) -> bytes:
        while len(self._buf) < size and self._fill():
            pass
        return self._take(min(size, len(self._buf)))

    def _take(self, size: int) -> bytes:
        data = bytes(self._buf[:size])
        del self._buf[:size]
        self._pos += size
        return data


_ARC_LIKE = re.compile(rb"[A-Za-z][A-Za-z0-9+.-]*:\S+( \S*){4}")
"""A line that looks like an ARC header (a URL and four more fields at least)."""


def arc_records(path: Path) -> Iterator[RawRecord | BadRecord]:
    """The records of an ARC file (version 1 or 2, plain or gzip).

    After a bad header, reading goes on at the next line that looks like a header (the lines
    between, the bad record's block, are no records).
    """
    with open_raw(path) as raw:
        gzip = raw.read(2) == b"\x1f\x8b"
        raw.seek(0)
        stream = _Stream(raw, gzip)
        number = 0
        version = 1
        lost = False  # after a bad header: lines are skipped up to the next header-like one
        while True:
            try:
                offset = stream.origin()
                line = stream.readline()
                if not line:
                    return
                if not line.strip() or (lost and not _ARC_LIKE.match(line)):
                    continue
                number += 1
                lost = True
                url, date, mime, length = _arc_header(line, version)
                block = stream.read(length)
                if len(block) < length and not complete_http(block):
                    raise BadRecordError(
                        f"the file ends {length - len(block)} bytes into the record's "
                        f"{length}-byte block (truncated)",
                        fatal=True,
                    )
            except BadRecordError as exc:
                yield BadRecord(number, offset, str(exc), exc.fatal)
                if exc.fatal:
                    return
                continue
            lost = False
            if url.startswith("filedesc:"):
                second = block.split(b"\n", 1)[0].split()
                version = 2 if second[:1] == [b"2"] else 1
                yield RawRecord("warcinfo", url, date, number, offset, "", None, None, None)
                continue
            yield _arc_record(url, date, mime, block, number, offset)


def _arc_header(line: bytes, version: int) -> tuple[str, str, str, int]:
    """``(url, ISO date, mime, length)`` of an ARC header line, or BadRecordError."""
    fields = line.rstrip(b"\r\n").split(b" ")
    width = 10 if version == 2 else 5
    if len(fields) < width:
        shown = line[:80].decode("latin-1").rstrip()
        raise BadRecordError(f"not an ARC header line ({shown!r}; expected {width} fields)")
    url_part, rest = fields[: len(fields) - width + 1], fields[len(fields) - width + 1 :]
    date, mime, length = rest[1], rest[2], rest[-1]
    try:
        size = int(length)
    except ValueError:
        size = -1
    if size < 0:
        raise BadRecordError(f"the ARC header's length {length.decode('latin-1')!r} is not a size")
    if len(date) < 14 or not date.isdigit():
        raise BadRecordError(f"the ARC header's date {date.decode('latin-1')!r} is not 14 digits")
    d = date.decode("ascii")
    iso = f"{d[0:4]}-{d[4:6]}-{d[6:8]}T{d[8:10]}:{d[10:12]}:{d[12:14]}Z"
    url = clean_url(b" ".join(url_part).decode("utf-8", "surrogateescape"))
    return url, iso, mime.decode("latin-1"), size


def _arc_record(
    url: str, date: str, mime: str, block: bytes, number: int, offset: int
) -> RawRecord:
    """An ARC record's page: the HTTP response in its block parsed (dns: and others as is)."""
    content_type, charset = media_type(mime if mime not in ("-", "no-type") else "")
    body = block
    transfer = encoding = None
    status = None
    if block.startswith(b"HTTP/"):
        head, body = split_http(block)
        headers = http_headers(head)
        status = http_status(head)
        content_type, charset = media_type(headers.get("content-type", ""))
        transfer = headers.get("transfer-encoding")
        encoding = headers.get("content-encoding")
    return RawRecord(
        "response", url, date, number, offset, content_type, charset,
        decode_body(body, transfer, encoding), sha1_digest(body), status=status,
    )  # fmt: skip
