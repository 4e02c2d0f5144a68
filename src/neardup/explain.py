r"""Why two documents match: their shared passages, mapped back to the texts as written.

A passage is a maximal run of shingles that the two documents share in the same order (a
diagonal run over their two shingle sequences), reported as character offsets of both original
texts. Runs are taken longest first and may not overlap one taken before in either text (greedy
string tiling, as plagiarism detectors align texts); ties go to the earlier position in A, then
in B. ``neardup compare A B --explain``, ``dedup --explain`` (``pairs.jsonl``) and the HTML
report all call :func:`shared_passages`.

The shingles are neardup's own: each text is normalised as the sketches normalise it (NFKC, case
folding, stop words and stems) and cut into tokens by the shingling kernels' rules, so the set
of shingles the passages cover is the set :func:`neardup.compare.compare` counts as shared.
Normalisation may change lengths (``"ﬁ"`` → ``"fi"``, ``"ß"`` → ``"ss"``, ``"e\u0301"`` →
``"é"``); every normalised character keeps the span of original characters it comes from
(:func:`normalized_with_origins`), and a passage runs from the first original character of its
first token to the last of its last token.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace

import click
import numpy as np

from neardup._kernels import passages as kernels
from neardup._kernels import tokens as token_kernels
from neardup._types import Batch, I64Array, U64Array
from neardup.errors import ParameterError
from neardup.params import NormalizeSpec, ShingleSpec, SketchSpec
from neardup.text.lexicon import WordSpans, spaced_words, word_spans
from neardup.text.normalize import lexicon_of, normalize
from neardup.text.shingle import KernelText
from neardup.text.tokenizers import spell, tokenize

__all__ = [
    "ELISION",
    "Passage",
    "highlight",
    "merged_spans",
    "normalized_with_origins",
    "shared_passages",
    "shingle_spans",
    "without_spans",
]

ELISION = " [...] "
"""What stands for the elided middle of a long unshared stretch in :func:`highlight`."""

MAX_EQUAL_PAIRS = 100_000_000
"""Pairs of equal shingle positions two texts may have (a text repeating one shingle thousands
of times in both); past it, finding their runs would take minutes, and it is refused."""

_PRIVATE_USE = np.r_[np.arange(0xE000, 0xF900), np.arange(0xF0000, 0xFFFFE)].astype(np.uint32)


@dataclass(frozen=True, slots=True)
class Passage:
    """A shared passage: ``a[a_start:a_end]`` matches ``b[b_start:b_end]``.

    Offsets are Python string indices into the original texts; ``num_shingles`` counts the
    shared shingles of the run.
    """

    a_start: int
    a_end: int
    b_start: int
    b_end: int
    num_shingles: int


def shared_passages(a: str, b: str, spec: SketchSpec | None = None) -> list[Passage]:
    """The passages ``a`` and ``b`` share, sorted by their place in ``a``.

    Parameters
    ----------
    a, b
        The two texts, as written.
    spec
        The shingling and normalisation (``spec.shingle``, ``spec.normalize``); the default
        is neardup's (word 5-shingles).

    Returns
    -------
    list of Passage
        Greedy string tiling of the diagonal runs of shared shingles: every shingle the two
        texts share lies in a passage of each, and no shingle position is in two passages
        (the texts of two neighbouring passages overlap by up to ``k - 1`` tokens).

    Raises
    ------
    ParameterError
        Character shingles with stop words dropped or words stemmed (characters of a stem
        have no place in the original text); texts so repetitive that they have more than
        :data:`MAX_EQUAL_PAIRS` pairs of equal shingles.

    Notes
    -----
    Cost: O(characters) to normalise and tokenise, O(pairs of equal shingles) to find the runs,
    O(run lengths + runs log runs) to tile them. Wise, "Running Karp-Rabin Matching and Greedy
    String Tiling" (1993), for the tiling.

    Examples
    --------
    >>> text_a = "The quick brown fox jumps over the lazy dog near the river bank."
    >>> text_b = "Yesterday THE QUICK BROWN FOX JUMPS OVER the lazy cat."
    >>> [(text_a[p.a_start:p.a_end], text_b[p.b_start:p.b_end], p.num_shingles)
    ...  for p in shared_passages(text_a, text_b)]
    [('The quick brown fox jumps over the lazy', 'THE QUICK BROWN FOX JUMPS OVER the lazy', 4)]
    """
    spec = spec if spec is not None else SketchSpec()
    k = spec.shingle.k
    seq_a = _ShingleSequence.of(a, spec.shingle, spec.normalize)
    seq_b = _ShingleSequence.of(b, spec.shingle, spec.normalize)
    order_b = np.argsort(seq_b.keys, kind="stable")
    sorted_b = seq_b.keys[order_b]
    lo = np.searchsorted(sorted_b, seq_a.keys, side="left")
    hi = np.searchsorted(sorted_b, seq_a.keys, side="right")
    num_pairs = int((hi - lo).sum())
    if num_pairs > MAX_EQUAL_PAIRS:
        raise ParameterError(
            f"the two texts have {num_pairs:,} pairs of equal {spec.shingle} shingles (more "
            f"than {MAX_EQUAL_PAIRS:,}: a shingle repeated thousands of times in both); "
            "explain longer shingles (a larger k) or texts without such repeats."
        )
    runs = _runs(seq_a.keys, seq_b.keys, order_b, lo, hi)
    room = min(seq_a.keys.shape[0], seq_b.keys.shape[0])
    tile_i, tile_j, tile_len = (np.empty(room, dtype=np.int64) for _ in range(3))
    num = kernels.tile_runs(
        *runs, seq_a.keys.shape[0], seq_b.keys.shape[0], tile_i, tile_j, tile_len
    )
    tile_i, tile_j, tile_len = tile_i[:num], tile_j[:num], tile_len[:num]
    a_start, a_end = seq_a.spans(tile_i, tile_len, k)
    b_start, b_end = seq_b.spans(tile_j, tile_len, k)
    order = np.lexsort((b_start, a_start))
    columns = (a_start[order], a_end[order], b_start[order], b_end[order], tile_len[order])
    return [Passage(*row) for row in zip(*(c.tolist() for c in columns), strict=True)]


def shingle_spans(text: str, spec: SketchSpec | None = None) -> tuple[U64Array, I64Array, I64Array]:
    """Each shingle of ``text`` in order: its fingerprint and the original characters it covers.

    The fingerprints are those :class:`~neardup.text.shingle.Shingler` makes of ``spec``'s
    shingles (the ``nd64`` scheme), so a set of them can be looked up here; shingle ``s``
    covers ``text[starts[s]:ends[s]]``. Returns ``(fingerprints, starts, ends)``.

    Examples
    --------
    >>> text = "A rose, is a ROSE"
    >>> keys, starts, ends = shingle_spans(text, SketchSpec(shingle=ShingleSpec(k=3)))
    >>> [text[a:b] for a, b in zip(starts.tolist(), ends.tolist())]
    ['A rose, is', 'rose, is a', 'is a ROSE']
    """
    spec = spec if spec is not None else SketchSpec()
    sequence = _ShingleSequence.of(text, spec.shingle, spec.normalize)
    last = sequence.firsts + spec.shingle.k - 1
    return sequence.keys, sequence.starts[sequence.firsts], sequence.ends[last]


def merged_spans(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Character spans sorted, overlapping or touching ones joined (shingles share tokens).

    Examples
    --------
    >>> merged_spans([(5, 9), (0, 3), (3, 4), (8, 12)])
    [(0, 4), (5, 12)]
    """
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def without_spans(text: str, spans: Sequence[Sequence[int]]) -> str:
    """``text`` with the character spans ``[start, end, ...]`` (in order, apart) cut out.

    Examples
    --------
    >>> without_spans("keep cut keep cut", [(5, 9), (14, 17, "other")])
    'keep keep '
    """
    parts, at = [], 0
    for start, end, *_ in spans:
        parts.append(text[at:start])
        at = end
    return "".join(parts) + text[at:]


