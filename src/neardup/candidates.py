"""The candidate families: how signatures become lookup keys, and keys candidate pairs.

Every kind stores one ``uint64`` row per document (:class:`~neardup.sketch.Signatures`); a
*family* (:data:`neardup.kinds.FAMILIES`, chosen by ``LSHSpec.family`` among those the kind
registers) turns rows into keys and keys into candidate pairs:

=============  =================================================================================
family         candidates
=============  =================================================================================
bands          LSH banding, ``b`` bands of ``r`` slots (MMDS §3.4), ``b, r`` chosen for the
               chance that one slot of a pair at the threshold agrees (``C + (1 - C) t`` for
               b-bit codes, which also agree by chance)
bottomk-pairs  documents sharing two of their ``L`` smallest hashes, ``L`` the least with
               ``P(Binomial(L, t) >= 2) >= 0.95``
features       Broder's feature filter: at least ``min_shared`` common supershingles of the
               preset (megashingles when ``min_shared >= 2``)
hamming        fingerprints at most ``h`` bits apart (block-permuted tables, or PSM)
prefix         exact: every pair whose shingle sets reach the Jaccard threshold, by length,
               prefix, position and suffix filtering over the sets themselves (MMDS §3.9); the
               signatures find nothing (``keys`` are empty), :meth:`PrefixFilter.set_pairs` does
containment    exact: every pair where the shorter text's shingle set is at least the
               threshold contained in the longer's (:class:`ContainmentFilter`, as prefix)
=============  =================================================================================

The estimate of a pair's similarity belongs to the kind, not the family (:func:`estimate`).
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from math import acos, comb, pi
from typing import Any

import numpy as np

from neardup._types import BoolArray, F64Array, I64Array, U64Array
from neardup.errors import NeardupWarning, ParameterError
from neardup.hamming.flips import FlipLevels, flip_levels
from neardup.hamming.pairs import near_pairs
from neardup.hamming.psm import all_sets, header_bits_for
from neardup.hashing.bands import band_keys
from neardup.io.spill import PairRuns
from neardup.kinds import FAMILIES, SKETCH_KINDS, load
from neardup.lsh.banding import (
    KeyTable,
    banded_pairs,
    bands_rows,
    gather_bucket_pairs,
    s_curve,
    shared_key_pairs,
)
from neardup.lsh.containment import exact_containment_pairs
from neardup.lsh.features import fungible_pairs
from neardup.lsh.prefix import exact_set_pairs
from neardup.pairs import CandidatePairs
from neardup.params import LSHSpec, SketchSpec, candidate_family, per_word_radius
from neardup.sketch import TextSketcher
from neardup.sketch.bottomk import keyed_mix
from neardup.sketch.features import PRESETS, acceptance_features, supershingles
from neardup.sketch.signatures import EMPTY_SLOT, Signatures
from neardup.text.shingle import ShingleSets

__all__ = ["CandidateScheme", "candidate_scheme", "estimate"]

BOTTOMK_RECALL_AT_THRESHOLD = 0.95
EXACT_PSM_BUCKETS = 4096
"""Header buckets a document beyond which an exact PSM search (no budget) is warned about."""


class CandidateScheme(ABC):
    """Keys, candidates and estimates for one sketch kind under one LSH spec.

    ``shared_namespace``: whether a key pairs documents whichever column it sits in (bottom-k
    samples), rather than only within its column (an LSH band, a feature position).
    """

    shared_namespace = False
    reads_sets = False
    """Whether candidates come from the documents' shingle sets (:meth:`set_pairs`) instead of
    the signatures' keys."""

    def __init__(self, sketch: SketchSpec, lsh: LSHSpec) -> None:
        self.sketch = sketch
        self.lsh = lsh

    @property
    def reads_bit_weights(self) -> bool:
        """Whether :meth:`keys` takes the SimHash bit weights too (``weights``)."""
        return False

    @abstractmethod
    def keys(self, values: U64Array, weights: F64Array | None = None) -> U64Array:
        """``uint64[num_docs, num_keys]``: the lookup keys of each signature row.

        ``weights``: the rows' SimHash bit weights, given when :attr:`reads_bit_weights`.
        """

    @abstractmethod
    def pairs(self, keys: KeyTable, active: BoolArray) -> CandidatePairs:
        """Candidate pairs among the ``active`` documents, in memory."""

    def gather_pairs(self, keys: KeyTable, active: BoolArray, runs: PairRuns) -> tuple[int, int]:
        """Add the candidate pairs among the ``active`` documents to ``runs``.

        Returns ``(giant buckets, largest bucket)``. By default the pairs are found in memory
        (:meth:`pairs`) and added at once; banding adds them a band at a time, so what it
        holds is one band and ``runs``' budget, however many the pairs.
        """
        found = self.pairs(keys, active)
        runs.add(found.first, found.second)
        return found.num_giant_buckets, found.largest_bucket

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """The scheme's parameters and its chance of pairing two documents at the threshold."""


