"""Numba kernels for one-permutation hashing (OPH) with optimal densification.

Each shingle fingerprint is hashed once and its hash's top bits choose the bin that keeps the
smallest; an empty bin copies the first filled bin of a probe sequence that is the same for
every document, tabulated once (:func:`oph_rank_table`). Rows are made from a batch of texts
(:func:`oph_signatures`, shingled by :func:`neardup._kernels.tokens.doc_shingles_into`) or, pair
by pair, from stored shingle sets (:func:`oph_agreement_of_sets`), and are the same either way.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._kernels.minhash import EMPTY
from neardup._kernels.mix import fmix64
from neardup._kernels.sets import sorted_distinct
from neardup._kernels.tokens import doc_shingles_into, shingle_room


@njit(cache=True, nogil=True, inline="always")
def _bin_of(h, num_bins):  # type: ignore[no-untyped-def]
    """The bin of a 64-bit hash: its top 32 bits scaled to [0, num_bins)."""
    return np.int64(((h >> uint64(32)) * uint64(num_bins)) >> uint64(32))


@njit(cache=True, nogil=True)
def _probe(densify_key, i, attempt, num_bins):  # type: ignore[no-untyped-def]
    """Bin ``i``'s ``attempt``-th probe in optimal densification."""
    return _bin_of(fmix64(densify_key + (uint64(i) << uint64(32)) + uint64(attempt)), num_bins)


UNRANKED = 255
"""The rank of a bin not among another bin's first 255 densification probes."""


@njit(cache=True, nogil=True)
def oph_rank_table(densify_key, num_bins, index_bits, out):  # type: ignore[no-untyped-def]
    """``out[b, i] = (rank << index_bits) | b``: how early bin ``b`` comes in bin ``i``'s probes.

    ``rank`` is the first attempt (below 255) whose probe is ``b``, or :data:`UNRANKED`. The
    first filled bin of ``i``'s probe sequence is then the one of least ``out[b, i]`` among
    the filled ``b``: an elementwise minimum over the filled bins' rows, with no branch per
    probe (:func:`_densify`). The table is the same for every document.
    """
    rank = np.empty(num_bins, dtype=np.int64)
    for i in range(num_bins):
        rank[:] = UNRANKED
        for attempt in range(UNRANKED):
            j = _probe(densify_key, i, attempt, num_bins)
            if rank[j] == UNRANKED:
                rank[j] = attempt
        for b in range(num_bins):
            out[b, i] = (rank[b] << index_bits) | b


@njit(cache=True, nogil=True)
def _densify(row, ranks, index_bits, densify_key, best, filled, is_filled):  # type: ignore[no-untyped-def]
    """Optimal densification of ``row`` in place (it holds at least one filled bin).

    Through the rank table when there is one; without (``ranks`` empty: too many bins for a
    table) by following each empty bin's probes. ``best``, ``filled`` and ``is_filled`` are
    scratch of one entry per bin.
    """
    num_bins = row.shape[0]
    m = 0
    for b in range(num_bins):
        full = row[b] != EMPTY
        is_filled[b] = full
        filled[m] = b
        m += full
    if ranks.shape[0] == 0:
        for i in range(num_bins):
            if not is_filled[i]:
                attempt = np.int64(0)
                j = _probe(densify_key, i, attempt, num_bins)
                while not is_filled[j]:
                    attempt += 1
                    j = _probe(densify_key, i, attempt, num_bins)
                row[i] = row[j]
        return
    first = ranks[filled[0]]
    for i in range(num_bins):  # a loop: a slice copy compiles seconds longer
        best[i] = first[i]
    for t in range(1, m):
        candidate = ranks[filled[t]]
        for i in range(num_bins):
            best[i] = min(best[i], candidate[i])
    mask = (1 << index_bits) - 1
    unresolved = 0
    for i in range(num_bins):
        empty = not is_filled[i]
        ranked = (best[i] >> index_bits) != UNRANKED
        source = (best[i] & mask) if empty and ranked else i
        unresolved += empty and not ranked
        row[i] = row[source]  # a source is a filled bin: never written here
    if unresolved:  # no filled bin among the first 255 probes: keep probing
        for i in range(num_bins):
            if is_filled[i] or (best[i] >> index_bits) != UNRANKED:
                continue
            attempt = np.int64(UNRANKED)
            j = _probe(densify_key, i, attempt, num_bins)
            while not is_filled[j]:
                attempt += 1
                j = _probe(densify_key, i, attempt, num_bins)
            row[i] = row[j]


@njit(cache=True, nogil=True)
def _oph_bins(hashes, start, stop, key, row):  # type: ignore[no-untyped-def]
    """Each bin's least hash of the fingerprints ``hashes[start:stop]``; EMPTY where none fell."""
    num_bins = row.shape[0]
    for i in range(num_bins):
        row[i] = EMPTY
    for s in range(start, stop):
        h = fmix64((hashes[s] ^ key[0]) * key[1])
        j = _bin_of(h, num_bins)
        row[j] = min(row[j], h)


@njit(cache=True, nogil=True)
def _oph_row(hashes, start, stop, key, densify_key, ranks, index_bits, row, scratch):  # type: ignore[no-untyped-def]
    """The OPH signature of the shingle fingerprints ``hashes[start:stop]`` into ``row``.

    See :func:`oph_signatures`; ``scratch`` is :func:`_densify`'s ``(best, filled,
    is_filled)``.
    """
    _oph_bins(hashes, start, stop, key, row)
    if stop > start:
        best, filled, is_filled = scratch
        _densify(row, ranks, index_bits, densify_key, best, filled, is_filled)


