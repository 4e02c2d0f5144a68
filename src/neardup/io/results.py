"""Writing a dedup run's results: ``clusters.jsonl``, ``pairs.jsonl``, ``summary.json``.

``clusters.jsonl``: one line per input document, in input order:
``{"id": ..., "cluster": <id of the cluster's first document>, "keep": true|false,
"similarity": <to the cluster's representative, 1.0 for it>, "min_similarity": <the least
similarity to the representative in the cluster>}``; a ``min_similarity`` below the threshold
marks a cluster that chained. With ``--method minhash+embedding`` a line ends with the
embeddings' ``"cosine"`` to the representative, and ``similarity`` is the Jaccard: a member
joined by its meaning alone has a low one (and so has its cluster's ``min_similarity``).

``pairs.jsonl``: one line per reported duplicate pair, ``a`` before ``b`` in input order:
``{"a": ..., "b": ..., "similarity": <exact similarity, in the measure summary.json names, or
null>, "estimate": <from signatures>, "identical": <true when the normalised texts are
identical>}`` (earlier runs wrote ``jaccard`` for ``similarity`` and ``exact`` for ``identical``).
With ``--method minhash+embedding`` a line also gives the embeddings' ``"cosine"`` after the
estimate, and ends with ``"found_by"``: which measure reached its threshold, ``"shingles"``,
``"embedding"`` or ``"both"`` (:data:`FOUND_BY`; identical texts: both).

The line functions (:func:`cluster_line`, :func:`exact_pair_line`, :func:`near_pair_line`) are
the definition of these bytes (the Spark engine writes with them); :func:`write_clusters` and
:func:`write_pairs` write the same bytes in chunks with numba kernels, from ids kept as UTF-8
buffers (:class:`~neardup.io.records.Ids`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

from neardup._kernels import jsonout as kernels
from neardup._kernels.compiling import read_only
from neardup._parallel import in_blocks
from neardup._types import Batch, BoolArray, F64Array, I64Array, U8Array
from neardup.io.records import Ids

__all__ = [
    "FOUND_BY",
    "annotation_notes",
    "cluster_line",
    "exact_pair_line",
    "near_pair_line",
    "record_line",
    "write_clusters",
    "write_index_matches",
    "write_json",
    "write_pairs",
    "write_records",
    "write_value_pair_chunks",
    "write_value_pairs",
]

CHUNK_LINES = 1 << 18
"""Lines sized at a time (a few tens of MB of output for ids of ordinary length)."""

CHUNK_BYTES = 64 << 20
"""Most bytes formatted per kernel call (unless one line is longer): long ids stay bounded."""

FOUND_BY = ("shingles", "embedding", "both")
"""``pairs.jsonl``'s ``found_by`` values, by their code in :func:`write_pairs`."""


_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
"""A surrogate code point in a ``str``: always a lone one (Python joins pairs on decoding)."""


def utf8_json(text: str) -> str:
    r"""JSON text with each lone surrogate as its ``\uXXXX`` escape: text that UTF-8 encodes.

    A lone surrogate (a JSONL input's ``"\ud800"``, a file name's or URL's byte that is not
    UTF-8) has no UTF-8 form, and JSON must be UTF-8 (RFC 8259 §8.1); its escape reads back as
    the same string. ``json.dumps`` puts surrogates inside strings only, where it is valid.

    Examples
    --------
    >>> utf8_json(json.dumps({"id": "caf\u00e9", "text": "a\ud800b"}, ensure_ascii=False))
    '{"id": "café", "text": "a\\ud800b"}'
    """
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def record_line(record: Mapping[str, Any]) -> str:
    """A record as one JSON Lines line: :func:`json.dumps`, characters as they are, a newline.

    Every record neardup writes one by one is this line, encoded as UTF-8: lone surrogates are
    written as their JSON escapes (:func:`utf8_json`), as the kernels write them;
    :func:`write_records` writes a file of them.
    """
    return utf8_json(json.dumps(record, ensure_ascii=False)) + "\n"


def write_records(path: Path, records: Iterable[Mapping[str, Any]]) -> int:
    """Write ``records`` to ``path`` as JSON Lines (:func:`record_line`); the number written."""
    written = 0
    with path.open("w", encoding="utf-8") as f:
        for record in records:
            f.write(record_line(record))
            written += 1
    return written


