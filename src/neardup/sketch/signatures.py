"""The :class:`Signatures` container: a signature matrix plus everything needed to trust it.

Byte layout when stored (format version 1): ``values`` is a C-ordered ``uint64`` matrix of
``num_docs x num_perm`` slots, little-endian; ``num_shingles`` is ``int64[num_docs]``;
``fingerprints`` is ``uint64[num_docs, 2]`` (high half, low half of the 128-bit exact
fingerprint). The provenance dict (:meth:`Signatures.provenance`) is stored beside them as JSON.
A kind whose kernel has changed what it writes for the same spec names its rule's version there
(:data:`SKETCH_SCHEMES`), so that files of the old rule are refused.
A slot of a document without any shingle holds :data:`EMPTY_SLOT`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neardup._types import BoolArray, I64Array, U64Array
from neardup.errors import IncompatibleError, ParameterError
from neardup.params import SketchSpec
from neardup.text.normalize import UNICODE_VERSION
from neardup.text.shingle import fingerprint_scheme

__all__ = [
    "EMPTY_SLOT",
    "FORMAT_VERSION",
    "SKETCH_SCHEMES",
    "Signatures",
    "differences",
    "provenance_of",
]

FORMAT_VERSION = 1
EMPTY_SLOT = np.uint64(0xFFFFFFFFFFFFFFFF)
SKETCH_SCHEMES: dict[str, str] = {"simhash": "simhash-v2"}
"""The rule's version of each kind whose kernel has changed: ``"simhash-v2"`` sets bit ``j``
when ``W_j >= 0`` (seed 004), where v1 (unnamed in older files) set it when ``W_j > 0``. A kind
not listed is at its first rule, and its provenance has no ``"sketch_scheme"`` entry."""


def provenance_of(
    spec: SketchSpec,
    *,
    unicode_version: str = UNICODE_VERSION,
    format_version: int = FORMAT_VERSION,
) -> dict[str, Any]:
    """How signatures made with ``spec`` by this neardup are described (see ``provenance``).

    Examples
    --------
    >>> provenance_of(SketchSpec(kind="simhash"))["sketch_scheme"]
    'simhash-v2'
    >>> "sketch_scheme" in provenance_of(SketchSpec(kind="minhash"))
    False
    """
    provenance: dict[str, Any] = {
        "format_version": format_version,
        "fingerprint_scheme": fingerprint_scheme(spec.shingle),
        "unicode_version": unicode_version,
        "sketch": spec.to_dict(),
    }
    if spec.kind in SKETCH_SCHEMES:
        provenance["sketch_scheme"] = SKETCH_SCHEMES[spec.kind]
    return provenance


@dataclass(frozen=True, slots=True, eq=False)
class Signatures:
    """MinHash-family signatures of a batch of documents, with the spec that made them.

    Attributes
    ----------
    values
        ``uint64[num_docs, num_perm]``: row ``d`` is document ``d``'s signature (for
        ``kind="bbit"`` the b-bit codes packed into ``ceil(num_perm * bbits / 64)`` words; for
        ``"bottomk"`` the smallest hashes ascending, EMPTY-padded).
    num_shingles
        ``int64[num_docs]``: shingles seen per document; 0 marks a *short* document (fewer
        tokens than one shingle), which only exact matching can pair.
    fingerprints
        ``uint64[num_docs, 2]``: the 128-bit fingerprint of each normalised text.
    spec
        The :class:`~neardup.params.SketchSpec` the signatures were made with.
    """

    values: U64Array
    num_shingles: I64Array
    fingerprints: U64Array
    spec: SketchSpec
    unicode_version: str = UNICODE_VERSION
    format_version: int = FORMAT_VERSION
    _provenance: dict[str, Any] = field(init=False, repr=False)

    @property
    def fingerprint_scheme(self) -> str:
        """The versioned shingle fingerprint scheme, e.g. ``"nd64-v1"``."""
        return fingerprint_scheme(self.spec.shingle)

    def __post_init__(self) -> None:
        provenance = provenance_of(
            self.spec, unicode_version=self.unicode_version, format_version=self.format_version
        )
        object.__setattr__(self, "_provenance", provenance)

    @property
    def num_docs(self) -> int:
        """Rows of the signature matrix."""
        return int(self.values.shape[0])

    @property
    def num_perm(self) -> int:
        """Slots per signature."""
        return int(self.values.shape[1])

    @property
    def is_short(self) -> BoolArray:
        """Documents with no shingle at all: matched only by their exact fingerprint."""
        return np.equal(self.num_shingles, 0)

    def provenance(self) -> dict[str, Any]:
        """How these signatures were made: spec, scheme and versions (:func:`provenance_of`)."""
        return dict(self._provenance)

    def check_compatible(self, other: Signatures) -> None:
        """Raise :class:`IncompatibleError` naming every field where ``other`` was made differently.

        Examples
        --------
        >>> from neardup.sketch import MinHasher
        >>> a = MinHasher(SketchSpec(kind="minhash", seed=1)).sketch(["a b c d e f"])
        >>> b = MinHasher(SketchSpec(kind="minhash", seed=2)).sketch(["a b c d e f"])
        >>> a.check_compatible(b)
        Traceback (most recent call last):
        ...
        neardup.errors.IncompatibleError: signatures differ in sketch.seed (1 != 2)
        """
        diffs = differences(self._provenance, other._provenance)
        if diffs:
            raise IncompatibleError("signatures differ in " + "; ".join(diffs))

    def take(self, rows: Sequence[int] | I64Array) -> Signatures:
        """The signatures of the given rows, in that order."""
        index = np.asarray(rows, dtype=np.int64)
        return Signatures(
            values=self.values[index],
            num_shingles=self.num_shingles[index],
            fingerprints=self.fingerprints[index],
            spec=self.spec,
            unicode_version=self.unicode_version,
            format_version=self.format_version,
        )

    @classmethod
    def concat(cls, parts: Sequence[Signatures]) -> Signatures:
        """Stack signatures made with one spec; incompatible parts raise IncompatibleError."""
        if not parts:
            raise ParameterError("Signatures.concat needs at least one part")
        first = parts[0]
        for part in parts[1:]:
            first.check_compatible(part)
        return cls(
            values=np.concatenate([p.values for p in parts]),
            num_shingles=np.concatenate([p.num_shingles for p in parts]),
            fingerprints=np.concatenate([p.fingerprints for p in parts]),
            spec=first.spec,
            unicode_version=first.unicode_version,
            format_version=first.format_version,
        )


def differences(a: dict[str, Any], b: dict[str, Any], prefix: str = "") -> list[str]:
    """Where two nested dicts (specs, provenances) differ: ``"key.sub (a != b)"`` each.

    Examples
    --------
    >>> differences({"k": 1, "s": {"x": 2}}, {"k": 1, "s": {"x": 3}})
    ['s.x (2 != 3)']
    """
    out: list[str] = []
    for key in sorted(set(a) | set(b)):
        left, right = a.get(key), b.get(key)
        if isinstance(left, dict) and isinstance(right, dict):
            out.extend(differences(left, right, f"{prefix}{key}."))
        elif left != right:
            out.append(f"{prefix}{key} ({left!r} != {right!r})")
    return out
