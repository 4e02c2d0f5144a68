"""Search in Hamming space: every stored SimHash fingerprint within distance h of a query."""

from neardup.hamming.bphs import (
    BlockPermutedIndex,
    BPHSDesign,
    bphs_batch_query,
    bphs_tables,
    choose_blocks,
    choose_design,
)
from neardup.hamming.flips import FlipModel
from neardup.hamming.index import HammingIndex
from neardup.hamming.pairs import FingerprintTables, near_pairs
from neardup.hamming.psm import PSMIndex, PSMMatches, psm_batch_query, vosh_masks
from neardup.hamming.runs import SortedRuns

__all__ = [
    "BPHSDesign",
    "BlockPermutedIndex",
    "FingerprintTables",
    "FlipModel",
    "HammingIndex",
    "PSMIndex",
    "PSMMatches",
    "SortedRuns",
    "bphs_batch_query",
    "bphs_tables",
    "choose_blocks",
    "choose_design",
    "near_pairs",
    "psm_batch_query",
    "vosh_masks",
]
