"""Probabilistic SimHash matching (PSM, seed 004): one sorted copy, bit flips in VOSH order.

Instead of ``C(G, g)`` permuted copies (:mod:`.bphs`), PSM keeps the fingerprints once, sorted,
with a header table of ``2^t + 1`` offsets for their top ``t`` bits, and for a query ``u`` looks
up ``u ^ mask`` for flip sets in non-increasing probability ``p(u, S)`` (VOSH) until a match
(first-match, PSMF) or the budget ``k`` (all-match, PSMA). A bit's flip probability comes from
the query's own SimHash weight ``W_i``: a near copy flips bit ``i`` when its weight change
crosses zero, ``p_i = P(dW opposite to W_i and |dW| > |W_i|)``, estimated from an empirical
sample of weight changes (:func:`flip_probabilities`). With the full budget (every set of at
most ``h`` bits) PSM finds exactly what BPHS finds.
"""

from __future__ import annotations

import numpy as np

from neardup._kernels import vosh as kernels
from neardup._types import F64Array, I64Array, U64Array
from neardup.errors import ParameterError

__all__ = ["PSMIndex", "flip_probabilities", "vosh_masks"]

MAX_FLIP_PROBABILITY = 0.5
MIN_FLIP_PROBABILITY = 1e-9


def flip_probabilities(bit_weights: F64Array, weight_changes: F64Array) -> F64Array:
    """``p_i = 1/2 P(|dW| > |W_i|)`` per bit, from a sample of per-bit weight changes ``dW``.

    ``weight_changes`` holds ``W(v) - W(u)`` of near-duplicate pairs (any shape); symmetric
    changes cross zero in the right direction half of the time.
    """
    changes = np.sort(np.abs(np.ravel(weight_changes)))
    if changes.size == 0:
        raise ParameterError("flip_probabilities needs a non-empty sample of weight changes.")
    above = 1.0 - np.searchsorted(changes, np.abs(bit_weights), side="right") / changes.size
    p: F64Array = np.clip(0.5 * above, MIN_FLIP_PROBABILITY, MAX_FLIP_PROBABILITY)
    return p


def vosh_masks(probabilities: F64Array, max_bits: int, budget: int) -> U64Array:
    """The first ``budget`` flip masks of one fingerprint in VOSH order (the empty mask first).

    Examples
    --------
    >>> p = np.full(64, 1e-3); p[[5, 9]] = [0.4, 0.3]
    >>> [bin(int(m)) for m in vosh_masks(p, max_bits=2, budget=4)]
    ['0b0', '0b100000', '0b1000000000', '0b1000100000']
    """
    log_odds = _log_odds(np.asarray(probabilities, dtype=np.float64)[None, :])[0]
    out = np.empty(budget, dtype=np.uint64)
    n = kernels.vosh_masks(log_odds, np.argsort(-log_odds, kind="stable"), max_bits, budget, out)
    return out[:n]


def _log_odds(probabilities: F64Array) -> F64Array:
    p = np.clip(probabilities, MIN_FLIP_PROBABILITY, MAX_FLIP_PROBABILITY)
    odds: F64Array = np.log(p) - np.log1p(-p)
    return odds


class PSMIndex:
    """One sorted copy of the fingerprints and a header table of their top ``header_bits``.

    Examples
    --------
    >>> index = PSMIndex(np.array([0b1011, 0b1000, 2**63], np.uint64), header_bits=4)
    >>> p = np.full((1, 64), 0.01); p[0, 1] = 0.4
    >>> query = np.array([0b1001], np.uint64)
    >>> found, attempts = index.query(query, p, max_distance=2, budget=3, first_only=True)
    >>> found.tolist(), attempts.tolist()  # the likeliest flip (bit 1) hits on the 2nd lookup
    ([1], [2])
    """

    def __init__(self, values: U64Array, *, header_bits: int = 16) -> None:
        if not 0 <= header_bits <= 32:
            raise ParameterError(f"header_bits must be in [0, 32]; got {header_bits}.")
        self.values = np.sort(np.asarray(values, dtype=np.uint64))
        self.header_bits = header_bits
        buckets = np.arange(2**header_bits + 1, dtype=np.uint64)
        bounds = buckets << np.uint64(64 - header_bits) if header_bits else buckets * 0
        self.header: I64Array = np.searchsorted(self.values, bounds[:-1]).astype(np.int64)
        self.header = np.append(self.header, self.values.shape[0])

    def memory_bytes(self) -> int:
        """The single copy plus the header table."""
        return int(self.values.nbytes + self.header.nbytes)

    def query(
        self,
        queries: U64Array,
        probabilities: F64Array,
        *,
        max_distance: int = 3,
        budget: int = 1000,
        first_only: bool = False,
    ) -> tuple[I64Array, I64Array]:
        """``(found, attempts)`` per query: stored fingerprints hit, lookups made.

        ``probabilities[q]`` are query ``q``'s 64 flip probabilities; ``budget`` caps the flip
        sets tried (the empty set included); ``first_only`` stops at the first hit (PSMF).
        """
        queries = np.ascontiguousarray(queries, dtype=np.uint64)
        log_odds = _log_odds(np.asarray(probabilities, dtype=np.float64).reshape(-1, 64))
        found = np.zeros(queries.shape[0], dtype=np.int64)
        attempts = np.zeros(queries.shape[0], dtype=np.int64)
        kernels.psm_query(
            self.values, self.header, self.header_bits, queries, log_odds,
            max_distance, budget, first_only, found, attempts,
        )  # fmt: skip
        return found, attempts
