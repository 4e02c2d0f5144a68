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
from collections.abc import Iterator
from contextlib import ExitStack
from typing import IO, Any

import numpy as np

from neardup._kernels import jsonl as kernels
from neardup._types import Batch, BoolArray, I64Array, U8Array
from neardup.errors import InputError
from neardup.io.compression import decompressing, open_raw
from neardup.io.records import Ids, RecordBatch
from neardup.io.source import SKIP_HINT, BadRecordError, Source
from neardup.text.spans import gather, pack_strings

__all__ = ["JSONLinesSource"]


class JSONLinesSource(Source):
    """JSON Lines: one JSON object per line; blank lines are ignored; ids default to FILE:LINE."""

    format = "jsonl"

    def batches(self, batch_bytes: int) -> Iterator[RecordBatch]:
        """The usable records, about ``batch_bytes`` of input at a time."""
        self._start_pass()
        text_key = np.frombuffer(self.options.text_field.encode("utf-8"), dtype=np.uint8)
        id_field = self.options.id_field
        id_is_text = id_field == self.options.text_field
        id_key = np.frombuffer(
            b"" if id_field is None or id_is_text else id_field.encode("utf-8"), dtype=np.uint8
        )
        prefix = np.frombuffer(f"{self.path.name}:".encode(), dtype=np.uint8)
        seen_line = False
        for chunk, first_line, position in self._chunks(batch_bytes):
            parsed = _ParsedChunk(chunk, text_key, id_key)
            seen_line = seen_line or bool((parsed.status != kernels.BLANK).any())
            batch = self._assemble(parsed, first_line, prefix, id_is_text, position)
            if batch.num_docs:
                yield batch
        if not seen_line:
            raise InputError("file has no records (it is empty)", path=self.path)

    def _chunks(self, batch_bytes: int) -> Iterator[tuple[U8Array, int, int]]:
        """Whole lines, about ``batch_bytes`` at a time: ``(bytes, first line, file position)``."""
        with ExitStack() as stack:
            raw = stack.enter_context(open_raw(self.path))
            stream = stack.enter_context(decompressing(raw, self.path))
            first_line = 1
            carry = b""
            while True:
                data = _read(stream, batch_bytes, self)
                if not data:
                    break
                if carry:
                    data = carry + data
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    carry = data
                    continue
                carry = data[cut:]
                self.consumed = raw.tell()
                body = np.frombuffer(data, dtype=np.uint8)[:cut]
                yield body, first_line, self.consumed
                first_line += int(np.count_nonzero(body == 10))
            if carry:
                self.consumed = raw.tell()
                yield np.frombuffer(carry, dtype=np.uint8), first_line, self.consumed

    def _assemble(
        self,
        parsed: _ParsedChunk,
        first_line: int,
        prefix: U8Array,
        id_is_text: bool,
        position: int,
    ) -> RecordBatch:
        """The chunk's usable records: fast lines from the kernel, slow ones through json."""
        status = parsed.status
        slow_texts: list[str] = []
        slow_ids: list[str] = []
        slow_lines = np.flatnonzero(status == kernels.SLOW)
        is_record = status == kernels.FAST
        for line in slow_lines.tolist():
            number = first_line + line
            item = self._parse(parsed.line_bytes(line), number)
            if isinstance(item, InputError):
                self._reject(item)
                continue
            is_record[line] = True
            slow_ids.append(item[0])
            slow_texts.append(item[1])
        lines = np.flatnonzero(is_record)
        is_slow = status[lines] == kernels.SLOW
        starts = parsed.starts[lines]
        extra_texts, extra_offsets = pack_strings(slow_texts)
        text_starts = starts.copy()
        text_lengths = parsed.text_length[lines]
        text_starts[is_slow] = extra_offsets[:-1]
        text_lengths[is_slow] = np.diff(extra_offsets)
        texts = gather(parsed.text_out, extra_texts, is_slow, text_starts, text_lengths)
        if id_is_text:
            return RecordBatch(texts=texts, ids=Ids(texts.data, texts.offsets), position=position)
        has_id = (parsed.id_kind[lines] != kernels.ID_NONE) & ~is_slow
        numbers = (first_line + lines)[~has_id & ~is_slow]
        defaults = _default_ids(prefix, numbers)
        slow_id_data, slow_id_offsets = pack_strings(slow_ids)
        extra_ids = np.concatenate([defaults.data, slow_id_data])
        id_starts = starts.copy()
        id_lengths = parsed.id_length[lines]
        use_extra = ~has_id
        is_default = ~has_id & ~is_slow
        id_starts[is_default] = defaults.offsets[:-1]
        id_lengths[is_default] = np.diff(defaults.offsets)
        id_starts[is_slow] = slow_id_offsets[:-1] + defaults.data.shape[0]
        id_lengths[is_slow] = np.diff(slow_id_offsets)
        ids = gather(parsed.id_out, extra_ids, use_extra, id_starts, id_lengths)
        return RecordBatch(texts=texts, ids=Ids(ids.data, ids.offsets), position=position)

    def _scan(self) -> Iterator[tuple[str, str, Any] | InputError]:
        """Every line through :mod:`json` (the reference the fast path must agree with)."""
        seen_line = False
        with ExitStack() as stack:
            raw = stack.enter_context(open_raw(self.path))
            stream = stack.enter_context(decompressing(raw, self.path))
            try:
                for number, line in enumerate(stream, start=1):
                    if not line.strip():
                        continue
                    seen_line = True
                    yield self._parse(line, number)
            except Exception as exc:
                if _is_read_error(exc):
                    raise _truncated(self, exc) from None
                raise
        if not seen_line:
            raise InputError("file has no records (it is empty)", path=self.path)

    def _parse(self, line: bytes, number: int) -> tuple[str, str, bytes] | InputError:
        """One line through :mod:`json`: the record, or the error that names what is wrong."""
        try:
            decoded = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return InputError(
                f"line is not valid UTF-8 (byte 0x{line[exc.start]:02x} at column "
                f"{exc.start + 1}); re-encode the file as UTF-8, {SKIP_HINT}",
                path=self.path,
                line=number,
            )
        try:
            record = json.loads(decoded)
        except json.JSONDecodeError as exc:
            return InputError(
                f"malformed JSON ({exc.msg} at column {exc.colno}); {SKIP_HINT}",
                path=self.path,
                line=number,
            )
        if not isinstance(record, dict):
            return InputError(
                f"record is a JSON {type(record).__name__}, expected an object; {SKIP_HINT}",
                path=self.path,
                line=number,
            )
        try:
            doc_id, text = self._field_text_and_id(record, f"{self.path.name}:{number}")
        except BadRecordError as exc:
            return InputError(str(exc), path=self.path, line=number)
        return doc_id, text, line if line.endswith(b"\n") else line + b"\n"

    def copy_kept(self, keep: BoolArray, out: IO[bytes], batch_bytes: int) -> int:
        """Write the lines of the records whose ``keep`` entry is true; return records seen.

        ``keep`` has one entry per usable record of this source, in order; lines are copied
        byte for byte (a newline added to a last line without one).
        """
        bad = np.asarray(sorted(self.bad_lines), dtype=np.int64)
        record = 0
        for chunk, first_line, _ in self._chunks(batch_bytes):
            starts = kernels.line_starts(chunk, chunk.shape[0])
            room = np.empty(chunk.shape[0] + starts.shape[0], dtype=np.uint8)
            size, seen = kernels.kept_lines(chunk, starts, record, keep, bad, first_line, room)
            out.write(room[:size].data)
            record += seen
        return record


