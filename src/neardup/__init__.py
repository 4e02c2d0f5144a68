"""neardup: find near-duplicate documents in large collections, in sub-quadratic time.

The flow: read → normalise + shingle → sketch (MinHash / OPH / SimHash) → candidates (LSH
bands or Hamming tables) → verify → cluster → write. Every name below is public and typed;
everything else is internal.
"""

from neardup._version import __version__
from neardup.cluster import Clusters, connected_components
from neardup.engine.local import dedup_files
from neardup.errors import (
    IdExistsError,
    IncompatibleError,
    InputError,
    MissingExtraError,
    NeardupError,
    NeardupWarning,
    ParameterError,
    StoreError,
)
from neardup.hamming import HammingIndex, HammingMatch
from neardup.lsh import (
    CandidatePairs,
    band_keys,
    candidate_pairs,
    choose_bands,
    s_curve,
    threshold_of,
)
from neardup.params import DedupConfig, LSHSpec, NormalizeSpec, ShingleSpec, SketchSpec
from neardup.pipeline import DedupResult, VerifiedPairs, dedup
from neardup.sketch import (
    SKETCHERS,
    IDFWeights,
    MinHasher,
    OPHSketcher,
    Signatures,
    SimHasher,
    make_sketcher,
    minhash_sets,
)
from neardup.text import Shingler, ShingleSets, normalize
from neardup.verify import estimate_jaccard, exact_jaccard, jaccard_of_sets

__all__ = [
    "SKETCHERS",
    "CandidatePairs",
    "Clusters",
    "DedupConfig",
    "DedupResult",
    "HammingIndex",
    "HammingMatch",
    "IDFWeights",
    "IdExistsError",
    "IncompatibleError",
    "InputError",
    "LSHSpec",
    "MinHasher",
    "MissingExtraError",
    "NeardupError",
    "NeardupWarning",
    "NormalizeSpec",
    "OPHSketcher",
    "ParameterError",
    "ShingleSets",
    "ShingleSpec",
    "Shingler",
    "Signatures",
    "SimHasher",
    "SketchSpec",
    "StoreError",
    "VerifiedPairs",
    "__version__",
    "band_keys",
    "candidate_pairs",
    "choose_bands",
    "connected_components",
    "dedup",
    "dedup_files",
    "estimate_jaccard",
    "exact_jaccard",
    "jaccard_of_sets",
    "make_sketcher",
    "minhash_sets",
    "normalize",
    "s_curve",
    "threshold_of",
]
