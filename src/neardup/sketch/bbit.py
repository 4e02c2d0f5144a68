"""b-bit MinHash: b bits per slot instead of 64, with the estimator corrected for chance.

Two documents agree in a slot's b-bit code when their winners agree (probability J) or, when
they differ, by chance (probability C = 2^-b). So ``P = C + (1 - C) J`` and, with ``m`` agreeing
slots out of ``k``, ``J_hat = (m / k - C) / (1 - C)`` is unbiased. For b = 2, k = 128 this is
seed 000's ``(m - 32) / 96``. Storage drops from 8 bytes to b/8 bytes per slot (Li and König,
"b-Bit Minwise Hashing", WWW 2010; seed 000, "Ping Li's fast uniform sampling").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neardup._kernels import bbit as kernels
from neardup._parallel import parallel_section
from neardup._types import F64Array, U8Array, U64Array
from neardup.errors import IncompatibleError, ParameterError
from neardup.lsh.banding import CandidatePairs
from neardup.sketch.signatures import Signatures

__all__ = ["BBitSignatures", "bbit_estimate", "chance_agreement", "pack_bbit"]

BBIT_WIDTHS = (1, 2, 4, 8)
_BBIT_KEY = np.uint64(0x9E6C63D0676A9A99)


def chance_agreement(num_bits: int) -> float:
    """C = 2^-b: the chance that two different winners share their b-bit code.

    Examples
    --------
    >>> chance_agreement(2)
    0.25
    """
    return 2.0**-num_bits


@dataclass(frozen=True, slots=True, eq=False)
class BBitSignatures:
    """b-bit codes of a signature matrix, packed ``8 // num_bits`` slots per byte.

    Attributes
    ----------
    packed
        ``uint8[num_docs, ceil(num_perm * num_bits / 8)]``; slot ``i`` is in bits
        ``(i mod s) * b ..`` of byte ``i // s``, with ``s = 8 // b``.
    source
        The full signatures' provenance (spec, fingerprint scheme, versions).
    """

    packed: U8Array
    num_perm: int
    num_bits: int
    source: dict[str, object]

    @property
    def bytes_per_document(self) -> int:
        """Storage of one document's codes."""
        return int(self.packed.shape[1])

    def codes(self) -> U64Array:
        """The codes unpacked, ``uint64[num_docs, num_perm]`` (what LSH banding takes)."""
        out = np.empty((self.packed.shape[0], self.num_perm), dtype=np.uint64)
        with parallel_section:
            kernels.unpack_codes(self.packed, self.num_perm, self.num_bits, out)
        return out

    def check_compatible(self, other: BBitSignatures) -> None:
        """Raise :class:`IncompatibleError` unless ``other`` was made the same way."""
        if (self.num_bits, self.num_perm, self.source) != (
            other.num_bits,
            other.num_perm,
            other.source,
        ):
            raise IncompatibleError(
                f"b-bit signatures differ: {self.num_bits} bits x {self.num_perm} slots of "
                f"{self.source} vs {other.num_bits} bits x {other.num_perm} slots of {other.source}"
            )


def pack_bbit(signatures: Signatures, num_bits: int) -> BBitSignatures:
    """Keep ``num_bits`` pseudo-random bits of each slot's winner, packed into bytes.

    Examples
    --------
    >>> from neardup import OPHSketcher
    >>> sigs = OPHSketcher().sketch(["a b c d e f g h", "a b c d e f g x"])
    >>> packed = pack_bbit(sigs, 2)
    >>> packed.bytes_per_document  # 128 slots x 2 bits, instead of 1,024 bytes
    32
    """
    if num_bits not in BBIT_WIDTHS:
        raise ParameterError(f"num_bits must be one of {BBIT_WIDTHS}; got {num_bits!r}.")
    per_byte = 8 // num_bits
    width = -(-signatures.num_perm // per_byte)
    out = np.empty((signatures.num_docs, width), dtype=np.uint8)
    values = np.ascontiguousarray(signatures.values, dtype=np.uint64)
    with parallel_section:
        kernels.pack_bits(values, _BBIT_KEY, num_bits, out)
    return BBitSignatures(
        packed=out,
        num_perm=signatures.num_perm,
        num_bits=num_bits,
        source=signatures.provenance(),
    )


def bbit_estimate(signatures: BBitSignatures, pairs: CandidatePairs) -> F64Array:
    """The unbiased Jaccard estimate ``(m / k - C) / (1 - C)`` of each pair (may be < 0).

    Its standard deviation is ``sqrt(P (1 - P) / k) / (1 - C)`` with ``P = C + (1 - C) J``.
    For b = 2 and k = 128 it is seed 000's ``(m - 32) / 96`` (a golden test).
    """
    first = np.ascontiguousarray(pairs.first, dtype=np.int64)
    second = np.ascontiguousarray(pairs.second, dtype=np.int64)
    matches = np.empty(first.shape[0], dtype=np.int64)
    with parallel_section:
        kernels.matching_codes(
            signatures.packed, signatures.num_perm, signatures.num_bits, first, second, matches
        )
    chance = chance_agreement(signatures.num_bits)
    return (matches / signatures.num_perm - chance) / (1.0 - chance)
