"""What every input format shares: records in input order, in columnar batches, bad ones named.

A :class:`Source` is one input file (or directory of .txt files). :meth:`Source.batches` reads
it as :class:`~neardup.io.records.RecordBatch` es of about ``batch_bytes`` of text each, so
memory is bounded by the batch, never by the corpus. Every pass over a source decides the same
way which records are bad, so passes agree on record numbering. A bad record raises an
:class:`~neardup.errors.InputError` naming the file and line, or, with ``skip_bad_records``,
is counted in :attr:`Source.num_bad`, its line (or row) listed in :attr:`Source.bad_lines`,
and skipped.
"""

from __future__ import annotations

import codecs
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

from neardup.errors import InputError, advice, remedy
from neardup.io.records import RecordBatch
from neardup.params import ReadSpec

__all__ = [
    "BadRecordError",
    "Source",
    "encoding_hint",
    "id_field_advice",
    "json_type",
    "skip_advice",
]


def skip_advice() -> str:
    """Advice to skip bad records, where the command running can (``""`` where it cannot)."""
    return advice("--skip-bad-records", "pass --skip-bad-records to skip such records")


def encoding_hint(encoding: str) -> str:
    """What to do about text that is not valid ``encoding``: which ``--encoding`` to try.

    ``""`` where the command running has no ``--encoding``.

    Examples
    --------
    >>> encoding_hint("utf-8")
    "name the file's encoding with --encoding (e.g. --encoding cp1252)"
    """
    if codecs.lookup(encoding).name == "utf-8":
        return advice(
            "--encoding", "name the file's encoding with --encoding (e.g. --encoding cp1252)"
        )
    return advice(
        "--encoding",
        f"it is not {encoding} either: name the right one, or --encoding latin-1 to read every "
        "byte as one character (files of mixed encodings; a few characters may come out wrong)",
    )


class BadRecordError(Exception):
    """A record that cannot be used; carries the reason for the InputError."""


class Source(ABC):
    """One input file (or directory of .txt files) read as ``(id, text)`` records."""

    format: ClassVar[str]

    def __init__(self, path: Path, options: ReadSpec, label: str | None = None) -> None:
        self.path = path
        self.options = options
        self.label = label if label is not None else path.name
        """The ``FILE`` of default ids ``FILE:LINE``: unique among a run's inputs."""
        self.num_bad = 0
        self.bad_lines: list[int] = []
        self.consumed = 0
        """Input bytes consumed so far in the current pass (for progress)."""

    @property
    def size(self) -> int:
        """Bytes of input on disk (for progress)."""
        return self.path.stat().st_size if self.path.is_file() else 0

    def batches(self, batch_bytes: int) -> Iterator[RecordBatch]:
        """The usable records in batches of about ``batch_bytes`` of text, in order.

        This generic version packs :meth:`_scan`'s records, counting characters; formats with a
        columnar reader override it (and count input bytes).
        """
        self._start_pass()
        ids: list[str] = []
        texts: list[str] = []
        size = 0
        for item in self._scan():
            if isinstance(item, InputError):
                self._reject(item)
                continue
            ids.append(item[0])
            texts.append(item[1])
            size += len(item[1])
            if size >= batch_bytes:
                yield RecordBatch.of(ids, texts, self.consumed)
                ids, texts, size = [], [], 0
        if ids:
            yield RecordBatch.of(ids, texts, self.consumed)

    def records(self) -> Iterator[tuple[str, str]]:
        """The usable records ``(id, text)`` in input order; bad ones raise or are counted."""
        for batch in self.batches(1 << 22):
            yield from batch.records()

    def _start_pass(self) -> None:
        self.num_bad = 0
        self.bad_lines = []
        self.consumed = 0

    def _reject(self, error: InputError) -> None:
        if not self.options.skip_bad_records:
            raise error
        self.num_bad += 1
        if error.line is not None:
            self.bad_lines.append(error.line)

    @abstractmethod
    def _scan(self) -> Iterator[tuple[str, str, Any] | InputError]:
        """Every record as ``(id, text, raw)``, or an InputError for a bad one."""

    def field_values(self, names: Sequence[str], batch_bytes: int) -> list[Any]:
        """Each usable record's value of each field ``names``, for ``keep_by``, after a pass.

        One Arrow column per field (:func:`neardup.keep.comparable`), null where a record
        has no value. Formats whose records have fields override it.
        """
        raise InputError(
            f"{self.format} inputs have no fields to keep by"
            + remedy("drop --keep-by, or give JSONL, CSV or Parquet inputs"),
            path=self.path,
        )

    def raw_records(self) -> Iterator[Any]:
        """The raw form (as :meth:`records` yields them, bad ones skipped) for copying out."""
        for item in self._scan():
            if not isinstance(item, InputError):
                yield item[2]

    def _field_text_and_id(self, record: dict[str, Any], default_id: str) -> tuple[str, str]:
        name = self.options.text_field
        if name not in record:
            fields = ", ".join(map(repr, list(record)[:10])) or "none"
            raise BadRecordError(
                f"record has no {name!r} field (fields: {fields})"
                + remedy(
                    advice("--text-field", "choose the text field with --text-field"),
                    skip_advice(),
                )
            )
        text = record[name]
        if not isinstance(text, str):
            raise BadRecordError(
                f"field {name!r} is {json_type(text)}, expected a string" + remedy(skip_advice())
            )
        id_field = self.options.id_name
        if id_field is None:
            return default_id, text
        value = record.get(id_field)
        if value is None:
            if not self.options.id_required:
                return default_id, text
            what = "no" if id_field not in record else "a null"
            fields = ", ".join(map(repr, list(record)[:10]))
            raise BadRecordError(
                f"record has {what} {id_field!r} field (fields: {fields})"
                + remedy(id_field_advice(), skip_advice())
            )
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise BadRecordError(
                f"field {id_field!r} is {json_type(value)}, expected a string or an integer"
                + remedy(id_field_advice(), skip_advice())
            )
        return str(value), text


def id_field_advice(unit: str = "LINE") -> str:
    """Advice on the id field: ``--id-field``, or ``--url-field`` where URLs are the ids."""
    return advice(
        "--id-field",
        f"choose the id field with --id-field, or pass --id-field '' for FILE:{unit} ids",
        advice("--url-field", "choose the URL field with --url-field"),
    )


def json_type(value: Any) -> str:
    """What a decoded JSON value is, in JSON's words: ``null``, ``a number``, ``an array``, ...

    Examples
    --------
    >>> json_type(None), json_type([1]), json_type("x")
    ('null', 'an array', 'a string')
    """
    names = (
        (bool, "a boolean"),
        (int | float, "a number"),
        (str, "a string"),
        (list, "an array"),
        (dict, "an object"),
    )
    if value is None:
        return "null"
    return next((name for kind, name in names if isinstance(value, kind)), "a value")