class Banding(CandidateScheme):
    """LSH banding over the slots, as the sketch's maker presents them.

    See :meth:`~neardup.sketch.TextSketcher.band_slots` and ``slot_agreement``.
    """

    def __init__(self, sketch: SketchSpec, lsh: LSHSpec) -> None:
        super().__init__(sketch, lsh)
        self._maker: type[TextSketcher] = load(SKETCH_KINDS[sketch.kind].maker)

    def bands_rows(self) -> tuple[int, int]:
        """The (num_bands, num_rows) in use."""
        return bands_rows(self.lsh, self.sketch.num_perm, self._agreement(self.lsh.threshold))

    def keys(self, values: U64Array, weights: F64Array | None = None) -> U64Array:
        return band_keys(self._maker.band_slots(values, self.sketch), *self.bands_rows())

    def pairs(self, keys: KeyTable, active: BoolArray) -> CandidatePairs:
        """Documents sharing a bucket in a band (a column of keys), one band at a time."""
        bands = (keys.column(j) for j in range(keys.width))
        return banded_pairs(
            bands, keys.num_rows, active=active, max_bucket_size=self.lsh.max_bucket_size
        )

    def gather_pairs(self, keys: KeyTable, active: BoolArray, runs: PairRuns) -> tuple[int, int]:
        docs = np.flatnonzero(active).astype(np.int64)
        bands = ((keys.column(j)[docs], docs) for j in range(keys.width))
        return gather_bucket_pairs(bands, runs, self.lsh.max_bucket_size)

    def describe(self) -> dict[str, Any]:
        b, r = self.bands_rows()
        return {
            "scheme": "bands",
            "num_bands": b,
            "num_rows": r,
            "candidate_probability_at_threshold": float(
                s_curve(self._agreement(self.lsh.threshold), b, r)
            ),
            "label": f"b={b}, r={r}",
            **{name: getattr(self.sketch, name) for name in SKETCH_KINDS[self.sketch.kind].options},
        }

    def _agreement(self, similarity: float) -> float:
        return self._maker.slot_agreement(similarity, self.sketch)


class BottomKPairs(CandidateScheme):
    """Documents sharing two of their ``L`` smallest hashes.

    Each of the ``L`` smallest elements of A ∪ B that lies in A ∩ B is among the ``L`` smallest
    of both sketches, so a pair of resemblance ``J`` shares two of them with probability at
    least ``P(Binomial(L, J) >= 2)``; ``L`` is the least that makes this 0.95 at the threshold.
    The keys are the ``C(L, 2)`` pairs of the ``L`` smallest (as megashingles pair features),
    so that one boilerplate shingle with a small hash does not pair every page holding it.
    """

    shared_namespace = True

    @property
    def probe(self) -> int:
        """``L``, at most ``k``."""
        for size in range(2, self.sketch.num_perm + 1):
            if _two_shared(self.lsh.threshold, size) >= BOTTOMK_RECALL_AT_THRESHOLD:
                return size
        return self.sketch.num_perm

    def keys(self, values: U64Array, weights: F64Array | None = None) -> U64Array:
        size = self.probe
        # All pairs of the L smallest; with k = 1 there is no pair, and the one hash is the key.
        first, second = np.triu_indices(size, 1) if size > 1 else (np.zeros(1, int),) * 2
        low, high = values[:, first], values[:, second]
        keys = keyed_mix(low ^ keyed_mix(high, _PAIR_KEY), _PAIR_KEY)
        keys[low == EMPTY_SLOT] = EMPTY_SLOT  # a sketch smaller than L: no pair beyond its end
        return keys

    def pairs(self, keys: KeyTable, active: BoolArray) -> CandidatePairs:
        return shared_key_pairs(
            keys.matrix(), active=active, max_bucket_size=self.lsh.max_bucket_size
        )

    def describe(self) -> dict[str, Any]:
        return {
            "scheme": "bottom-k pairs",
            "probe": self.probe,
            "candidate_probability_at_threshold": _two_shared(self.lsh.threshold, self.probe),
            "label": f"2 of the {self.probe} smallest hashes shared",
        }