def _runs(
    keys_a: U64Array, keys_b: U64Array, order_b: I64Array, lo: I64Array, hi: I64Array
) -> tuple[I64Array, I64Array, I64Array]:
    """The maximal diagonal runs, sorted by length descending, then ``i``, then ``j``."""
    none = np.empty(0, dtype=np.int64)
    count = kernels.diagonal_runs(keys_a, keys_b, order_b, lo, hi, none, none, none)
    run_i, run_j, run_len = (np.empty(count, dtype=np.int64) for _ in range(3))
    kernels.diagonal_runs(keys_a, keys_b, order_b, lo, hi, run_i, run_j, run_len)
    order = np.lexsort((run_j, run_i, -run_len))
    return run_i[order], run_j[order], run_len[order]


@dataclass(frozen=True, slots=True)
class _ShingleSequence:
    """A text's shingles in order: keys, and where each token lies in the original text.

    ``keys[s]`` is shingle ``s``'s key (equal keys: equal tokens), ``firsts[s]`` the index of
    its first token; token ``t`` covers original characters ``[starts[t], ends[t])``.
    """

    keys: U64Array
    firsts: I64Array
    starts: I64Array
    ends: I64Array

    @classmethod
    def of(cls, text: str, shingle: ShingleSpec, normalize_spec: NormalizeSpec) -> _ShingleSequence:
        if shingle.unit == "char" and normalize_spec.rewrites_words:
            raise ParameterError(
                "shared passages of character shingles need the words as written: drop "
                "--stopwords/--stem (NormalizeSpec.stopwords, .stem) or use word shingles."
            )
        # Token keys are the same in either fingerprint scheme: key the stop words in nd64's.
        text_spec = KernelText.of(
            replace(shingle, fingerprint="nd64", polynomial=None), normalize_spec
        )
        normalized, origin_start, origin_end = normalized_with_origins(text, normalize_spec)
        data = np.frombuffer(normalized.encode("utf-8", "surrogatepass"), dtype=np.uint8)
        batch = Batch(data=data, offsets=np.array([0, data.shape[0]], dtype=np.int64))
        if text_spec.is_char:
            room = data.shape[0]
            starts, ends = np.empty(room, dtype=np.int64), np.empty(room, dtype=np.int64)
            tokens = np.empty(room, dtype=np.uint64)
            num = token_kernels.chars(
                data, 0, room, text_spec.classes, text_spec.strip_punctuation,
                text_spec.fold_ascii, None, tokens, starts, ends,
            )  # fmt: skip
            starts, ends, tokens = starts[:num], ends[:num], tokens[:num]
        elif normalize_spec.tokenizer is not None:
            starts, ends, tokens = _model_tokens(batch, text_spec, normalize_spec)
        else:
            starts, ends, tokens = _word_tokens(batch, text_spec, normalize_spec)
        room = max(tokens.shape[0] - shingle.k + 1, 0)
        keys, firsts = np.empty(room, dtype=np.uint64), np.empty(room, dtype=np.int64)
        num = kernels.shingle_keys(tokens, shingle.k, text_spec.stop_keys, keys, firsts)
        char_of_byte = np.repeat(
            np.arange(len(normalized), dtype=np.int64), _utf8_sizes(normalized)
        )
        return cls(
            keys=keys[:num],
            firsts=firsts[:num],
            starts=origin_start[char_of_byte[starts]],
            ends=origin_end[char_of_byte[ends - 1]],
        )

    def spans(self, first: I64Array, length: I64Array, k: int) -> tuple[I64Array, I64Array]:
        """Original character spans of the runs of ``length`` shingles from shingle ``first``."""
        return self.starts[self.firsts[first]], self.ends[self.firsts[first + length - 1] + k - 1]


