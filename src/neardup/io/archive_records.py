"""A web archive record as a reader yields it (revisits not yet resolved), or why it is unread."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

READ_ERRORS = (OSError, ValueError, EOFError, zlib.error)


class BadRecordError(Exception):
    """A malformed record; ``fatal`` when the rest of the file cannot be found after it."""

    def __init__(self, message: str, *, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal


@dataclass(slots=True)
class RawRecord:
    """A record as read, before revisits are resolved and the type is checked."""

    kind: str
    url: str
    date: str
    number: int
    offset: int
    content_type: str
    charset: str | None
    payload: bytes | None
    digest: str | None
    record_id: str = ""
    refers_to: str = ""
    refers_to_target: str = ""
    status: int | None = None
    """The HTTP status code (None without an HTTP response)."""


@dataclass(slots=True)
class BadRecord:
    """A record that could not be read: where, why, and whether the rest of the file is lost."""

    number: int
    offset: int
    reason: str
    fatal: bool
