"""JSON Lines input (plain, .gz, .zst), parsed by a numba kernel; kept records copied out.

Read in chunks of whole lines, with no Python object per record; the kept records are copied
byte for byte.

Most lines take the kernel's fast path (:mod:`neardup._kernels.jsonl`); a line it does not
take (a malformed line, a lone surrogate escape, a duplicated field, ...) is parsed here with
:mod:`json`, so every record decodes, and every bad record is reported, exactly as
``json.loads`` sees it. Ids default to ``FILE:LINE``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from neardup._kernels import jsonl as kernels
from neardup._parallel import in_blocks
from neardup._types import Batch, BoolArray, I64Array, U8Array
from neardup.errors import InputError, remedy
from neardup.io.compression import (
    decompressing,
    is_read_error,
    open_raw,
    read_error,
    strip_compression,
)
from neardup.io.mapped import read_spans
from neardup.io.records import Ids, RecordBatch
from neardup.io.source import BadRecordError, Source, json_type, skip_advice
from neardup.params import NormalizeSpec
from neardup.text.normalize import TextStats, normalize_bytes
from neardup.text.spans import concat, gather, pack_strings, take

if TYPE_CHECKING:
    from neardup.io.fields import FieldChunk

__all__ = ["JSONLineTexts", "JSONLinesSource", "line_number"]


@dataclass(frozen=True, slots=True)
class _Fields:
    """The field names as the kernel takes them, and how ids are made."""

    text_key: U8Array
    id_key: U8Array
    prefix: U8Array
    """``FILE:`` of the default ids."""
    id_is_text: bool


class JSONLinesSource(Source):
    """JSON Lines: one JSON object per line; blank lines are ignored; ids default to FILE:LINE."""

    format = "jsonl"

    @property
    def is_compressed(self) -> bool:
        """Whether the file is gzip or zstd (its lines cannot be read back by offset)."""
        return strip_compression(self.path)[1] is not None

    def _fields(self) -> _Fields:
        id_field = self.options.id_name
        id_is_text = id_field == self.options.text_field
        id_name = b"" if id_field is None or id_is_text else id_field.encode("utf-8")
        return _Fields(
            text_key=np.frombuffer(self.options.text_field.encode("utf-8"), dtype=np.uint8),
            id_key=np.frombuffer(id_name, dtype=np.uint8),
            prefix=pack_strings([f"{self.label}:"])[0],
            id_is_text=id_is_text,
        )

    def batches(self, batch_bytes: int) -> Iterator[RecordBatch]:
        """The usable records, about ``batch_bytes`` of input at a time.

        Each batch says where its records' lines are (:attr:`RecordBatch.lines`).
        """
        self._start_pass()
        fields = self._fields()
        seen_line = False
        room = _Room()
        for chunk, line_starts, first_line, offset in self._chunks(batch_bytes):
            parsed = _ParsedChunk(chunk, fields.text_key, fields.id_key, line_starts, room)
            seen_line = seen_line or bool((parsed.status != kernels.BLANK).any())
            records, slow = self._records(parsed, first_line)
            texts = _texts(parsed, records, slow)
            if fields.id_is_text:  # a copy: the texts are normalised in place later
                ids = Batch(texts.data.copy(), texts.offsets)
            else:
                ids = _ids(parsed, records, slow, fields, first_line)
            if records.shape[0]:
                starts = parsed.starts[records]
                yield RecordBatch(
                    texts=texts,
                    ids=Ids(ids.data, ids.offsets),
                    position=self.consumed,
                    lines=np.stack([starts + offset, parsed.starts[records + 1] - starts], axis=1),
                    stats=_stats(parsed, records, slow),
                )
        if not seen_line:
            raise InputError("file has no records (it is empty)", path=self.path)

    def read_lines(self, lines: I64Array) -> Batch:
        """The raw texts of the records whose lines are at ``lines`` (``(n, 2)``: offset, size).

        For plain files only; the lines were read before, so they hold usable records. They
        are read through a memory map (:func:`~neardup.io.mapped.read_spans`).
        """
        if lines.shape[0] == 0:
            return Batch(np.empty(0, dtype=np.uint8), np.zeros(1, dtype=np.int64))
        offsets = np.zeros(lines.shape[0] + 1, dtype=np.int64)
        np.cumsum(lines[:, 1], out=offsets[1:])
        chunk = Batch(np.empty(int(offsets[-1]), dtype=np.uint8), offsets)
        order = np.argsort(lines[:, 0], kind="stable")  # in file order, each to its place
        with self.path.open("rb", buffering=0) as f:
            try:
                read_spans(f, lines[order, 0], lines[order, 1], chunk.data, offsets[:-1][order])
            except EOFError:
                self._changed()
        fields = self._fields()
        parsed = _ParsedChunk(chunk.data, fields.text_key, fields.id_key[:0], chunk.offsets)
        records, slow = self._records(parsed, 0, self._changed)
        if records.shape[0] != lines.shape[0]:
            self._changed()
        return _texts(parsed, records, slow)

    def _changed(self, error: InputError | None = None) -> None:
        raise InputError("file changed while it was read; run again", path=self.path)

    def _chunks(self, batch_bytes: int) -> Iterator[tuple[U8Array, I64Array, int, int]]:
        """Whole lines, about ``batch_bytes`` at a time, with their starts and positions.

        Yields ``(bytes, line starts, first line, offset)``. The line starts end with the size
        of the bytes; ``offset`` is where the bytes start in the (decompressed) input. The bytes
        are a view of one reused buffer, valid until the next chunk is asked for.
        :attr:`consumed` follows the file's position.
        """
        with ExitStack() as stack:
            raw = stack.enter_context(open_raw(self.path))
            stream = stack.enter_context(decompressing(raw, self.path))
            buffer = bytearray(max(1, batch_bytes))
            first_line = 1
            offset = 0  # of the buffer's first byte in the stream
            carry = 0  # bytes of an unfinished line at the front of the buffer
            at_start = True  # whether a byte-order mark may still be ahead (as editors write)
            while True:
                if carry == len(buffer):  # a line longer than the buffer
                    buffer = buffer + bytearray(len(buffer))
                end = carry + _read_into(stream, memoryview(buffer)[carry:], self)
                if end == carry:
                    break
                if at_start:
                    if end < len(BOM) and BOM.startswith(buffer[:end]):
                        carry = end  # the start of a mark so far: read on
                        continue
                    at_start = False
                    if buffer.startswith(BOM):
                        buffer[: end - len(BOM)] = buffer[len(BOM) : end]
                        end -= len(BOM)
                        offset = len(BOM)
                cut = buffer.rfind(b"\n", 0, end) + 1
                if cut == 0:
                    carry = end
                    continue
                self.consumed = raw.tell()
                body = np.frombuffer(buffer, dtype=np.uint8, count=cut)
                starts = kernels.line_starts(body, cut)
                yield body, starts, first_line, offset
                first_line += starts.shape[0] - 1  # the bytes end with a newline
                del body
                buffer[: end - cut] = buffer[cut:end]
                carry = end - cut
                offset += cut
            if carry:
                self.consumed = raw.tell()
                body = np.frombuffer(bytes(buffer[:carry]), dtype=np.uint8)
                yield body, kernels.line_starts(body, carry), first_line, offset

    def _records(
        self,
        parsed: _ParsedChunk,
        first_line: int,
        reject: Callable[[InputError], None] | None = None,
    ) -> tuple[I64Array, dict[int, tuple[str, str]]]:
        """The lines holding usable records, and the records of the lines json had to read.

        Bad lines go to ``reject`` (default :meth:`Source._reject`: raise, or count and skip).
        """
        reject = reject if reject is not None else self._reject
        is_record = parsed.status == kernels.FAST
        slow: dict[int, tuple[str, str]] = {}
        unsure = parsed.status == kernels.SLOW
        if parsed.has_id_key and self.options.id_required:  # json says what the id lacks
            unsure |= is_record & (parsed.id_kind == kernels.ID_NONE)
            is_record &= ~unsure
        for line in np.flatnonzero(unsure).tolist():
            item = self._parse(parsed.line_bytes(line), first_line + line)
            if isinstance(item, InputError):
                reject(item)
                continue
            is_record[line] = True
            slow[line] = (item[0], item[1])
        return np.flatnonzero(is_record), slow

    def _lines(self) -> Iterator[tuple[int, bytes]]:
        """The lines that are not blank, numbered from 1, the file's byte-order mark dropped."""
        with ExitStack() as stack:
            raw = stack.enter_context(open_raw(self.path))
            stream = stack.enter_context(decompressing(raw, self.path))
            try:
                for number, line in enumerate(stream, start=1):
                    if number == 1 and line.startswith(BOM):
                        line = line[len(BOM) :]  # noqa: PLW2901 - the file's byte-order mark
                    if line.strip():
                        yield number, line
            except Exception as exc:
                if is_read_error(exc):
                    raise read_error(self.path, exc) from None
                raise

    def _scan(self) -> Iterator[tuple[str, str, Any] | InputError]:
        """Every line through :mod:`json` (the reference the fast path must agree with)."""
        seen_line = False
        for number, line in self._lines():
            seen_line = True
            yield self._parse(line, number)
        if not seen_line:
            raise InputError("file has no records (it is empty)", path=self.path)

    def record_lines(self) -> Iterator[bytes]:
        """The lines of the usable records as read, none parsed, each ending with a newline.

        After a reading pass: which bad lines were skipped is known then.
        """
        bad = set(self.bad_lines)
        for number, line in self._lines():
            if number not in bad:
                yield line if line.endswith(b"\n") else line + b"\n"

    def _parse(self, line: bytes, number: int) -> tuple[str, str, bytes] | InputError:
        """One line through :mod:`json`: the record, or the error that names what is wrong."""
        try:
            decoded = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return InputError(
                f"line is not valid UTF-8 (byte 0x{line[exc.start]:02x} at column "
                f"{exc.start + 1})" + remedy("re-encode the file as UTF-8", skip_advice()),
                path=self.path,
                line=number,
            )
        try:
            record = json.loads(decoded)
        except json.JSONDecodeError as exc:
            return InputError(
                f"malformed JSON ({exc.msg.removesuffix(' at')} at column {exc.colno})"
                + remedy(skip_advice()),
                path=self.path,
                line=number,
            )
        except ValueError as exc:  # an integer longer than Python reads
            return InputError(
                f"unreadable JSON ({exc})" + remedy(skip_advice()), path=self.path, line=number
            )
        if not isinstance(record, dict):
            return InputError(
                f"record is {json_type(record)}, expected a JSON object" + remedy(skip_advice()),
                path=self.path,
                line=number,
            )
        try:
            doc_id, text = self._field_text_and_id(record, f"{self.label}:{number}")
        except BadRecordError as exc:
            return InputError(str(exc), path=self.path, line=number)
        return doc_id, text, line if line.endswith(b"\n") else line + b"\n"

    def field_values(self, names: Sequence[str], batch_bytes: int) -> list[Any]:
        """Each usable record's value of each field ``names`` (:class:`JSONFieldColumn`)."""
        from neardup.io.fields import JSONFieldColumn

        columns = [JSONFieldColumn(name, self.path) for name in names]
        for chunk in self.field_chunks(names, batch_bytes):
            for column, read in zip(columns, chunk, strict=True):
                column.add(read)
        return [column.column() for column in columns]

    def field_chunks(self, names: Sequence[str], batch_bytes: int) -> Iterator[list[FieldChunk]]:
        """After a reading pass: the file a chunk at a time, fields ``names`` of its records."""
        from neardup.io.fields import FieldChunk

        bad = np.asarray(sorted(self.bad_lines), dtype=np.int64)
        for chunk, starts, first_line, _ in self._chunks(batch_bytes):
            yield [FieldChunk.read(chunk, starts, first_line, bad, name) for name in names]

    def copy_kept(self, keep: BoolArray, out: IO[bytes], batch_bytes: int) -> int:
        """Write the lines of the records whose ``keep`` entry is true; return records seen.

        ``keep`` has one entry per usable record of this source, in order; lines are copied
        byte for byte (a newline added to a last line without one).
        """
        bad = np.asarray(sorted(self.bad_lines), dtype=np.int64)
        record = 0
        room = np.empty(0, dtype=np.uint8)
        for chunk, starts, first_line, _ in self._chunks(batch_bytes):
            if room.shape[0] < chunk.shape[0] + 1:
                room = np.empty(chunk.shape[0] + 1, dtype=np.uint8)
            size, seen = kernels.kept_lines(chunk, starts, record, keep, bad, first_line, room)
            if seen < 0:
                self._changed()
            out.write(room[:size].data)
            record += seen
        return record


