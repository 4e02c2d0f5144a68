"""Numba kernels of the edit-distance join: code points, q-grams, filters, banded Levenshtein.

Strings are compared as sequences of Unicode code points (decoded from the UTF-8 of a
:class:`~neardup._types.Batch`), never as bytes: ``é`` is one character whether it takes one
byte or two. Candidates come from q-grams (Gravano et al. 2001; Li, Wang and Yang 2007's
prefix filter, as Xiao, Wang and Lin's Ed-Join 2008 applies it): a string of ``L`` code points
has ``L - q + 1`` q-grams, and one edit destroys at most ``q`` of them, so two strings within
distance ``k`` share at least ``max(|x|, |y|) - q + 1 - k q`` q-grams (counted with
multiplicity). Each string's q-grams are numbered apart by occurrence (the second ``ab`` of a
string is another item than its first), renumbered by one global order and sorted, so the
shared count is the size of an intersection of sets; when it must be at least ``α >= 1``, the
two strings share one of their first ``k q + 1`` items. Survivors are checked with the
Levenshtein distance in Ukkonen's band of ``2 k + 1`` diagonals (MMDS §3.5.5 defines the edit
distance; Ukkonen 1985 the band).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neardup._kernels.prefix import grown, lower_bound


@njit(cache=True, nogil=True)
def code_point_counts(data, offsets, out):  # type: ignore[no-untyped-def]
    """``out[d]`` = code points of string ``d``: its bytes that are not UTF-8 continuations."""
    for d in range(offsets.shape[0] - 1):
        count = 0
        for i in range(offsets[d], offsets[d + 1]):
            count += (data[i] & 0xC0) != 0x80
        out[d] = count


@njit(cache=True, nogil=True)
def decode_code_points(data, offsets, cp_offsets, out):  # type: ignore[no-untyped-def]
    """``out[cp_offsets[d]:cp_offsets[d + 1]]`` = the code points of string ``d``.

    Each non-continuation byte starts a code point (its payload bits: 7, 5, 4 or 3) and the
    continuation bytes it announces (up to 3) shift in six bits each: exact UTF-8 decoding of
    valid input. Malformed input decodes leniently, never failing and never past 21 bits: a
    continuation byte beyond those announced is skipped, so the count is
    :func:`code_point_counts`'s. Cost: O(bytes).
    """
    for d in range(offsets.shape[0] - 1):
        o = cp_offsets[d] - 1
        remaining = 0
        for i in range(offsets[d], offsets[d + 1]):
            b = np.int32(data[i])
            if (b & 0xC0) == 0x80:
                if remaining > 0:
                    out[o] = (out[o] << 6) | (b & 0x3F)
                    remaining -= 1
                continue
            o += 1
            if b < 0x80:
                out[o] = b
                remaining = 0
            elif b >= 0xF0:
                out[o] = b & 0x07
                remaining = 3
            elif b >= 0xE0:
                out[o] = b & 0x0F
                remaining = 2
            else:
                out[o] = b & 0x1F
                remaining = 1


@njit(cache=True, nogil=True)
def qgram_words(cps, cp_offsets, q, gram_offsets, out):  # type: ignore[no-untyped-def]
    """``out[g]`` = q-gram ``g`` packed exactly: three 21-bit code points per int64 word.

    String ``d``'s q-grams (its windows of ``q`` code points, in order) are rows
    ``gram_offsets[d]:gram_offsets[d + 1]``; ``out`` has ``ceil(q / 3)`` columns, the last
    padded with zeros. Equal rows are equal q-grams, and only those.
    """
    for d in range(cp_offsets.shape[0] - 1):
        start = cp_offsets[d]
        for g in range(gram_offsets[d + 1] - gram_offsets[d]):
            row = gram_offsets[d] + g
            for word in range(out.shape[1]):
                value = np.int64(0)
                for c in range(3 * word, min(q, 3 * word + 3)):
                    value = (value << 21) | np.int64(cps[start + g + c])
                out[row, word] = value


@njit(cache=True, nogil=True)
def banded_levenshtein(a, a0, a1, b, b0, b1, k, prev, cur):  # type: ignore[no-untyped-def]
    """The Levenshtein distance of ``a[a0:a1]`` and ``b[b0:b1]`` if at most ``k``, else ``k + 1``.

    The dynamic programme of MMDS §3.5.5 (insertions, deletions and substitutions of one
    code point, each costing 1) restricted to Ukkonen's band ``|i - j| <= k``: a cell off it
    costs more than ``k`` on every path through it. Stops as soon as a whole row of the band
    exceeds ``k`` (the values along a path never decrease). ``prev`` and ``cur`` are scratch
    rows of at least ``b1 - b0 + 1`` entries. Cost: O((2k + 1) min(|a|, |b|)) time.
    """
    n = a1 - a0
    m = b1 - b0
    big = k + 1
    if abs(n - m) > k:
        return big
    for j in range(min(m, k) + 1):
        prev[j] = j
    if k + 1 <= m:
        prev[k + 1] = big
    for i in range(1, n + 1):
        lo = max(1, i - k)
        hi = min(m, i + k)
        left = min(i, big) if lo == 1 else big
        cur[lo - 1] = left
        best = left
        ai = a[a0 + i - 1]
        for j in range(lo, hi + 1):
            v = prev[j - 1] + (0 if ai == b[b0 + j - 1] else 1)
            v = min(v, prev[j] + 1, cur[j - 1] + 1, big)
            cur[j] = v
            best = min(best, v)
        if hi + 1 <= m:
            cur[hi + 1] = big
        if best > k:
            return big
        prev, cur = cur, prev
    return prev[m]


@njit(cache=True, nogil=True)
def qgram_index(tokens, token_offsets, order, prefix, num_tokens):  # type: ignore[no-untyped-def]
    """The inverted index of every string's first ``prefix`` q-gram items (fewer if it has fewer).

    List ``w`` is ``entry_string[bounds[w]:bounds[w + 1]]``: processing positions ``k``
    (string ``order[k]``), ascending. Cost: O(strings * prefix); 8 bytes an entry.
    """
    bounds = np.zeros(num_tokens + 1, dtype=np.int64)
    for k in range(order.shape[0]):
        x = order[k]
        start = token_offsets[x]
        for i in range(min(prefix, token_offsets[x + 1] - start)):
            bounds[tokens[start + i] + 1] += 1
    for w in range(num_tokens):
        bounds[w + 1] += bounds[w]
    fill = bounds[:-1].copy()
    entry_string = np.empty(bounds[num_tokens], dtype=np.int64)
    for k in range(order.shape[0]):
        x = order[k]
        start = token_offsets[x]
        for i in range(min(prefix, token_offsets[x + 1] - start)):
            w = tokens[start + i]
            entry_string[fill[w]] = k
            fill[w] += 1
    return bounds, entry_string


@njit(cache=True, nogil=True)
def _shared_reaching(tokens, xa, xb, ya, yb, need):  # type: ignore[no-untyped-def]
    """Whether the sorted ``tokens[xa:xb]`` and ``tokens[ya:yb]`` share ``need`` items or more."""
    o = 0
    i = xa
    j = ya
    while i < xb and j < yb and o < need:
        if o + min(xb - i, yb - j) < need:
            return False
        a = tokens[i]
        b = tokens[j]
        if a == b:
            o += 1
            i += 1
            j += 1
        elif a < b:
            i += 1
        else:
            j += 1
    return o >= need


@njit(cache=True, nogil=True)
def edit_join_pairs(  # type: ignore[no-untyped-def]
    cps,
    cp_offsets,
    tokens,
    token_offsets,
    order,
    sorted_lengths,
    k,
    q,
    bounds,
    entry_string,
):
    """The pairs of strings within edit distance ``k``, each found from the longer string.

    Strings are processed in ``order`` (by length); each is joined with those before it. For
    ``x`` of ``L`` code points, the partners ``y`` have ``|y| >= L - k`` (the length filter; a
    binary search in ``sorted_lengths``). They must share at least ``α = L - q + 1 - k q``
    q-gram items. When ``α <= 0`` (``L <= k q + q - 1``: short strings)
    the q-grams cannot prune, and every such partner is verified. Otherwise the candidates
    are the partners holding one of ``x``'s first ``k q + 1`` items in their indexed prefix
    (each string indexes its first ``k q + 1`` items, all of them when it has fewer), and
    each must pass the count filter (``α`` shared items, a merge that stops once out of reach)
    before :func:`banded_levenshtein`.

    Returns ``(first, second, distance, num_verified)``: string numbers ``first < second``,
    unsorted; ``num_verified`` counts the Levenshtein computations.
    Memory: 8 bytes a string, two rows of the longest string, plus the pairs.
    """
    n = order.shape[0]
    longest = 0
    for d in range(n):
        longest = max(longest, cp_offsets[d + 1] - cp_offsets[d])
    prev = np.empty(longest + 2, dtype=np.int64)
    cur = np.empty(longest + 2, dtype=np.int64)
    mark = np.full(n, -1, dtype=np.int64)
    found = np.empty(n, dtype=np.int64)
    first = np.empty(64, dtype=np.int64)
    second = np.empty(64, dtype=np.int64)
    distances = np.empty(64, dtype=np.int64)
    num_out = 0
    num_verified = 0
    prefix = k * q + 1
    for kx in range(n):
        x = order[kx]
        xa = cp_offsets[x]
        length = cp_offsets[x + 1] - xa
        low = lower_bound(sorted_lengths, 0, kx, length - k)
        need = length - q + 1 - k * q
        num_found = 0
        if need <= 0:
            for ky in range(low, kx):
                found[num_found] = ky
                num_found += 1
        else:
            ta = token_offsets[x]
            for i in range(prefix):
                w = tokens[ta + i]
                stop = bounds[w + 1]
                e = lower_bound(entry_string, bounds[w], stop, low)
                while e < stop and entry_string[e] < kx:
                    ky = entry_string[e]
                    e += 1
                    if mark[ky] != kx:
                        mark[ky] = kx
                        found[num_found] = ky
                        num_found += 1
        for u in range(num_found):
            y = order[found[u]]
            if need > 0 and not _shared_reaching(
                tokens, token_offsets[x], token_offsets[x + 1], token_offsets[y],
                token_offsets[y + 1], need,
            ):  # fmt: skip
                continue
            num_verified += 1
            distance = banded_levenshtein(
                cps, cp_offsets[y], cp_offsets[y + 1], cps, xa, xa + length, k, prev, cur
            )
            if distance <= k:
                if num_out == first.shape[0]:
                    first = grown(first, num_out)
                    second = grown(second, num_out)
                    distances = grown(distances, num_out)
                first[num_out] = min(x, y)
                second[num_out] = max(x, y)
                distances[num_out] = distance
                num_out += 1
    return first[:num_out], second[:num_out], distances[:num_out], num_verified
