"""The exact containment join: every pair where one set is at least ``t`` contained in the other.

Containment of ``A`` in ``B`` is ``|A ∩ B| / |A|`` (Broder 1997, seed 003): a short document
quoted whole inside a long one has containment 1 and a Jaccard similarity as small as their
sizes are unequal, so Jaccard at the same threshold misses it. Each pair is reported once,
oriented: ``first`` is the set taken as contained (the smaller, or the one an ``order`` puts
first, e.g. the shorter text), ``second`` the container, ``value`` the containment of
``first`` in ``second``.

The join is exact (no pair missed, none estimated), by prefix filtering: items are ranked
rarest first over the sets (items no other set holds are left out: they cannot be shared, but
count in a set's size), a set is probed by its first ``n - o + 1`` shared items (``o`` the
least overlap reaching ``t``), and the sets holding those items are counted and verified
(:mod:`neardup._kernels.containment`). Unlike Jaccard, containment gives no length filter:
cost grows with how many sets hold the rarest items of each set, which the rarest-first order
keeps small on text.

Memory, besides ``sets``: 1 byte an element and 16 MiB of slots (the cheap filter of
:func:`~neardup._kernels.prefix.possibly_shared`); for the ``N'`` elements it leaves, about
``40 N'`` bytes while they are grouped and ranked; the index (12 bytes an entry: every shared
element held by some set's probe prefix, in every set holding it); 16 bytes a set; 24 bytes a
pair found.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from neardup._kernels import containment as kernels
from neardup._kernels.prefix import possibly_shared
from neardup._types import BoolArray, F64Array, I64Array, U64Array
from neardup.lsh.banding import equal_key_groups
from neardup.lsh.prefix import SLOT_BITS, gathered_sets, jaccard_threshold, rank_rarest_first
from neardup.lsh.sets import check_item_sets
from neardup.text.shingle import ShingleSets

__all__ = ["containment_order", "exact_containment_pairs", "second_contained"]


def _kept(values: NDArray[Any], offsets: I64Array, keep: BoolArray) -> tuple[Any, I64Array]:
    """The elements of each set marked in ``keep`` (a bool per element), sets in place."""
    counts = np.zeros(values.shape[0] + 1, dtype=np.int64)
    np.cumsum(keep, out=counts[1:])
    return values[keep], counts[offsets]


def _shared_ranks(hashes: U64Array, offsets: I64Array) -> tuple[Any, I64Array, int]:
    """Each set's elements that another set holds too, as ranks rarest first, sorted per set.

    Returns ``(ranks, rank_offsets, num_ranks)``; ties in frequency are ordered as
    :func:`~neardup.lsh.banding.equal_key_groups` gives them (fixed by the hashes).
    """
    bits = min(max(int(hashes.shape[0]).bit_length(), 5), SLOT_BITS)
    hashes, offsets = _kept(hashes, offsets, possibly_shared(hashes, bits))
    members, bounds = equal_key_groups(hashes)
    num_ranks = bounds.shape[0] - 1
    rank_type = np.int32 if num_ranks < 2**31 else np.int64
    flat: NDArray[Any] = np.full(hashes.shape[0], -1, dtype=rank_type)
    rank_rarest_first(members, bounds, 0, flat)
    shared, offsets = _kept(flat, offsets, flat >= 0)
    sets = np.arange(offsets.shape[0] - 1, dtype=np.int64)
    ranks, rank_offsets = gathered_sets(shared, offsets, sets, is_sorted=False)
    return ranks, rank_offsets, int(num_ranks)


def containment_order(sizes: I64Array) -> I64Array:
    """Sets by increasing ``sizes``, equal sizes latest first: who is taken as contained.

    Of two sets, the one earlier in this order is ``first`` (the contained): the smaller, or
    of two equal, the later (so the earlier stays the container, as ``keep="first"`` would).
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    order: I64Array = np.lexsort((-np.arange(sizes.shape[0]), sizes))
    return order


def second_contained(first: I64Array, second: I64Array, sizes: I64Array) -> BoolArray:
    """Whether ``second`` rather than ``first`` is the contained member of each pair.

    As :func:`containment_order` says: the one with the smaller ``sizes`` entry, of two equal
    the later.
    """
    return np.asarray(
        (sizes[second] < sizes[first]) | ((sizes[second] == sizes[first]) & (second > first))
    )


def exact_containment_pairs(
    sets: ShingleSets, threshold: float, sizes: I64Array | None = None
) -> tuple[I64Array, I64Array, F64Array, dict[str, Any]]:
    """Every pair where one set is at least ``threshold`` contained in the other, exactly.

    Parameters
    ----------
    sets
        The item sets (sorted distinct ``uint64`` per set).
    threshold
        The least containment, in ``(0, 1]``.
    sizes
        What decides which member of a pair is the contained one (:func:`containment_order`);
        ``None``: the sets' sizes. Dedup passes the texts' lengths, so that the shorter text
        is the contained one, as the kept container is the longest.

    Returns
    -------
    tuple
        ``(first, second, values, counts)``: the pairs sorted by ``(first, second)``,
        ``first`` the contained set, ``values`` its containment ``|first ∩ second| / |first|``,
        and ``counts``: ``num_candidates`` (pairs counted after the filters), ``num_elements``
        (distinct elements held by two sets or more), ``index_entries``.

    Examples
    --------
    >>> sets = ShingleSets(hashes=np.array([1, 2, 3, 4, 5, 6, 2, 3, 4, 9], np.uint64),
    ...                    offsets=np.array([0, 6, 10]))
    >>> first, second, values, _ = exact_containment_pairs(sets, 0.75)
    >>> first.tolist(), second.tolist(), values.tolist()
    ([1], [0], [0.75])
    """
    t = jaccard_threshold(threshold, "exact_containment_pairs")
    sets = check_item_sets(sets, "exact_containment_pairs")
    offsets = sets.offsets - sets.offsets[0]
    set_sizes = np.diff(offsets)
    order = containment_order(set_sizes if sizes is None else sizes)
    ranks, rank_offsets, num_ranks = _shared_ranks(
        sets.hashes[sets.offsets[0] : sets.offsets[-1]], offsets
    )
    marked = np.zeros(num_ranks, dtype=bool)
    kernels.mark_probed(ranks, rank_offsets, set_sizes, t, marked)
    bounds, entry_set, entry_pos = kernels.holder_index(ranks, rank_offsets, order, marked)
    first, second, values, num_verified = kernels.containment_pairs(
        ranks, rank_offsets, set_sizes, order, t, bounds, entry_set, entry_pos
    )
    counts: dict[str, Any] = {
        "num_candidates": int(num_verified),
        "num_elements": num_ranks,
        "index_entries": int(entry_set.shape[0]),
    }
    by_pair = np.lexsort((second, first))
    return first[by_pair], second[by_pair], values[by_pair], counts
