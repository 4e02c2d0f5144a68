"""MinHash as an LSH family for the Jaccard similarity of item sets (MMDS §3.3-3.4).

Candidates for the ``jaccard`` join (:data:`neardup.kinds.METRICS`) when it is not exact. The
input is a :class:`~neardup.text.shingle.ShingleSets`: each item's set of 64-bit element
hashes, sorted and distinct (shingle fingerprints, or the hashed ids of the products a user
bought). An elementary hash is one MinHash slot, ``min over x of (a x + b) mod 2^64`` with
``a`` odd; two sets agree in it with probability their Jaccard similarity (MMDS §3.3.3).
``num_rows`` slots make a band's key and ``num_bands`` bands the OR, as for every family
(:class:`~neardup.lsh.family.VectorHasher`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from neardup._types import F64Array, U64Array
from neardup.errors import InputError, ParameterError
from neardup.hashing.bands import band_keys
from neardup.lsh.family import VectorHasher
from neardup.params import JoinSpec
from neardup.sketch.minhash import minhash_sets
from neardup.sketch.signatures import EMPTY_SLOT
from neardup.text.shingle import ShingleSets

__all__ = ["SetHasher", "check_item_sets"]


def check_item_sets(sets: Any, owner: str) -> ShingleSets:
    """``sets`` as a :class:`ShingleSets` of C-contiguous uint64 hashes and int64 offsets.

    Raises
    ------
    InputError
        Not a ``ShingleSets``; offsets that are not ``num_sets + 1`` non-decreasing positions
        inside the hashes; or a set whose hashes are not sorted and distinct (it names it).

    Examples
    --------
    >>> sets = ShingleSets(hashes=np.array([3, 1], np.uint64), offsets=np.array([0, 2]))
    >>> check_item_sets(sets, "demo")
    Traceback (most recent call last):
        ...
    neardup.errors.InputError: demo: set 0 holds hashes that are not sorted and distinct; \
