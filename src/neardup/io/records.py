"""Records in columns: the texts and ids of a batch as flat byte buffers, never one object each.

A reader turns its input into :class:`RecordBatch` es: the raw (not yet normalised) texts as a
:class:`~neardup._types.Batch` and the ids as :class:`Ids`, both UTF-8 with ``int64`` offsets.
Ids stay in that form for the whole run (about 20 bytes per document instead of a Python
string's 60 or more); :class:`Ids` decodes one when it is asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import overload

import numpy as np

from neardup._kernels.spans import span_hashes
from neardup._parallel import in_blocks
from neardup._types import Batch, I64Array, Offsets, U8Array, U64Array
from neardup.text.normalize import TextStats
from neardup.text.spans import concat, pack_strings

__all__ = ["Ids", "RecordBatch"]


class Ids(Sequence[str]):
    """Document ids as one UTF-8 buffer plus offsets; a read-only sequence of ``str``.

    Examples
    --------
    >>> ids = Ids.of(["a", "bé"])
    >>> len(ids), ids[1], list(ids)
    (2, 'bé', ['a', 'bé'])
    """

    __slots__ = ("data", "offsets")

    def __init__(self, data: U8Array, offsets: Offsets) -> None:
        self.data = data
        self.offsets = offsets

    @classmethod
    def of(cls, values: Sequence[str]) -> Ids:
        """Pack Python strings."""
        return cls(*pack_strings(values))

    @classmethod
    def concat(cls, parts: Sequence[Ids]) -> Ids:
        """The ids of ``parts`` one after another."""
        if len(parts) == 1:
            return parts[0]
        joined = concat([Batch(p.data, p.offsets) for p in parts])
        return cls(joined.data, joined.offsets)

    def __len__(self) -> int:
        return int(self.offsets.shape[0]) - 1

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("Ids index out of range")
        start, stop = self.offsets[index], self.offsets[index + 1]
        return bytes(self.data[start:stop]).decode("utf-8", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))

    def hashes(self) -> U64Array:
        """``uint64[n, 2]``: a 128-bit hash of each id's bytes (equal ids, equal hashes)."""
        out = np.empty((len(self), 2), dtype=np.uint64)
        if len(self):
            in_blocks(partial(span_hashes, self.data, self.offsets, out), len(self))
        return out


@dataclass(frozen=True, slots=True)
class RecordBatch:
    """The usable records of one batch, in input order.

    Attributes
    ----------
    texts
        Raw UTF-8 texts (as read; normalisation comes later).
    ids
        One id per text.
    position
        How far the reader is in its input after this batch: bytes of the input file (the
        compressed file for ``.gz``/``.zst``), for progress.
    lines
        For JSONL: ``(num_docs, 2)``, where each record's line is in the decompressed input
        (byte offset, size), so its text can be read again later; ``None`` otherwise.
    source
        The index of the input the batch comes from, among a run's inputs.
    stats
        The texts' characters and ASCII flags, when the reader counted them as it read.
    """

    texts: Batch
    ids: Ids
    position: int = 0
    lines: I64Array | None = None
    source: int = 0
    stats: TextStats | None = None

    @property
    def num_docs(self) -> int:
        """Records in the batch."""
        return self.texts.num_docs

    @classmethod
    def of(cls, ids: Sequence[str], texts: Sequence[str], position: int = 0) -> RecordBatch:
        """A batch from Python strings."""
        data, offsets = pack_strings(texts)
        return cls(texts=Batch(data=data, offsets=offsets), ids=Ids.of(ids), position=position)

    def records(self) -> Iterator[tuple[str, str]]:
        """``(id, text)`` pairs as Python strings."""
        data, offsets = self.texts.data, self.texts.offsets
        for i in range(self.num_docs):
            text = bytes(data[offsets[i] : offsets[i + 1]]).decode("utf-8", "surrogatepass")
            yield self.ids[i], text
