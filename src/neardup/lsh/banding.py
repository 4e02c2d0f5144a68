"""LSH banding (MMDS §3.4): the S-curve, the choice of bands and rows, and candidate pairs.

Documents whose signatures agree in every row of at least one band become candidates. Pairs
come from sorting each band's keys packed with the document numbers (a numba radix sort), one
band at a time, never from Python dicts of lists: the memory is a few words per document
whatever the number of bands.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Protocol

import numpy as np
from numba import get_num_threads

from neardup._kernels import groups
from neardup._parallel import in_blocks
from neardup._types import BoolArray, F64Array, I64Array, U64Array
from neardup.errors import ParameterError
from neardup.hashing.bands import band_keys
from neardup.hashing.packed import sort_packed
from neardup.io.spill import PairRuns
from neardup.pairs import CandidatePairs
from neardup.params import LSHSpec

__all__ = [
    "KeyTable",
    "band_keys",
    "banded_pairs",
    "bands_rows",
    "bucket_pair_chunks",
    "bucket_pairs",
    "candidate_pairs",
    "choose_bands",
    "equal_key_groups",
    "gather_bucket_pairs",
    "s_curve",
    "shared_key_pairs",
    "threshold_of",
]


def s_curve(similarity: float | F64Array, num_bands: int, num_rows: int) -> float | F64Array:
    """Probability that a pair of this Jaccard similarity becomes a candidate: 1 - (1 - s^r)^b.

    References
    ----------
    MMDS §3.4.2 (seed 001), Figure 3.8.

    Examples
    --------
    >>> round(float(s_curve(0.8, num_bands=20, num_rows=5)), 4)
    0.9996
    """
    s = np.asarray(similarity, dtype=np.float64)
    p = 1.0 - (1.0 - s**num_rows) ** num_bands
    return float(p) if p.ndim == 0 else p


def threshold_of(num_bands: int, num_rows: int) -> float:
    """The approximate threshold (1/b)^(1/r) where the S-curve rises steepest (MMDS §3.4.2).

    Examples
    --------
    >>> threshold_of(16, 4)
    0.5
    """
    return float((1.0 / num_bands) ** (1.0 / num_rows))


_GRID = np.linspace(0.0, 1.0, 2001)


@lru_cache(maxsize=256)
def bands_rows(spec: LSHSpec, num_perm: int, agreement: float | None = None) -> tuple[int, int]:
    """The (num_bands, num_rows) of ``spec``: as given, or chosen from its threshold.

    ``num_perm``: the signature's slots, the bands' room (``SketchSpec.num_perm``).
    ``agreement``: the chance that one slot of a pair at the threshold agrees, when it is not
    the threshold itself (b-bit codes also agree by chance).

    Examples
    --------
    >>> bands_rows(LSHSpec(threshold=0.8), 128)
    (16, 8)
    >>> bands_rows(LSHSpec(num_bands=20, num_rows=5), 128)
    (20, 5)
    """
    if spec.num_bands is not None and spec.num_rows is not None:
        return spec.num_bands, spec.num_rows
    return choose_bands(
        spec.threshold if agreement is None else agreement,
        num_perm,
        false_positive_weight=spec.false_positive_weight,
        false_negative_weight=spec.false_negative_weight,
    )


def choose_bands(
    threshold: float,
    num_perm: int,
    *,
    false_positive_weight: float = 0.05,
    false_negative_weight: float = 0.95,
) -> tuple[int, int]:
    """The (num_bands, num_rows) with ``b * r <= num_perm`` minimising the weighted error mass.

    The false-positive mass is the area under the S-curve below ``threshold``; the
    false-negative mass is the area above the S-curve beyond it. Ties go to fewer bands. The
    default weights favour recall (see :class:`~neardup.params.LSHSpec`); equal weights give
    the classic balanced choice.

    Examples
    --------
    >>> choose_bands(0.8, 128)
    (16, 8)
    >>> choose_bands(0.8, 128, false_positive_weight=0.5, false_negative_weight=0.5)
    (9, 13)
    >>> choose_bands(0.5, 128)
    (26, 3)
    """
    if not 0.0 < threshold <= 1.0:
        raise ParameterError(f"choose_bands threshold must be a float in (0, 1]; got {threshold}.")
    below = threshold >= _GRID
    best: tuple[float, int, int] | None = None
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            p = np.asarray(s_curve(_GRID, b, r))
            fp = np.trapezoid(np.where(below, p, 0.0), _GRID)
            fn = np.trapezoid(np.where(below, 0.0, 1.0 - p), _GRID)
            error = float(false_positive_weight * fp + false_negative_weight * fn)
            if best is None or error < best[0] - 1e-15:
                best = (error, b, r)
    assert best is not None
    return best[1], best[2]


class KeyTable(Protocol):
    """Lookup keys of every document, readable one column (band) at a time."""

    @property
    def num_rows(self) -> int:
        """Documents."""

    @property
    def width(self) -> int:
        """Columns."""

    def column(self, column: int) -> U64Array:
        """One column's keys, one per document."""

    def matrix(self) -> U64Array:
        """All columns as one ``(num_rows, columns)`` matrix."""


