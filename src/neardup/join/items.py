"""Sets for a ``jaccard`` join from ratings and from real-valued features.

Two ways of making item sets beyond reading them (:mod:`neardup.io.itemsets`):

* :func:`sets_from_rows` groups ``(entity, item[, rating])`` rows into one set per entity,
  turning ratings into sets, sets of "liked" and "hated" items, or bags (MMDS §3.1.3);
* :func:`imprecise_features` turns real vectors into sets of grid cells, so that close values
  share features (seed 000, "imprecise features as quantized neighborhoods").

Bags are sets of expanded elements: item ``i`` rated ``n`` becomes the ``n`` elements
``(i, 1) .. (i, n)`` (seed 000, "important features"; the hashes of
:func:`neardup.sketch.weighted.replicate`). The Jaccard similarity of two expansions is
``W = sum_i min(a_i, b_i) / sum_i max(a_i, b_i)``, the weighted Jaccard, which reaches 1 for
equal bags. MMDS §3.1.3 defines the bag similarity with the union counting the *sum*,
``B = sum min / sum (a_i + b_i)``; as ``sum (a + b) = sum min + sum max``,
``B = W / (1 + W)`` (:func:`bag_similarity`), at most 1/2. The two order pairs alike, so a
threshold ``t < 1/2`` on ``B`` is the threshold ``t / (1 - t)`` on ``W``.
"""

from __future__ import annotations

import math
import re
from functools import partial
from typing import Literal, NamedTuple, overload

import numpy as np
from numpy.typing import NDArray

from neardup._kernels.items import (
    grid_cell_features,
    order_segments_by_key,
    scatter_by_owner,
)
from neardup._parallel import in_blocks
from neardup._types import F64Array, I64Array, U64Array
from neardup.errors import InputError, ParameterError
from neardup.io.itemsets import ItemRows, ItemSets, group_sets
from neardup.params import MAX_SEED
from neardup.sketch.weighted import WeightedSets, replicate
from neardup.text.shingle import ShingleSets

__all__ = ["bag_similarity", "imprecise_features", "parse_ratings", "sets_from_rows"]

RatingMode = Literal["set", "likes", "bag"]

_IMPRECISE_TAG = 0x1A9C
"""Mixed into the seed of the grid shifts (never change it: features depend on it)."""

_RATINGS = re.compile(r"(set)(?::([^:]+))?|(bag)|(likes):([^:]+):([^:]+)")
_HATED = np.uint64(0x9E3779B97F4A7C15)
"""An item rated low is the element "hated" of it: its hash XOR this (never change it)."""


class Ratings(NamedTuple):
    """How ratings become set elements (:func:`parse_ratings`)."""

    mode: RatingMode
    high: float | None
    """``set``: the least rating kept; ``likes``: the least rating that is "liked"."""
    low: float | None
    """``likes``: the highest rating that is "hated"."""


_MAX_GRIDS = 1024


