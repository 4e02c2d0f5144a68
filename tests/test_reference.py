"""The references themselves: independent of neardup, and right on worked examples."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests import reference
from tests.reference_allpairs import all_pairs_above, brute_force_pairs

HERE = Path(__file__).parent


@pytest.mark.parametrize("module", ["reference.py", "reference_allpairs.py"])
def test_references_import_nothing_from_neardup(module: str) -> None:
    tree = ast.parse((HERE / module).read_text(encoding="utf-8"))
    imported = [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported += [alias.name for alias in node.names]
    assert imported
    assert not [name for name in imported if name.split(".")[0] in ("neardup", "tests")]


def test_fnv1a_matches_the_published_test_vectors() -> None:
    # From the FNV authors' test suite (64-bit FNV-1a).
    assert reference.fnv1a(b"") == 0xCBF29CE484222325
    assert reference.fnv1a(b"a") == 0xAF63DC4C8601EC8C
    assert reference.fnv1a(b"foobar") == 0x85944171F73967E8


@given(st.integers(0, 2**64 - 1))
def test_fmix64_is_a_bijection(x: int) -> None:
    # Undo each step: xor-shifts by 33 undo themselves (33 > 64 / 2); odd multipliers have
    # inverses modulo 2^64.
    y = reference.fmix64(x)
    for multiplier in (0xC4CEB9FE1A85EC53, 0xFF51AFD7ED558CCD):
        y ^= y >> 33
        y = (y * pow(multiplier, -1, 2**64)) & reference.MASK
    y ^= y >> 33
    assert y == x


@given(st.integers(0, 2**64 - 1), st.integers(1, 63))
def test_rotl64_moves_every_bit(x: int, bits: int) -> None:
    rotated = reference.rotl64(x, bits)
    assert [rotated >> ((i + bits) % 64) & 1 for i in range(64)] == [x >> i & 1 for i in range(64)]


def test_tokens_of_a_worked_example() -> None:
    class Word:
        unit, k = "word", 1

    class Char:
        unit, k = "char", 1

    class Strip:
        nfkc, casefold, strip_punctuation = True, True, True

    text = "  Ｆｕｌｌ-width ＡＢＣ, Straße!\t東京 tower "
    assert reference.tokens(text, Word) == [
        "full-width", "abc,", "strasse!", "東", "京", "tower"
    ]  # fmt: skip
    assert reference.tokens(text, Word, Strip) == [
        "full", "width", "abc", "strasse", "東", "京", "tower"
    ]  # fmt: skip
    assert "".join(reference.tokens(text, Char)) == "full-width abc, strasse! 東京 tower"


def test_candidate_pairs_cap_a_bucket_as_documented() -> None:
    members = list(range(5))
    assert reference.bucket_pairs(members, None) == {
        (a, b) for a in members for b in members if a < b
    }
    # Cap 3: all pairs of a bucket of 3, and each later member with the 2 before it.
    capped = {(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (2, 4), (3, 4)}
    assert reference.bucket_pairs(members, 3) == capped
    assert reference.bucket_pairs(members[:3], 3) == {(0, 1), (0, 2), (1, 2)}


@given(st.lists(st.lists(st.integers(0, 2**64 - 1), min_size=2, max_size=2), max_size=6))
def test_hamming_counts_the_bits_that_differ(rows: list[list[int]]) -> None:
    matrix = np.array(rows, dtype=np.uint64).reshape(-1, 2)
    expected = [
        [sum((x ^ y).bit_count() for x, y in zip(a, b, strict=True)) for b in rows] for a in rows
    ]
    assert reference.hamming(matrix[:, None, :], matrix[None, :, :]).tolist() == expected


@given(
    sets=st.lists(st.sets(st.integers(0, 12), max_size=8), max_size=12),
    threshold=st.sampled_from([0.1, 0.3, 0.5, 2 / 3, 0.8, 1.0]),
)
def test_the_inverted_index_finds_what_brute_force_finds(
    sets: list[set[int]], threshold: float
) -> None:
    assert all_pairs_above(sets, threshold) == pytest.approx(brute_force_pairs(sets, threshold))


def test_brute_force_pairs_of_a_worked_example() -> None:
    sets = [{1, 2, 3, 4}, {1, 2, 3, 5}, {1, 2, 3, 4, 5}, set(), set()]
    # Shared over all: 3/5, 4/5, 4/5; empty sets are never paired, not even with each other.
    assert brute_force_pairs(sets, 0.6) == {(0, 1): 0.6, (0, 2): 0.8, (1, 2): 0.8}
    assert brute_force_pairs(sets, 0.7) == {(0, 2): 0.8, (1, 2): 0.8}
    assert all_pairs_above(sets, 0.7) == {(0, 2): 0.8, (1, 2): 0.8}
