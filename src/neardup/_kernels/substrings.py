"""Numba kernels for exact repeated substrings: raw word tokens, LCP arrays, repeated windows.

Lee et al. (2022, "Deduplicating Training Data Makes Language Models Better") remove every
substring of at least ``N`` tokens that occurs more than once, found with a suffix array. Here a
token is a raw word: a run of code points that are not whitespace (punctuation attached), each
code point of a script written without spaces a token by itself (the normaliser's classes,
``tokens.read_char``; no case folding or NFKC: the substrings are exact). A later occurrence of
a substring of ``L >= N`` tokens is the union of the ``N``-token windows inside it, each of which
occurs earlier too; so the tokens to remove are the union of the windows ``[q, q + N)`` whose
tokens occurred earlier, which the suffix array groups: suffixes sharing their first ``N``
tokens are adjacent in it (longest common prefix ``>= N``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._kernels.mix import fmix64
from neardup._kernels.tokens import ALONE, FNV_OFFSET, FNV_PRIME, SPACE, read_char


@njit(cache=True, nogil=True)
def raw_tokens(buf, offsets, classes, counts, keys, starts, ends):  # type: ignore[no-untyped-def]
    """Count (and, with ``keys`` not empty, key and place) the raw word tokens of each text.

    ``counts[d]`` receives text ``d``'s tokens. A token's key is ``fmix64`` of the FNV-1a hash
    of its bytes; with ``starts`` not empty, ``starts``/``ends`` receive its characters'
    offsets from its text's start. Returns the tokens in all. Cost: O(bytes).
    """
    fill = keys.shape[0] > 0
    places = starts.shape[0] > 0
    n = 0
    for d in range(offsets.shape[0] - 1):
        i, end = offsets[d], offsets[d + 1]
        first = n
        chars = 0
        in_word = False
        h = FNV_OFFSET
        while i < end:
            cp, size = read_char(buf, i, False)
            cls = classes[cp]
            if in_word and cls in (SPACE, ALONE):
                if fill:
                    keys[n] = fmix64(h)
                    if places:
                        ends[n] = chars
                n += 1
                in_word = False
            if cls != SPACE:
                if not in_word:
                    h = FNV_OFFSET
                    if places:
                        starts[n] = chars
                for q in range(i, i + size):
                    h = (h ^ uint64(buf[q])) * FNV_PRIME
                if cls == ALONE:
                    if fill:
                        keys[n] = fmix64(h)
                        if places:
                            ends[n] = chars + 1
                    n += 1
                else:
                    in_word = True
            i += size
            chars += 1
        if in_word:
            if fill:
                keys[n] = fmix64(h)
                if places:
                    ends[n] = chars
            n += 1
        counts[d] = n - first
    return n


@njit(cache=True, nogil=True)
def lcp_array(seq, sa, rank, lcp):  # type: ignore[no-untyped-def]
    """The LCP array of ``seq`` by Kasai et al. (2001); ``rank`` is scratch room of ``n``.

    ``lcp[i]`` is the longest common prefix of suffixes ``sa[i]`` and ``sa[i + 1]``
    (``lcp[n - 1] = 0``). Cost: O(n).
    """
    n = seq.shape[0]
    for i in range(n):
        rank[sa[i]] = i
    h = 0
    for p in range(n):
        r = rank[p]
        if r == n - 1:
            lcp[r] = 0
            h = 0
            continue
        q = sa[r + 1]
        while p + h < n and q + h < n and seq[p + h] == seq[q + h]:
            h += 1
        lcp[r] = h
        if h > 0:
            h -= 1


@njit(cache=True, nogil=True)
def later_windows(sa, lcp, left, size, split, across_only, later):  # type: ignore[no-untyped-def]
    """Mark ``later[q]`` for each window start ``q`` whose ``size`` tokens occurred earlier.

    Suffixes with ``lcp >= size`` and at least ``size`` tokens ``left`` in their document form
    groups of equal windows (adjacent in ``sa``); every member but the group's smallest position
    is marked. With ``across_only``, a group counts only if it holds a position below ``split``
    (the first part of the sequence), and only members from ``split`` on are marked. Returns
    the windows marked.
    """
    n = sa.shape[0]
    marked = 0
    i = 0
    while i < n:
        j = i
        while j + 1 < n and lcp[j] >= size and left[sa[j]] >= size:
            j += 1
        if j > i:
            smallest = sa[i]
            for t in range(i + 1, j + 1):
                smallest = min(smallest, sa[t])
            if not across_only or smallest < split:
                for t in range(i, j + 1):
                    q = sa[t]
                    if q != smallest and (not across_only or q >= split) and not later[q]:
                        later[q] = True
                        marked += 1
        i = j + 1
    return marked


@njit(cache=True, nogil=True)
def tokens_left(counts, out):  # type: ignore[no-untyped-def]
    """Fill ``out[q]``: the tokens from ``q`` to its document's end (0 at a separator).

    The sequence holds documents of ``counts`` tokens, each followed by one separator.
    """
    q = 0
    for d in range(counts.shape[0]):
        for t in range(counts[d]):
            out[q] = counts[d] - t
            q += 1
        out[q] = 0
        q += 1
    return np.int64(q)


@njit(cache=True, nogil=True)
def aligned_suffixes(byte_sa, width):  # type: ignore[no-untyped-def]
    """Compact a byte-level suffix array to the suffixes that start a ``width``-byte symbol.

    In place and in order, each divided by ``width``; returns how many. The byte suffix array
    of big-endian symbols orders those suffixes as the symbol sequence's own would.
    """
    n = 0
    for i in range(byte_sa.shape[0]):
        if byte_sa[i] % width == 0:
            byte_sa[n] = byte_sa[i] // width
            n += 1
    return n


@njit(cache=True, nogil=True)
def removed_tokens(later, size, counts, marks):  # type: ignore[no-untyped-def]
    """Mark each token inside a window ``[q, q + size)`` started at a ``later`` ``q``.

    The sequence holds documents of ``counts`` tokens, each followed by a separator; ``marks``
    has an entry per token (separators left out). Cost: O(n).
    """
    q = 0
    t = 0
    for d in range(counts.shape[0]):
        reach = -1
        for _ in range(counts[d]):
            if later[q]:
                reach = q + size
            marks[t] = q < reach
            q += 1
            t += 1
        q += 1