build each set with numpy.unique (or Shingler.shingle_sets).
    """
    if not isinstance(sets, ShingleSets):
        raise InputError(
            f"{owner} needs a ShingleSets (sorted distinct uint64 hashes per set, and "
            f"offsets); got {type(sets).__name__}."
        )
    hashes = np.asarray(sets.hashes)
    offsets = np.asarray(sets.offsets)
    if hashes.ndim != 1 or hashes.dtype != np.uint64:
        raise InputError(
            f"{owner} needs ShingleSets.hashes as a 1-D uint64 array; got {hashes.dtype} "
            f"with shape {hashes.shape}."
        )
    if offsets.ndim != 1 or offsets.shape[0] < 1 or offsets.dtype.kind not in "iu":
        raise InputError(f"{owner} needs ShingleSets.offsets as a 1-D integer array of n + 1.")
    offsets = offsets.astype(np.int64, copy=False)
    if offsets[0] < 0 or offsets[-1] > hashes.shape[0] or np.any(np.diff(offsets) < 0):
        raise InputError(
            f"{owner} needs non-decreasing ShingleSets.offsets within the {hashes.shape[0]} hashes."
        )
    inside = hashes[offsets[0] : offsets[-1]]
    rising = inside[1:] > inside[:-1]
    starts = offsets[1:-1] - offsets[0]  # a new set may start low
    rising[starts[(starts > 0) & (starts < inside.shape[0])] - 1] = True
    if not rising.all():
        at = int(np.argmin(rising)) + 1 + int(offsets[0])
        bad = int(np.searchsorted(offsets, at, side="right")) - 1
        raise InputError(
            f"{owner}: set {bad} holds hashes that are not sorted and distinct; build each "
            "set with numpy.unique (or Shingler.shingle_sets)."
        )
    return ShingleSets(hashes=np.ascontiguousarray(hashes), offsets=np.ascontiguousarray(offsets))


class SetHasher(VectorHasher):
    """MinHash LSH for the Jaccard similarity of sets of 64-bit hashes (MMDS §3.3-3.4).

    ``num_bands * num_rows`` linear permutations ``x -> a x + b mod 2^64`` are drawn once
    from ``spec.seed`` (``a`` odd, so each permutes the 64-bit values; seed 000 "discharging
    the supposition"), as :func:`neardup.sketch.minhash.minhash_sets` applies them. Band ``j``
    is slots ``j r .. j r + r - 1``, mixed into one key (:func:`~neardup.hashing.bands.band_keys`).

    Parameters
    ----------
    spec
        A :class:`~neardup.params.JoinSpec` with ``metric="jaccard"``.
    dim
        Unused: sets have no fixed width (kept for the family interface).
    num_bands, num_rows
        *b* bands of *r* MinHash slots each.
    max_value
        Unused.

    Attributes
    ----------
    perm_a, perm_b
        ``uint64[num_bands * num_rows]``: the permutations' multipliers (odd) and offsets.

    Notes
    -----
    An empty set has no element to hash: every slot of it is ``EMPTY_SLOT`` (``2^64 - 1``), and
    so is every band key, a value a non-empty set's key takes with probability ``2^-64``.
    Empty sets would share all their keys with one another, so callers leave them out of
    the candidate search: :func:`neardup.join.sets.set_join` pairs only non-empty sets (an
    empty set has Jaccard 0 with everything, itself included). Keys depend on the seed and
    the sets only, not on the chunking nor on the number of threads. Cost:
    ``O(|set| b r)`` a set.

    Examples
    --------
    >>> spec = JoinSpec(metric="jaccard", threshold=0.5)
    >>> hasher = SetHasher(spec, num_bands=4, num_rows=2)
    >>> sets = ShingleSets(hashes=np.array([1, 2, 3, 1, 2, 3, 7], np.uint64),
    ...                    offsets=np.array([0, 3, 6, 6, 7]))
    >>> keys = hasher.keys(sets)
    >>> keys.shape, bool(np.all(keys[0] == keys[1])), bool(np.all(keys[2] == EMPTY_SLOT))
    ((4, 4), True, True)
    >>> SetHasher.collision_probability(0.8, spec, 0)
    0.8
    """

    metric = "jaccard"
    _tag: ClassVar[int] = 105
    """Mixed into the seed of the permutations (never change it: keys depend on it)."""
    _chunk_bytes: ClassVar[int] = 32 << 20
    """Signature memory of one chunk of sets."""

    def __init__(
        self,
        spec: JoinSpec,
        dim: int = 0,
        *,
        num_bands: int,
        num_rows: int,
        max_value: int | None = None,
    ) -> None:
        super().__init__(spec, dim, num_bands=num_bands, num_rows=num_rows, max_value=max_value)
        if spec.metric != self.metric:
            raise ParameterError(
                f"SetHasher hashes metric 'jaccard'; got JoinSpec.metric {spec.metric!r}."
            )
        for field, value in (("num_bands", num_bands), ("num_rows", num_rows)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ParameterError(f"SetHasher {field} must be an int >= 1; got {value!r}.")
        rng = np.random.default_rng([spec.seed, self._tag])
        size = num_bands * num_rows
        self.perm_a: U64Array = rng.integers(0, 2**64, size, dtype=np.uint64) | np.uint64(1)
        self.perm_b: U64Array = rng.integers(0, 2**64, size, dtype=np.uint64)

    @classmethod
    def collision_probability(
        cls, value: float | F64Array, spec: JoinSpec, dim: int, max_value: int | None = None
    ) -> float | F64Array:
        """The Jaccard similarity itself: one MinHash slot agrees with probability ``J``.

        MMDS §3.3.3. ``value`` must lie in ``[0, 1]``.
        """
        s = np.asarray(value, dtype=np.float64)
        if not np.all((s >= 0.0) & (s <= 1.0)):
            bad = float(s[~((s >= 0.0) & (s <= 1.0))].reshape(-1)[0])
            raise ParameterError(f"A Jaccard similarity must be in [0, 1]; got {bad!r}.")
        return float(s) if s.ndim == 0 else s

    def keys(self, sets: ShingleSets) -> U64Array:
        """``uint64[num_sets, num_bands]``: each band's ``num_rows`` MinHash slots as one key.

        The signatures are computed a chunk of sets at a time (32 MiB of them at most), so the
        memory is the keys, ``8 num_bands`` bytes a set, plus one chunk.

        Raises
        ------
        InputError
            ``sets`` is not a valid :class:`ShingleSets` (see :func:`check_item_sets`).
        """
        sets = check_item_sets(sets, "SetHasher.keys")
        num_hashes = self.num_bands * self.num_rows
        step = max(1, self._chunk_bytes // (8 * num_hashes))
        out = np.empty((len(sets), self.num_bands), dtype=np.uint64)
        for start in range(0, len(sets), step):
            stop = min(len(sets), start + step)
            bounds = sets.offsets[start : stop + 1]
            chunk = ShingleSets(
                hashes=sets.hashes[bounds[0] : bounds[-1]], offsets=bounds - bounds[0]
            )
            signatures = minhash_sets(chunk, self.perm_a, self.perm_b)
            out[start:stop] = band_keys(signatures, self.num_bands, self.num_rows)
            out[start:stop][bounds[1:] == bounds[:-1]] = EMPTY_SLOT
        return out
