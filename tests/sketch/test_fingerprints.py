"""The 128-bit exact fingerprint of every sketch kind equals the plain-Python fold of the token
hashes (``reference.document_fingerprint``), on any text and on real text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import NormalizeSpec, ShingleSpec, SketchSpec, make_sketcher
from neardup.sketch import SKETCHERS
from tests import reference
from tests.strategies import NORMALIZE_SPECS, SHINGLE_SPECS, texts, words_texts


def _fingerprints(kind: str, batch: list[str], spec: SketchSpec) -> list[tuple[int, int]]:
    sketcher = make_sketcher(spec.with_kind(kind))
    return [(int(hi), int(lo)) for hi, lo in sketcher.sketch(batch).fingerprints.tolist()]


@pytest.mark.parametrize("kind", sorted(SKETCHERS))
@settings(max_examples=20, deadline=None)
@given(batch=st.lists(texts | words_texts, min_size=1, max_size=5))
def test_every_kind_writes_the_reference_fingerprint(kind: str, batch: list[str]) -> None:
    spec = SketchSpec(num_perm=8, shingle=ShingleSpec(k=2))
    expected = [reference.document_fingerprint(t, spec.shingle, spec.normalize) for t in batch]
    assert _fingerprints(kind, batch, spec) == expected


@pytest.mark.parametrize("shingle", SHINGLE_SPECS, ids=str)
@pytest.mark.parametrize("norm", NORMALIZE_SPECS, ids=repr)
@given(batch=st.lists(texts | words_texts, min_size=1, max_size=5))
def test_fingerprints_follow_the_shingle_and_normalisation_specs(
    shingle: ShingleSpec, norm: NormalizeSpec, batch: list[str]
) -> None:
    spec = SketchSpec(num_perm=8, shingle=shingle, normalize=norm)
    expected = [reference.document_fingerprint(t, shingle, norm) for t in batch]
    assert _fingerprints("oph", batch, spec) == expected


def test_fingerprints_of_real_text_equal_the_reference(real_texts: list[str]) -> None:
    spec = SketchSpec(num_perm=8)
    expected = [reference.document_fingerprint(t, spec.shingle) for t in real_texts]
    assert _fingerprints("oph", real_texts, spec) == expected
    # Distinct token sequences, distinct fingerprints (a 128-bit collision would be news).
    sequences = {tuple(reference.tokens(t, spec.shingle)) for t in real_texts}
    assert len(set(expected)) == len(sequences)


def test_the_fingerprint_is_of_the_normalised_token_sequence() -> None:
    spec = SketchSpec(num_perm=8)
    same = ["Hello   World", "hello world", "\tHELLO\u3000world\n", "ｈｅｌｌｏ ｗｏｒｌｄ"]
    different = ["hello, world", "world hello", "hello world world", "hello", ""]
    got = _fingerprints("oph", same + different, spec)
    assert len(set(got[: len(same)])) == 1
    assert len(set(got)) == 1 + len(different)
    assert got == [reference.document_fingerprint(t, spec.shingle) for t in same + different]
