"""The edit-distance join against brute force, and its kernels against plain Python.

Truth is the textbook dynamic programme (MMDS §3.5.5) over every pair: in plain Python for
hypothesis strings, and vectorised over many strings at once with NumPy for real names and
titles (with seeded typos added, so that there are pairs at every distance).
"""

from __future__ import annotations

import csv
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup._kernels.edit import banded_levenshtein
from neardup._types import Batch
from neardup.errors import InputError, ParameterError
from neardup.join.edit import code_points, edit_join, qgram_items
from neardup.join.result import JoinResult
from neardup.params import JoinSpec
from neardup.text.spans import pack_strings
from tests.conftest import shared


def levenshtein(a: str, b: str) -> int:
    """The edit distance of two strings, by the full dynamic programme over code points."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def distances_to_all(x: str, ys: list[str]) -> np.ndarray:
    """``levenshtein(x, y)`` for every ``y``: the same programme, one NumPy column per ``y``."""
    lengths = np.array([len(y) for y in ys], dtype=np.int64)
    width = int(lengths.max(initial=0))
    table = np.full((len(ys), width), -1, dtype=np.int64)
    for row, y in enumerate(ys):
        table[row, : len(y)] = [ord(c) for c in y]
    previous = np.tile(np.arange(width + 1), (len(ys), 1))
    for i, ca in enumerate(x, 1):
        current = np.empty_like(previous)
        current[:, 0] = i
        for j in range(1, width + 1):
            substitute = previous[:, j - 1] + (table[:, j - 1] != ord(ca))
            current[:, j] = np.minimum(
                np.minimum(previous[:, j] + 1, current[:, j - 1] + 1), substitute
            )
        previous = current
    return previous[np.arange(len(ys)), lengths]


def brute_force(strings: list[str], k: int) -> dict[tuple[int, int], float]:
    return {
        (a, b): float(d)
        for a in range(len(strings))
        for b in range(a + 1, len(strings))
        if (d := levenshtein(strings[a], strings[b])) <= k
    }


def pairs_of(result: JoinResult) -> dict[tuple[int, int], float]:
    return dict(
        zip(
            zip(result.first.tolist(), result.second.tolist(), strict=True),
            result.values.tolist(),
            strict=True,
        )
    )


def edit(spec_k: int, q: int = 2) -> JoinSpec:
    return JoinSpec(metric="edit", threshold=spec_k, qgram=q)


# the kernels ----------------------------------------------------------------------------------

SMALL = "abcé漢𝄞"


@given(
    a=st.text(alphabet=SMALL, max_size=14),
    b=st.text(alphabet=SMALL, max_size=14),
    k=st.integers(0, 6),
)
def test_banded_levenshtein_is_the_full_programme_capped_at_k_plus_one(
    a: str, b: str, k: int
) -> None:
    values, offsets = code_points([a, b])
    scratch = np.empty((2, len(b) + 2), dtype=np.int64)
    got = banded_levenshtein(
        values, offsets[0], offsets[1], values, offsets[1], offsets[2], k, scratch[0], scratch[1]
    )
    assert got == min(levenshtein(a, b), k + 1)


@given(texts=st.lists(st.text(), max_size=8))
def test_code_points_are_pythons(texts: list[str]) -> None:
    values, offsets = code_points(texts)
    assert [values[offsets[d] : offsets[d + 1]].tolist() for d in range(len(texts))] == [
        [ord(c) for c in t] for t in texts
    ]


def test_lone_surrogates_are_one_code_point_each() -> None:
    values, _ = code_points(["a\ud800b"])  # packed with surrogatepass, as every Batch is
    assert values.tolist() == [97, 0xD800, 98]


@given(data=st.binary(max_size=40))
def test_malformed_utf8_decodes_one_code_point_per_lead_byte(data: bytes) -> None:
    batch = Batch(np.frombuffer(data, dtype=np.uint8), np.array([0, len(data)], dtype=np.int64))
    values, offsets = code_points(batch)
    assert offsets[-1] == sum((byte & 0xC0) != 0x80 for byte in data)
    assert np.all((values >= 0) & (values < 1 << 21))


@given(
    a=st.text(alphabet="abé", max_size=12),
    b=st.text(alphabet="abé", max_size=12),
    q=st.integers(1, 4),
)
def test_shared_qgram_items_are_the_shared_qgrams_with_multiplicity(a: str, b: str, q: int) -> None:
    values, offsets = code_points([a, b])
    items, item_offsets, _ = qgram_items(values, offsets, q)
    x = items[item_offsets[0] : item_offsets[1]].tolist()
    y = items[item_offsets[1] : item_offsets[2]].tolist()
    assert x == sorted(set(x))
    assert y == sorted(set(y))
    grams = [Counter(s[i : i + q] for i in range(len(s) - q + 1)) for s in (a, b)]
    assert len(set(x) & set(y)) == sum((grams[0] & grams[1]).values())


# the join against brute force -----------------------------------------------------------------


@given(
    strings=st.lists(st.text(alphabet=SMALL, max_size=10), max_size=16),
    k=st.integers(0, 3),
    q=st.integers(1, 4),
)
def test_edit_join_equals_brute_force_on_unicode_strings(
    strings: list[str], k: int, q: int
) -> None:
    result = edit_join(strings, edit(k, q))
    assert pairs_of(result) == brute_force(strings, k)
    assert result.values.dtype == np.float64


@given(
    strings=st.lists(st.text(alphabet="ab", min_size=4, max_size=14), max_size=16),
    k=st.integers(0, 3),
)
def test_edit_join_equals_brute_force_on_long_ascii_strings(strings: list[str], k: int) -> None:
    # Two letters: many equal q-grams, repeated within a string; lengths past k q + q - 1, so
    # the prefix and count filters do the pruning.
    result = edit_join(strings, edit(k, 2))
    assert pairs_of(result) == brute_force(strings, k)


def test_short_strings_are_verified_against_every_length_neighbour() -> None:
    # k q + q - 1 = 11 with k = 3, q = 3: no string here has a q-gram bound above 0.
    strings = ["", "a", "ab", "ba", "abc", "xyzw", "abcdefgh", "hgfedcba", "abcdefg"]
    result = edit_join(strings, edit(3, 3))
    assert result.info["num_short"] == len(strings)
    assert pairs_of(result) == brute_force(strings, 3)
    assert (0, 4) in pairs_of(result)  # "" and "abc" share no q-gram and are 3 apart


def test_batch_of_a_larger_buffer_is_read_where_its_offsets_point() -> None:
    data, offsets = pack_strings(["zzz", "kitten", "sitten", "zzz"])
    result = edit_join(Batch(data, offsets[1:4]), edit(1))  # "kitten" and "sitten"
    assert pairs_of(result) == {(0, 1): 1.0}


def _with_typos(strings: list[str], count: int, seed: int) -> list[str]:
    """``strings`` plus ``count`` copies of some of them with 0 to 3 random edits each."""
    rng = np.random.default_rng(seed)
    letters = list("abcdefghijklmnopqrstuvwxyz -.éüßø")
    out = list(strings)
    for source in rng.choice(len(strings), count, replace=False).tolist():
        text = list(strings[source])
        for _ in range(int(rng.integers(0, 4))):
            where = int(rng.integers(0, len(text) + 1))
            kind = int(rng.integers(0, 3))
            if kind == 0 or not text:
                text.insert(where, str(rng.choice(letters)))
            elif kind == 1:
                del text[min(where, len(text) - 1)]
            else:
                text[min(where, len(text) - 1)] = str(rng.choice(letters))
        out.append("".join(text))
    return out


def _check_real_strings(strings: list[str]) -> None:
    """edit_join at k = 0..3 equals the NumPy programme over every pair within 3 in length."""
    distances: dict[tuple[int, int], int] = {}
    lengths = np.array([len(s) for s in strings])
    for a, text in enumerate(strings):
        # Pairs further apart in length than 3 are further apart in edits (each edit changes
        # the length by one at most): only the others are measured.
        partners = np.flatnonzero(
            (np.abs(lengths - len(text)) <= 3) & (np.arange(len(strings)) > a)
        )
        for b, d in zip(
            partners.tolist(),
            distances_to_all(text, [strings[b] for b in partners]).tolist(),
            strict=True,
        ):
            distances[(a, b)] = d
    for k in range(4):
        truth = {pair: float(d) for pair, d in distances.items() if d <= k}
        assert len(truth) >= 10 * (k + 1)
        for q in (2, 3):
            assert pairs_of(edit_join(strings, edit(k, q))) == truth


@pytest.mark.slow
def test_edit_join_equals_brute_force_on_licence_names(licenses: list[dict[str, object]]) -> None:
    names = sorted({str(r["meta"]["short_name"]) for r in licenses if isinstance(r["meta"], dict)})  # type: ignore[index]
    chosen = [n for n in names if len(n) <= 40][::5]
    _check_real_strings(_with_typos(chosen, 120, seed=1))


@pytest.mark.slow
def test_edit_join_equals_brute_force_on_rfc_titles() -> None:
    with shared("rfc/rfc_meta.tsv").open(encoding="utf-8") as f:
        titles = [row["title"] for row in csv.DictReader(f, delimiter="\t")]
    chosen = [t for t in titles if 0 < len(t) <= 40][::12]
    _check_real_strings(_with_typos(chosen, 120, seed=2))


# what is refused ------------------------------------------------------------------------------


def test_bad_input_and_parameters_are_refused() -> None:
    with pytest.raises(ParameterError, match="must be 'edit'"):
        edit_join(["a"], JoinSpec(metric="jaccard"))
    with pytest.raises(InputError, match="a Batch or a sequence of str"):
        edit_join("abc", edit(1))
    with pytest.raises(InputError, match="a Batch or a sequence of str"):
        edit_join([b"abc"], edit(1))  # type: ignore[list-item]
    with pytest.raises(InputError, match="uint8"):
        edit_join(Batch(np.zeros(3, np.int64), np.array([0, 3])), edit(1))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="offsets within the 3 bytes"):
        edit_join(Batch(np.zeros(3, np.uint8), np.array([0, 4])), edit(1))


def test_a_threshold_past_every_length_pairs_everything_at_its_true_distance() -> None:
    strings = ["", "a", "ab", "xyz"]
    huge = edit_join(strings, JoinSpec(metric="edit", threshold=4e18, qgram=3))
    within = edit_join(strings, JoinSpec(metric="edit", threshold=3, qgram=3))
    for name in ("first", "second", "values"):
        assert getattr(huge, name).tolist() == getattr(within, name).tolist()
    assert len(huge) == 6
