"""Byte spans packed into a :class:`~neardup._types.Batch`.

The one way batches are assembled: from strings, or from pieces of other buffers (readers,
normalisation, the text arena).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from neardup._kernels.compiling import read_only
from neardup._kernels.spans import gather_spans
from neardup._parallel import in_blocks
from neardup._types import Batch, BoolArray, I64Array, Offsets, U8Array

__all__ = ["byte_pieces", "concat", "copy_spans", "gather", "pack_strings", "take"]


def byte_pieces(sizes: I64Array, piece_bytes: int) -> list[int]:
    """Bounds ``[0, ..., n]`` of consecutive runs of items of about ``piece_bytes`` bytes each.

    An item starts a new run where the running total of ``sizes`` crosses a multiple of
    ``piece_bytes``, so a run holds at most ``piece_bytes`` plus its first item.

    Examples
    --------
    >>> byte_pieces(np.array([4, 4, 4, 9, 1]), 8)
    [0, 1, 3, 5]
    """
    piece = np.cumsum(sizes) // max(1, piece_bytes)
    bounds: list[int] = np.r_[
        0, np.flatnonzero(piece[1:] != piece[:-1]) + 1, sizes.shape[0]
    ].tolist()
    return bounds


def pack_strings(values: Sequence[str]) -> tuple[U8Array, Offsets]:
    r"""Strings as one UTF-8 buffer (lone surrogates kept, as ``surrogatepass``) plus offsets.

    Examples
    --------
    >>> data, offsets = pack_strings(["ab", "é"])
    >>> bytes(data), offsets.tolist()
    (b'ab\xc3\xa9', [0, 2, 4])
    """
    encoded = [v.encode("utf-8", "surrogatepass") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


def gather(
    first: U8Array,
    second: U8Array,
    use_second: BoolArray,
    starts: I64Array,
    lengths: I64Array,
    room: U8Array | None = None,
) -> Batch:
    """Spans of two buffers packed into one :class:`Batch`.

    Item ``r`` is ``second[starts[r]:starts[r] + lengths[r]]`` when ``use_second[r]``, else
    the same span of ``first``. ``room``: a buffer to pack into when it is big enough (the
    batch then lives in it), instead of a new one.

    Examples
    --------
    >>> a, b = np.frombuffer(b"hello", np.uint8), np.frombuffer(b"world", np.uint8)
    >>> batch = gather(a, b, np.array([False, True]), np.array([0, 1]), np.array([2, 3]))
    >>> bytes(batch.data)
    b'heorl'
    """
    offsets = np.zeros(starts.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    size = int(offsets[-1])
    out = room[:size] if room is not None and room.shape[0] >= size else np.empty(size, np.uint8)
    if starts.shape[0]:
        run = partial(
            gather_spans,
            read_only(first),
            read_only(second),
            np.ascontiguousarray(use_second),
            np.ascontiguousarray(starts, dtype=np.int64),
            np.ascontiguousarray(lengths, dtype=np.int64),
            out,
            offsets,
        )
        in_blocks(run, starts.shape[0])
    return Batch(data=out, offsets=offsets)


def copy_spans(
    source: U8Array, starts: I64Array, lengths: I64Array, out: U8Array, out_starts: I64Array
) -> None:
    """Copy ``source[starts[r]:starts[r] + lengths[r]]`` into ``out`` at ``out_starts[r]``.

    Examples
    --------
    >>> out = np.full(5, ord("."), np.uint8)
    >>> copy_spans(np.frombuffer(b"hello", np.uint8), np.array([3, 0]), np.array([2, 1]),
    ...            out, np.array([0, 4]))
    >>> bytes(out)
    b'lo..h'
    """
    if starts.shape[0]:
        source = read_only(source)
        run = partial(
            gather_spans,
            source,
            source,
            np.zeros(starts.shape[0], dtype=bool),
            np.ascontiguousarray(starts, dtype=np.int64),
            np.ascontiguousarray(lengths, dtype=np.int64),
            out,
            np.ascontiguousarray(out_starts, dtype=np.int64),
        )
        in_blocks(run, starts.shape[0])


def concat(parts: Sequence[Batch]) -> Batch:
    """The items of ``parts`` one after another, packed (a single part is returned as it is)."""
    if len(parts) == 1:
        return parts[0]
    data = np.concatenate(
        [np.empty(0, dtype=np.uint8)] + [p.data[p.offsets[0] : p.offsets[-1]] for p in parts]
    )
    offsets = np.zeros(1 + sum(p.offsets.shape[0] - 1 for p in parts), dtype=np.int64)
    if len(parts):
        np.cumsum(np.concatenate([np.diff(p.offsets) for p in parts]), out=offsets[1:])
    return Batch(data=data, offsets=offsets)


def take(batch: Batch, docs: I64Array) -> Batch:
    """The documents ``docs`` of ``batch``, in that order, packed."""
    starts = batch.offsets[docs]
    lengths = batch.offsets[docs + 1] - starts
    return gather(batch.data, batch.data, np.zeros(docs.shape[0], dtype=bool), starts, lengths)
