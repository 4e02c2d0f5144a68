"""Search in Hamming space: every stored SimHash fingerprint within distance h of a query."""

from neardup.hamming.bphs import BlockPermutedIndex, bphs_tables, choose_blocks
from neardup.hamming.index import HammingIndex
from neardup.hamming.pairs import FingerprintTables, near_pairs
from neardup.hamming.psm import (
    PSMIndex,
    PSMMatches,
    flip_probabilities,
    psm_batch_query,
    save_sorted,
    vosh_masks,
)

__all__ = [
    "BlockPermutedIndex",
    "FingerprintTables",
    "HammingIndex",
    "PSMIndex",
    "PSMMatches",
    "bphs_tables",
    "choose_blocks",
    "flip_probabilities",
    "near_pairs",
    "psm_batch_query",
    "save_sorted",
    "vosh_masks",
]
