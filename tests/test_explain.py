"""Shared passages against plain-Python greedy string tiling, and at the right original offsets."""

from __future__ import annotations

import string
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup.errors import ParameterError
from neardup.explain import (
    ELISION,
    highlight,
    normalized_with_origins,
    shared_passages,
    shingle_spans,
)
from neardup.params import NormalizeSpec, ShingleSpec, SketchSpec
from neardup.text.lexicon import stopword_list
from neardup.text.normalize import normalize
from neardup.text.shingle import Shingler
from tests import reference
from tests.conftest import read_rfcs

Token = tuple[str, int, int]
STOP_WORDS = frozenset(stopword_list("english"))


def ascii_tokens(text: str, unit: str, strip: bool) -> list[Token]:
    """(token, start, end) of an ASCII text: words split at whitespace (and punctuation when
    stripped), lower-cased; or characters, each run of separators between two a space."""
    assert text.isascii()

    def separates(ch: str) -> bool:
        return ch.isspace() or (strip and ch in string.punctuation)

    out: list[Token] = []
    run_start: int | None = None
    word_start: int | None = None
    for i, ch in enumerate([*text, " "]):
        if unit == "char":
            if i == len(text):
                break
            if separates(ch):
                run_start = i if out and run_start is None else run_start
            else:
                if run_start is not None:
                    out.append((" ", run_start, i))
                    run_start = None
                out.append((ch.lower(), i, i + 1))
        elif separates(ch):
            if word_start is not None:
                out.append((text[word_start:i].lower(), word_start, i))
                word_start = None
        elif word_start is None:
            word_start = i
    return out


def starts_of_shingles(tokens: list[Token], k: int, unit: str) -> list[int]:
    """The tokens shingles start at: every one, or the stop words for stop-word shingles."""
    starts = range(len(tokens) - k + 1)
    return [i for i in starts if unit != "stopword" or tokens[i][0] in STOP_WORDS]


def tiling(a: str, b: str, unit: str, k: int, strip: bool) -> list[tuple[int, ...]]:
    """Greedy string tiling by brute force: take the longest run of free equal shingles (ties:
    smaller i, then smaller j), mark it, repeat; passages as (a_start, a_end, b_start, b_end,
    num_shingles), sorted."""
    word_unit = "char" if unit == "char" else "word"
    ta, tb = ascii_tokens(a, word_unit, strip), ascii_tokens(b, word_unit, strip)
    fa, fb = starts_of_shingles(ta, k, unit), starts_of_shingles(tb, k, unit)
    sa = [tuple(t[0] for t in ta[i : i + k]) for i in fa]
    sb = [tuple(t[0] for t in tb[j : j + k]) for j in fb]
    used_a, used_b = [False] * len(sa), [False] * len(sb)
    out = []
    while True:
        best: tuple[int, int, int] | None = None
        for i in range(len(sa)):
            for j in range(len(sb)):
                n = 0
                while (
                    i + n < len(sa)
                    and j + n < len(sb)
                    and not used_a[i + n]
                    and not used_b[j + n]
                    and sa[i + n] == sb[j + n]
                ):
                    n += 1
                if n and (best is None or (n, -i, -j) > (best[0], -best[1], -best[2])):
                    best = (n, i, j)
        if best is None:
            return sorted(out)
        n, i, j = best
        used_a[i : i + n] = [True] * n
        used_b[j : j + n] = [True] * n
        last_a, last_b = fa[i + n - 1] + k - 1, fb[j + n - 1] + k - 1
        out.append((ta[fa[i]][1], ta[last_a][2], tb[fb[j]][1], tb[last_b][2], n))


def as_tuples(a: str, b: str, spec: SketchSpec) -> list[tuple[int, ...]]:
    return [
        (p.a_start, p.a_end, p.b_start, p.b_end, p.num_shingles)
        for p in shared_passages(a, b, spec)
    ]


SMALL_TEXT = st.text(alphabet="abAB .,\n", max_size=40)


@given(a=SMALL_TEXT, b=SMALL_TEXT, unit=st.sampled_from(["word", "char"]), k=st.integers(1, 3))
@pytest.mark.parametrize("strip", [False, True])
def test_passages_are_the_greedy_tiling_of_diagonal_runs(
    a: str, b: str, unit: str, k: int, strip: bool
) -> None:
    spec = SketchSpec(
        shingle=ShingleSpec(unit=unit, k=k), normalize=NormalizeSpec(strip_punctuation=strip)
    )  # type: ignore[arg-type]
    assert as_tuples(a, b, spec) == tiling(a, b, unit, k, strip)


