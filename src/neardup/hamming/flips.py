"""Which SimHash bits a near copy flips: seed 004's per-bit flip probabilities, fitted and stored.

A document's bit ``j`` is the sign of its weight ``W_j`` (:class:`~neardup.sketch.simhash.
SimHasher` keeps the ``W_j`` on request). An edit changes ``W_j`` by ``Y_j`` and flips the bit
when ``Y_j`` crosses zero against it: ``p_j(u) = P(Y_j > |W_j(u)|) = ½ P(|Y| > |W_j(u)|)`` for
a symmetric ``Y`` (seed 004 §4). Weights are compared on one scale: each document's ``W`` is
divided by its root mean square over the bits (for Gaussian hyperplanes the norm of its
weighted feature vector), so long and short documents share one distribution of ``|Y|``.

That distribution is estimated from the collection, two ways:

- ``"near-pairs"``: the weight changes between fingerprints within ``h`` bits of each other
  (real near copies; :meth:`FlipModel.fit` finds them with block-permuted tables);
- ``"random-pairs"``: the seed's model, ``Y`` distributed as ``W_j(u) - W_j(v)`` over random
  pairs of the collection, used when there are too few near pairs.

The model keeps 1,024 quantiles of ``|Y|``; it is saved with an index (:meth:`to_dict`) and
refused when its version differs.

A batch job that searches every document against the others needs each document's flip
probabilities long after its text was sketched. The seed's advice is to keep only the volatile
bits' information: :func:`flip_levels` keeps each bit's normalised ``|W_j|`` on a grid of 16
levels (4 bits a bit: 32 bytes for 64 bits, against 512 for the weights), and
:class:`FlipLevels` turns them back into probabilities (the fingerprint's bit gives the sign).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

import numpy as np

from neardup._kernels import vosh as kernels
from neardup._parallel import in_blocks
from neardup._types import F64Array, I64Array, U64Array
from neardup.errors import IncompatibleError, ParameterError

__all__ = ["FlipLevels", "FlipModel", "flip_levels", "weights_from_levels"]

MODEL_VERSION = 1
QUANTILES = 1024
MIN_NEAR_PAIRS = 200
"""Near pairs needed to fit ``"near-pairs"``; with fewer the seed's random-pair model is used."""
GRID = 4096
"""Cells of the table the probabilities are read from (a step of 1/4094 of the largest change)."""

LEVEL_STEP = 0.25
"""The width of a weight level: 16 levels cover ``|W_j|`` up to 4 root mean squares (the last
takes everything beyond), finest where bits are volatile."""
LEVELS_PER_WORD = 16

Source = Literal["near-pairs", "random-pairs"]


def normalised(weights: F64Array) -> F64Array:
    """Each row of ``W`` divided by its root mean square (a zero row stays zero)."""
    w = np.asarray(weights, dtype=np.float64)
    scale = np.sqrt(np.mean(w * w, axis=-1, keepdims=True))
    out: F64Array = np.divide(w, scale, out=np.zeros_like(w), where=scale > 0)
    return out