def _word_tokens(
    batch: Batch, text_spec: KernelText, normalize_spec: NormalizeSpec
) -> tuple[I64Array, I64Array, U64Array]:
    """Byte spans of the words of a normalised text, and their ``nd64`` token hashes.

    With stop words dropped or words stemmed, the hashes are those of the rewritten words
    (:class:`~neardup.text.lexicon.Lexicon` keeps separators, drops a stop word and replaces
    any other word by its stem), the spans those of the words they were.
    """
    _, words, starts, ends = _read_words(batch, text_spec, normalize_spec)
    return starts, ends, words.hashes


def _read_words(
    batch: Batch, text_spec: KernelText, normalize_spec: NormalizeSpec
) -> tuple[Batch, WordSpans, I64Array, I64Array]:
    """The text whose words are shingled, its words, and the byte spans each word stands for.

    The text is ``batch`` itself, or with stop words dropped or words stemmed its rewrite by
    the :class:`~neardup.text.lexicon.Lexicon`; the spans are those of ``batch``'s words that
    the rewrite kept, one to one with the rewritten words.
    """
    args = (text_spec.classes, text_spec.byte_words, text_spec.strip_punctuation)
    words = word_spans(batch, *args)
    starts, ends = words.starts, words.starts + words.lengths
    if not normalize_spec.rewrites_words:
        return batch, words, starts, ends
    lexicon = lexicon_of(normalize_spec)
    kept = ~np.isin(words.hashes, lexicon.drop_keys)
    text = lexicon.rewrite(batch)
    rewritten = word_spans(text, *args)
    if rewritten.hashes.shape[0] != int(kept.sum()):  # a stem that is no word, or several
        raise ParameterError(
            f"the stems of {normalize_spec.stem!r} do not map one to one onto the words of "
            "this text; explain it without --stem."
        )
    return text, rewritten, starts[kept], ends[kept]


