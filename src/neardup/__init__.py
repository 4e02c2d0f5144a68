"""neardup: find near-duplicate documents in large collections, in sub-quadratic time.

The flow: read → normalise + shingle → sketch (MinHash / OPH / SimHash) → candidates (LSH
bands or Hamming tables) → verify → cluster → write. Every name below is public and typed;
everything else is internal.

Names are imported when first used (PEP 562), so ``import neardup`` and the command line's
``--help`` do not pay for numba, pyarrow or the kernels until something needs them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from neardup._version import __version__

if TYPE_CHECKING:
    from neardup.cluster import Clusters, connected_components
    from neardup.embed import Encoder, load_encoder
    from neardup.engine.frames import dedup_dataset, dedup_frame
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
    from neardup.explain import Passage, shared_passages
    from neardup.hamming import HammingIndex
    from neardup.index import LSHIndex, VectorIndex
    from neardup.jobs.dedup import dedup_files
    from neardup.jobs.plan import plan
    from neardup.join import JoinResult, similarity_join
    from neardup.lookup import Match, NearIndex
    from neardup.lsh import (
        Amplification,
        band_keys,
        bands_rows,
        candidate_pairs,
        choose_amplification,
        choose_bands,
        s_curve,
        threshold_of,
    )
    from neardup.pairs import CandidatePairs
    from neardup.params import (
        DedupConfig,
        EmbeddingSpec,
        JoinSpec,
        LSHSpec,
        NormalizeSpec,
        OutputSpec,
        ReadSpec,
        ShingleSpec,
        SketchSpec,
    )
    from neardup.pipeline import DedupResult, VerifiedPairs, dedup
    from neardup.plan import Plan
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
    from neardup.summary import Summary
    from neardup.text import Shingler, ShingleSets, normalize
    from neardup.verify import estimate_jaccard, exact_jaccard, jaccard_of_sets

_HOMES = {
    "neardup.cluster": ("Clusters", "connected_components"),
    "neardup.engine.frames": ("dedup_dataset", "dedup_frame"),
    "neardup.errors": (
        "IdExistsError",
        "IncompatibleError",
        "InputError",
        "MissingExtraError",
        "NeardupError",
        "NeardupWarning",
        "ParameterError",
        "StoreError",
    ),
    "neardup.embed": ("Encoder", "load_encoder"),
    "neardup.explain": ("Passage", "shared_passages"),
    "neardup.hamming": ("HammingIndex",),
    "neardup.index": ("LSHIndex", "VectorIndex"),
    "neardup.jobs.dedup": ("dedup_files",),
    "neardup.jobs.plan": ("plan",),
    "neardup.join": ("JoinResult", "similarity_join"),
    "neardup.lookup": ("Match", "NearIndex"),
    "neardup.lsh": (
        "Amplification",
        "band_keys",
        "bands_rows",
        "candidate_pairs",
        "choose_amplification",
        "choose_bands",
        "s_curve",
        "threshold_of",
    ),
    "neardup.pairs": ("CandidatePairs",),
    "neardup.params": (
        "DedupConfig",
        "EmbeddingSpec",
        "JoinSpec",
        "LSHSpec",
        "NormalizeSpec",
        "OutputSpec",
        "ReadSpec",
        "ShingleSpec",
        "SketchSpec",
    ),
    "neardup.pipeline": ("DedupResult", "VerifiedPairs", "dedup"),
    "neardup.plan": ("Plan",),
    "neardup.summary": ("Summary",),
    "neardup.sketch": (
        "SKETCHERS",
        "IDFWeights",
        "MinHasher",
        "OPHSketcher",
        "Signatures",
        "SimHasher",
        "make_sketcher",
        "minhash_sets",
    ),
    "neardup.text": ("Shingler", "ShingleSets", "normalize"),
    "neardup.verify": ("estimate_jaccard", "exact_jaccard", "jaccard_of_sets"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "SKETCHERS",
    "Amplification",
    "CandidatePairs",
    "Clusters",
    "DedupConfig",
    "DedupResult",
    "EmbeddingSpec",
    "Encoder",
    "HammingIndex",
    "IDFWeights",
    "IdExistsError",
    "IncompatibleError",
    "InputError",
    "JoinResult",
    "JoinSpec",
    "LSHIndex",
    "LSHSpec",
    "Match",
    "MinHasher",
    "MissingExtraError",
    "NearIndex",
    "NeardupError",
    "NeardupWarning",
    "NormalizeSpec",
    "OPHSketcher",
    "OutputSpec",
    "ParameterError",
    "Passage",
    "Plan",
    "ReadSpec",
    "ShingleSets",
    "ShingleSpec",
    "Shingler",
    "Signatures",
    "SimHasher",
    "SketchSpec",
    "StoreError",
    "Summary",
    "VectorIndex",
    "VerifiedPairs",
    "__version__",
    "band_keys",
    "bands_rows",
    "candidate_pairs",
    "choose_amplification",
    "choose_bands",
    "connected_components",
    "dedup",
    "dedup_dataset",
    "dedup_files",
    "dedup_frame",
    "estimate_jaccard",
    "exact_jaccard",
    "jaccard_of_sets",
    "load_encoder",
    "make_sketcher",
    "minhash_sets",
    "normalize",
    "plan",
    "s_curve",
    "shared_passages",
    "similarity_join",
    "threshold_of",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'neardup' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