@njit(cache=True, nogil=True)
def _densify_scratch(ranks, num_bins):  # type: ignore[no-untyped-def]
    best = np.empty(num_bins, dtype=ranks.dtype)
    return best, np.empty(num_bins, dtype=np.int64), np.empty(num_bins, dtype=np.bool_)


@njit(cache=True, nogil=True)
def oph_agreement_of_sets(  # type: ignore[no-untyped-def]
    hashes, offsets, first, second, key, densify_key, ranks, index_bits, num_bins, out, lo, hi
):
    """``out[p]``: the equal slots of the OPH rows of sets ``first[p]`` and ``second[p]``.

    For the pairs ``lo .. hi - 1`` (each kernel here works on such a block: blocks run in
    threads at once).

    Set ``d`` is ``hashes[offsets[d]:offsets[d + 1]]``; its row equals :func:`oph_signatures`
    of the text it comes from (a bin keeps a minimum, which repeated shingles do not change).
    Rows are made pair by pair and never kept: no row matrix of the documents (a kilobyte
    each at 128 bins) competes with the texts for verification's memory. The first set's row
    is made again only when the first set changes: pairs come sorted by their first.
    """
    scratch = _densify_scratch(ranks, num_bins)
    row_a = np.empty(num_bins, dtype=np.uint64)
    row_b = np.empty(num_bins, dtype=np.uint64)
    made = -1
    for p in range(lo, hi):
        x, y = first[p], second[p]
        if x != made:
            _oph_row(
                hashes, offsets[x], offsets[x + 1], key, densify_key, ranks, index_bits, row_a,
                scratch,
            )  # fmt: skip
            made = x
        _oph_row(
            hashes, offsets[y], offsets[y + 1], key, densify_key, ranks, index_bits, row_b,
            scratch,
        )  # fmt: skip
        count = 0
        for i in range(num_bins):
            count += row_a[i] == row_b[i]
        out[p] = count


@njit(cache=True, nogil=True)
def oph_bin_agreement_of_sets(  # type: ignore[no-untyped-def]
    hashes, offsets, first, second, key, num_bins, matches, counted, lo, hi
):
    """The bins of sets ``first[p]`` and ``second[p]`` compared without densification.

    ``counted[p]``: the bins not empty in both; ``matches[p]``: those among them equal (an
    empty bin never equals a filled one). For the pairs ``lo .. hi - 1``.
    """
    row_a = np.empty(num_bins, dtype=np.uint64)
    row_b = np.empty(num_bins, dtype=np.uint64)
    for p in range(lo, hi):
        x, y = first[p], second[p]
        _oph_bins(hashes, offsets[x], offsets[x + 1], key, row_a)
        _oph_bins(hashes, offsets[y], offsets[y + 1], key, row_b)
        equal = 0
        filled = 0
        for i in range(num_bins):
            if row_a[i] != EMPTY or row_b[i] != EMPTY:
                filled += 1
                equal += row_a[i] == row_b[i]
        matches[p] = equal
        counted[p] = filled


@njit(cache=True, nogil=True)
def oph_signatures(  # type: ignore[no-untyped-def]
    buf,
    offsets,
    classes,
    byte_words,
    strip_punct,
    fold_ascii,
    is_char,
    rabin,
    stop_keys,
    k,
    key,
    densify_key,
    ranks,
    index_bits,
    sig,
    num_shingles,
    fingerprint,
    set_rooms,
    set_out,
    set_sizes,
    lo,
    hi,
):
    """One-permutation hashing with optimal densification, of documents ``lo .. hi - 1``.

    Each shingle fingerprint ``x`` is hashed once, ``h = fmix64((x ^ key[0]) * key[1])``; its
    top bits choose one of ``num_bins`` bins and the bin keeps its smallest ``h`` (Li, Owen and
    Zhang 2012; seed 000, "Ping Li's fast uniform sampling"). An empty bin ``i`` then copies
    the first non-empty bin of the probe sequence ``bin_of(fmix64(densify_key + i * 2^32 +
    attempt))``, attempt = 0, 1, ... (Shrivastava 2017, optimal densification), found through
    ``ranks`` (:func:`oph_rank_table`). The sequence is the same for every document, so
    ``P[sig1[i] == sig2[i]]`` equals the Jaccard similarity. Cost: O(shingles + filled bins *
    num_bins) per document, the second term vectorised.

    Unless ``set_out`` is empty, the same pass writes the sorted distinct shingles of each
    document with room in ``set_out[set_rooms[d]:set_rooms[d + 1]]`` there, and their number to
    ``set_sizes[d]`` (documents without room are left as they are).
    """
    tokens, shingles = shingle_room(offsets, lo, hi)
    scratch = _densify_scratch(ranks, sig.shape[1])
    keeping = set_out.shape[0] > 0
    counts = np.empty(4097 if keeping else 0, dtype=np.int64)
    no_counts = np.empty(0, dtype=np.int64)
    for d in range(lo, hi):
        num, fp_hi, fp_lo = doc_shingles_into(
            buf, offsets[d], offsets[d + 1], classes, byte_words, strip_punct, fold_ascii,
            is_char, rabin, stop_keys, k, tokens, shingles,
        )  # fmt: skip
        _oph_row(shingles, np.int64(0), num, key, densify_key, ranks, index_bits, sig[d], scratch)
        num_shingles[d] = num
        fingerprint[d, 0] = fp_hi
        fingerprint[d, 1] = fp_lo
        if keeping and set_rooms[d + 1] > set_rooms[d]:
            set_sizes[d] = sorted_distinct(
                shingles, num, tokens, counts, set_out, no_counts, set_rooms[d]
            )