def _model_tokens(
    batch: Batch, text_spec: KernelText, normalize_spec: NormalizeSpec
) -> tuple[I64Array, I64Array, U64Array]:
    """Byte spans of the tokens of a normalised text, and the ``nd64`` hashes of their words.

    The tokens are those :func:`~neardup.text.normalize.normalize_bytes` makes: of the words
    (:func:`_read_words`) written out with single spaces (:func:`~neardup.text.lexicon.
    spaced_words`). A token covers the bytes of the words it was cut from, from its first
    byte in a word to its last (a whole word when the word was stemmed: its stem's bytes
    have no place in the text); a token of separators only (tiktoken's space before a
    number) covers the separators between the words around it.
    """
    assert normalize_spec.tokenizer is not None
    text, words, word_starts, word_ends = _read_words(batch, text_spec, normalize_spec)
    spaced, places = spaced_words(text, words, text_spec.byte_words)
    tokens = tokenize(spaced, normalize_spec.tokenizer, with_spans=True)
    assert tokens.starts is not None
    assert tokens.ends is not None
    spelled = spell(tokens)
    args = (text_spec.classes, text_spec.byte_words, text_spec.strip_punctuation)
    hashes = word_spans(spelled, *args).hashes
    word_last = places + words.lengths  # the end of each word in the spaced text
    # The spaced text starts and ends with a word: a token starts in a word or in the space
    # before one, and ends in a word or in the space after one.
    before = np.searchsorted(places, tokens.starts, side="right") - 1
    first = np.where(tokens.starts < word_last[before], before, before + 1)
    last = np.searchsorted(places, tokens.ends - 1, side="right") - 1
    if normalize_spec.rewrites_words:
        starts, ends = word_starts[first], word_ends[last]
    else:  # the words' bytes are the text's own: a token's bytes are as precise as they come
        starts = word_starts[first] + np.maximum(tokens.starts - places[first], 0)
        ends = word_starts[last] + np.minimum(tokens.ends - places[last], words.lengths[last])
    separators = first > last
    starts[separators] = word_ends[last[separators]]
    ends[separators] = word_starts[first[separators]]
    return starts, ends, hashes