_PAIR_KEY = np.array([0x8A5CD789635D2DFF, 0x121FD2155C472F97], dtype=np.uint64)


def _two_shared(similarity: float, size: int) -> float:
    """P(Binomial(size, similarity) >= 2)."""
    miss = (1 - similarity) ** size + size * similarity * (1 - similarity) ** (size - 1)
    return 1.0 - miss


class FeatureFilter(CandidateScheme):
    """Broder's supershingles: fungible at ``min_shared`` common features of the preset."""

    def __init__(self, sketch: SketchSpec, lsh: LSHSpec) -> None:
        super().__init__(sketch, lsh)
        self.preset = PRESETS[sketch.preset]
        if self.preset.num_samples > sketch.num_perm:
            raise ParameterError(
                f"the {sketch.preset!r} preset needs {self.preset.num_samples} samples; "
                f"num_perm is {sketch.num_perm} (pass --num-perm {self.preset.num_samples})."
            )

    def keys(self, values: U64Array, weights: F64Array | None = None) -> U64Array:
        return supershingles(values, self.preset)

    def pairs(self, keys: KeyTable, active: BoolArray) -> CandidatePairs:
        pairs, _ = fungible_pairs(
            keys.matrix(),
            self.preset.min_shared,
            active=active,
            max_bucket_size=self.lsh.max_bucket_size,
        )
        return pairs

    def describe(self) -> dict[str, Any]:
        p = self.preset
        return {
            "scheme": "features",
            "preset": self.sketch.preset,
            "num_groups": p.num_groups,
            "group_size": p.group_size,
            "min_shared": p.min_shared,
            "candidate_probability_at_threshold": float(acceptance_features(self.lsh.threshold, p)),
            "label": f"{p.min_shared} of {p.num_groups} supershingles of {p.group_size} "
            f"({self.sketch.preset})",
        }


class HammingPairs(CandidateScheme):
    """SimHash: documents whose fingerprints are at most ``lsh.hamming`` bits apart.

    The keys are the fingerprints themselves; the threshold is a cosine, which a pair at angle
    ``θ`` meets within ``h`` bits with probability ``P(Binomial(bits, θ / π) <= h)``. With PSM
    each document's bit weight levels follow its fingerprint (:func:`~neardup.hamming.flips.
    flip_levels`, 4 bits a fingerprint bit), so its header flips are tried likeliest first.
    """

    @property
    def reads_bit_weights(self) -> bool:
        return self.lsh.search == "psm"

    def keys(self, values: U64Array, weights: F64Array | None = None) -> U64Array:
        if weights is None:
            return values
        return np.hstack([values, flip_levels(weights)])

    def pairs(self, keys: KeyTable, active: BoolArray) -> CandidatePairs:
        matrix = keys.matrix()
        words = self.sketch.simhash_bits // 64
        values = np.ascontiguousarray(matrix[:, :words])
        flips = None
        if matrix.shape[1] > words:
            per_word = per_word_radius(self.sketch.simhash_bits, self.lsh.hamming)
            levels = np.ascontiguousarray(matrix[:, words:])
            flips = FlipLevels.fit(values, levels, max_distance=per_word, seed=self.sketch.seed)
            if self.lsh.psm_budget is None:
                _warn_exact_psm(int(active.sum()), per_word)
        return near_pairs(
            values,
            self.lsh.hamming,
            active=active,
            num_blocks=self.lsh.hamming_blocks,
            max_bucket_size=self.lsh.max_bucket_size,
            search=self.lsh.search,
            budget=self.lsh.psm_budget,
            flips=flips,
        )

    def describe(self) -> dict[str, Any]:
        bits, h = self.sketch.simhash_bits, self.lsh.hamming
        flip = acos(self.lsh.threshold) / pi
        within = sum(comb(bits, d) * flip**d * (1 - flip) ** (bits - d) for d in range(h + 1))
        return {
            "scheme": "hamming",
            "bits": bits,
            "max_distance": h,
            "search": self.lsh.search,
            "num_blocks": self.lsh.hamming_blocks or "chosen from the number of fingerprints",
            "psm_budget": self.lsh.psm_budget,
            "candidate_probability_at_threshold": within,
            "label": f"SimHash within {h} of {bits} bits",
        }


