"""MinHash and OPH sketchers: equal to their references, deterministic, self-describing."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup import (
    IncompatibleError,
    MinHasher,
    NormalizeSpec,
    OPHSketcher,
    ParameterError,
    Shingler,
    ShingleSpec,
    Signatures,
    SketchSpec,
    make_sketcher,
    minhash_sets,
)
from neardup.sketch import EMPTY_SLOT, SKETCHERS
from neardup.text.shingle import as_batch
from tests import reference
from tests.strategies import texts, words_texts

SHINGLE = ShingleSpec(unit="word", k=2)


@given(batch=st.lists(texts | words_texts, min_size=1, max_size=5))
def test_fused_minhash_kernel_equals_reference(batch: list[str]) -> None:
    sketcher = MinHasher(SketchSpec(kind="minhash", num_perm=16, seed=3, shingle=SHINGLE))
    sigs = sketcher.sketch(batch)
    unfused = minhash_sets(Shingler(SHINGLE).shingle_sets(batch), sketcher.perm_a, sketcher.perm_b)
    assert np.array_equal(sigs.values, unfused)
    for doc, text in enumerate(batch):
        hashes = reference.shingle_fingerprints(text, SHINGLE)
        expected = reference.minhash_signature(
            hashes, sketcher.perm_a.tolist(), sketcher.perm_b.tolist()
        )
        assert sigs.values[doc].tolist() == expected
        assert sigs.num_shingles[doc] == len(hashes)


@given(
    batch=st.lists(texts | words_texts, min_size=1, max_size=5),
    bins=st.sampled_from([1, 7, 32, 128, 256, 300]),  # rank table up to 256 bins, then probes
)
def test_oph_kernel_equals_reference(batch: list[str], bins: int) -> None:
    sketcher = OPHSketcher(SketchSpec(kind="oph", num_perm=bins, seed=5, shingle=SHINGLE))
    sigs = sketcher.sketch(batch)
    for doc, text in enumerate(batch):
        hashes = reference.shingle_fingerprints(text, SHINGLE)
        expected = reference.oph_signature(
            hashes, sketcher.key.tolist(), int(sketcher.densify_key), bins
        )
        assert sigs.values[doc].tolist() == expected
    # Rows made from the shingle sets (as verification makes them) are the same rows.
    sets = Shingler(SHINGLE).shingle_sets(batch)
    first, second = np.triu_indices(len(batch))
    equal = (sigs.values[first] == sigs.values[second]).sum(axis=1) / bins
    assert sketcher.agreement_of_sets(sets, first, second).tolist() == equal.tolist()
    mixed = np.random.default_rng(0).permutation(len(first))  # a first coming back after others
    assert sketcher.agreement_of_sets(sets, first[mixed], second[mixed]).tolist() == (
        equal[mixed].tolist()
    )
    # Seed 000's estimate from the bins before densification.
    key = sketcher.key.tolist()
    rows = [
        reference.oph_bins(reference.shingle_fingerprints(t, SHINGLE), key, bins) for t in batch
    ]
    seed_000 = [
        reference.oph_estimate_without_densification(rows[a], rows[b])
        for a, b in zip(first.tolist(), second.tolist(), strict=True)
    ]
    got = sketcher.estimate_without_densification(sets, first, second)
    np.testing.assert_array_equal(got, np.array(seed_000))


@pytest.mark.parametrize(
    "shingle", [ShingleSpec(unit="word", k=5), ShingleSpec(unit="word", k=1), ShingleSpec(k=4)]
)
def test_sets_kept_while_sketching_are_the_shinglers_sets(
    real_texts: list[str], shingle: ShingleSpec
) -> None:
    sketcher = OPHSketcher(SketchSpec(kind="oph", shingle=shingle))
    batch = as_batch(real_texts, sketcher.spec.normalize)
    keep = np.arange(len(real_texts)) % 3 != 0

    signatures, kept = sketcher.sketch_keeping_sets(batch, keep)

    assert signatures.values.tobytes() == sketcher.sketch(batch).values.tobytes()
    whole = Shingler(shingle, sketcher.spec.normalize).shingle_sets(batch)
    for doc in range(len(real_texts)):
        expected = whole.set_of(doc).tolist() if keep[doc] else []
        assert kept.set_of(doc).tolist() == expected


@pytest.mark.parametrize("kind", sorted(SKETCHERS))
def test_signatures_do_not_depend_on_the_number_of_threads(kind: str, licenses: list[dict]) -> None:
    texts_ = [str(r["text"]) for r in licenses[:300]]
    sketcher = make_sketcher(SketchSpec(kind=kind))  # type: ignore[arg-type]
    default = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        single = sketcher.sketch(texts_)
    finally:
        numba.set_num_threads(default)
    multi = make_sketcher(SketchSpec(kind=kind)).sketch(texts_)  # type: ignore[arg-type]
    assert single.values.tobytes() == multi.values.tobytes()
    assert single.fingerprints.tobytes() == multi.fingerprints.tobytes()


@pytest.mark.parametrize("kind", ["minhash", "oph", "minhash-lead", "supershingle"])
def test_short_documents_are_flagged_and_keep_empty_slots(kind: str) -> None:
    sigs = make_sketcher(SketchSpec(kind=kind, num_perm=8)).sketch(  # type: ignore[arg-type]
        ["too short", "", "one two three four five"]
    )
    assert sigs.is_short.tolist() == [True, True, False]
    assert (sigs.values[:2] == EMPTY_SLOT).all()
    assert (sigs.values[2] != EMPTY_SLOT).all()


def test_identical_normalised_texts_share_the_exact_fingerprint() -> None:
    sigs = OPHSketcher().sketch(["Hello   World", "hello world", "hello, world"])
    fp = [tuple(row) for row in sigs.fingerprints.tolist()]
    assert fp[0] == fp[1] != fp[2]


@pytest.mark.parametrize(
    ("other", "field"),
    [
        (SketchSpec(seed=43), "sketch.seed (42 != 43)"),
        (SketchSpec(num_perm=64), "sketch.num_perm (128 != 64)"),
        (
            SketchSpec(shingle=ShingleSpec(unit="char", k=5)),
            "sketch.shingle.unit ('word' != 'char')",
        ),
        (
            SketchSpec(shingle=ShingleSpec(fingerprint="rabin")),
            "sketch.shingle.fingerprint ('nd64' != 'rabin')",
        ),
        (
            SketchSpec(normalize=NormalizeSpec(tokenizer="jieba")),
            "sketch.normalize.tokenizer (None != 'jieba')",
        ),
    ],
)
def test_incompatible_signatures_refuse_to_mix(other: SketchSpec, field: str) -> None:
    a = OPHSketcher().sketch(["a b c d e f g"])
    b = OPHSketcher(other).sketch(["a b c d e f g"])
    with pytest.raises(IncompatibleError, match=field.replace("(", r"\(").replace(")", r"\)")):
        a.check_compatible(b)
    with pytest.raises(IncompatibleError):
        Signatures.concat([a, b])
    assert Signatures.concat([a, a]).num_docs == 2


def test_a_sketcher_takes_its_kind_from_its_class() -> None:
    sketcher = MinHasher(SketchSpec(num_perm=64, seed=7))  # the kind left at its default
    assert (sketcher.spec.kind, sketcher.spec.num_perm, sketcher.spec.seed) == ("minhash", 64, 7)
    with pytest.raises(ParameterError, match=r"MinHasher sketches kind 'minhash'; got SketchSpec"):
        MinHasher(SketchSpec(kind="bbit"))


def test_minhash_sets_validates_its_inputs() -> None:
    sets = Shingler().shingle_sets(["one two three four five six"])
    one = np.ones(2, dtype=np.uint64)
    with pytest.raises(ParameterError, match="modulus"):
        minhash_sets(sets, one, one, modulus=2**40)
    with pytest.raises(ParameterError, match="below 2\\^32"):
        minhash_sets(sets, one, one, modulus=5)
    with pytest.raises(ParameterError, match="equal length"):
        minhash_sets(sets, one, np.ones(3, dtype=np.uint64))
