"""Hashing: Rabin fingerprints over GF(2) (the default fingerprints live in the text kernels)."""

from neardup.hashing.rabin import (
    DEFAULT_POLYNOMIAL,
    RabinFingerprinter,
    is_irreducible,
    random_irreducible,
)

__all__ = ["DEFAULT_POLYNOMIAL", "RabinFingerprinter", "is_irreducible", "random_irreducible"]