def candidate_pairs(
    keys: U64Array, *, active: BoolArray | None = None, max_bucket_size: int = 1000
) -> CandidatePairs:
    """Pairs of documents sharing a key in at least one band, found by sorting each band.

    Parameters
    ----------
    keys
        ``uint64[num_docs, num_bands]`` from :func:`band_keys`.
    active
        Documents taking part (others are never paired); all by default.
    max_bucket_size
        Buckets up to this size yield all their pairs; larger ones are handled linearly.

    Examples
    --------
    >>> keys = np.array([[1, 7], [2, 7], [1, 8]], dtype=np.uint64)
    >>> pairs = candidate_pairs(keys)
    >>> list(zip(pairs.first.tolist(), pairs.second.tolist()))
    [(0, 1), (0, 2)]
    """
    bands = (keys[:, band] for band in range(keys.shape[1]))
    return banded_pairs(bands, keys.shape[0], active=active, max_bucket_size=max_bucket_size)


def banded_pairs(
    bands: Iterable[U64Array],
    num_docs: int,
    *,
    active: BoolArray | None = None,
    max_bucket_size: int = 1000,
) -> CandidatePairs:
    """:func:`candidate_pairs` over bands given one at a time (each ``uint64[num_docs]``).

    Only one band is in memory at once (with its sort), so a key table spilled to disk is
    read band by band.
    """
    docs = np.arange(num_docs, dtype=np.int64)
    if active is not None:
        docs = docs[active]
    return bucket_pairs(((band[docs], docs) for band in bands), num_docs, max_bucket_size)


def shared_key_pairs(
    keys: U64Array, *, active: BoolArray | None = None, max_bucket_size: int = 1000
) -> CandidatePairs:
    """Pairs of documents sharing any key, wherever it sits in their rows.

    Unlike :func:`candidate_pairs`, all columns are one namespace (for sampled hash values,
    such as the smallest values of bottom-k sketches); EMPTY entries are never keys, and a row
    must not repeat a key.

    Examples
    --------
    >>> keys = np.array([[5, 7], [7, 9], [1, 2]], dtype=np.uint64)
    >>> pairs = shared_key_pairs(keys)
    >>> list(zip(pairs.first.tolist(), pairs.second.tolist()))
    [(0, 1)]
    """
    num_docs, width = keys.shape
    docs = np.repeat(np.arange(num_docs, dtype=np.int64), width)
    flat = np.ascontiguousarray(keys).reshape(-1)
    usable = flat != np.uint64(0xFFFFFFFFFFFFFFFF)
    if active is not None:
        usable &= np.repeat(active, width)
    return bucket_pairs([(flat[usable], docs[usable])], num_docs, max_bucket_size)