WORDS = st.lists(st.sampled_from(["the", "The", "a", "of", "cat", "dog", "it."]), max_size=25)


@given(a=WORDS, b=WORDS, k=st.integers(1, 3))
def test_stop_word_shingles_are_tiled_over_the_kept_shingles(
    a: list[str], b: list[str], k: int
) -> None:
    text_a, text_b = " ".join(a), "\n ".join(b)
    spec = SketchSpec(shingle=ShingleSpec(unit="stopword", k=k))
    assert as_tuples(text_a, text_b, spec) == tiling(text_a, text_b, "stopword", k, False)


def _fingerprints(tokens: list[str], k: int, unit: str) -> set[int]:
    """neardup's nd64 fingerprints of the k-shingles of ``tokens`` (tests/reference.py)."""
    hashes = [reference.token_hash(t, unit) for t in tokens]
    out = set()
    for i in range(len(hashes) - k + 1):
        acc = 0
        for h in hashes[i : i + k]:
            acc = (acc * reference.POLY_BASE + h) & reference.MASK
        out.add(reference.fmix64(acc))
    return out


def assert_passages_cover_the_shared_shingles(a: str, b: str, spec: SketchSpec) -> None:
    """The shingles inside the passages, in each text, are the set ``compare`` counts shared."""
    unit, k = spec.shingle.unit, spec.shingle.k
    sets = Shingler(spec.shingle, spec.normalize).shingle_sets([a, b])
    shared = set(np.intersect1d(sets.set_of(0), sets.set_of(1)).tolist())
    passages = shared_passages(a, b, spec)
    assert shared
    for text, spans in (
        (a, [(p.a_start, p.a_end) for p in passages]),
        (b, [(p.b_start, p.b_end) for p in passages]),
    ):
        tokens = ascii_tokens(text, unit, spec.normalize.strip_punctuation)
        covered: set[int] = set()
        for start, end in spans:
            inside = [t for t, s, e in tokens if start <= s and e <= end]
            assert len(inside) >= k
            covered |= _fingerprints(inside, k, unit)
        assert covered == shared


@pytest.mark.parametrize("shingle", ["word:5", "char:9", "word:2"])
def test_passages_of_two_licences_cover_exactly_their_shared_shingles(
    licenses: list[dict[str, object]], shingle: str
) -> None:
    texts = {str(r["id"]): str(r["text"]) for r in licenses}
    spec = SketchSpec(shingle=ShingleSpec.parse(shingle))
    for a, b in (("bsd-new", "bsd-simplified"), ("lgpl-2.1", "lgpl-3.0")):
        assert_passages_cover_the_shared_shingles(texts[a], texts[b], spec)


@pytest.mark.parametrize("shingle", ["word:5", pytest.param("char:9", marks=pytest.mark.slow)])
def test_passages_of_two_rfc_revisions_cover_exactly_their_shared_shingles(shingle: str) -> None:
    texts = read_rfcs({1050, 1057})  # RFC 1057 (RPC, version 2) obsoletes RFC 1050
    spec = SketchSpec(shingle=ShingleSpec.parse(shingle))
    assert_passages_cover_the_shared_shingles(texts[1050], texts[1057], spec)


UNICODE = st.text(
    # sharp s, fi ligature, fullwidth A and b, e + combining acute, é, combining cedilla,
    # Kelvin sign, Hangul jamo (and compatibility jamo) and syllable, a Han ideograph,
    # ideographic space, soft hyphen, Greek sigmas, kana with a (half-width) voicing mark,
    # marks that reorder, an Oriya vowel sign that composes with the starter before it
    alphabet=st.sampled_from(
        list("ab .\u00dfss\ufb01fi\uff21\uff42e\u0301\u00e9\u0327K\u212a")
        + list("\u1100\u1161\u11a8\uac00\u3131\u3161\u4e00\u3000\u00ad\u03a3\u03c2")
        + list("\u304b\u3099\uff76\uff9e\u0323\u0302\u0b47\u0b3e")
    ),
    max_size=30,
)


@given(text=UNICODE, strip=st.booleans(), nfkc=st.booleans(), casefold=st.booleans())
def test_each_normalised_character_comes_from_its_span(
    text: str, strip: bool, nfkc: bool, casefold: bool
) -> None:
    spec = NormalizeSpec(nfkc=nfkc, casefold=casefold, strip_punctuation=strip)
    normalized, starts, ends = normalized_with_origins(text, spec)
    assert normalized == normalize(text, spec)
    assert (starts < ends).all()
    assert (np.diff(starts) >= 0).all()
    # the characters mapped to one span are that span, normalised alone
    for start, end in sorted(set(zip(starts.tolist(), ends.tolist(), strict=True))):
        mine = "".join(c for c, s, e in zip(normalized, starts, ends, strict=True) if s == start)
        assert mine == normalize(text[start:end], spec)
        assert (ends[starts == start] == end).all()


