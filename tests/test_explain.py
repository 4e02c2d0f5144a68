"""Shared passages: diagonal runs of neardup's own shingles, at the right offsets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup.compare import compare
from neardup.errors import ParameterError
from neardup.explain import highlight, shared_passages
from neardup.params import ShingleSpec, SketchSpec
from neardup.text.shingle import Shingler
from tests import reference

WORDS = st.lists(st.sampled_from(["a", "b", "c", "d", "Ee", "f."]), max_size=30)


def _reference_runs(a: list[str], b: list[str], k: int) -> set[tuple[int, int, int]]:
    """Maximal diagonal runs of equal k-shingles (as word tuples): (i, j, length)."""
    sa = [tuple(w.casefold() for w in a[i : i + k]) for i in range(len(a) - k + 1)]
    sb = [tuple(w.casefold() for w in b[j : j + k]) for j in range(len(b) - k + 1)]
    runs = set()
    for i in range(len(sa)):
        for j in range(len(sb)):
            if sa[i] == sb[j] and (i == 0 or j == 0 or sa[i - 1] != sb[j - 1]):
                length = 0
                while (
                    i + length < len(sa)
                    and j + length < len(sb)
                    and sa[i + length] == sb[j + length]
                ):
                    length += 1
                runs.add((i, j, length))
    return runs


@given(a=WORDS, b=WORDS, k=st.integers(1, 3))
def test_passages_are_diagonal_runs_of_equal_shingles(a: list[str], b: list[str], k: int) -> None:
    text_a, text_b = " ".join(a), "  ".join(b)
    spec = SketchSpec(shingle=ShingleSpec(k=k))
    runs = _reference_runs(a, b, k)
    starts_a = [sum(len(w) + 1 for w in a[:i]) for i in range(len(a))]
    starts_b = [sum(len(w) + 2 for w in b[:j]) for j in range(len(b))]
    passages = shared_passages(text_a, text_b, spec)
    used_a: set[int] = set()
    for p in passages:
        i, j = starts_a.index(p.a_start), starts_b.index(p.b_start)
        # each passage lies on one reference run, and passages never overlap in A
        assert any(
            ri <= i and i - ri == j - rj and i + p.num_shingles <= ri + n for ri, rj, n in runs
        )
        assert text_a[p.a_start : p.a_end].casefold().split() == [
            w.casefold() for w in a[i : i + p.num_shingles + k - 1]
        ]
        covered = set(range(i, i + p.num_shingles))
        assert not covered & used_a
        used_a |= covered
    # without repeats, greedy tiling takes every run whole
    distinct = all(len(set(map(str.casefold, w))) == len(w) for w in (a, b))
    if distinct and runs:
        assert sum(p.num_shingles for p in passages) == sum(n for _, _, n in runs)


def test_passages_of_two_licences_cover_their_shared_shingles(
    licenses: list[dict[str, object]],
) -> None:
    texts = {str(r["id"]): str(r["text"]) for r in licenses}
    a, b = texts["bsd-new"], texts["bsd-simplified"]
    spec = SketchSpec()
    passages = shared_passages(a, b, spec)
    assert passages
    shingler = Shingler(spec.shingle, spec.normalize)
    shared = compare(a, b, spec).jaccard
    assert shared > 0.3
    covered = np.unique(
        np.concatenate([shingler.shingle_sets([a[p.a_start : p.a_end]]).hashes for p in passages])
    )
    in_b = np.intersect1d(covered, shingler.shingle_sets([b]).hashes)
    assert in_b.shape[0] == covered.shape[0]  # every covered shingle is one B has
    both = np.intersect1d(shingler.shingle_sets([a]).hashes, shingler.shingle_sets([b]).hashes)
    assert covered.shape[0] >= 0.95 * both.shape[0]
    for p in passages:
        assert (
            reference.normalize(a[p.a_start : p.a_end]).split()
            == reference.normalize(b[p.b_start : p.b_end]).split()
        )


def test_offsets_are_in_the_original_text_when_normalisation_changes_lengths() -> None:
    a = "Die Straße ﬁnally ＡＢＣ opens today for everyone"
    b = "die STRASSE finally abc opens today"
    (passage,) = shared_passages(a, b, SketchSpec(shingle=ShingleSpec(k=3)))
    assert a[passage.a_start : passage.a_end] == "Die Straße ﬁnally ＡＢＣ opens today"
    assert b[passage.b_start : passage.b_end] == "die STRASSE finally abc opens today"


def test_char_shingles_and_a_refused_unit() -> None:
    spec = SketchSpec(shingle=ShingleSpec(unit="char", k=4))
    (passage,) = shared_passages("xx hello world", "hello worlds", spec)
    assert "xx hello world"[passage.a_start : passage.a_end] == "hello world"
    with pytest.raises(ParameterError, match="word and char"):
        shared_passages("a", "b", SketchSpec(shingle=ShingleSpec(unit="stopword", k=2)))


def test_highlight_marks_spans() -> None:
    assert highlight("one two three", [(0, 3), (8, 13)], color=True) == (
        "\x1b[1;33mone\x1b[0m two \x1b[1;33mthree\x1b[0m"
    )