def cluster_line(
    doc_id: str,
    cluster_id: str,
    keep: bool,
    similarity: float,
    min_similarity: float,
    cosine: float | None = None,
) -> str:
    """One line of ``clusters.jsonl`` (with its newline); every engine writes these bytes.

    ``cosine``: the embeddings' cosine to the representative, of a run that measures it beside
    the Jaccard (``--method minhash+embedding``).
    """
    record = {
        "id": doc_id,
        "cluster": cluster_id,
        "keep": keep,
        "similarity": _rounded(similarity),
        "min_similarity": _rounded(min_similarity),
    }
    if cosine is not None:
        record["cosine"] = _rounded(cosine)
    return record_line(record)


def _rounded(value: float) -> float | None:
    """A similarity as the results write it: six decimals, None (null) for NaN."""
    return None if np.isnan(value) else round(value, 6)


def exact_pair_line(a: str, b: str, *, with_cosine: bool = False) -> str:
    """The ``pairs.jsonl`` line of two documents with identical normalised text.

    ``with_cosine``: of a run that measures embeddings beside shingles (their cosine is 1).
    """
    record: dict[str, Any] = {"a": a, "b": b, "similarity": 1.0, "estimate": 1.0}
    if with_cosine:
        record["cosine"] = 1.0
    record["identical"] = True
    if with_cosine:
        record["found_by"] = "both"
    return record_line(record)


def near_pair_line(
    a: str,
    b: str,
    estimate: float,
    similarity: float,
    passages: Sequence[Sequence[int]] | None = None,
    *,
    cosine: tuple[float, str] | None = None,
) -> str:
    """The ``pairs.jsonl`` line of a verified near pair (``similarity`` NaN when not computed).

    ``passages`` (``dedup --explain``): ``[a_start, a_end, b_start, b_end, num_shingles]`` of
    each shared passage, after the other fields. ``cosine``: the embeddings' cosine and which
    measure found the pair (:data:`FOUND_BY`), of a run that measures both.
    """
    record: dict[str, Any] = {
        "a": a,
        "b": b,
        "similarity": _rounded(similarity),
        "estimate": _rounded(estimate),
    }
    if cosine is not None:
        record["cosine"] = _rounded(cosine[0])
    record["identical"] = False
    if cosine is not None:
        record["found_by"] = cosine[1]
    if passages is not None:
        record["passages"] = [list(p) for p in passages]
    return record_line(record)


def _bytes(text: str) -> U8Array:
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8)


_CLUSTER_KEYS = [
    '{"id": ',
    ', "cluster": ',
    ', "keep": true, "similarity": ',
    ', "keep": false, "similarity": ',
    ', "min_similarity": ',
]
_PAIR_KEYS = ['{"a": ', ', "b": ', ', "similarity": ', ', "estimate": ']
_COSINE_KEY = ', "cosine": '


def _as_ids(ids: Sequence[str]) -> Ids:
    return ids if isinstance(ids, Ids) else Ids.of(list(ids))


def _literal_sizes(ids: Ids) -> I64Array:
    sizes = np.empty(len(ids), dtype=np.int64)
    in_blocks(partial(kernels.string_sizes, read_only(ids.data), ids.offsets, sizes), len(ids))
    return sizes


def write_clusters(
    path: Path,
    ids: Sequence[str],
    labels: I64Array,
    keep: BoolArray,
    similarity: F64Array,
    least: F64Array,
    cosine: F64Array | None = None,
) -> None:
    """Write ``clusters.jsonl``: each document's label, keep flag, similarity and cluster minimum.

    NaN similarities (not measured) are written as null. ``cosine``: each document's cosine to
    its representative, after the others (:func:`cluster_line`).
    """
    packed = _as_ids(ids)
    sizes = _literal_sizes(packed)
    keys = [*_CLUSTER_KEYS, _COSINE_KEY] if cosine is not None else _CLUSTER_KEYS
    parts, bounds = _piece_table([*keys, "}\n"])
    widths = np.diff(bounds)
    kept_width, dropped_width = int(widths[2]), int(widths[3])
    constant = int(widths.sum()) - kept_width - dropped_width
    columns = [similarity, least] if cosine is None else [similarity, least, cosine]
    with path.open("wb") as f:
        for lo in range(0, labels.shape[0], CHUNK_LINES):
            hi = min(lo + CHUNK_LINES, labels.shape[0])
            chunk_labels = np.ascontiguousarray(labels[lo:hi], dtype=np.int64)
            chunk_keep = np.ascontiguousarray(keep[lo:hi])
            numbers, number_sizes = _format_numbers(np.stack([c[lo:hi] for c in columns], axis=1))
            line_sizes = (
                constant
                + sizes[lo:hi]
                + sizes[chunk_labels]
                + np.where(chunk_keep, kept_width, dropped_width)
                + number_sizes.sum(axis=1)
            )
            for a, b, out, offsets in _rooms(line_sizes):
                run = partial(
                    kernels.cluster_lines, read_only(packed.data), packed.offsets,
                    chunk_labels[a:b], chunk_keep[a:b], numbers[a:b], number_sizes[a:b], lo + a,
                    parts, bounds, out, offsets,
                )  # fmt: skip
                in_blocks(run, b - a)
                f.write(out.data)


