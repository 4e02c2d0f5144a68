"""b-bit MinHash: b bits per slot instead of 64, with the estimator corrected for chance.

Two documents agree in a slot's b-bit code when their winners agree (probability J) or, when
they differ, by chance (probability C = 2^-b). So ``P = C + (1 - C) J`` and, with ``m`` agreeing
slots out of ``k``, ``J_hat = (m / k - C) / (1 - C)`` is unbiased. For b = 2, k = 128 this is
seed 000's ``(m - 32) / 96``, which the seed states "when this is non-negative": fewer matches
than chance give 0. Storage drops from 8 bytes to b/8 bytes per slot (Li and König,
"b-Bit Minwise Hashing", WWW 2010; seed 000, "Ping Li's fast uniform sampling").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from neardup._kernels import bbit as kernels
from neardup._parallel import in_blocks
from neardup._types import Batch, F64Array, I64Array, U8Array, U64Array
from neardup.errors import IncompatibleError, ParameterError
from neardup.pairs import CandidatePairs
from neardup.params import SketchSpec
from neardup.sketch.base import TextSketcher
from neardup.sketch.oph import OPHSketcher
from neardup.sketch.signatures import Signatures

__all__ = ["BBitSignatures", "BBitSketcher", "bbit_estimate", "chance_agreement", "pack_bbit"]

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

    @classmethod
    def of(cls, signatures: Signatures) -> BBitSignatures:
        """The codes held by the ``uint64`` rows of a :class:`BBitSketcher`'s signatures."""
        return cls.from_rows(signatures.values, signatures.spec, signatures.provenance())

    @classmethod
    def from_rows(
        cls, values: U64Array, spec: SketchSpec, source: dict[str, object] | None = None
    ) -> BBitSignatures:
        """The codes packed in ``uint64`` rows made with ``spec`` (kind ``"bbit"``)."""
        width = -(-spec.num_perm * spec.bbits // 8)
        packed = np.ascontiguousarray(values).view(np.uint8)[:, :width]
        return cls(
            packed=np.ascontiguousarray(packed),
            num_perm=spec.num_perm,
            num_bits=spec.bbits,
            source=source if source is not None else {"sketch": spec.to_dict()},
        )

    def codes(self) -> U64Array:
        """The codes unpacked, ``uint64[num_docs, num_perm]`` (what LSH banding takes)."""
        out = np.empty((self.packed.shape[0], self.num_perm), dtype=np.uint64)
        run = partial(kernels.unpack_codes, self.packed, self.num_perm, self.num_bits, out)
        in_blocks(run, self.packed.shape[0])
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
    in_blocks(partial(kernels.pack_bits, values, _BBIT_KEY, num_bits, out), values.shape[0])
    return BBitSignatures(
        packed=out,
        num_perm=signatures.num_perm,
        num_bits=num_bits,
        source=signatures.provenance(),
    )


def bbit_estimate(
    signatures: BBitSignatures | Signatures, pairs: CandidatePairs, *, unbiased: bool = False
) -> F64Array:
    """The Jaccard estimate ``max(0, (m / k - C) / (1 - C))`` of each pair.

    ``signatures``: b-bit codes, or the ``uint64`` rows of a :class:`BBitSketcher` holding them.
    For b = 2 and k = 128 it is seed 000's ``(m - 32) / 96`` "when this is non-negative" (a
    golden test): a similarity, in [0, 1], nearer the truth than the raw value whenever that
    is negative. ``unbiased=True`` keeps the raw value, negative ones too: its mean is J and
    its standard deviation ``sqrt(P (1 - P) / k) / (1 - C)`` with ``P = C + (1 - C) J``.
    """
    if isinstance(signatures, Signatures):
        signatures = BBitSignatures.of(signatures)
    first = np.ascontiguousarray(pairs.first, dtype=np.int64)
    second = np.ascontiguousarray(pairs.second, dtype=np.int64)
    matches = np.empty(first.shape[0], dtype=np.int64)
    run = partial(
        kernels.matching_codes,
        signatures.packed,
        signatures.num_perm,
        signatures.num_bits,
        first,
        second,
        matches,
    )
    in_blocks(run, first.shape[0])
    chance = chance_agreement(signatures.num_bits)
    estimate: F64Array = (matches / signatures.num_perm - chance) / (1.0 - chance)
    return estimate if unbiased else np.maximum(estimate, 0.0)


class BBitSketcher(TextSketcher):
    """b-bit one-permutation hashing: ``spec.bbits`` bits per slot, packed into ``uint64`` rows.

    The slots are those of :class:`~neardup.sketch.OPHSketcher` with the same spec; each row
    holds ``num_perm * bbits`` bits (``BBitSignatures.of`` unpacks them). 128 slots of 2 bits
    are 32 bytes per document instead of 1,024.

    Examples
    --------
    >>> spec = SketchSpec(kind="bbit", bbits=2)
    >>> sigs = BBitSketcher(spec).sketch(["a b c d e f g h", "a b c d e f g x"])
    >>> sigs.values.shape, BBitSignatures.of(sigs).bytes_per_document
    ((2, 4), 32)
    """

    kind = "bbit"

    @classmethod
    def band_slots(cls, values: U64Array, spec: SketchSpec) -> U64Array:
        """The b-bit codes, unpacked one per slot."""
        return BBitSignatures.from_rows(values, spec).codes()

    @classmethod
    def slot_agreement(cls, similarity: float, spec: SketchSpec) -> float:
        """``C + (1 - C) J``: unrelated slots also agree by chance, ``C = 2^-b``."""
        chance = chance_agreement(spec.bbits)
        return chance + (1 - chance) * similarity

    def __init__(self, spec: SketchSpec | None = None) -> None:
        super().__init__(spec)
        self._slots = OPHSketcher(self.spec.with_kind("oph"))

    @property
    def width(self) -> int:
        """Words per row: ``num_perm * bbits`` bits, rounded up to 64."""
        return -(-self.spec.num_perm * self.spec.bbits // 64)

    def _fill(
        self, batch: Batch, values: U64Array, num_shingles: I64Array, fingerprints: U64Array
    ) -> None:
        slots = self._slots.sketch(batch)
        packed = pack_bbit(slots, self.spec.bbits).packed
        values.fill(0)
        values.view(np.uint8)[:, : packed.shape[1]] = packed
        num_shingles[:] = slots.num_shingles
        fingerprints[:] = slots.fingerprints
