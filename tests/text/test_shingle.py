"""Normalisation and shingling: the kernels equal the documented rules, on any text."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup import NormalizeSpec, Shingler, ShingleSpec, normalize
from neardup.text import normalize_batch
from neardup.text import shingle as shingle_module
from tests import reference
from tests.strategies import NORMALIZE_SPECS, SHINGLE_SPECS, texts, words_texts

_ASCII_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")


@pytest.mark.parametrize("shingle", SHINGLE_SPECS, ids=str)
@pytest.mark.parametrize("norm", NORMALIZE_SPECS, ids=repr)
@given(batch=st.lists(texts | words_texts, min_size=1, max_size=6))
def test_shingle_sets_equal_the_reference(
    shingle: ShingleSpec, norm: NormalizeSpec, batch: list[str]
) -> None:
    sets = Shingler(shingle, norm).shingle_sets(batch)
    for doc, text in enumerate(batch):
        expected = sorted(set(reference.shingle_fingerprints(text, shingle, norm)))
        assert sets.set_of(doc).tolist() == expected


@pytest.mark.parametrize(
    ("shingle", "norm"),
    [
        (ShingleSpec(k=5), NormalizeSpec()),
        (ShingleSpec(k=3), NormalizeSpec(strip_punctuation=True)),
        (ShingleSpec(unit="char", k=5), NormalizeSpec(casefold=False)),
    ],
    ids=["word5", "word3-strip", "char5-keepcase"],
)
def test_the_reference_agrees_with_the_library_on_real_text(
    real_texts: list[str], shingle: ShingleSpec, norm: NormalizeSpec
) -> None:
    """Every non-ASCII character of the corpus (and whole texts around it), as the batch job
    reads them: normalised text, tokens and shingle sets."""
    batch = normalize_batch(real_texts, norm)
    shingler = Shingler(shingle, norm)
    sets = shingler.shingle_sets(batch)
    counts = shingler.count_tokens(batch).tolist()
    for doc, text in enumerate(real_texts):
        expected = reference.normalize(text, norm)
        assert normalize(text, norm) == expected
        # The batch keeps ASCII letters as they are: the kernels fold them on the fly.
        got = bytes(batch.data[batch.offsets[doc] : batch.offsets[doc + 1]])
        fold = _ASCII_LOWER if norm.casefold else None
        assert got.translate(fold) == expected.encode("utf-8", "surrogatepass").translate(fold)
        assert counts[doc] == len(reference.tokens(text, shingle, norm))
        fingerprints = reference.shingle_fingerprints(text, shingle, norm)
        assert sets.set_of(doc).tolist() == sorted(set(fingerprints)), doc


@pytest.mark.parametrize("piece_bytes", [1, 50])
@given(batch=st.lists(texts | words_texts, min_size=1, max_size=8))
def test_sets_made_piece_by_piece_are_the_same_sets(piece_bytes: int, batch: list[str]) -> None:
    shingler = Shingler(ShingleSpec(k=2))
    whole, whole_counts = shingler.shingle_counts(batch)
    old = shingle_module.PIECE_BYTES
    shingle_module.PIECE_BYTES = piece_bytes
    try:
        pieces, piece_counts = shingler.shingle_counts(batch)
    finally:
        shingle_module.PIECE_BYTES = old
    assert pieces.offsets.tolist() == whole.offsets.tolist()
    assert pieces.hashes.tolist() == whole.hashes.tolist()
    assert piece_counts.tolist() == whole_counts.tolist()


@pytest.mark.parametrize("unit", ["word", "char"])
@pytest.mark.parametrize("norm", NORMALIZE_SPECS, ids=repr)
@given(text=texts | words_texts)
def test_tokens_never_outnumber_the_bound_their_room_is_sized_by(
    unit: str, norm: NormalizeSpec, text: str
) -> None:
    # Shingle sets get room for (bytes + 1) // 2 words or one character per byte, unchecked
    # inside the kernel: a text with more tokens would write past its room.
    size = len(reference.normalize(text, norm).encode("utf-8", "surrogatepass"))
    tokens = Shingler(ShingleSpec(unit=unit, k=1), norm).count_tokens([text])[0]
    assert tokens <= (size if unit == "char" else (size + 1) // 2)


@given(text=texts)
def test_normalisation_is_idempotent(text: str) -> None:
    spec = NormalizeSpec(strip_punctuation=True)
    once = normalize(text, spec)
    assert normalize(once, spec) == once


@given(text=words_texts)
def test_whitespace_and_case_do_not_change_shingles(text: str) -> None:
    shingler = Shingler(ShingleSpec(k=2))
    messy = "  \t" + text.upper().replace(" ", " \n\u3000 ") + "\r\n"
    sets = shingler.shingle_sets([text, messy])
    assert sets.set_of(0).tolist() == sets.set_of(1).tolist()


def test_cjk_characters_are_words_of_their_own() -> None:
    shingler = Shingler(ShingleSpec(unit="word", k=1))
    assert shingler.count_tokens(["東京都に住む", "ภาษาไทย", "hello world"]).tolist() == [6, 7, 2]
    assert reference.tokens("東京 tower", ShingleSpec(k=1), NormalizeSpec()) == [
        "東",
        "京",
        "tower",
    ]


def test_punctuation_is_kept_or_stripped_as_asked() -> None:
    kept = Shingler(ShingleSpec(k=1))
    stripped = Shingler(ShingleSpec(k=1), NormalizeSpec(strip_punctuation=True))
    text = "Hello, world! (It's fine.)"
    assert kept.count_tokens([text]).tolist() == [4]
    assert stripped.count_tokens([text]).tolist() == [5]  # hello world it s fine


def test_nfkc_and_casefold_unify_compatibility_forms() -> None:
    sets = Shingler(ShingleSpec(k=2)).shingle_sets(["ﬁne ＳＴＲＡＳＳＥ", "fine straße"])
    assert sets.set_of(0).tolist() == sets.set_of(1).tolist()


def test_documents_shorter_than_one_shingle_have_no_shingles() -> None:
    sets = Shingler(ShingleSpec(k=5)).shingle_sets(["one two three four", "", "a b c d e"])
    assert sets.sizes().tolist() == [0, 0, 1]


def test_repeated_shingles_count_once() -> None:
    sets = Shingler(ShingleSpec(k=2)).shingle_sets(["a rose is a rose is a rose"])
    assert len(sets.set_of(0)) == 3
    assert np.all(np.diff(sets.set_of(0).astype(object)) > 0)