def equal_key_groups(
    keys_hi: U64Array, keys_lo: U64Array | None = None
) -> tuple[I64Array, I64Array]:
    """Groups of two or more items with equal 64-bit (or 128-bit: ``keys_hi``, ``keys_lo``) keys.

    Returns ``(members, bounds)``: group ``g`` is ``members[bounds[g]:bounds[g + 1]]``, items
    ascending within each group.

    Examples
    --------
    >>> members, bounds = equal_key_groups(np.array([9, 4, 9, 9, 4, 1], dtype=np.uint64))
    >>> sorted(members[bounds[g]:bounds[g + 1]].tolist() for g in range(len(bounds) - 1))
    [[0, 2, 3], [1, 4]]
    """
    n = keys_hi.shape[0]
    low = np.empty(0, dtype=np.uint64) if keys_lo is None else np.ascontiguousarray(keys_lo)
    if n < 2:
        return np.empty(0, dtype=np.int64), np.zeros(1, dtype=np.int64)
    item_bits = max(1, (n - 1).bit_length())
    if item_bits > 32:  # the kernel packs an item's place beside the key's low item_bits bits
        raise ParameterError(f"at most 2**32 keys are grouped at once; got {n:,}")
    keys_hi = np.ascontiguousarray(keys_hi, dtype=np.uint64)
    ordered = sort_packed(keys_hi, item_bits)
    parts = max(2, get_num_threads()) if n >= SPLIT_GROUPING else 1
    cuts = _prefix_cuts(ordered, item_bits, parts)
    found: dict[int, tuple[I64Array, I64Array]] = {}

    def group(part: int, _: int) -> None:
        lo, hi = cuts[part], cuts[part + 1]
        found[part] = groups.equal_key_buckets(ordered[lo:hi], keys_hi, low, item_bits)

    in_blocks(group, len(cuts) - 1, max_block=1)
    if len(found) == 1:
        return found[0]
    in_order = [found[part] for part in range(len(found))]
    ends = np.cumsum([members.shape[0] for members, _ in in_order])
    members = np.concatenate([m for m, _ in in_order])
    starts = np.r_[0, ends[:-1]]
    bounds = np.concatenate([b[:-1] + s for (_, b), s in zip(in_order, starts, strict=True)])
    return members, np.r_[bounds, ends[-1:]]


SPLIT_GROUPING = 1 << 16
"""Keys from which :func:`equal_key_groups` groups the sorted keys in parts, in threads (the
grouping reads each grouped key's full value at random: 3.5 s of one thread for the 16 bands
of 10M documents)."""


