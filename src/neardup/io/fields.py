"""One field of a JSON Lines file's records, read again for ``keep_by``, a chunk at a time.

The kernel (:func:`neardup._kernels.jsonl.field_values`) finds the field in each line and
decodes its value; a line it leaves undecided (an escaped key, a repeated one) is read with
:mod:`json`, as the reading pass read it. The column comes out as
:func:`neardup.keep.comparable` makes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from neardup._kernels import jsonl as kernels
from neardup._parallel import in_blocks
from neardup._types import Batch, I64Array, U8Array
from neardup.errors import InputError, remedy
from neardup.io.source import json_type
from neardup.keep import comparable
from neardup.text.spans import gather

__all__ = ["FieldChunk", "JSONFieldColumn"]

_PLAIN = kernels.plain_bytes()
_HELD = (kernels.FIELD_NUMBER, kernels.FIELD_STRING)


@dataclass(frozen=True, slots=True)
class FieldChunk:
    """A chunk of whole lines of a JSONL file, its records, and one field's value in each.

    ``lines`` are the chunk's lines that hold usable records (not blank, not skipped as bad),
    ``numbers`` their line numbers in the file; per record, the field's ``kind`` (a
    ``FIELD_*`` code) and ``length``, its bytes at the line's start in ``values``.
    """

    chunk: U8Array
    starts: I64Array
    lines: I64Array
    numbers: I64Array
    kind: np.ndarray
    length: I64Array
    values: U8Array

    @classmethod
    def read(
        cls, chunk: U8Array, starts: I64Array, first_line: int, bad: I64Array, name: str
    ) -> FieldChunk:
        """Field ``name`` of the records of a chunk.

        Line ``l`` is file line ``first_line + l``; ``bad`` (sorted) are the lines the reading
        pass skipped.
        """
        num_lines = starts.shape[0] - 1
        key = np.frombuffer(name.encode("utf-8"), dtype=np.uint8)
        kind = np.empty(num_lines, dtype=np.int8)
        length = np.empty(num_lines, dtype=np.int64)
        values = np.empty(chunk.shape[0], dtype=np.uint8)
        run = partial(kernels.field_values, chunk, starts, key, _PLAIN, values, kind, length)
        in_blocks(run, num_lines, max_block=1024)
        numbers = first_line + np.arange(num_lines, dtype=np.int64)
        lines = np.flatnonzero((kind != kernels.FIELD_BLANK) & ~np.isin(numbers, bad))
        return cls(chunk, starts, lines, numbers[lines], kind[lines], length[lines], values)

    @property
    def num_records(self) -> int:
        """Records in the chunk."""
        return int(self.lines.shape[0])

    def record(self, i: int) -> dict[str, Any]:
        """Record ``i`` of the chunk through :mod:`json` (it was read so before)."""
        line = self.chunk[self.starts[self.lines[i]] : self.starts[self.lines[i] + 1]]
        parsed: dict[str, Any] = json.loads(bytes(line).decode("utf-8"))
        return parsed


class JSONFieldColumn:
    """The values of field ``name`` in the usable records of one JSONL file, in order."""

    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.path = path
        self._kinds: list[np.ndarray] = []
        self._values: list[Batch] = []
        self._slow: dict[int, Any] = {}
        """Record number → the value :mod:`json` read, for the lines the kernel left."""
        self._first_line = {kernels.FIELD_NUMBER: 0, kernels.FIELD_STRING: 0}
        self._count = 0

    def add(self, read: FieldChunk) -> None:
        """The values of the records of a chunk, the next in the file."""
        kind = read.kind.copy()
        for i in np.flatnonzero(kind == kernels.FIELD_UNSURE).tolist():
            value = read.record(i).get(self.name)
            kind[i] = self._kind_of(value)
            if kind[i] in _HELD:
                self._slow[self._count + i] = value
        others = np.flatnonzero(kind == kernels.FIELD_OTHER)
        if others.shape[0]:
            i = int(others[0])
            raise InputError(
                f"--keep-by field {self.name!r} is {json_type(read.record(i).get(self.name))}"
                + remedy("keep by a field of numbers or strings"),
                path=self.path,
                line=int(read.numbers[i]),
            )
        self._note_types(kind, read.numbers)
        held = np.isin(kind, _HELD)
        starts = np.where(held, read.starts[read.lines], 0)
        sizes = np.where(held, read.length, 0)
        unused = np.zeros(read.num_records, dtype=bool)
        self._values.append(gather(read.values, read.values, unused, starts, sizes))
        self._kinds.append(kind)
        self._count += read.num_records

    def _kind_of(self, value: Any) -> int:
        if value is None:
            return kernels.FIELD_NULL
        if isinstance(value, str):
            return kernels.FIELD_STRING
        if isinstance(value, int | float) and not isinstance(value, bool):
            return kernels.FIELD_NUMBER
        return kernels.FIELD_OTHER

    def _note_types(self, kind: np.ndarray, numbers: I64Array) -> None:
        """Remember the first line of each type; numbers and strings both are an error."""
        for held in _HELD:
            at = np.flatnonzero(kind == held)
            if at.shape[0] and not self._first_line[held]:
                self._first_line[held] = int(numbers[at[0]])
        number, string = self._first_line.values()
        if number and string:
            raise InputError(
                f"--keep-by field {self.name!r} is a number on line {number} and a string on "
                f"line {string}" + remedy("keep by a field of one type in every record"),
                path=self.path,
            )

    def column(self) -> Any:
        """The values as :func:`~neardup.keep.comparable` gives them, null where none."""
        import pyarrow as pa
        import pyarrow.compute as pc

        kind = np.concatenate(self._kinds) if self._kinds else np.empty(0, dtype=np.int8)
        data = np.concatenate([v.data for v in self._values]) if self._values else kind[:0]
        offsets = np.zeros(kind.shape[0] + 1, dtype=np.int64)
        if self._values:
            np.cumsum(np.concatenate([np.diff(v.offsets) for v in self._values]), out=offsets[1:])
        raw = pa.LargeStringArray.from_buffers(
            kind.shape[0], pa.py_buffer(offsets), pa.py_buffer(data.astype(np.uint8, copy=False))
        )
        is_number = bool(self._first_line[kernels.FIELD_NUMBER])
        slow = np.zeros(kind.shape[0], dtype=bool)
        slow[list(self._slow)] = True
        fast = (kind == (kernels.FIELD_NUMBER if is_number else kernels.FIELD_STRING)) & ~slow
        values = pc.if_else(pa.array(fast), raw, pa.scalar(None, pa.large_string()))
        if is_number:
            values = values.cast(pa.float64())
        if self._slow:
            given = [self._slow[r] for r in sorted(self._slow)]
            if is_number:
                replacements = pa.array([float(v) for v in given], pa.float64())
            else:
                text = [v.encode("utf-8", "surrogatepass") for v in given]
                replacements = pa.array(
                    [t.decode("utf-8", "replace") for t in text], pa.large_string()
                )
            values = pc.replace_with_mask(values, pa.array(slow), replacements)
        return comparable(values, self.name, str(self.path))