def line_number(path: Path, offset: int) -> int:
    """The 1-based number of the line of a plain file that starts at byte ``offset``."""
    newlines = 0
    with path.open("rb") as f:
        while offset > 0:
            chunk = f.read(min(offset, 1 << 24))
            if not chunk:
                break
            newlines += chunk.count(b"\n")
            offset -= len(chunk)
    return newlines + 1


def _stats(parsed: _ParsedChunk, records: I64Array, slow: dict[int, tuple[str, str]]) -> TextStats:
    """The records' characters and ASCII flags, as the kernel counted them or from json's."""
    is_slow = parsed.status[records] == kernels.SLOW
    chars = parsed.text_chars[records]
    is_ascii = parsed.text_ascii[records]
    slow_texts = [slow[line][1] for line in records[is_slow].tolist()]
    chars[is_slow] = [len(text) for text in slow_texts]
    is_ascii[is_slow] = [text.isascii() for text in slow_texts]
    return TextStats(chars=chars, is_ascii=is_ascii)


def _texts(parsed: _ParsedChunk, records: I64Array, slow: dict[int, tuple[str, str]]) -> Batch:
    """The records' texts: from the kernel's output, or as json read them."""
    is_slow = parsed.status[records] == kernels.SLOW
    extra, extra_offsets = pack_strings([slow[line][1] for line in records[is_slow].tolist()])
    starts = parsed.starts[records]
    lengths = parsed.text_length[records]
    starts[is_slow] = extra_offsets[:-1]
    lengths[is_slow] = np.diff(extra_offsets)
    return gather(parsed.text_out, extra, is_slow, starts, lengths)