def _prefix_cuts(ordered: U64Array, item_bits: int, parts: int) -> list[int]:
    """Where to cut the sorted packed keys into about ``parts`` equal parts, between prefixes.

    Every cut falls where the key prefix changes, so no group is cut in two: ``[0, ..., n]``.
    """
    n = ordered.shape[0]
    cuts = [0]
    for part in range(1, parts):
        prefix = int(ordered[part * n // parts - 1]) >> item_bits
        if prefix + 1 == 1 << (64 - item_bits):  # the last prefix: no cut after it
            break
        at = int(np.searchsorted(ordered, np.uint64((prefix + 1) << item_bits)))  # past it
        if cuts[-1] < at < n:
            cuts.append(at)
    cuts.append(n)
    return cuts


def near_key_share(keys: U64Array, fingerprints: U64Array) -> float:
    """The share of documents that share a key of some column with a document of another text.

    ``keys``: one row of lookup keys per document; ``fingerprints``: each document's exact
    fingerprint (one 64-bit word of it), so that copies of one text do not count as near
    copies of each other. How densely a batch holds near copies, in a few sorts.

    Examples
    --------
    >>> keys = np.array([[1, 5], [2, 5], [3, 6], [3, 7]], dtype=np.uint64)
    >>> near_key_share(keys, np.array([10, 11, 12, 12], dtype=np.uint64))  # 3 and 4: one text
    0.5
    """
    num_docs = keys.shape[0]
    if num_docs < 2:
        return 0.0
    near = np.zeros(num_docs, dtype=bool)
    for column in range(keys.shape[1]):
        members, bounds = equal_key_groups(np.ascontiguousarray(keys[:, column]))
        if bounds.shape[0] < 2:
            continue
        texts = fingerprints[members]
        starts = bounds[:-1]
        varied = np.minimum.reduceat(texts, starts) != np.maximum.reduceat(texts, starts)
        near[members[np.repeat(varied, np.diff(bounds))]] = True
    return float(near.mean())


BUCKET_CHUNK_PAIRS = 1 << 22
"""Pairs of a band's buckets made at once (32 MiB of pairs) before they go to the runs."""


def bucket_pairs(
    buckets: Iterable[tuple[U64Array, I64Array]], num_docs: int, max_bucket_size: int
) -> CandidatePairs:
    """Distinct pairs of documents with equal keys within each ``(keys, docs)`` group.

    ``docs`` ascend within each group, so a bucket's members ascend too. A bucket of more than
    ``max_bucket_size`` documents (a *giant* bucket) pairs each with the
    ``max_bucket_size - 1`` documents just before it. The rule of both engines: the Spark
    engine calls this on the buckets of each of its partitions; the local engine gathers the
    same pairs into sorted runs (:func:`gather_bucket_pairs`).

    Examples
    --------
    >>> keys = np.array([5, 5, 5, 5, 9], dtype=np.uint64)
    >>> pairs = bucket_pairs([(keys, np.arange(5))], 5, max_bucket_size=2)
    >>> list(zip(pairs.first.tolist(), pairs.second.tolist())), pairs.num_giant_buckets
    ([(0, 1), (1, 2), (2, 3)], 1)
    """
    runs = PairRuns(num_docs, memory_bytes=1 << 62, with_values=False)
    num_giant, largest = gather_bucket_pairs(buckets, runs, max_bucket_size)
    parts = list(runs.pairs())
    first, second = (
        (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))
        if parts
        else (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
    )
    return CandidatePairs(
        first=first, second=second, num_giant_buckets=num_giant, largest_bucket=largest
    )


def gather_bucket_pairs(
    buckets: Iterable[tuple[U64Array, I64Array]], runs: PairRuns, max_bucket_size: int
) -> tuple[int, int]:
    """Add the pairs of :func:`bucket_pairs` to ``runs``; ``(giant buckets, largest bucket)``.

    A group's pairs are made :data:`BUCKET_CHUNK_PAIRS` at a time, and ``runs`` sorts them
    into runs (on disk when it has a directory) as its memory fills: what this holds at once
    is one group's keys and a chunk of pairs, whatever the number of pairs.
    """
    if max_bucket_size < 2:
        raise ParameterError(f"max_bucket_size must be an int >= 2; got {max_bucket_size}.")
    num_giant = largest = 0
    for values, docs in buckets:
        if docs.shape[0]:
            largest = max(largest, 1)
        members, bounds = equal_key_groups(values)
        if bounds.shape[0] < 2:
            continue
        sizes = np.diff(bounds)
        num_giant += int(np.count_nonzero(sizes > max_bucket_size))
        largest = max(largest, int(sizes.max()))
        chunks = bucket_pair_chunks(docs[members], bounds, max_bucket_size, BUCKET_CHUNK_PAIRS)
        for first, second in chunks:
            runs.add(first, second)
    return num_giant, largest


def bucket_pair_chunks(
    members: I64Array, bounds: I64Array, cap: int, chunk_pairs: int
) -> Iterator[tuple[I64Array, I64Array]]:
    """The pairs of each bucket ``members[bounds[b]:bounds[b + 1]]``, a chunk at a time.

    Chunks of about ``chunk_pairs`` (one member's pairs are never split: at most ``cap - 1``
    more). In :func:`bucket_pairs`' order and under its rule for giant buckets.
    """
    ends = groups.member_pair_ends(bounds, cap)
    lo = 0
    while lo < ends.shape[0]:
        before = int(ends[lo - 1]) if lo else 0
        hi = max(lo + 1, int(np.searchsorted(ends, before + chunk_pairs, side="right")))
        count = int(ends[hi - 1]) - before
        if count:
            bucket = int(np.searchsorted(bounds, lo, side="right")) - 1
            yield groups.member_pairs(members, bounds, cap, bucket, lo, hi, count)
        lo = hi