def _finite(text: str) -> float | None:
    """``text`` as a finite float, or None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_ratings(ratings: str) -> Ratings:
    """The mode and the thresholds of a ``ratings`` option.

    ``"set"``: every rated item; ``"set:<min>"``: the items rated at least ``min`` (MMDS §3.1.3,
    "ignore low-rated customer/movie pairs"); ``"likes:<high>:<low>"``: the element "liked i"
    for item ``i`` rated at least ``high``, "hated i" for one rated at most ``low`` (``low <
    high``), the ratings between left out (MMDS §3.1.3, "imagine two set elements for each
    movie, 'liked' and 'hated'"); ``"bag"``: item ``i`` ``n`` times for an integer rating
    ``n >= 0``.

    Examples
    --------
    >>> parse_ratings("set:3.5"), parse_ratings("bag")
    (Ratings(mode='set', high=3.5, low=None), Ratings(mode='bag', high=None, low=None))
    >>> tuple(parse_ratings("likes:4:2"))
    ('likes', 4.0, 2.0)
    """
    match = _RATINGS.fullmatch(ratings) if isinstance(ratings, str) else None
    texts = match.group(2, 5, 6) if match is not None else ()
    parsed = [_finite(text) for text in texts if text is not None]
    numbers = [value for value in parsed if value is not None]
    likes = match is not None and match.group(4) is not None
    if match is None or len(numbers) < len(parsed) or (likes and not numbers[1] < numbers[0]):
        raise ParameterError(
            "ratings must be 'set', 'set:<min>', 'likes:<high>:<low>' (finite numbers, low < "
            f"high) or 'bag'; got {ratings!r}."
        )
    if match.group(3):
        return Ratings("bag", None, None)
    if likes:
        return Ratings("likes", numbers[0], numbers[1])
    return Ratings("set", numbers[0] if numbers else None, None)


def sets_from_rows(rows: ItemRows, ratings: str = "set") -> ItemSets:
    """One set (or bag) per entity from ``(entity, item[, rating])`` rows (MMDS §3.1.3).

    Parameters
    ----------
    rows
        The rows, as :func:`neardup.io.itemsets.read_item_rows` reads them.
    ratings
        ``"set"``, ``"set:<min>"``, ``"likes:<high>:<low>"`` or ``"bag"``
        (:func:`parse_ratings`); all but ``"set"`` need a rating field. A bag is expanded
        into a set whose Jaccard similarity is the weighted Jaccard of the bags (module
        docstring).

    Returns
    -------
    ItemSets
        The entities in the order they first occur in the file, each with its set. An entity
        left with no item (all rated below ``min``, or 0 in a bag) keeps an empty set, which
        has similarity 0 with every set and is never paired.

    Raises
    ------
    InputError
        With ratings: an entity rating one item twice; in a bag, a rating that is negative or
        not a whole number. The message names the file and both lines, or the line.
    ParameterError
        ``ratings`` malformed, or ``"set:<min>"`` or ``"bag"`` with rows that have no rating.

    Examples
    --------
    MMDS Example 3.2: the bags {a, a, a, b} and {a, a, b, b, c}.

    >>> import pyarrow as pa
    >>> from pathlib import Path
    >>> from neardup.io.itemsets import hash_items
    >>> rows = ItemRows(path=Path("ratings.csv"), entity_ids=np.array([1, 2]),
    ...                 entities=np.array([0, 0, 1, 1, 1]),
    ...                 items=hash_items(pa.array(["a", "b", "a", "b", "c"])),
    ...                 ratings=np.array([3.0, 1, 2, 2, 1]), lines=np.arange(2, 7))
    >>> bags = sets_from_rows(rows, "bag")
    >>> bags.sets.sizes().tolist()
    [4, 5]
    >>> a, b = bags.sets.set_of(0), bags.sets.set_of(1)
    >>> w = np.intersect1d(a, b).size / np.union1d(a, b).size
    >>> w, bag_similarity(w)
    (0.5, 0.3333333333333333)
    """
    mode, high, low = parse_ratings(ratings)
    num_sets = len(rows.entity_ids)
    if rows.ratings is None:
        if ratings != "set":
            raise ParameterError(
                f"ratings={ratings!r} needs a rating for each row; name the rating field "
                "(--rating-field), or use ratings='set'."
            )
        return ItemSets(ids=rows.entity_ids, sets=group_sets(rows.entities, rows.items, num_sets))
    order = _by_entity_and_item(rows, num_sets)
    entities, items, values = rows.entities[order], rows.items[order], rows.ratings[order]
    _check_single_ratings(rows, order)
    if mode == "set":
        keep = values >= high if high is not None else np.ones(values.shape[0], dtype=bool)
        return ItemSets(ids=rows.entity_ids, sets=_sorted_sets(entities, items, keep, num_sets))
    if mode == "likes":
        assert high is not None
        assert low is not None
        hated = values <= low
        keep = (values >= high) | hated
        elements = np.where(hated, items ^ _HATED, items)[keep]
        by_element = np.lexsort((elements, entities[keep]))  # each entity's elements sorted
        whole = np.ones(by_element.shape[0], dtype=bool)
        sets = _sorted_sets(entities[keep][by_element], elements[by_element], whole, num_sets)
        return ItemSets(ids=rows.entity_ids, sets=sets)
    counts = np.rint(values)
    bad = (counts != values) | (values < 0)
    if bad.any():
        row = int(order[np.argmax(bad)])
        raise InputError(
            f"the rating {rows.ratings[row]:g} is not a whole number >= 0; ratings='bag' puts "
            "an item in the bag n times for a rating n: round the ratings, or use "
            "ratings='set:<min>'",
            path=rows.path,
            line=int(rows.lines[row]),
        )
    keep = counts > 0
    distinct = _sorted_sets(entities, items, keep, num_sets)
    return ItemSets(
        ids=rows.entity_ids, sets=replicate(WeightedSets(sets=distinct, weights=counts[keep]))
    )


def _sorted_sets(
    entities: I64Array, items: U64Array, keep: NDArray[np.bool_], num_sets: int
) -> ShingleSets:
    """The kept rows as sets, the rows sorted by entity and item (each pair at most once)."""
    offsets = np.zeros(num_sets + 1, dtype=np.int64)
    np.cumsum(np.bincount(entities[keep], minlength=num_sets), out=offsets[1:])
    return ShingleSets(hashes=np.ascontiguousarray(items[keep]), offsets=offsets)


def _by_entity_and_item(rows: ItemRows, num_sets: int) -> NDArray[np.int64]:
    """The row numbers sorted by entity, then item hash, then row.

    A counting sort by entity, then each entity's rows sorted on their own (in parallel).
    """
    room = np.zeros(num_sets + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows.entities, minlength=num_sets), out=room[1:])
    order = np.empty(len(rows), dtype=np.int64)
    scatter_by_owner(rows.entities, np.arange(len(rows), dtype=np.int64), room[:-1].copy(), order)
    keys = np.ascontiguousarray(rows.items, dtype=np.uint64)
    in_blocks(partial(order_segments_by_key, keys, order, room), num_sets)
    return order


def _check_single_ratings(rows: ItemRows, order: NDArray[np.int64]) -> None:
    """Each entity rates each item once (``order`` sorts the rows by entity, then item)."""
    entities, items = rows.entities[order], rows.items[order]
    repeated = (entities[1:] == entities[:-1]) & (items[1:] == items[:-1])
    if not repeated.any():
        return
    pairs = np.sort(np.stack([order[:-1][repeated], order[1:][repeated]], axis=1), axis=1)
    earlier, later = pairs[np.argmin(pairs[:, 1])]
    raise InputError(
        f"this row rates the item of line {rows.lines[earlier]} again, for the same entity; "
        "keep one rating per entity and item",
        path=rows.path,
        line=int(rows.lines[later]),
    )


@overload
def bag_similarity(jaccard: float) -> float: ...


@overload
def bag_similarity(jaccard: F64Array) -> F64Array: ...


def bag_similarity(jaccard: float | F64Array) -> float | F64Array:
    """MMDS's bag similarity ``B = W / (1 + W)`` from the Jaccard ``W`` of two expanded bags.

    ``W = sum min / sum max`` (the expansions' set Jaccard); MMDS §3.1.3 counts the union as
    ``sum (a + b) = sum min + sum max``. ``B`` is at most 1/2.

    Examples
    --------
    >>> bag_similarity(1.0), bag_similarity(np.array([0.0, 0.5]))
    (0.5, array([0.        , 0.33333333]))
    """
    return jaccard / (1.0 + jaccard)


def imprecise_features(
    vectors: NDArray[np.floating] | NDArray[np.integer],
    *,
    cell_width: float,
    num_grids: int,
    seed: int = 42,
) -> ShingleSets:
    """Real vectors as sets of grid cells: close coordinates share features (seed 000).

    Each coordinate ``x_j`` of a row lies in one cell of each of ``num_grids`` grids of width
    ``w = cell_width``, grid ``k`` shifted by ``u_kj`` drawn uniformly from ``[0, w)`` (once per
    grid and coordinate, from ``seed``): the feature ``(j, k, floor((x_j + u_kj) / w))``, hashed
    to 64 bits. A row's set is its ``dim * num_grids`` features, sorted; the quantised
    neighbourhood of seed 000, ``w`` its radius and ``num_grids`` its density.

    Parameters
    ----------
    vectors
        ``(n, dim)`` finite real numbers.
    cell_width
        ``w`` > 0: coordinates ``w`` or more apart never share a cell.
    num_grids
        ``g``: shifted grids per coordinate, in ``[1, 1024]``.
    seed
        Seeds the shifts.

    Returns
    -------
    ShingleSets
        ``dim * num_grids`` features per row (distinct unless two of a row's 64-bit hashes
        collide, a chance below ``(dim * g)^2 / 2^65``).

    Raises
    ------
    InputError
        A value that is NaN or infinite, or so large that its cell number overflows.
    ParameterError
        ``vectors`` not 2-D real numbers, or a parameter outside its range.

    Notes
    -----
    Two values ``delta = |x - y|`` apart share grid ``k``'s cell unless a cell boundary falls
    between them; the boundaries sit at ``m w - u`` with ``u`` uniform, so that chance is
    ``delta / w`` for ``delta <= w``. The grids are independent, hence

    * one grid shares: ``p(delta) = max(0, 1 - delta / w)``;
    * some grid shares: ``1 - min(1, delta / w)^g``;
    * features two rows share, on average: ``g * sum_j p(|x_j - y_j|)``.

    Examples
    --------
    >>> sets = imprecise_features(np.array([[0.0], [0.1], [5.0]]), cell_width=1.0, num_grids=8)
    >>> a, b, c = (sets.set_of(i) for i in range(3))
    >>> len(a), len(np.intersect1d(a, b)) >= 4, len(np.intersect1d(a, c))
    (8, True, 0)
    """
    matrix = np.asarray(vectors)
    if matrix.ndim != 2 or matrix.dtype.kind not in "iuf":
        raise ParameterError(
            f"imprecise_features takes a 2-D array of real numbers; got {matrix.dtype} of "
            f"shape {matrix.shape}."
        )
    width = float(cell_width)
    if not (math.isfinite(width) and width > 0):
        raise ParameterError(
            f"imprecise_features cell_width must be a float > 0; got {cell_width!r}."
        )
    if (
        isinstance(num_grids, bool)
        or not isinstance(num_grids, int)
        or not 1 <= num_grids <= _MAX_GRIDS
    ):
        raise ParameterError(
            f"imprecise_features num_grids must be an int in [1, {_MAX_GRIDS}]; got {num_grids!r}."
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ParameterError(
            f"imprecise_features seed must be an int in [0, {MAX_SEED}]; got {seed!r}."
        )
    values = np.ascontiguousarray(matrix, dtype=np.float64)
    finite = np.isfinite(values)
    if not finite.all():
        row, col = divmod(int(np.argmax(~finite.ravel())), values.shape[1])
        raise InputError(
            f"vectors row {row}, column {col} is {values[row, col]}; imprecise features need "
            "finite numbers"
        )
    if values.size and float(np.abs(values).max()) / width >= 2.0**62:
        raise InputError(
            f"vectors hold values up to {np.abs(values).max():g}, too large for cells of width "
            f"{width:g} (cell numbers must stay below 2^62); scale the vectors or widen the cells"
        )
    num_rows, dim = values.shape
    rng = np.random.default_rng([seed, _IMPRECISE_TAG])
    shifts = rng.uniform(0.0, width, size=(num_grids, dim))
    out = np.empty((num_rows, dim * num_grids), dtype=np.uint64)
    if out.size:
        in_blocks(partial(grid_cell_features, values, shifts, width, out), num_rows)
    offsets = np.arange(num_rows + 1, dtype=np.int64) * (dim * num_grids)
    return ShingleSets(hashes=out.reshape(-1), offsets=offsets)