def _ids(
    parsed: _ParsedChunk,
    records: I64Array,
    slow: dict[int, tuple[str, str]],
    fields: _Fields,
    first_line: int,
) -> Batch:
    """The records' ids: from the kernel's output, ``FILE:LINE``, or as json read them."""
    is_slow = parsed.status[records] == kernels.SLOW
    has_id = (parsed.id_kind[records] != kernels.ID_NONE) & ~is_slow
    is_default = ~has_id & ~is_slow
    defaults = _default_ids(fields.prefix, first_line + records[is_default])
    slow_data, slow_offsets = pack_strings([slow[line][0] for line in records[is_slow].tolist()])
    extra = np.concatenate([defaults.data, slow_data])
    starts = parsed.starts[records]
    lengths = parsed.id_length[records]
    starts[is_default] = defaults.offsets[:-1]
    lengths[is_default] = np.diff(defaults.offsets)
    starts[is_slow] = slow_offsets[:-1] + defaults.data.shape[0]
    lengths[is_slow] = np.diff(slow_offsets)
    return gather(parsed.id_out, extra, ~has_id, starts, lengths)


def _read_into(stream: IO[bytes], room: memoryview, source: Source) -> int:
    """Fill ``room`` from ``stream`` (less only at the end of the stream); bytes read."""
    done = 0
    try:
        while done < len(room):
            got = stream.readinto(room[done:])  # type: ignore[attr-defined]
            if not got:
                break
            done += got
    except Exception as exc:
        if is_read_error(exc):
            raise read_error(source.path, exc) from None
        raise
    return done


