"""Search in Hamming space: every stored 64-bit fingerprint within distance h of a query."""

from neardup.hamming.bphs import BlockPermutedIndex, bphs_tables
from neardup.hamming.psm import PSMIndex, flip_probabilities, vosh_masks

__all__ = ["BlockPermutedIndex", "PSMIndex", "bphs_tables", "flip_probabilities", "vosh_masks"]