def _read(stream: IO[bytes], size: int, source: Source) -> bytes:
    try:
        return stream.read(size)
    except Exception as exc:
        if _is_read_error(exc):
            raise _truncated(source, exc) from None
        raise


def _is_read_error(exc: Exception) -> bool:
    """An I/O error, a truncated stream, or bad gzip or zstd data."""
    return isinstance(exc, OSError | EOFError) or type(exc).__name__ == "ZstdError"


def _truncated(source: Source, exc: BaseException) -> InputError:
    return InputError(f"cannot read: {exc}; is the file truncated?", path=source.path)


class _ParsedChunk:
    """The kernel's view of one chunk: line starts and, per line, status and field spans."""

    def __init__(self, chunk: U8Array, text_key: U8Array, id_key: U8Array) -> None:
        self.chunk = chunk
        self.starts = kernels.line_starts(chunk, chunk.shape[0])
        num_lines = self.starts.shape[0] - 1
        self.status = np.empty(num_lines, dtype=np.int8)
        self.text_length = np.empty(num_lines, dtype=np.int64)
        self.id_kind = np.empty(num_lines, dtype=np.int8)
        self.id_length = np.empty(num_lines, dtype=np.int64)
        self.text_out = np.empty(chunk.shape[0], dtype=np.uint8)
        self.id_out = np.empty(chunk.shape[0] if id_key.shape[0] else 0, dtype=np.uint8)
        kernels.parse_lines(
            chunk,
            self.starts,
            text_key,
            id_key,
            self.text_out,
            self.id_out,
            self.status,
            self.text_length,
            self.id_kind,
            self.id_length,
        )

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