def test_a_mark_normalised_with_its_letter_widens_no_passage_beyond_that_letter() -> None:
    # Japanese has no ASCII to cut at; one kana with a combining voicing mark must not make
    # the whole text one span.
    a = "日本語の文章です。まったく別の話題になりますか\u3099ここまで"
    b = "日本語の文章です。全然違う内容"
    for unit in ("char", "word"):
        spec = SketchSpec(shingle=ShingleSpec(unit=unit, k=3))  # type: ignore[arg-type]
        [p] = shared_passages(a, b, spec)
        assert a[p.a_start : p.a_end] == b[p.b_start : p.b_end] == "日本語の文章です。"
    text = "ｶﾞか\u3099e\u0323\u0302\u1100\u1161\u11a8x"
    normalized, starts, ends = normalized_with_origins(text, NormalizeSpec())
    assert normalized == "ガがệ각x"
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == [
        (0, 2), (2, 4), (4, 7), (7, 10), (10, 11)
    ]  # fmt: skip


def longest_common_run(x: list[str], y: list[str]) -> int:
    """The length of the longest run of tokens ``x`` and ``y`` both hold."""
    best = 0
    for i in range(len(x)):
        for j in range(len(y)):
            n = 0
            while i + n < len(x) and j + n < len(y) and x[i + n] == y[j + n]:
                n += 1
            best = max(best, n)
    return best


@given(a=UNICODE, b=UNICODE, unit=st.sampled_from(["word", "char"]), k=st.integers(1, 2))
def test_passage_texts_hold_the_runs_tokens_when_normalisation_changes_lengths(
    a: str, b: str, unit: str, k: int
) -> None:
    shingle = ShingleSpec(unit=unit, k=k)  # type: ignore[arg-type]
    for p in shared_passages(a, b, SketchSpec(shingle=shingle)):
        tokens_a = reference.tokens(a[p.a_start : p.a_end], shingle)
        tokens_b = reference.tokens(b[p.b_start : p.b_end], shingle)
        # characters normalised together map as one, so a passage may hold a little more;
        # alone, a char passage's text loses the separator tokens at its ends
        edges = 2 if unit == "char" else 0
        assert longest_common_run(tokens_a, tokens_b) >= p.num_shingles + k - 1 - edges


def test_offsets_are_in_the_original_text_when_normalisation_changes_lengths() -> None:
    a = "Die Straße ﬁnally ＡＢＣ opens today for everyone"
    b = "die STRASSE finally abc opens today"
    (passage,) = shared_passages(a, b, SketchSpec(shingle=ShingleSpec(k=3)))
    assert a[passage.a_start : passage.a_end] == "Die Straße ﬁnally ＡＢＣ opens today"
    assert b[passage.b_start : passage.b_end] == b
    decomposed = unicodedata.normalize("NFD", "Un café noir, s'il vous plaît")
    (passage,) = shared_passages(
        decomposed, "UN CAFÉ NOIR, s'il", SketchSpec(shingle=ShingleSpec(k=3))
    )
    assert decomposed[passage.a_start : passage.a_end] == decomposed[: decomposed.index(" vous")]


def test_char_shingles_start_and_end_at_characters_as_written() -> None:
    spec = SketchSpec(shingle=ShingleSpec(unit="char", k=4))
    (passage,) = shared_passages("xx Hello\n\n  world", "hello worlds", spec)
    assert passage.num_shingles == 8
    assert "xx Hello\n\n  world"[passage.a_start : passage.a_end] == "Hello\n\n  world"


def test_dropped_stop_words_and_stems_leave_original_offsets() -> None:
    pytest.importorskip("Stemmer")
    spec = SketchSpec(
        shingle=ShingleSpec(k=2), normalize=NormalizeSpec(stopwords="english", stem="english")
    )
    a = "Ponies were running to the hills yesterday"
    (passage,) = shared_passages(a, "the pony runs up hills", spec)
    assert a[passage.a_start : passage.a_end] == "Ponies were running to the hills"
    assert passage.num_shingles == 2  # poni run, run hill


CL100K = NormalizeSpec(tokenizer="tiktoken:cl100k_base")


