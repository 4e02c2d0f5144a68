"""The edit-distance join of short strings: q-gram filters, verified by banded Levenshtein.

Where it sits: short strings (names, titles, addresses: entity resolution) in a
:class:`~neardup._types.Batch` → code points → q-gram candidates (length, prefix and count
filters) → the Levenshtein distance in a band of diagonals → the pairs within ``k`` edits
(:class:`~neardup.join.result.JoinResult`). Exact: no pair within ``k`` is ever missed, and
every value is the true distance.

The edit distance (MMDS §3.5.5) is the least number of insertions, deletions and
substitutions of one *code point* turning one string into the other: strings are decoded from
UTF-8 first, so ``café`` and ``cafe`` are one substitution apart, not two byte edits (and a
character outside the Basic Multilingual Plane is one code point, as in Python's ``str``, not
two UTF-16 units). No normalisation is applied: ``É`` and ``é`` differ, and so do a precomposed
``é`` and ``e`` followed by a combining accent; normalise the strings first where that matters.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from neardup._kernels import edit as kernels
from neardup._kernels.prefix import gather_sets
from neardup._parallel import in_blocks
from neardup._types import Batch, Offsets
from neardup.errors import InputError, ParameterError
from neardup.join.result import JoinResult
from neardup.params import JoinSpec
from neardup.text.spans import pack_strings

__all__ = ["code_points", "edit_join", "qgram_items"]

I32Array = NDArray[np.int32]


def _batch(strings: Batch | Sequence[str], owner: str) -> Batch:
    """``strings`` as a checked :class:`Batch` (a sequence of ``str`` is packed as UTF-8)."""
    if not isinstance(strings, Batch):
        if isinstance(strings, str) or not all(isinstance(s, str) for s in strings):
            raise InputError(f"{owner} takes a Batch or a sequence of str.")
        return Batch(*pack_strings(strings))
    data = np.asarray(strings.data)
    offsets = np.asarray(strings.offsets)
    if data.ndim != 1 or data.dtype != np.uint8:
        raise InputError(f"{owner} needs Batch.data as a 1-D uint8 array; got {data.dtype}.")
    if offsets.ndim != 1 or offsets.shape[0] < 1 or offsets.dtype.kind not in "iu":
        raise InputError(f"{owner} needs Batch.offsets as a 1-D integer array of n + 1.")
    offsets = offsets.astype(np.int64, copy=False)
    if offsets[0] < 0 or offsets[-1] > data.shape[0] or np.any(np.diff(offsets) < 0):
        raise InputError(
            f"{owner} needs non-decreasing Batch.offsets within the {data.shape[0]} bytes."
        )
    return Batch(np.ascontiguousarray(data), np.ascontiguousarray(offsets))


def code_points(strings: Batch | Sequence[str]) -> tuple[I32Array, Offsets]:
    """Each string's Unicode code points: ``(int32 values, int64 offsets)``.

    String ``d`` is ``values[offsets[d]:offsets[d + 1]]``. Valid UTF-8 decodes exactly (as
    ``str`` holds it, lone surrogates included); malformed bytes decode leniently, one code
    point per byte that is not a continuation byte (see
    :func:`neardup._kernels.edit.decode_code_points`), never failing.

    Examples
    --------
    >>> values, offsets = code_points(["née", "", "𝄞x"])
    >>> values.tolist(), offsets.tolist()
    ([110, 233, 101, 119070, 120], [0, 3, 3, 5])
    """
    batch = _batch(strings, "code_points")
    counts = np.empty(batch.num_docs, dtype=np.int64)
    kernels.code_point_counts(batch.data, batch.offsets, counts)
    offsets = np.zeros(batch.num_docs + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    values = np.empty(int(offsets[-1]), dtype=np.int32)
    kernels.decode_code_points(batch.data, batch.offsets, offsets, values)
    return values, offsets


def qgram_items(values: I32Array, offsets: Offsets, q: int) -> tuple[NDArray[Any], Offsets, int]:
    """Each string's q-grams as distinct items of one global order, rarest first, sorted.

    A string of ``L`` code points has ``max(L - q + 1, 0)`` q-grams (no padding). The
    ``c``-th occurrence of a q-gram in a string is the item ``(q-gram, c)``, so the items a
    string holds are distinct and two strings share ``sum min(count in x, count in y)``
    items: the shared q-grams counted with multiplicity. Items are numbered by how many
    strings hold them (fewest first; ties by the q-gram's code points, then ``c``).

    Returns ``(items, item_offsets, num_items)``: string ``d``'s items are
    ``items[item_offsets[d]:item_offsets[d + 1]]``, ascending, out of ``num_items``.

    Examples
    --------
    ``abab`` holds ``ab``, ``ba`` and a second ``ab``; ``bab`` holds ``ba`` and ``ab``. The
    second ``ab`` is the rarest item (one string holds it), so it comes first:

    >>> values, offsets = code_points(["abab", "bab"])
    >>> items, item_offsets, num_items = qgram_items(values, offsets, 2)
    >>> items.tolist(), item_offsets.tolist(), num_items
    ([0, 1, 2, 1, 2], [0, 3, 5], 3)
    """
    num_strings = offsets.shape[0] - 1
    counts = np.maximum(np.diff(offsets) - q + 1, 0)
    item_offsets = np.zeros(num_strings + 1, dtype=np.int64)
    np.cumsum(counts, out=item_offsets[1:])
    num_grams = int(item_offsets[-1])
    words = np.empty((num_grams, -(-q // 3)), dtype=np.int64)
    kernels.qgram_words(values, offsets, q, item_offsets, words)
    if words.shape[1] == 1:
        _, gram = np.unique(words[:, 0], return_inverse=True)
    else:
        _, gram = np.unique(words, axis=0, return_inverse=True)
    gram = gram.reshape(-1).astype(np.int64, copy=False)
    owner = np.repeat(np.arange(num_strings, dtype=np.int64), counts)
    by_string = np.lexsort((gram, owner))
    ordered = gram[by_string]
    run_start = np.r_[True, (ordered[1:] != ordered[:-1]) | (owner[1:] != owner[:-1])]
    starts = np.flatnonzero(run_start)
    occurrence = np.empty(num_grams, dtype=np.int64)
    occurrence[by_string] = np.arange(num_grams) - np.repeat(
        starts, np.diff(np.r_[starts, num_grams])
    )
    width = int(occurrence.max(initial=0)) + 1
    _, item, frequency = np.unique(
        gram * width + occurrence, return_inverse=True, return_counts=True
    )
    num_items = int(frequency.shape[0])
    rank_type = np.int32 if num_items < 2**31 else np.int64
    rank = np.empty(num_items, dtype=rank_type)
    rank[np.argsort(frequency, kind="stable")] = np.arange(num_items, dtype=rank_type)
    items = np.empty(num_grams, dtype=rank_type)
    run = partial(
        gather_sets,
        rank[item.reshape(-1)],
        item_offsets,
        np.arange(num_strings, dtype=np.int64),
        item_offsets,
        items,
        False,
    )
    in_blocks(run, num_strings)
    return items, item_offsets, num_items


def edit_join(strings: Batch | Sequence[str], spec: JoinSpec) -> JoinResult:
    """All pairs of strings within Levenshtein distance ``k = spec.threshold``, exactly.

    Parameters
    ----------
    strings
        The strings: a :class:`~neardup._types.Batch` of UTF-8 (flat bytes and offsets), or
        a sequence of ``str``.
    spec
        An ``edit`` spec: ``threshold`` the largest distance ``k`` (a whole number) and
        ``qgram`` the length ``q`` of the q-grams filtering the candidates.

    Returns
    -------
    JoinResult
        The pairs ``first < second``, sorted, ``values`` their edit distance (float64).
        ``info``: ``family`` ``"qgram"``, ``num_bands`` and ``num_rows`` ``None``,
        ``predicted_recall`` 1.0, ``num_candidates`` (Levenshtein computations),
        ``num_pairs``, ``qgram`` (``q``) and ``num_short`` (strings too short for the q-gram
        filters, see Notes).

    Raises
    ------
    ParameterError
        A metric other than ``edit``.
    InputError
        Not a ``Batch`` (or sequence of ``str``), or offsets outside its bytes.

    Notes
    -----
    The strings are taken by increasing length, each joined with those before it:

    1. **Length filter**: ``||x| - |y|| <= k``.
    2. **Count filter** (Gravano et al. 2001; Ukkonen 1992): one edit changes at most ``q``
       of a string's ``|x| - q + 1`` q-grams, so strings within ``k`` edits share at least
       ``α = max(|x|, |y|) - q + 1 - k q`` q-grams, counted with multiplicity
       (:func:`qgram_items`).
    3. **Prefix filter** (Li, Wang and Yang 2007; Ed-Join, Xiao et al. 2008): with each
       string's q-gram items sorted by one global order (rarest first, so the lists looked
       up are short), two strings sharing ``α >= 1`` items share one of their first
       ``k q + 1``; each string's first ``k q + 1`` items are indexed, and a string's
       candidates are the earlier strings found under its own first ``k q + 1``.
    4. **Short strings**: when ``α <= 0`` (``max(|x|, |y|) <= k q + q - 1``) the q-grams
       cannot prune, and such a string is verified against every earlier string the length
       filter allows; quadratic in their number, so keep ``k q`` small for them (``q = 1``
       suits very short strings).
    5. **Verification**: the count filter's merge (stopping once ``α`` is out of reach), then
       the Levenshtein distance in Ukkonen's band of ``2k + 1`` diagonals, stopping once a
       whole row of the band exceeds ``k``
       (:func:`~neardup._kernels.edit.banded_levenshtein`).

    Memory: 4 bytes a code point, about 40 bytes a q-gram while the items are numbered (sorts
    of all q-grams), 8 bytes an indexed item (at most ``k q + 1`` a string), 16 bytes a string
    of scratch, and the pairs (24 bytes each). Time: the sorts, plus ``O(k L)`` for each
    candidate verified.

    References
    ----------
    MMDS §3.5.5 (seed 001's book); Ukkonen, "Algorithms for approximate string matching",
    1985; Gravano et al., "Approximate string joins in a database (almost) for free", VLDB
    2001; Xiao, Wang and Lin, "Ed-Join", VLDB 2008.

    Examples
    --------
    >>> spec = JoinSpec(metric="edit", threshold=2, qgram=2)
    >>> result = edit_join(["kitten", "sitting", "mitten", "smitten"], spec)
    >>> list(zip(result.first.tolist(), result.second.tolist(), result.values.tolist()))
    [(0, 2, 1.0), (0, 3, 2.0), (2, 3, 1.0)]
    """
    if spec.metric != "edit":
        raise ParameterError(
            f"edit_join joins strings: JoinSpec.metric must be 'edit'; got {spec.metric!r}."
        )
    q = spec.qgram
    values, offsets = code_points(strings)
    # No two strings are further apart than the longer one's length: a larger k changes no
    # pair nor value, and keeps the filters' sizes (k q + 1) small.
    k = min(int(spec.threshold), int(np.diff(offsets).max(initial=0)))
    items, item_offsets, num_items = qgram_items(values, offsets, q)
    lengths = np.diff(offsets)
    order = np.argsort(lengths, kind="stable")
    bounds, entry_string = kernels.qgram_index(items, item_offsets, order, k * q + 1, num_items)
    first, second, distances, num_verified = kernels.edit_join_pairs(
        values,
        offsets,
        items,
        item_offsets,
        order,
        np.ascontiguousarray(lengths[order]),
        k,
        q,
        bounds,
        entry_string,
    )
    ranked = np.lexsort((second, first))
    info: dict[str, Any] = {
        "family": "qgram",
        "num_bands": None,
        "num_rows": None,
        "predicted_recall": 1.0,
        "num_candidates": int(num_verified),
        "num_pairs": int(first.shape[0]),
        "qgram": q,
        "num_short": int(np.count_nonzero(lengths <= k * q + q - 1)),
    }
    return JoinResult(
        first=first[ranked],
        second=second[ranked],
        values=distances[ranked].astype(np.float64),
        metric="edit",
        info=info,
    )