def annotation_notes(
    ids: Ids, labels: I64Array, keep: BoolArray, similarity: F64Array, field: str
) -> Batch:
    """Each document's ``, "FIELD": {"cluster": ..., "keep": ..., "similarity": ...}``.

    The values ``clusters.jsonl`` gives (cluster id, keep flag, similarity to the
    representative, formatted alike), as the text ``--annotate`` inserts into a JSONL record.
    """
    head = _bytes(f", {json.dumps(field, ensure_ascii=False)}: " + '{"cluster": ')
    kept, dropped = (
        _bytes(', "keep": true, "similarity": '),
        _bytes(', "keep": false, "similarity": '),
    )
    tail = _bytes("}")
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    numbers, number_sizes = _format_numbers(similarity)
    sizes = (
        head.shape[0] + tail.shape[0] + _literal_sizes(ids)[labels] + number_sizes
        + np.where(keep, kept.shape[0], dropped.shape[0])
    )  # fmt: skip
    offsets = np.zeros(labels.shape[0] + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    out = np.empty(int(offsets[-1]), dtype=np.uint8)
    run = partial(
        kernels.annotation_texts, read_only(ids.data), ids.offsets, labels,
        np.ascontiguousarray(keep), numbers, number_sizes, (head, kept, dropped, tail), out,
        offsets,
    )  # fmt: skip
    in_blocks(run, labels.shape[0])
    return Batch(out, offsets)


def write_pairs(
    path: Path,
    ids: Sequence[str],
    exact: tuple[I64Array, I64Array],
    near: tuple[I64Array, I64Array, F64Array, F64Array],
    passages: Sequence[Sequence[Sequence[int]]] | None = None,
    *,
    cosine: tuple[F64Array, NDArray[np.int8]] | None = None,
) -> None:
    """Write ``pairs.jsonl``: exact duplicates first, then near duplicates.

    ``near``: ``(first, second, estimate, similarity)``. ``passages``, when given, holds each
    near pair's shared passages (:func:`near_pair_line`). ``cosine``: each near pair's cosine
    and the code of what found it (in :data:`FOUND_BY`), of a run that measures both.
    """
    packed = _as_ids(ids)
    sizes = _literal_sizes(packed)
    first, second, estimate, similarity = near
    keys = [*_PAIR_KEYS, _COSINE_KEY] if cosine is not None else _PAIR_KEYS
    ones = np.ones(exact[0].shape[0])
    with path.open("wb") as f:
        exact_lines = _PairLines(packed, sizes, keys, _tails(True, cosine is not None))
        both = len(FOUND_BY) - 1 if cosine is not None else 0
        exact_lines.write(f, *exact, [ones] * (len(keys) - 2), np.full(ones.shape[0], both))
        if passages is not None:
            for i, (a, b) in enumerate(zip(first.tolist(), second.tolist(), strict=True)):
                line = near_pair_line(
                    packed[a], packed[b], float(estimate[i]), float(similarity[i]), passages[i],
                    cosine=None if cosine is None else (
                        float(cosine[0][i]), FOUND_BY[int(cosine[1][i])]
                    ),
                )  # fmt: skip
                f.write(line.encode("utf-8"))
            return
        columns = [similarity, estimate] if cosine is None else [similarity, estimate, cosine[0]]
        near_lines = _PairLines(packed, sizes, keys, _tails(False, cosine is not None))
        near_lines.write(f, first, second, columns, None if cosine is None else cosine[1])


def _tails(identical: bool, with_cosine: bool) -> list[str]:
    """The endings of ``pairs.jsonl`` lines, by ``found_by`` code when ``with_cosine``."""
    flag = ', "identical": ' + ("true" if identical else "false")
    if not with_cosine:
        return [flag + "}\n"]
    return [f'{flag}, "found_by": "{found}"}}\n' for found in FOUND_BY]


class _PairLines:
    """Pair lines of one layout, written by the kernel a bounded chunk at a time.

    A line is ``{"a": A, "b": B`` (ids as JSON strings, or as they are where ``quoted`` is
    false: numbers), each value column after its key (``keys[2:]``), then one of ``tails``.
    ``id_sizes``: each id's bytes as written. Values are ``repr(round(v, 6))``, or whole
    numbers where ``integral``.
    """

    def __init__(
        self,
        ids: Ids,
        id_sizes: I64Array,
        keys: Sequence[str],
        tails: Sequence[str],
        *,
        quoted: bool = True,
        integral: bool = False,
    ) -> None:
        self.ids, self.id_sizes, self.quoted, self.integral = ids, id_sizes, quoted, integral
        self.parts, self.bounds = _piece_table([*keys, *tails])
        self.key_bytes = int(self.bounds[len(keys)])
        self.tail_sizes = np.diff(self.bounds)[len(keys) :]

    def write(
        self,
        f: IO[bytes],
        first: I64Array,
        second: I64Array,
        columns: Sequence[F64Array],
        tail_of: NDArray[np.integer[Any]] | None = None,
    ) -> None:
        """Write the lines of pairs ``first``, ``second`` (``tail_of``: each one's ending)."""
        for lo in range(0, first.shape[0], CHUNK_LINES):
            hi = lo + CHUNK_LINES
            chunk_first = np.ascontiguousarray(first[lo:hi], dtype=np.int64)
            chunk_second = np.ascontiguousarray(second[lo:hi], dtype=np.int64)
            chunk_tails = (
                np.zeros(chunk_first.shape[0], dtype=np.int8)
                if tail_of is None
                else np.ascontiguousarray(tail_of[lo:hi], dtype=np.int8)
            )
            numbers, number_sizes = _format_numbers(
                np.stack([column[lo:hi] for column in columns], axis=1), integral=self.integral
            )
            line_sizes = (
                self.key_bytes
                + self.id_sizes[chunk_first]
                + self.id_sizes[chunk_second]
                + number_sizes.sum(axis=1)
                + self.tail_sizes[chunk_tails]
            )
            for a, b, out, offsets in _rooms(line_sizes):
                run = partial(
                    kernels.pair_lines, read_only(self.ids.data), self.ids.offsets, self.quoted,
                    chunk_first[a:b], chunk_second[a:b], numbers[a:b], number_sizes[a:b],
                    self.parts, self.bounds, chunk_tails[a:b], out, offsets,
                )  # fmt: skip
                in_blocks(run, b - a)
                f.write(out.data)


def _piece_table(pieces: Sequence[str]) -> tuple[U8Array, I64Array]:
    """The constant pieces of a line kernel, packed: their bytes, and where each starts."""
    encoded = [piece.encode() for piece in pieces]
    bounds = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(piece) for piece in encoded], out=bounds[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), bounds