def _canonical(text: str) -> str:
    """``text`` as the word kernels read it (its character tokens, tests/reference.py): each run
    of separators one space, none at the ends."""
    return "".join(reference.tokens(text, ShingleSpec(unit="char", k=1), NormalizeSpec()))


def test_each_model_token_spans_its_characters_in_the_original_text(
    licenses: list[dict[str, object]], offline_tiktoken: Path
) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    encoding = tiktoken.get_encoding("cl100k_base")
    text = next(str(r["text"]) for r in licenses if str(r["id"]) == "bsd-new")
    assert text.isascii()  # each token's characters are its bytes, as written
    spec = SketchSpec(shingle=ShingleSpec(k=1), normalize=CL100K)
    keys, starts, ends = shingle_spans(text, spec)
    ids = encoding.encode_ordinary(_canonical(text))
    assert len(ids) == keys.shape[0] > 200
    for token, start, end in zip(ids, starts.tolist(), ends.tolist(), strict=True):
        written = encoding.decode_single_token_bytes(token).decode()
        if written.isspace():  # a space alone (before a number): the separators it stands for
            assert text[start:end].isspace()
        else:  # " the" is the word "The" as written, the space the separator before it
            assert text[start:end].lower() == written.lstrip(" ")
    sets = Shingler(spec.shingle, spec.normalize).shingle_sets([text])
    assert set(keys.tolist()) == set(sets.set_of(0).tolist())  # the keys compare counts


def test_each_segment_spans_its_characters_in_the_original_text() -> None:
    jieba = pytest.importorskip("jieba")
    text = "研究生命的起源。南京市长江大桥，  是长江上第一座双层式铁路、公路两用桥梁 in 1968!"
    spec = SketchSpec(shingle=ShingleSpec(k=1), normalize=NormalizeSpec(tokenizer="jieba"))
    _, starts, ends = shingle_spans(text, spec)
    segments = [s for s in jieba.lcut(_canonical(text)) if not s.isspace()]
    written = [text[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
    assert "，" in written  # a full-width comma as written, NFKC's "," to jieba
    assert [normalize(w, NormalizeSpec()) for w in written] == segments


def test_passages_of_model_tokens_and_of_stemmed_tokens_leave_original_offsets(
    offline_tiktoken: Path,
) -> None:
    a = "The quick brown fox jumps over the lazy dog near the river bank in 2024."
    b = "Yesterday THE QUICK BROWN FOX JUMPS OVER the lazy cat, 2024 times."
    spec = SketchSpec(shingle=ShingleSpec(k=3), normalize=CL100K)
    # "The" opens a, " the" (another token) follows "Yesterday" in b; " " "202" "4" are shared
    found = [(a[p.a_start : p.a_end], b[p.b_start : p.b_end]) for p in shared_passages(a, b, spec)]
    assert found == [
        ("quick brown fox jumps over the lazy", "QUICK BROWN FOX JUMPS OVER the lazy"),
        (" 2024", " 2024"),
    ]
    pytest.importorskip("Stemmer")
    stemmed = NormalizeSpec(tokenizer=CL100K.tokenizer, stopwords="english", stem="english")
    spec = SketchSpec(shingle=ShingleSpec(k=2), normalize=stemmed)
    a = "Ponies were running to the hills yesterday"
    (passage,) = shared_passages(a, "the pony runs up hills", spec)
    assert a[passage.a_start : passage.a_end] == "Ponies were running to the hills"  # whole words


def test_refused_settings_say_what_to_do() -> None:
    spec = SketchSpec(
        shingle=ShingleSpec(unit="char", k=3), normalize=NormalizeSpec(stem="english")
    )
    with pytest.raises(ParameterError, match="word shingles"):
        shared_passages("a", "b", spec)
    with pytest.raises(ParameterError, match="larger k"):
        shared_passages("a " * 20_000, "a " * 20_000, SketchSpec(shingle=ShingleSpec(k=1)))


def test_highlight_marks_merged_spans_and_elides_long_gaps() -> None:
    assert highlight("one two three", [(0, 3), (8, 13)], color=False) == "[[one]] two [[three]]"
    assert highlight("one two three", [(0, 5), (4, 7)], color=False) == "[[one two]] three"
    colored = highlight("one two", [(4, 7)], color=True)
    assert colored.startswith("one \x1b[")
    assert colored.endswith("two\x1b[0m")
    text = "x" * 100 + "shared" + "y" * 100
    out = highlight(text, [(100, 106)], color=False, context=10)
    assert out == "x" * 10 + ELISION + "x" * 10 + "[[shared]]" + "y" * 10 + ELISION + "y" * 10