def _code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _text(code_points: np.ndarray) -> str:
    return code_points.astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")


def _utf8_sizes(text: str) -> I64Array:
    """UTF-8 bytes of each character of ``text``."""
    cps = _code_points(text)
    return 1 + (cps >= 0x80).astype(np.int64) + (cps >= 0x800) + (cps >= 0x10000)


def _normalized_pieces(
    cps: np.ndarray, starts: I64Array, sentinel: int, spec: NormalizeSpec
) -> tuple[np.ndarray, I64Array]:
    """Normalise the pieces of ``cps`` that begin at ``starts`` (``starts[0] == 0``) each alone.

    A private-use ``sentinel`` (a starter that nothing composes with, unchanged by NFKC and
    case folding) goes before every piece, so one call normalises them all apart. Returns the
    normalised code points, pieces back to back, and each piece's offsets into them.
    """
    marked = _code_points(normalize(_text(np.insert(cps, starts, sentinel)), spec))
    is_mark = marked == sentinel
    assert int(is_mark.sum()) == starts.shape[0]
    piece = np.cumsum(is_mark)[~is_mark] - 1
    offsets = np.searchsorted(piece, np.arange(starts.shape[0] + 1))
    return marked[~is_mark], offsets


def _safe_cuts(cps: np.ndarray, single: np.ndarray, single_offsets: I64Array) -> I64Array:
    """Where ``cps`` may be cut and its pieces normalised apart: 0, and each such place.

    Case folding works character by character. NFKC reorders combining marks (class > 0) and
    composes a character with the starter before it; the starters that composition joins back
    are few (:func:`_joining_starters`: Hangul vowel and final jamo, some Indic vowel signs).
    So a cut before character ``i`` is safe when ``i`` is a starter that joins nothing back,
    and so is the first character it normalises to. ``single``, ``single_offsets``: each
    character normalised alone.
    """
    sizes = np.diff(single_offsets)
    first = single[np.minimum(single_offsets[:-1], max(single.shape[0] - 1, 0))]
    safe = (sizes > 0) & _stands_alone(cps) & _stands_alone(first)
    safe[0] = True
    return np.flatnonzero(safe).astype(np.int64)


def _stands_alone(cps: np.ndarray) -> np.ndarray:
    """Whether each code point is a starter (class 0) that composes with nothing before it."""
    wide = np.flatnonzero(cps >= 0x80)
    alone = np.ones(cps.shape[0], dtype=bool)
    if wide.shape[0]:
        distinct, index = np.unique(cps[wide], return_inverse=True)
        classes = np.array([unicodedata.combining(chr(c)) for c in distinct.tolist()])
        joins = np.isin(distinct, _joining_starters())
        alone[wide] = ((classes == 0) & ~joins)[index]
    return alone


@functools.cache
def _joining_starters() -> np.ndarray:
    """The starters canonical composition may join to the character before them.

    The second characters of two-character canonical decompositions that have combining
    class 0 (composition exclusions kept: a superset is safe), and the Hangul vowel and
    final jamo, which compose algorithmically.
    """
    seconds = set()
    for cp in range(0x30000):  # every canonical decomposition lies below
        mapping = unicodedata.decomposition(chr(cp))
        if mapping and not mapping.startswith("<") and len(parts := mapping.split()) == 2:
            seconds.add(int(parts[1], 16))
    hangul = [*range(0x1161, 0x1176), *range(0x11A8, 0x11C3)]
    starters = [c for c in seconds if unicodedata.combining(chr(c)) == 0]
    return np.array(sorted({*starters, *hangul}), dtype=np.uint32)