def _format_numbers(values: F64Array, *, integral: bool = False) -> tuple[U8Array, I64Array]:
    """``repr(round(v, 6))`` (``null`` for NaN) of each value, as fixed-width byte rows.

    ``integral``: each value as a whole number (``str(int(v))``).
    """
    flat = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
    out = np.empty((flat.shape[0], kernels.NUMBER_WIDTH), dtype=np.uint8)
    sizes = np.empty(flat.shape[0], dtype=np.int64)
    if integral:  # few distinct values (distances in bits): each formatted once
        whole, where = np.unique(flat.astype(np.int64), return_inverse=True)
        texts = [str(value).encode() for value in whole.tolist()]
        table = np.zeros((len(texts), kernels.NUMBER_WIDTH), dtype=np.uint8)
        for row, text in enumerate(texts):
            table[row, : len(text)] = np.frombuffer(text, dtype=np.uint8)
        out[:] = table[where]
        sizes[:] = np.array([len(text) for text in texts], dtype=np.int64)[where]
    else:
        is_python = np.empty(flat.shape[0], dtype=bool)
        in_blocks(partial(kernels.format_numbers, flat, out, sizes, is_python), flat.shape[0])
        for i in np.flatnonzero(is_python).tolist():
            text = json.dumps(round(float(flat[i]), 6)).encode()
            out[i, : len(text)] = np.frombuffer(text, dtype=np.uint8)
            sizes[i] = len(text)
    shape = (*values.shape, kernels.NUMBER_WIDTH)
    return out.reshape(shape), sizes.reshape(values.shape)