@dataclass(frozen=True, slots=True, eq=False)
class FlipModel:
    """The distribution of ``|Y|``, the normalised weight change of a bit, as quantiles.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> w = rng.normal(size=(2000, 64))
    >>> model = FlipModel.from_pairs(w, w + rng.normal(scale=0.3, size=w.shape))
    >>> p = model.probabilities(np.array([[0.0, 0.5, 3.0] + [1.0] * 61]))
    >>> bool(p[0, 0] > p[0, 1] > p[0, 2])  # the smaller |W_j|, the likelier the flip
    True
    """

    changes: F64Array
    source: Source
    pairs: int
    _table: F64Array = field(init=False, repr=False)
    _step: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        step = max(float(self.changes[-1]), 1e-12) / (GRID - 2)
        below = np.searchsorted(self.changes, np.arange(GRID) * step, side="right")
        p = np.clip(0.5 * (1.0 - below / self.changes.shape[0]), kernels.MIN_PROBABILITY,
                    kernels.MAX_PROBABILITY)  # fmt: skip
        object.__setattr__(self, "_table", p)
        object.__setattr__(self, "_step", step)

    @classmethod
    def from_pairs(cls, weights_a: F64Array, weights_b: F64Array) -> FlipModel:
        """The model of near copies: rows ``i`` of the two arrays are pair ``i``'s ``W``."""
        return cls._of(normalised(weights_a) - normalised(weights_b), "near-pairs")

    @classmethod
    def from_random_pairs(
        cls, weights: F64Array, *, pairs: int = 100_000, seed: int = 0
    ) -> FlipModel:
        """Seed 004's model: ``Y`` as ``W(u) - W(v)`` over ``pairs`` random pairs of documents."""
        w = normalised(weights)
        if w.shape[0] < 2:
            raise ParameterError("the random-pair flip model needs the weights of 2+ documents.")
        rng = np.random.default_rng(seed)
        u = rng.integers(0, w.shape[0], size=pairs)
        v = (u + rng.integers(1, w.shape[0], size=pairs)) % w.shape[0]
        return cls._of(w[u] - w[v], "random-pairs")

    @classmethod
    def fit(
        cls,
        values: U64Array,
        weights: F64Array,
        *,
        max_distance: int = 3,
        sample: int = 100_000,
        seed: int = 0,
    ) -> FlipModel:
        """Estimate the model from a collection: its fingerprints and their bit weights ``W``.

        The weight changes of the pairs of distinct 64-bit fingerprints within
        ``max_distance`` bits, found among the collection for a ``sample`` of its documents; the
        random-pair model when fewer than :data:`MIN_NEAR_PAIRS` such pairs exist.
        """
        from neardup.hamming.bphs import BlockPermutedIndex, choose_blocks

        values = np.ascontiguousarray(values, dtype=np.uint64)
        rng = np.random.default_rng(seed)
        queries = np.sort(rng.permutation(values.shape[0])[:sample])
        blocks = choose_blocks(values.shape[0], max_distance)
        tables = BlockPermutedIndex(values, max_distance=max_distance, num_blocks=blocks)
        query, row = tables.query(values[queries])
        distinct = values[queries[query]] != values[row]
        query, row = queries[query[distinct]], row[distinct]
        if query.shape[0] < MIN_NEAR_PAIRS:
            return cls.from_random_pairs(weights, seed=seed)
        return cls.from_pairs(weights[query], weights[row])

    @classmethod
    def _of(cls, changes: F64Array, source: Source) -> FlipModel:
        """The model of ``changes``, one row of 64 per pair."""
        sample = np.abs(np.ravel(changes))
        if sample.size == 0:
            raise ParameterError("a flip model needs a non-empty sample of weight changes.")
        levels = (np.arange(QUANTILES) + 0.5) / QUANTILES
        quantiles = np.quantile(sample, levels)
        return cls(changes=quantiles, source=source, pairs=int(changes.shape[0]))

    def probabilities(self, weights: F64Array) -> F64Array:
        """``p_j = ½ P(|Y| > |W_j|)`` for each row of bit weights ``W`` (normalised by its RMS).

        Read from a table of :data:`GRID` cells over ``[0, max |Y|]``, each cell holding the
        probability at its lower edge (``p`` falls with ``|W_j|``).
        """
        w = np.ascontiguousarray(weights, dtype=np.float64)
        out = np.empty_like(w)
        run = partial(kernels.flip_probabilities, w, self._step, self._table, out)
        in_blocks(run, w.shape[0])
        return out

    def to_dict(self) -> dict[str, Any]:
        """The model as JSON-ready data, with its version (an index stores it)."""
        return {
            "version": MODEL_VERSION,
            "source": self.source,
            "pairs": self.pairs,
            "normalisation": "rms",
            "quantiles": self.changes.tolist(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FlipModel:
        """The model :meth:`to_dict` wrote; another version is an :class:`IncompatibleError`."""
        if data.get("version") != MODEL_VERSION or data.get("normalisation") != "rms":
            raise IncompatibleError(
                f"a flip model of version {data.get('version')!r}; this neardup reads version "
                f"{MODEL_VERSION}: fit the model again (FlipModel.fit)"
            )
        changes = np.asarray(data["quantiles"], dtype=np.float64)
        if changes.shape != (QUANTILES,) or (np.diff(changes) < 0).any():
            raise IncompatibleError(
                f"a flip model needs {QUANTILES} ascending quantiles: fit the model again "
                "(FlipModel.fit)"
            )
        return cls(changes=changes, source=data["source"], pairs=int(data["pairs"]))


def flip_levels(weights: F64Array) -> U64Array:
    """Each row's normalised ``|W_j|`` as a level of 0..15, 16 levels packed in a uint64.

    Level ``l`` holds ``l * LEVEL_STEP <= |W_j| < (l + 1) * LEVEL_STEP`` (the last, all beyond);
    bit ``j``'s level sits in word ``j // 16`` at bits ``4 (j % 16)``.

    Examples
    --------
    >>> levels = flip_levels(np.array([[0.1, -0.1] + [1.0] * 14]))
    >>> [(int(levels[0, 0]) >> (4 * j)) & 15 for j in range(3)]
    [0, 0, 4]
    """
    w = normalised(weights)
    n, bits = w.shape
    level = np.minimum(np.abs(w) // LEVEL_STEP, LEVELS_PER_WORD - 1).astype(np.uint64)
    shifts = (4 * np.arange(LEVELS_PER_WORD)).astype(np.uint64)
    grouped = level.reshape(n, bits // LEVELS_PER_WORD, LEVELS_PER_WORD) << shifts
    packed: U64Array = np.bitwise_or.reduce(grouped, axis=2)
    return packed


def weights_from_levels(values: U64Array, levels: U64Array) -> F64Array:
    """The bit weights :func:`flip_levels` kept: level midpoints, signed by the fingerprint.

    A set bit ``j`` of ``values`` is a weight ``W_j >= 0`` (:class:`SimHasher`'s rule).

    Examples
    --------
    >>> w = np.array([[0.1, -0.6] + [1.0] * 62])
    >>> values = np.array([[sum(1 << j for j in range(64) if w[0, j] >= 0)]], np.uint64)
    >>> weights_from_levels(values, flip_levels(w))[0, :3].tolist()
    [0.125, -0.625, 1.125]
    """
    n, words = values.shape
    shifts = np.arange(64, dtype=np.uint64)
    signs = ((values[:, :, None] >> shifts) & np.uint64(1)).reshape(n, 64 * words)
    fours = (4 * np.arange(LEVELS_PER_WORD)).astype(np.uint64)
    level = ((levels[:, :, None] >> fours) & np.uint64(15)).reshape(n, -1)
    magnitude = (level.astype(np.float64) + 0.5) * LEVEL_STEP
    weights: F64Array = np.where(signs == 1, magnitude, -magnitude)
    return weights


@dataclass(frozen=True, slots=True, eq=False)
class FlipLevels:
    """A collection's fingerprints with their weight levels, and the flip model fitted on them.

    What PSM needs per document to order its header flips, kept at 4 bits a fingerprint bit.
    """

    values: U64Array
    levels: U64Array
    model: FlipModel

    @classmethod
    def fit(
        cls,
        values: U64Array,
        levels: U64Array,
        *,
        max_distance: int,
        sample: int = 100_000,
        seed: int = 0,
    ) -> FlipLevels:
        """Fit the model (:meth:`FlipModel.fit`) on a seeded ``sample`` of the documents."""
        rng = np.random.default_rng(seed)
        rows = np.sort(rng.permutation(values.shape[0])[:sample])
        weights = weights_from_levels(values[rows], levels[rows])
        model = FlipModel.fit(
            values[rows, 0], weights[:, :64], max_distance=max_distance, sample=sample, seed=seed
        )
        return cls(values, levels, model)

    def probabilities(self, rows: I64Array) -> F64Array:
        """The flip probabilities of the documents ``rows``, one row of 64 per word each."""
        return self.model.probabilities(weights_from_levels(self.values[rows], self.levels[rows]))
