"""Numba kernels for shared passages: shingle keys, diagonal runs, tiling.

Two texts' shared passages (``neardup.explain``) are the runs of equal shingles along the
diagonals of their two shingle sequences, tiled greedily longest first. Tokens are the shingling
kernels' own, with their byte spans (``neardup._kernels.tokens.chars``, and words through
``neardup._kernels.lexicon``), hashed in the ``nd64`` scheme; a shingle is keyed by its
fingerprint over them, so two shingles have equal keys exactly when their tokens are equal (up
to 64-bit collisions), whatever the fingerprint scheme of the run. The shingling is the
shingling kernels' own too (``tokens.shingles``, ``tokens.stop_word_shingles``), imported,
not copied (a change to it starts a new cache directory, see :mod:`neardup._kernels`).
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit

from neardup._kernels.tokens import shingles, stop_word_shingles


@njit(cache=True, nogil=True)
def shingle_keys(tokens, k, stop_keys, keys, firsts):  # type: ignore[no-untyped-def]
    """Key each ``k``-shingle of ``tokens``; return how many are kept.

    A shingle's key is its ``nd64`` fingerprint (``tokens.shingles``): equal keys, equal tokens
    (up to 64-bit collisions). With ``stop_keys`` (sorted; empty: keep every shingle) only the
    shingles whose first token is among them are kept (stop-word shingles, MMDS §3.8.6).
    ``keys`` receives the kept keys in order, ``firsts`` the index of each one's first token.
    """
    num = shingles(tokens, tokens.shape[0], k, None, keys)
    if stop_keys.shape[0]:
        return stop_word_shingles(tokens, keys, num, stop_keys, firsts)
    for i in range(num):
        firsts[i] = i
    return num


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