def _rooms(line_sizes: I64Array) -> Iterator[tuple[int, int, U8Array, I64Array]]:
    """Runs ``a:b`` of lines of these sizes, each with an output buffer and its lines' starts.

    A run holds at most :data:`CHUNK_BYTES` (or one longer line).
    """
    ends = np.cumsum(line_sizes)
    a = 0
    while a < line_sizes.shape[0]:
        before = int(ends[a - 1]) if a else 0
        b = max(a + 1, int(np.searchsorted(ends, before + CHUNK_BYTES, side="right")))
        offsets = np.zeros(b - a + 1, dtype=np.int64)
        offsets[1:] = ends[a:b] - before
        yield a, b, np.empty(int(offsets[-1]), dtype=np.uint8), offsets
        a = b


def write_value_pairs(
    path: Path,
    ids: NDArray[Any] | Ids,
    first: I64Array,
    second: I64Array,
    values: F64Array,
    *,
    key: str,
    integral: bool = False,
) -> None:
    r"""Write a join's ``pairs.jsonl``: ``{"a": A, "b": B, KEY: V}`` per pair, in pair order.

    ``ids`` are written as given (numbers as JSON numbers, strings as strings); ``V`` is
    ``repr(round(v, 6))``, or a whole number where ``integral``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "pairs.jsonl"
    >>> write_value_pairs(path, np.array(["x", "y"], dtype=object), np.array([0]),
    ...                   np.array([1]), np.array([0.25]), key="similarity")
    >>> path.read_text()
    '{"a": "x", "b": "y", "similarity": 0.25}\n'
    """
    write_value_pair_chunks(path, ids, [(first, second, values)], key=key, integral=integral)


def write_value_pair_chunks(
    path: Path,
    ids: NDArray[Any] | Ids,
    chunks: Iterable[tuple[I64Array, I64Array, F64Array]],
    *,
    key: str,
    integral: bool = False,
) -> int:
    """:func:`write_value_pairs` of pairs given a chunk at a time (in order); the pairs written.

    The bytes are those of :func:`write_value_pairs` on the chunks concatenated, whatever the
    chunks: a join streams its merged pairs through here without holding them all.
    """
    packed, quoted = _id_literals(ids)
    sizes = _literal_sizes(packed) if quoted else np.diff(packed.offsets)
    keys = ('{"a": ', ', "b": ', ", " + json.dumps(key) + ": ")
    lines = _PairLines(packed, sizes, keys, ["}\n"], quoted=quoted, integral=integral)
    written = 0
    with path.open("wb") as f:
        for first, second, values in chunks:
            written += int(first.shape[0])
            lines.write(f, first, second, [values])
    return written


def _id_literals(ids: NDArray[Any] | Ids) -> tuple[Ids, bool]:
    """Ids packed as UTF-8, and whether they are strings (else integers, written as numbers)."""
    if isinstance(ids, Ids):
        return ids, True
    numbers = np.issubdtype(ids.dtype, np.integer)
    return Ids.of([str(i) for i in ids.tolist()]), not numbers


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as indented JSON in UTF-8 (lone surrogates, as in ids, as escapes)."""
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    path.write_text(utf8_json(text), encoding="utf-8")


def write_index_matches(
    path: Path, ids: Sequence[str], matches: Mapping[int, Sequence[Any]]
) -> None:
    """Write ``index_matches.jsonl``, one line per document dropped for a near-copy in the index.

    Each line is ``{"id", "matches": [{"id", "similarity"}, ...]}``, in input order; a SimHash
    index's matches also give their ``distance`` in bits.
    """
    found = (
        {
            "id": ids[doc],
            "matches": [
                {**m.to_dict(), "similarity": round(m.similarity, 6)} for m in matches[doc]
            ],
        }
        for doc in sorted(matches)
    )
    write_records(path, found)
