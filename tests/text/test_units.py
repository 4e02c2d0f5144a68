"""Cutting documents into lines, paragraphs and sentences (neardup.text.units).

Lines and paragraphs are checked against :mod:`tests.reference`'s plain-Python cutter on
generated texts; sentences against worked examples of the rules docs/passages.md states.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup._types import Batch
from neardup.errors import ParameterError
from neardup.params import UnitSpec
from neardup.text.spans import pack_strings
from neardup.text.units import cut_pieces, units_of
from tests import reference

texts_with_lines = st.lists(
    st.text(alphabet=st.sampled_from("ab é漢 \t\r\f\n.\u00a0\u2028"), max_size=40),
    min_size=1,
    max_size=6,
)


def _pieces(texts: list[str], spec: UnitSpec) -> list[list[tuple[int, int, str]]]:
    """Each text's pieces as ``(tile_start, tile_end, content)``, content decoded."""
    batch = Batch(*pack_strings(texts))
    pieces = cut_pieces(batch, spec)
    out: list[list[tuple[int, int, str]]] = [[] for _ in texts]
    for p in range(pieces.num_pieces):
        start, end = int(pieces.content_start[p]), int(pieces.content_end[p])
        content = bytes(batch.data[start:end]).decode("utf-8")
        doc = int(pieces.doc[p])
        out[doc].append((int(pieces.tile_start[p]), int(pieces.tile_end[p]), content))
    return out


def _sentences(text: str) -> list[str]:
    return [text[a:b] for a, b, _ in _pieces([text], UnitSpec(kind="sentences"))[0]]


@given(texts_with_lines)
def test_lines_equal_the_reference_cut(texts: list[str]) -> None:
    assert _pieces(texts, UnitSpec(kind="line")) == [reference.line_pieces(t) for t in texts]


@given(texts_with_lines)
def test_paragraphs_equal_the_reference_cut(texts: list[str]) -> None:
    expected = [reference.line_pieces(t, paragraphs=True) for t in texts]
    assert _pieces(texts, UnitSpec(kind="paragraph")) == expected


@given(st.text(alphabet=st.sampled_from("aB. !?\n”漢。"), max_size=60))
def test_sentence_tiles_cover_the_text_after_its_leading_whitespace(text: str) -> None:
    tiles = _pieces([text], UnitSpec(kind="sentences"))[0]
    assert "".join(text[a:b] for a, b, _ in tiles) == text[len(text) - len(text.lstrip()) :]
    assert all(content == text[a:b].strip() and content for a, b, content in tiles)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two! Three? Four", ["One. ", "Two! ", "Three? ", "Four"]),
        ("Mr. Smith met Dr. Jones. He left.", ["Mr. Smith met Dr. Jones. ", "He left."]),
        ("J. R. R. Tolkien wrote it. Yes.", ["J. R. R. Tolkien wrote it. ", "Yes."]),
        ("See e.g. The Book. And U.S. Army.", ["See e.g. The Book. ", "And U.S. Army."]),
        ("Pi is 3.14. Version 1.2. Done", ["Pi is 3.14. ", "Version 1.2. ", "Done"]),
        ('"Stop!" he said. "Go!" She went.', ['"Stop!" he said. ', '"Go!" ', "She went."]),
        ("Wait... What?! No.", ["Wait... ", "What?! ", "No."]),
        ("It ended (finally.) Then more.", ["It ended (finally.) ", "Then more."]),
        ("a heading\n\nA paragraph", ["a heading\n\n", "A paragraph"]),
        ("one line\nwraps here. Next", ["one line\nwraps here. ", "Next"]),
        ("这是第一句。这是第二句！第三句？", ["这是第一句。", "这是第二句！", "第三句？"]),
        ("「你好。」他说。", ["「你好。」", "他说。"]),
        ("Это первое. Это второе.", ["Это первое. ", "Это второе."]),
        ("ein Satz. kein Ende hier.", ["ein Satz. kein Ende hier."]),
        ("क्या हुआ। सब ठीक है।", ["क्या हुआ। ", "सब ठीक है।"]),
        ("  \n  Leading space. Ok", ["Leading space. ", "Ok"]),
    ],
)
def test_sentences_end_where_the_rules_say(text: str, expected: list[str]) -> None:
    assert _sentences(text) == expected


def test_runs_of_sentences_overlap_and_a_short_document_is_one_unit() -> None:
    texts = ["A one. B two. C three. D four.", "Only one.", ""]
    spec = UnitSpec(kind="sentences", num_sentences=3)
    batch = Batch(*pack_strings(texts))
    units = units_of(batch, cut_pieces(batch, spec), spec)
    assert units.first.tolist() == [0, 1, 4]
    assert units.count.tolist() == [3, 3, 1]
    data, offsets = units.texts.data, units.texts.offsets
    got = [bytes(data[a:b]).decode() for a, b in itertools.pairwise(offsets)]
    assert got == ["A one. B two. C three.", "B two. C three. D four.", "Only one."]


def test_units_fold_digits_and_short_units_are_left_out() -> None:
    texts = ["Page 12\nab\nPage 13"]
    batch = Batch(*pack_strings(texts))
    spec = UnitSpec(kind="line", min_chars=3)
    units = units_of(batch, cut_pieces(batch, spec), spec)
    data, offsets = units.texts.data, units.texts.offsets
    got = [bytes(data[a:b]).decode() for a, b in itertools.pairwise(offsets)]
    assert got == ["Page 00", "Page 00"]
    assert units.first.tolist() == [0, 2]
    kept_digits = UnitSpec(kind="line", fold_digits=False)
    units = units_of(batch, cut_pieces(batch, kept_digits), kept_digits)
    assert bytes(units.texts.data[: units.texts.offsets[1]]).decode() == "Page 12"


@pytest.mark.parametrize("value", ["lines", "sentences:x", "paragraph:2", "sentences:0", ""])
def test_a_bad_unit_names_what_is_allowed(value: str) -> None:
    with pytest.raises(ParameterError, match=r"unit|num_sentences"):
        UnitSpec.parse(value)


def test_num_sentences_applies_to_sentences_only() -> None:
    with pytest.raises(ParameterError, match="num_sentences applies to kind='sentences'"):
        UnitSpec(kind="line", num_sentences=3)
