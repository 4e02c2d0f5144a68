"""Search in Hamming space: every stored SimHash fingerprint within distance h of a query."""

from neardup.hamming.bphs import BlockPermutedIndex, bphs_tables, choose_blocks
from neardup.hamming.index import HammingIndex, HammingMatch
from neardup.hamming.pairs import FingerprintTables, near_pairs
from neardup.hamming.psm import PSMIndex, flip_probabilities, vosh_masks

__all__ = [
    "BlockPermutedIndex",
    "FingerprintTables",
    "HammingIndex",
    "HammingMatch",
    "PSMIndex",
    "bphs_tables",
    "choose_blocks",
    "flip_probabilities",
    "near_pairs",
    "vosh_masks",
]
