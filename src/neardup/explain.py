"""Why two documents match: their shared passages, mapped back to the texts as written.

A passage is a maximal run of shingles that the two documents share in the same order (a
diagonal run over their two shingle sequences), reported as character offsets of both original
texts. Runs are taken longest first and may not overlap one taken before in either text (greedy
string tiling, as plagiarism detectors align texts); ties go to the earlier position in A, then
in B. ``neardup compare A B --explain``, ``dedup --explain`` (``pairs.jsonl``) and the HTML
report all call :func:`shared_passages`.

Each shingle is neardup's own: the text of ``k`` consecutive tokens of the original text is
shingled by :class:`~neardup.text.shingle.Shingler` with the run's specs, so normalisation (NFKC,
case folding, punctuation) and fingerprints are exactly those of the sketches. Tokens are found
in the original text as the normaliser's separators find them (whitespace, and punctuation when
it is stripped); a window whose text gives no shingle, or several (a script written without
spaces), is matched by its smallest shingle.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neardup._types import I64Array, U64Array
from neardup.errors import ParameterError
from neardup.params import SketchSpec
from neardup.text.shingle import Shingler

__all__ = ["Passage", "highlight", "shared_passages"]

ELISION = " [...] "

_NO_SHINGLE = np.uint64(0)


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


def _tokens(text: str, spec: SketchSpec) -> tuple[I64Array, I64Array]:
    """Start and end offsets of the tokens of ``text`` as written."""
    if spec.shingle.unit == "char":
        pattern = r"[^\s\W_]|[^\s]" if spec.normalize.strip_punctuation else r"\S"
    else:
        pattern = r"[^\s\W_]+|_+" if spec.normalize.strip_punctuation else r"\S+"
    spans = [m.span() for m in re.finditer(pattern, text)]
    if spec.normalize.strip_punctuation and spec.shingle.unit == "char":
        spans = [s for s in spans if text[s[0] : s[1]].isalnum()]
    array = np.array(spans, dtype=np.int64).reshape(-1, 2)
    return array[:, 0].copy(), array[:, 1].copy()


def _window_hashes(text: str, spec: SketchSpec) -> tuple[U64Array, I64Array, I64Array]:
    """Per window of ``k`` tokens: its smallest shingle (0: none), start and end offsets."""
    starts, ends = _tokens(text, spec)
    k = spec.shingle.k
    count = max(starts.shape[0] - k + 1, 0)
    first, last = starts[:count], ends[k - 1 : k - 1 + count]
    windows = [text[s:e] for s, e in zip(first.tolist(), last.tolist(), strict=True)]
    if not windows:
        return np.empty(0, dtype=np.uint64), first, last
    sets = Shingler(spec.shingle, spec.normalize).shingle_sets(windows)
    sizes = sets.sizes()
    hashes = np.zeros(count, dtype=np.uint64)
    filled = sizes > 0
    hashes[filled] = sets.hashes[sets.offsets[:-1][filled]]  # sets are sorted: the smallest
    return hashes, first, last


def _diagonal_runs(a: U64Array, b: U64Array) -> tuple[I64Array, I64Array, I64Array]:
    """Maximal runs ``a[i:i+L] == b[j:j+L]`` (no empty window): starts ``i``, ``j`` and ``L``."""
    order_b = np.argsort(b, kind="stable")
    sorted_b = b[order_b]
    lo = np.searchsorted(sorted_b, a, side="left")
    hi = np.searchsorted(sorted_b, a, side="right")
    hi[a == _NO_SHINGLE] = lo[a == _NO_SHINGLE]
    counts = hi - lo
    i = np.repeat(np.arange(a.shape[0], dtype=np.int64), counts)
    ranks = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(counts) - counts, counts
    )
    j = order_b[np.repeat(lo, counts) + ranks].astype(np.int64)
    if i.shape[0] == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    order = np.lexsort((i, i - j))
    i, j = i[order], j[order]
    starts = np.ones(i.shape[0], dtype=bool)
    starts[1:] = ~((i[1:] == i[:-1] + 1) & (j[1:] == j[:-1] + 1))
    begin = np.flatnonzero(starts)
    lengths = np.diff(np.append(begin, i.shape[0]))
    return i[begin], j[begin], lengths


def shared_passages(a: str, b: str, spec: SketchSpec | None = None) -> list[Passage]:
    """The passages ``a`` and ``b`` share, sorted by their place in ``a``.

    Parameters
    ----------
    a, b
        The two texts, as written.
    spec
        The shingling and normalisation (``spec.shingle``, ``spec.normalize``); the default
        is neardup's (word 5-shingles).

    Examples
    --------
    >>> text_a = "The quick brown fox jumps over the lazy dog near the river bank."
    >>> text_b = "Yesterday THE QUICK BROWN FOX JUMPS OVER the lazy cat."
    >>> [(text_a[p.a_start:p.a_end], text_b[p.b_start:p.b_end], p.num_shingles)
    ...  for p in shared_passages(text_a, text_b)]
    [('The quick brown fox jumps over the lazy', 'THE QUICK BROWN FOX JUMPS OVER the lazy', 4)]
    """
    spec = spec if spec is not None else SketchSpec()
    if spec.shingle.unit not in ("word", "char"):
        raise ParameterError(
            f"shared passages are found for word and char shingles; got {spec.shingle.unit!r} "
            "(use --shingle word:K or char:K)"
        )
    hashes_a, starts_a, ends_a = _window_hashes(a, spec)
    hashes_b, starts_b, ends_b = _window_hashes(b, spec)
    run_a, run_b, lengths = _diagonal_runs(hashes_a, hashes_b)
    used_a = np.zeros(hashes_a.shape[0], dtype=bool)
    used_b = np.zeros(hashes_b.shape[0], dtype=bool)
    passages = []
    for r in np.lexsort((run_b, run_a, -lengths)).tolist():
        i, j, length = int(run_a[r]), int(run_b[r]), int(lengths[r])
        free = ~used_a[i : i + length] & ~used_b[j : j + length]
        # The run's longest stretch clear of passages taken before (taken longest first).
        for offset, size in _stretches(free):
            x, y = i + offset, j + offset
            used_a[x : x + size] = True
            used_b[y : y + size] = True
            passages.append(
                Passage(
                    a_start=int(starts_a[x]),
                    a_end=int(ends_a[x + size - 1]),
                    b_start=int(starts_b[y]),
                    b_end=int(ends_b[y + size - 1]),
                    num_shingles=size,
                )
            )
    return sorted(passages, key=lambda p: (p.a_start, p.b_start))


def _stretches(free: np.ndarray) -> list[tuple[int, int]]:
    """``(offset, size)`` of each run of True in ``free``."""
    edges = np.diff(np.concatenate([[0], free.astype(np.int8), [0]]))
    begin, end = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return list(zip(begin.tolist(), (end - begin).tolist(), strict=True))


def highlight(
    text: str, spans: Sequence[tuple[int, int]], *, color: bool, context: int | None = None
) -> str:
    """``text`` with the ``spans`` (start, end offsets) marked: bold yellow, or ``[[...]]``.

    With ``context``, an unmarked stretch longer than twice that keeps only ``context``
    characters at each side of a mark, the rest elided.

    Examples
    --------
    >>> highlight("one two three", [(4, 7)], color=False)
    'one [[two]] three'
    >>> highlight("a long unshared stretch, then shared", [(30, 36)], color=False, context=5)
    'a lon [...] then [[shared]]'
    """
    out, done = [], 0
    for given_start, end in [*sorted(spans), (len(text), len(text))]:
        start = max(given_start, done)
        gap = text[done:start]
        if context is not None and len(gap) > 2 * context:
            gap = gap[:context] + ELISION + gap[len(gap) - context :]
        out.append(gap)
        if start < end:
            inner = text[start:end]
            out.append(f"\x1b[1;33m{inner}\x1b[0m" if color else f"[[{inner}]]")
        done = max(done, end)
    return "".join(out)