def normalized_with_origins(text: str, spec: NormalizeSpec) -> tuple[str, I64Array, I64Array]:
    r"""NFKC and case folding of ``text`` as ``spec`` asks, and where each character comes from.

    Returns ``normalize(text, spec)`` and, for each of its characters, the span
    ``[start, end)`` of ``text`` it comes from: one original character when that character
    normalises on its own (``"ﬁ"`` gives ``"f"`` and ``"i"``, both from it), else the
    characters normalised together (``"e\u0301"`` → ``"é"``).

    Notes
    -----
    The text is normalised in pieces cut where normalisation cannot reach across
    (:func:`_safe_cuts`), and each piece once more character by character: a piece whose
    characters normalise to the same code points one by one as together maps them one by one,
    any other piece maps as a whole. Two calls of :func:`~neardup.text.normalize.normalize`
    in all, and array operations.

    Examples
    --------
    >>> text, start, end = normalized_with_origins("Straße ﬁne", NormalizeSpec())
    >>> text, start.tolist()
    ('strasse fine', [0, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8, 9])
    """
    n = len(text)
    if text.isascii() or not (spec.nfkc or spec.casefold):
        chars = np.arange(n, dtype=np.int64)
        return normalize(text, spec), chars, chars + 1
    cps = _code_points(text)
    sentinel = int(_PRIVATE_USE[~np.isin(_PRIVATE_USE, cps)][0])
    single, single_offsets = _normalized_pieces(cps, np.arange(n, dtype=np.int64), sentinel, spec)
    piece_starts = _safe_cuts(cps, single, single_offsets)
    joined, offsets = _normalized_pieces(cps, piece_starts, sentinel, spec)
    if single.shape[0] == 0:  # nothing left (joined is empty then too)
        none = np.empty(0, dtype=np.int64)
        return "", none, none
    piece_ends = np.r_[piece_starts[1:], n]
    sizes = np.diff(offsets)
    shift = single_offsets[piece_starts] - offsets[:-1]  # piece g of `single` lies `shift` on
    piece = np.repeat(np.arange(piece_starts.shape[0]), sizes)
    alike = (single_offsets[piece_ends] - single_offsets[piece_starts] == sizes)[piece]
    at = np.arange(joined.shape[0])
    at_single = np.where(alike, at + shift[piece], 0)
    alike &= single[at_single] == joined
    by_char = np.ones(piece_starts.shape[0], dtype=bool)
    np.logical_and.at(by_char, piece, alike)  # every character of the piece agrees
    owner = np.searchsorted(single_offsets, at_single, side="right") - 1
    use = by_char[piece]
    start = np.where(use, owner, piece_starts[piece])
    end = np.where(use, owner + 1, piece_ends[piece])
    return _text(joined), start.astype(np.int64), end.astype(np.int64)


def highlight(
    text: str, spans: Sequence[tuple[int, int]], *, color: bool, context: int | None = None
) -> str:
    """``text`` with the ``spans`` (start, end offsets) marked: bold yellow, or ``[[...]]``.

    Overlapping or touching spans are marked as one. With ``context``, an unmarked stretch
    longer than twice that keeps only ``context`` characters at each side of a mark, the rest
    elided (:data:`ELISION`).

    Examples
    --------
    >>> highlight("one two three", [(4, 7)], color=False)
    'one [[two]] three'
    >>> highlight("a long unshared stretch, then shared", [(30, 36)], color=False, context=5)
    'a lon [...] then [[shared]]'
    """
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        elif start < end:
            merged.append([start, end])
    out, done = [], 0
    for start, end in [*merged, [len(text), len(text)]]:
        gap = text[done:start]
        if context is not None and len(gap) > 2 * context:
            gap = gap[:context] + ELISION + gap[len(gap) - context :]
        out.append(gap)
        if start < end:
            inner = text[start:end]
            out.append(click.style(inner, fg="yellow", bold=True) if color else f"[[{inner}]]")
        done = end
    return "".join(out)
