"""Normalisation and code-point classes equal the plain-Python reference (NFKC, case folding,
``str.isspace``, Unicode categories), text by text and code point by code point."""

from __future__ import annotations

import unicodedata

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from neardup._types import Batch
from neardup.params import NormalizeSpec
from neardup.text.normalize import (
    SimpleFolds,
    codepoint_classes,
    normalize,
    normalize_bytes,
    text_statistics,
)
from neardup.text.spans import pack_strings
from tests import reference

# Characters that test every branch: ASCII (both cases, controls), Latin, Greek final sigma,
# the German sharp s, ligatures, full-width and compatibility forms, combining marks (which
# compose with a previous letter), Hangul jamo (which compose algorithmically), the Indic vowel
# sign that composes as a second starter, CJK, emoji, the BOM and a lone surrogate; and
# characters whose folded form is longer (Ⱥ, 2 to 3 bytes) or shorter (Ω, 3 to 2) in UTF-8.
POOL = (
    "aZ \t\n\x00\x7féÉςΣßẞﬁＡ①½\u00a0\u2028\u023a\u2126"
    "\u0301\u0308\u0327e\u0301\u1100\u1161\u11a8\uac00\u0b47\u0b3e漢字カ😀\ufeff\ud800"
)
TEXTS = st.lists(
    st.text(alphabet=st.sampled_from(POOL) | st.characters(codec="utf-8"), max_size=25),
    max_size=20,
)
SPECS = st.builds(NormalizeSpec, nfkc=st.booleans(), casefold=st.booleans())


_ASCII_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")


def _as_kernels_see(text: bytes, spec: NormalizeSpec) -> bytes:
    """The tokenising kernels fold ASCII letters themselves (with case folding on)."""
    return text.translate(_ASCII_LOWER) if spec.casefold else text


def _unpack(batch: Batch, spec: NormalizeSpec) -> list[bytes]:
    return [
        _as_kernels_see(bytes(batch.data[batch.offsets[i] : batch.offsets[i + 1]]), spec)
        for i in range(batch.num_docs)
    ]


def _expected(texts: list[str], spec: NormalizeSpec) -> list[bytes]:
    """The reference's normalisation, ASCII letters as the kernels see them."""
    return [
        _as_kernels_see(reference.normalize(t, spec).encode("utf-8", "surrogatepass"), spec)
        for t in texts
    ]


@given(text=st.text(alphabet=st.sampled_from(POOL) | st.characters(codec="utf-8")), spec=SPECS)
def test_normalize_equals_the_reference(text: str, spec: NormalizeSpec) -> None:
    assert normalize(text, spec) == reference.normalize(text, spec)


@given(texts=TEXTS, spec=SPECS, in_place=st.booleans())
@example(texts=["\u023a\u2126 hello world"], spec=NormalizeSpec(), in_place=True)
def test_a_batch_normalises_as_its_texts_one_by_one(
    texts: list[str], spec: NormalizeSpec, in_place: bool
) -> None:
    data, offsets = pack_strings(texts)
    batch = Batch(data=data.copy(), offsets=offsets)  # writable, so in place can happen
    assert _unpack(normalize_bytes(batch, spec, in_place=in_place), spec) == _expected(texts, spec)


def test_every_tabled_character_normalises_as_python_does() -> None:
    folds = SimpleFolds()
    chars = [chr(cp) for cp in range(0x80, SimpleFolds.SIZE) if not 0xD800 <= cp <= 0xDFFF]
    sizes, _, _ = folds.sizes(Batch(*pack_strings(chars)), np.arange(len(chars)))
    tabled = [c for c, size in zip(chars, sizes.tolist(), strict=True) if size >= 0]
    assert len(tabled) > 150_000  # the table covers most of Unicode's assigned characters
    spec = NormalizeSpec()
    # each alone, next to letters and marks, and every pair a canonical composition joins
    samples = tabled + [f"e{c}\u0301{c}\u1161" for c in tabled[::50]] + _composing_pairs()
    normalized = normalize_bytes(Batch(*pack_strings(samples)), spec)
    assert _unpack(normalized, spec) == _expected(samples, spec)


def _composing_pairs() -> list[str]:
    """``a + b`` for every canonical composition ``(a, b)``, and Hangul syllable parts."""
    pairs = ["\u1100\u1161", "\u1100\u1161\u11a8", "\uac00\u11a8"]
    for cp in range(SimpleFolds.SIZE):
        decomposition = unicodedata.decomposition(chr(cp))
        parts = decomposition.split()
        if decomposition and not decomposition.startswith("<") and len(parts) == 2:
            pairs.append("".join(chr(int(part, 16)) for part in parts))
    return pairs


def test_statistics_count_characters_and_spot_ascii() -> None:
    texts = ["abc", "é漢😀", "", "x\ud800"]
    stats = text_statistics(Batch(*pack_strings(texts)))
    assert stats.chars.tolist() == [len(t) for t in texts]
    assert stats.is_ascii.tolist() == [True, False, True, False]


def test_code_point_classes_equal_the_reference_for_every_code_point() -> None:
    """Whitespace, punctuation (P* and ASCII symbols) and unspaced scripts, as documented."""
    classes = codepoint_classes().tolist()
    differ = [hex(cp) for cp in range(0x110000) if classes[cp] != reference.char_class(chr(cp))]
    assert differ == []
    assert [classes[ord(c)] for c in " ,漢a"] == [
        reference.SPACE,
        reference.PUNCT,
        reference.ALONE,
        reference.WORD,
    ]
