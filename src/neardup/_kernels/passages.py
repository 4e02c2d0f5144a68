"""Numba kernels for shared passages: tokens with their places, shingle keys, diagonal runs, tiling.

Two texts' shared passages (``neardup.explain``) are the runs of equal shingles along the
diagonals of their two shingle sequences, tiled greedily longest first. Tokens are the shingling
kernels' own (``neardup._kernels.tokens``: character mode here, words through
``neardup._kernels.lexicon``), found with their byte spans; a shingle is keyed by its ``k``
token keys, so two shingles have equal keys exactly when their tokens are equal (up to 64-bit
collisions), whatever the fingerprint scheme.

The character rules are the shingling kernels' own (``tokens.token_class``), imported, not
copied (a change to them starts a new cache directory, see :mod:`neardup._kernels`).
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit, uint64

from neardup._kernels.mix import fmix64
from neardup._kernels.tokens import POLY_BASE, SPACE, read_char, token_class

SEPARATOR_KEY = 32
"""The key of the token standing for a run of separators in character mode (a space)."""


@njit(cache=True, nogil=True)
def char_tokens(buf, start, end, classes, strip_punct, fold_ascii, starts, ends, keys):  # type: ignore[no-untyped-def]
    """Character-mode tokens of ``buf[start:end]``: byte spans and keys; return how many.

    As the shingling kernels read characters: every code point not a separator is a token
    (its key the code point, ASCII letters lower-cased when ``fold_ascii``), each run of
    separators between two tokens is one token (key :data:`SEPARATOR_KEY`, spanning the whole
    run), leading and trailing separators are dropped. The outputs need ``end - start``
    entries. Cost: O(bytes).
    """
    n = 0
    i = start
    run_start = -1  # where the separators pending since the last token began
    while i < end:
        cp, size = read_char(buf, i, fold_ascii)
        if token_class(classes, cp, strip_punct) == SPACE:
            if n > 0 and run_start < 0:
                run_start = i
        else:
            if run_start >= 0:
                starts[n] = run_start
                ends[n] = i
                keys[n] = SEPARATOR_KEY
                n += 1
                run_start = -1
            starts[n] = i
            ends[n] = i + size
            keys[n] = cp
            n += 1
        i += size
    return n


@njit(cache=True, nogil=True)
def shingle_keys(tokens, k, stop_keys, keys, firsts):  # type: ignore[no-untyped-def]
    """Key each ``k``-shingle of ``tokens``; return how many are kept.

    A shingle's key is ``fmix64(sum_j t_{i+j} * P^(k-1-j) mod 2^64)`` of its token keys,
    rolled in O(1) per shingle. With ``stop_keys`` (sorted; empty: keep every shingle) only
    the shingles whose first token is among them are kept (stop-word shingles, MMDS §3.8.6).
    ``keys`` receives the kept keys in order, ``firsts`` the index of each one's first token.
    """
    num = tokens.shape[0] - k + 1
    kept = 0
    if num <= 0:
        return 0
    top = uint64(1)  # P^(k-1)
    for _ in range(k - 1):
        top *= POLY_BASE
    acc = uint64(0)
    for j in range(k - 1):
        acc = acc * POLY_BASE + tokens[j]
    filtering = stop_keys.shape[0] > 0
    for i in range(num):
        if i > 0:
            acc -= tokens[i - 1] * top
        acc = acc * POLY_BASE + tokens[i + k - 1]
        if filtering:
            at = np.searchsorted(stop_keys, tokens[i])
            if at == stop_keys.shape[0] or stop_keys[at] != tokens[i]:
                continue
        keys[kept] = fmix64(acc)
        firsts[kept] = i
        kept += 1
    return kept


@njit(cache=True, nogil=True)
def diagonal_runs(keys_a, keys_b, order_b, lo, hi, run_i, run_j, run_len):  # type: ignore[no-untyped-def]
    """The maximal runs ``keys_a[i:i+L] == keys_b[j:j+L]``; return how many.

    ``order_b`` sorts ``keys_b``; ``keys_a[i]`` equals the keys of ``order_b[lo[i]:hi[i]]``.
    A run starts at each equal pair ``(i, j)`` whose predecessor ``(i-1, j-1)`` is not
    equal, and is followed down its diagonal. With ``run_i`` empty the runs are only
    counted. Cost: O(equal pairs).
    """
    record = run_i.shape[0] > 0
    num_a, num_b = keys_a.shape[0], keys_b.shape[0]
    n = 0
    for i in range(num_a):
        for s in range(lo[i], hi[i]):
            j = order_b[s]
            if i > 0 and j > 0 and keys_a[i - 1] == keys_b[j - 1]:
                continue
            if record:
                length = 1
                while (
                    i + length < num_a
                    and j + length < num_b
                    and keys_a[i + length] == keys_b[j + length]
                ):
                    length += 1
                run_i[n] = i
                run_j[n] = j
                run_len[n] = length
            n += 1
    return n


@njit(cache=True, nogil=True)
def tile_runs(run_i, run_j, run_len, num_a, num_b, tile_i, tile_j, tile_len):  # type: ignore[no-untyped-def]
    """Greedy string tiling of diagonal runs; return the number of tiles.

    ``run_*`` must be sorted by length descending, then ``i``, then ``j``. The longest run
    (ties: smaller ``i``, then smaller ``j``) whose positions are all free in A and in B is
    taken and its positions marked; a run that meets marked positions is split into its free
    stretches, which wait their turn at their own (shorter) lengths. This is Wise's greedy
    string tiling with a minimum match of one shingle, so every shingle the two sequences
    share ends up in a tile. Outputs need ``min(num_a, num_b)`` entries. Cost: O(run lengths
    + log) per run and stretch.
    """
    used_a = np.zeros(num_a, dtype=np.bool_)
    used_b = np.zeros(num_b, dtype=np.bool_)
    waiting = [(np.int64(0), np.int64(0), np.int64(0))]  # (-length, i, j); typed by this seed
    waiting.pop()
    num_runs = run_i.shape[0]
    r = 0
    n = 0
    while r < num_runs or len(waiting) > 0:
        if r < num_runs:
            head = (-run_len[r], run_i[r], run_j[r])
            if len(waiting) > 0 and waiting[0] < head:
                neg, i, j = heapq.heappop(waiting)
            else:
                neg, i, j = head
                r += 1
        else:
            neg, i, j = heapq.heappop(waiting)
        length = -neg
        free = True
        for t in range(length):
            if used_a[i + t] or used_b[j + t]:
                free = False
                break
        if free:
            used_a[i : i + length] = True
            used_b[j : j + length] = True
            tile_i[n] = i
            tile_j[n] = j
            tile_len[n] = length
            n += 1
            continue
        t = 0
        while t < length:
            if used_a[i + t] or used_b[j + t]:
                t += 1
                continue
            begin = t
            while t < length and not (used_a[i + t] or used_b[j + t]):
                t += 1
            heapq.heappush(waiting, (np.int64(begin - t), i + begin, j + begin))
    return n