_PLAIN = kernels.plain_bytes()

BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte-order mark some editors and spreadsheet programs put first in a file: not part
of the first record, skipped."""


class _Room:
    """Output buffers reused from chunk to chunk: fresh memory costs a page fault per 4 KB."""

    def __init__(self) -> None:
        self._buffers: dict[str, U8Array] = {}

    def take(self, name: str, size: int) -> U8Array:
        """A buffer of ``size`` bytes (contents undefined), the same one when it is big enough."""
        buffer = self._buffers.get(name)
        if buffer is None or buffer.shape[0] < size:
            buffer = self._buffers[name] = np.empty(size, dtype=np.uint8)
        return buffer[:size]


class _ParsedChunk:
    """The kernel's view of one chunk: line starts and, per line, status and field spans."""

    def __init__(
        self,
        chunk: U8Array,
        text_key: U8Array,
        id_key: U8Array,
        starts: I64Array,
        room: _Room | None = None,
    ) -> None:
        self.chunk = chunk
        self.starts = starts
        self.has_id_key = id_key.shape[0] > 0
        """Whether ids were looked for (``id_kind`` says which lines have none)."""
        num_lines = self.starts.shape[0] - 1
        self.status = np.empty(num_lines, dtype=np.int8)
        self.text_length = np.empty(num_lines, dtype=np.int64)
        self.text_chars = np.empty(num_lines, dtype=np.int64)
        self.text_ascii = np.empty(num_lines, dtype=bool)
        self.id_kind = np.empty(num_lines, dtype=np.int8)
        self.id_length = np.empty(num_lines, dtype=np.int64)
        room = room if room is not None else _Room()
        self.text_out = room.take("text", chunk.shape[0])
        self.id_out = room.take("id", chunk.shape[0] if id_key.shape[0] else 0)
        run = partial(
            kernels.parse_lines, chunk, self.starts, text_key, id_key, _PLAIN, self.text_out,
            self.id_out, self.status, self.text_length, self.text_chars, self.text_ascii,
            self.id_kind, self.id_length,
        )  # fmt: skip
        in_blocks(run, num_lines, max_block=1024)

    def line_bytes(self, line: int) -> bytes:
        """The raw bytes of one line."""
        return bytes(self.chunk[self.starts[line] : self.starts[line + 1]])


