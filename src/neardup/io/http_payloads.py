"""HTTP as web archives store it: the response head and headers, and the body decoded.

A body is dechunked (one that is not really chunked, as some crawlers store it, is kept as it
is) and its ``Content-Encoding`` (gzip, deflate, br) undone; the media type and charset come
from ``Content-Type``; a digest is computed the way crawlers write ``WARC-Payload-Digest``.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import re
import zlib

_CHUNK_SIZE = re.compile(rb"[0-9a-fA-F]+")


def complete_http(block: bytes) -> bool:
    """Whether a block cut short by the end of the file still holds a whole HTTP message.

    (Its headers end, and its body is as long as their Content-Length says.)
    """
    if not block.startswith(b"HTTP/"):
        return False
    head, body = split_http(block)
    length = http_headers(head).get("content-length", "")
    return length.isdigit() and len(body) >= int(length)


def split_http(block: bytes) -> tuple[bytes, bytes]:
    """An HTTP message's header block and body (headers end at CRLF CRLF, or LF LF)."""
    end, cut = block.find(b"\r\n\r\n"), 4
    lf = block.find(b"\n\n")
    if lf >= 0 and (end < 0 or lf < end):
        end, cut = lf, 2
    if end < 0:
        return block, b""
    return block[:end], block[end + cut :]


def http_status(head: bytes) -> int | None:
    """The status code of an HTTP response's header block (None if its status line has none)."""
    parts = head.split(b"\n", 1)[0].split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


def http_headers(block: bytes) -> dict[str, str]:
    """HTTP headers by lower-case name (the first of repeated ones), status line dropped."""
    headers: dict[str, str] = {}
    for line in block.decode("latin-1").splitlines()[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers.setdefault(name.strip().lower(), value.strip())
    return headers


def clean_url(url: str) -> str:
    """A record's URL without surrounding ``<>`` and spaces, inner spaces written ``%20``."""
    url = url.strip()
    if url.startswith("<") and url.endswith(">"):
        url = url[1:-1].strip()
    return url.replace(" ", "%20")


def media_type(value: str | None) -> tuple[str, str | None]:
    """``(media type, charset)`` of a Content-Type value.

    Examples
    --------
    >>> media_type('Text/HTML; Charset="ISO-8859-1"')
    ('text/html', 'ISO-8859-1')
    """
    if not value:
        return "", None
    media, *params = value.split(";")
    charset = None
    for param in params:
        name, _, val = param.partition("=")
        if name.strip().lower() == "charset":
            charset = val.strip().strip("\"'") or None
    return media.strip().lower(), charset


def sha1_digest(body: bytes) -> str:
    """``sha1:`` and the base-32 SHA-1 of ``body``, as crawlers write ``WARC-Payload-Digest``."""
    return "sha1:" + base64.b32encode(hashlib.sha1(body, usedforsecurity=False).digest()).decode(
        "ascii"
    )


def decode_body(body: bytes, transfer: str | None, encoding: str | None) -> bytes:
    """The body dechunked and decompressed; what does not decode is kept as it is."""
    if transfer and "chunked" in transfer.lower():
        body = _dechunk(body)
    if encoding:
        for name in reversed([n.strip().lower() for n in encoding.split(",")]):
            body = _decompress(body, name)
    return body


def _dechunk(body: bytes) -> bytes:
    r"""The chunks of ``body`` joined; ``body`` itself when it does not start with a chunk size.

    Examples
    --------
    >>> _dechunk(b"3\r\nabc\r\n2;x=1\r\nde\r\n0\r\n\r\n"), _dechunk(b"<html>")
    (b'abcde', b'<html>')
    """
    parts: list[bytes] = []
    pos = 0
    while pos < len(body):
        end = body.find(b"\n", pos)
        line = body[pos : len(body) if end < 0 else end].split(b";", 1)[0].strip()
        if not _CHUNK_SIZE.fullmatch(line):
            if not parts:
                return body  # not chunked after all (stored dechunked)
            parts.append(body[pos:])
            break
        size = int(line, 16)
        if size == 0 or end < 0:
            break
        parts.append(body[end + 1 : end + 1 + size])
        pos = end + 1 + size
        pos += 2 if body[pos : pos + 2] == b"\r\n" else 1 if body[pos : pos + 1] == b"\n" else 0
    return b"".join(parts)


def _decompress(body: bytes, name: str) -> bytes:
    """``body`` with the content coding ``name`` undone; as it is when that fails."""
    try:
        if name in ("gzip", "x-gzip") and body.startswith(b"\x1f\x8b"):
            body = zlib.decompressobj(31).decompress(body)
        elif name == "deflate":
            zlib_wrapped = (
                len(body) > 1 and body[0] & 0x0F == 8 and (body[0] << 8 | body[1]) % 31 == 0
            )
            body = zlib.decompressobj(15 if zlib_wrapped else -15).decompress(body)
        elif name == "br":
            body = importlib.import_module("brotli").decompress(body)
    except Exception:  # a body that does not decode is kept as stored, as warcio keeps it
        return body
    return body
