"""The JSONL kernel's fast path reads exactly what ``json.loads`` reads, and rejects the same lines.

``JSONLinesSource._scan`` parses every line with :mod:`json` (the old reader, kept as the
reference); ``batches`` parses with the numba kernel and sends only unusual lines to json. Both
must give the same records, ids, bad-record errors and counts, on arbitrary lines.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from neardup._kernels import jsonl as kernels
from neardup.errors import InputError
from neardup.io import mapped
from neardup.io.jsonl import JSONLinesSource, JSONLineTexts
from neardup.io.kept import write_kept
from neardup.params import NormalizeSpec, ReadSpec
from neardup.text.normalize import normalize_bytes, text_statistics

TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",))
    | st.sampled_from(['"', "\\", "\n", "\t", "\x00", "\x1f", "\u2028", "é", "😀", "\ud800"]),
    max_size=40,
)
ID = st.none() | st.integers(-(10**20), 10**20) | TEXT | st.booleans() | st.floats(allow_nan=False)
EXTRA = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    """One line: a record (fields in any order, json escapes or raw UTF-8), or something odd."""
    kind = draw(st.sampled_from(["record", "record", "record", "odd"]))
    if kind == "odd":
        return draw(
            st.sampled_from(
                [
                    b"",
                    b"   ",
                    b"\t\x0b\x0c ",
                    b"[1, 2]",
                    b'{"text": 1}',
                    b"{",
                    b'{"text": "x"} y',
                    b'{"text": "x",}',
                    b'{"te\\u0078t": "esc key"}',
                    b'{"text": "\\ud83d"}',
                    b'{"text": NaN}',
                    b'{"id": 1.0, "text": "t"}',
                    b"\xef\xbb\xbf{}",
                    b'{"text": "bad \xff byte"}',
                    b'{"text": "a", "text": "b"}',
                    b"{}",
                    rb'{"text": "a\/b \b\f\r \u00e9 \u00E9 \ud83d\ude00", "id": "\u0041"}',
                    b'{"id": 0, "text": "", "n": [1e5, -0.5, 2E-3, {"k": [true, false, null]}]}',
                ]
            )
        )
    record = {}
    fields = draw(st.permutations(["text", "id", "meta"]))
    for name in fields[: draw(st.integers(1, 3))]:
        record[name] = draw(TEXT if name == "text" else ID if name == "id" else EXTRA)
    encoded = json.dumps(record, ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):
        encoded = " " + encoded.replace(", ", ",\t") + " \r"
    return encoded.encode("utf-8", "surrogatepass")


def _read(source: JSONLinesSource, batch_bytes: int) -> tuple[list[tuple[str, str]], int, str]:
    records = []
    try:
        for batch in source.batches(batch_bytes):
            records.extend(batch.records())
            # the characters and ASCII flags counted while parsing are the texts' own
            assert batch.stats is not None
            counted = text_statistics(batch.texts)
            assert batch.stats.chars.tolist() == counted.chars.tolist()
            assert batch.stats.is_ascii.tolist() == counted.is_ascii.tolist()
    except InputError as exc:
        return [], -1, str(exc)
    return records, source.num_bad, ""


def _reference(source: JSONLinesSource) -> tuple[list[tuple[str, str]], int, str]:
    records, num_bad = [], 0
    try:
        for item in source._scan():
            if isinstance(item, InputError):
                if not source.options.skip_bad_records:
                    raise item
                num_bad += 1
            else:
                records.append((item[0], item[1]))
    except InputError as exc:
        return [], -1, str(exc)
    return records, num_bad, ""


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=150)
@given(
    content=st.lists(lines(), max_size=12),
    skip=st.booleans(),
    batch_bytes=st.sampled_from([1, 7, 64, 1 << 20]),
    trailing_newline=st.booleans(),
)
@example(content=[b'{"id": -0, "text": "zero"}'], skip=False, batch_bytes=64, trailing_newline=True)
@example(content=[b'\xef\xbb\xbf{"text": "a"}'], skip=False, batch_bytes=1, trailing_newline=False)
def test_the_fast_path_reads_what_json_reads(
    tmp_path_factory: pytest.TempPathFactory,
    content: list[bytes],
    skip: bool,
    batch_bytes: int,
    trailing_newline: bool,
) -> None:
    path = tmp_path_factory.mktemp("jsonl") / "in.jsonl"
    path.write_bytes(b"\n".join(content) + (b"\n" if trailing_newline else b""))
    options = ReadSpec(skip_bad_records=skip)
    assert _read(JSONLinesSource(path, options), batch_bytes) == _reference(
        JSONLinesSource(path, options)
    )


def test_the_text_field_can_be_the_id_field_too(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"text": "one"}\n{"text": "two"}\n')
    source = JSONLinesSource(path, ReadSpec(id_field="text"))
    records = [r for batch in source.batches(1 << 20) for r in batch.records()]
    assert records == [("one", "one"), ("two", "two")]


def test_lines_read_again_by_offset_give_the_normalised_texts(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    texts = ["ÉCOLE and café", "plain", 'quote " and \\ slash', "Straße", "lone \ud800 half"]
    path.write_bytes(
        b"\n\n".join(
            json.dumps({"id": str(i), "text": t}).encode("utf-8", "surrogatepass")
            for i, t in enumerate(texts)
        )
    )
    source = JSONLinesSource(path, ReadSpec())
    store = JSONLineTexts([source], NormalizeSpec())
    normalized = []
    for batch in source.batches(16):
        normalized.append(normalize_bytes(batch.texts, NormalizeSpec()))
        store.append(batch, normalized[-1])
    store.finish()
    wanted = np.array([4, 0, 2, 2])
    taken = store.take(wanted)
    expected = [
        bytes(b.data[b.offsets[i] : b.offsets[i + 1]])
        for b in normalized
        for i in range(b.num_docs)
    ]
    assert [bytes(taken.data[taken.offsets[i] : taken.offsets[i + 1]]) for i in range(4)] == [
        expected[i] for i in wanted.tolist()
    ]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    sizes=st.lists(st.integers(0, 40), min_size=1, max_size=30),
    data=st.data(),
    window=st.sampled_from([1, 64, 64 << 20]),
)
def test_lines_are_read_again_whatever_the_windows(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sizes: list[int],
    data: st.DataObject,
    window: int,
) -> None:
    # Lines are read through a memory map a window of the file at a time: with tiny windows
    # every line is a window of its own, or crosses one; the texts must be the lines' texts.
    monkeypatch.setattr(mapped, "WINDOW_BYTES", window)
    texts = ["x" * size for size in sizes]
    raw = [json.dumps({"text": text}).encode() + b"\n" for text in texts]
    path = tmp_path / f"in-{window}.jsonl"
    path.write_bytes(b"".join(raw))
    starts = np.cumsum([0] + [len(line) for line in raw[:-1]])
    spans = np.stack([starts, [len(line) for line in raw]], axis=1).astype(np.int64)
    wanted = data.draw(st.lists(st.integers(0, len(texts) - 1), min_size=1, max_size=40))
    got = JSONLinesSource(path, ReadSpec()).read_lines(spans[wanted])
    assert [
        bytes(got.data[got.offsets[i] : got.offsets[i + 1]]).decode() for i in range(len(wanted))
    ] == [texts[w] for w in wanted]


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (b'{"text": "a"}\n{"text": "b"}\n{"text": "c"}\n', "file changed while it was read"),
        (b'{"text": "a"}\n', "fewer records than when it was first read"),
    ],
)
def test_a_compressed_input_that_changes_between_passes_is_an_error(
    tmp_path: Path, second: bytes, message: str
) -> None:
    path = tmp_path / "in.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"text": "a"}\n{"text": "b"}\n'))
    source = JSONLinesSource(path, ReadSpec())
    keep = np.ones(sum(batch.num_docs for batch in source.batches(1 << 20)), dtype=bool)
    path.write_bytes(gzip.compress(second))  # the kept corpus is copied in a second pass
    with pytest.raises(InputError, match=message):
        write_kept([source], keep, tmp_path)


@given(data=st.binary(max_size=200).map(lambda b: b.replace(b"a", b"\n")), cut=st.integers(0, 7))
def test_line_starts_are_found_eight_bytes_at_a_time_as_one_by_one(data: bytes, cut: int) -> None:
    n = max(0, len(data) - cut)
    buf = np.frombuffer(data, dtype=np.uint8)
    expected = [0] + [i + 1 for i in range(n) if data[i] == 10]
    if n and data[n - 1] != 10:
        expected.append(n)
    assert kernels.line_starts(buf, n).tolist() == expected