def _default_ids(prefix: U8Array, numbers: I64Array) -> Batch:
    """``FILE:LINE`` for each line number, packed."""
    sizes = prefix.shape[0] + kernels.decimal_digits(numbers)
    offsets = np.zeros(numbers.shape[0] + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    out = np.empty(int(offsets[-1]), dtype=np.uint8)
    kernels.default_ids(prefix, numbers, out, offsets)
    return Batch(data=out, offsets=offsets)


class JSONLineTexts:
    """The normalised texts of records in plain JSONL files, read again from their lines.

    The text store of a run whose inputs are all plain (uncompressed) JSONL: it keeps where
    each record's line is (16 bytes a document) instead of a copy of the text, and
    :meth:`take` reads, parses and normalises just the lines asked for.
    """

    def __init__(self, sources: Sequence[JSONLinesSource], normalize: NormalizeSpec) -> None:
        self.sources = sources
        self.normalize = normalize
        self._parts: list[tuple[NDArray[np.int32], I64Array]] = []
        self._source: NDArray[np.int32] = np.empty(0, dtype=np.int32)
        self._lines = np.empty((0, 2), dtype=np.int64)

    def append(self, records: RecordBatch, normalized: Batch) -> None:
        """Remember where the batch's records are."""
        assert records.lines is not None
        self._parts.append(
            (np.full(records.num_docs, records.source, dtype=np.int32), records.lines)
        )

    def finish(self) -> None:
        """End appending."""
        if self._parts:
            self._source = np.concatenate([source for source, _ in self._parts])
            self._lines = np.concatenate([lines for _, lines in self._parts])
        self._parts = []

    @classmethod
    def of_spans(
        cls,
        sources: Sequence[JSONLinesSource],
        normalize: NormalizeSpec,
        spans: tuple[NDArray[np.int32], I64Array],
    ) -> JSONLineTexts:
        """The texts whose lines :meth:`line_spans` gave (a checkpoint's), in ``sources``."""
        texts = cls(sources, normalize)
        texts._source, texts._lines = spans
        return texts

    @property
    def num_docs(self) -> int:
        """Documents held."""
        return int(self._source.shape[0])

    def sizes(self) -> I64Array:
        """Bytes of each document's line (about its text's size)."""
        return self._lines[:, 1]

    def line_spans(self) -> tuple[NDArray[np.int32], I64Array]:
        """Each document's input (index into ``sources``) and line ``(offset, size)``."""
        return self._source, self._lines

    def take(self, docs: I64Array) -> Batch:
        """The normalised texts of ``docs`` (any order), packed into one batch."""
        sources = self._source[docs]
        if docs.shape[0] == 0 or np.all(sources == sources[0]):
            only = int(sources[0]) if docs.shape[0] else 0
            raw = self.sources[only].read_lines(self._lines[docs])
        else:  # input by input, then back in the order asked
            order = np.argsort(sources, kind="stable")
            in_order, sorted_sources = docs[order], sources[order]
            pieces = [
                self.sources[source].read_lines(self._lines[in_order[sorted_sources == source]])
                for source in np.unique(sources).tolist()
            ]
            raw = concat(pieces)
            inverse = np.empty_like(order)
            inverse[order] = np.arange(order.shape[0])
            raw = take(raw, inverse)
        return normalize_bytes(raw, self.normalize)
