"""Search in Hamming space: every stored 64-bit fingerprint within distance h of a query."""

from neardup.hamming.bphs import BlockPermutedIndex, bphs_tables

__all__ = ["BlockPermutedIndex", "bphs_tables"]
