"""Rabin fingerprints against plain polynomial arithmetic over GF(2)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup import Shingler, ShingleSpec
from neardup.errors import ParameterError
from neardup.hashing import DEFAULT_POLYNOMIAL, RabinFingerprinter, is_irreducible
from neardup.hashing.rabin import parse_polynomial, poly_mod, random_irreducible

P = int(DEFAULT_POLYNOMIAL, 16)


def _reference(data: bytes) -> int:
    return poly_mod(int.from_bytes(data, "big"), P)


def _divides(d: int, p: int) -> bool:
    return poly_mod(p, d) == 0


@pytest.mark.parametrize("degree", range(1, 11))
def test_irreducibility_test_agrees_with_trial_division(degree: int) -> None:
    divisors = [d for n in range(1, degree // 2 + 1) for d in range(1 << n, 2 << n)]
    for low in range(1 << degree):
        p = (1 << degree) | low
        by_division = not any(_divides(d, p) for d in divisors)
        assert is_irreducible(p) == by_division, bin(p)


def test_counts_of_irreducible_polynomials_match_gauss_formula() -> None:
    # Degree 12: (1/12) sum_{d | 12} mu(d) 2^(12/d) = (4096 - 64 - 16 + 4) / 12 = 335.
    assert sum(is_irreducible((1 << 12) | low) for low in range(1 << 12)) == 335


def test_default_polynomial_is_the_seeded_draw_and_irreducible() -> None:
    assert random_irreducible(0) == DEFAULT_POLYNOMIAL
    assert is_irreducible(P)
    assert P.bit_length() == 65
    assert random_irreducible(1) != DEFAULT_POLYNOMIAL


@given(st.lists(st.binary(max_size=40), min_size=1, max_size=8))
def test_fingerprints_are_residues_mod_p(strings: list[bytes]) -> None:
    got = RabinFingerprinter().fingerprints(strings)
    assert got.tolist() == [_reference(s) for s in strings]


@given(st.binary(max_size=30), st.binary(max_size=30))
def test_extension_property(a: bytes, b: bytes) -> None:
    rabin = RabinFingerprinter()
    f_a = int(rabin.fingerprints([a])[0])
    assert rabin.fingerprints([a + b])[0] == rabin.fingerprints([f_a.to_bytes(8, "big") + b])[0]


@given(st.binary(max_size=60), st.integers(1, 12))
def test_sliding_windows_equal_direct_fingerprints(data: bytes, width: int) -> None:
    got = RabinFingerprinter().window_fingerprints(data, width)
    windows = [data[i : i + width] for i in range(len(data) - width + 1)]
    assert got.tolist() == [_reference(w) for w in windows]


@given(st.lists(st.sampled_from(["a", "rose", "is", "été", "東", "x1"]), max_size=12),
       st.integers(1, 4))  # fmt: skip
def test_word_shingles_are_fingerprints_of_token_fingerprints(words: list[str], k: int) -> None:
    sets = Shingler(ShingleSpec(k=k, fingerprint="rabin")).shingle_sets([" ".join(words)])
    tokens = [_reference(w.encode()) for w in words]
    expected = {
        _reference(b"".join(t.to_bytes(8, "big") for t in tokens[i : i + k]))
        for i in range(len(tokens) - k + 1)
    }
    assert sets.set_of(0).tolist() == sorted(expected)


def test_char_shingles_fingerprint_each_code_point() -> None:
    sets = Shingler(ShingleSpec(unit="char", k=2, fingerprint="rabin")).shingle_sets(["aé  b"])
    tokens = [_reference(c.encode()) for c in "aé b"]
    expected = {
        _reference(tokens[i].to_bytes(8, "big") + tokens[i + 1].to_bytes(8, "big"))
        for i in range(3)
    }
    assert sets.set_of(0).tolist() == sorted(expected)


def test_spec_records_the_polynomial_and_refuses_bad_ones() -> None:
    assert ShingleSpec(fingerprint="rabin").polynomial == DEFAULT_POLYNOMIAL
    assert ShingleSpec(fingerprint="rabin").to_dict()["polynomial"] == DEFAULT_POLYNOMIAL
    with pytest.raises(ParameterError, match="only used with fingerprint='rabin'"):
        ShingleSpec(polynomial=DEFAULT_POLYNOMIAL)
    with pytest.raises(ParameterError, match="17 digits"):
        ShingleSpec(fingerprint="rabin", polynomial="0x1f")
    reducible = next(
        hex((1 << 64) | low) for low in itertools.count(1, 2) if not is_irreducible((1 << 64) | low)
    )
    with pytest.raises(ParameterError, match="not irreducible"):
        Shingler(ShingleSpec(fingerprint="rabin", polynomial=reducible))
    with pytest.raises(ParameterError, match="degree 64"):
        parse_polynomial("0x3")


def test_fingerprints_differ_between_polynomials() -> None:
    other = RabinFingerprinter(random_irreducible(5))
    data = [b"the same bytes", b"other bytes"]
    assert not np.array_equal(other.fingerprints(data), RabinFingerprinter().fingerprints(data))