def _warn_exact_psm(num_docs: int, per_word: int) -> None:
    """Warn when PSM without a budget visits many buckets a document (an exact search)."""
    buckets = all_sets(header_bits_for(num_docs), per_word)
    if buckets > EXACT_PSM_BUCKETS:
        warnings.warn(
            f"--search psm without --psm-budget visits every header bucket within "
            f"{per_word} bits: {buckets:,} a document at {num_docs:,} documents, an exact but "
            "slow search; give --psm-budget (docs/simhash.md measures the recall of each), or "
            "search with the tables",
            NeardupWarning,
            stacklevel=2,
        )


class SetJoin(CandidateScheme):
    """An exact join of the documents' shingle sets: candidates that are all true pairs.

    No signatures and no false negatives; it needs every active document's shingle set in
    memory at once.
    """

    reads_sets = True

    def keys(self, values: U64Array, weights: F64Array | None = None) -> U64Array:
        return np.empty((values.shape[0], 0), dtype=np.uint64)

    def pairs(self, keys: KeyTable, active: BoolArray) -> CandidatePairs:
        raise ParameterError(
            f"the {self.lsh.family} family pairs shingle sets, not keys: use set_pairs (the "
            "pipeline's exact_candidates)."
        )

    @abstractmethod
    def set_pairs(self, sets: ShingleSets, lengths: I64Array) -> CandidatePairs:
        """The pairs of ``sets`` (item numbers) at the threshold; ``lengths``: of their texts."""


class PrefixFilter(SetJoin):
    """Every pair of shingle sets with Jaccard >= threshold (MMDS §3.9).

    Filtered by their lengths, prefixes, the positions of shared prefix elements and their
    suffixes (:func:`~neardup.lsh.prefix.exact_set_pairs`).
    """

    def set_pairs(self, sets: ShingleSets, lengths: I64Array) -> CandidatePairs:
        first, second, _, _ = exact_set_pairs(sets, self.lsh.threshold)
        return CandidatePairs(first=first, second=second)

    def describe(self) -> dict[str, Any]:
        return {
            "scheme": "prefix",
            "candidate_probability_at_threshold": 1.0,
            "label": "exact prefix filtering",
        }


class ContainmentFilter(SetJoin):
    """Every pair where the shorter text's shingle set is at least the threshold contained.

    Pairs ``first < second``, as every family's; which one is contained is the scorer's to say
    again (:func:`~neardup.lsh.containment.exact_containment_pairs`).
    """

    def set_pairs(self, sets: ShingleSets, lengths: I64Array) -> CandidatePairs:
        contained, container, _, _ = exact_containment_pairs(sets, self.lsh.threshold, lengths)
        first, second = np.minimum(contained, container), np.maximum(contained, container)
        return CandidatePairs(first=first, second=second)

    def describe(self) -> dict[str, Any]:
        return {
            "scheme": "containment",
            "candidate_probability_at_threshold": 1.0,
            "label": "exact containment by prefix filtering",
        }


def candidate_scheme(sketch: SketchSpec, lsh: LSHSpec) -> CandidateScheme:
    """The scheme of the family that finds candidates for ``sketch`` under ``lsh``.

    The family is :func:`~neardup.params.candidate_family`'s choice.
    """
    scheme: type[CandidateScheme] = load(FAMILIES[candidate_family(sketch, lsh)].scheme)
    return scheme(sketch, lsh)


def estimate(signatures: Signatures, pairs: CandidatePairs) -> F64Array:
    """The similarity each pair's signatures estimate, by their kind's registered estimator.

    See :attr:`neardup.kinds.SketchKind.estimator`.
    """
    estimator = load(SKETCH_KINDS[signatures.spec.kind].estimator)
    similarity: F64Array = estimator(signatures, pairs)
    return similarity
