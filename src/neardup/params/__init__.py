"""Frozen, validated parameter specs: the values every stage of the flow is built from.

A spec is a value: frozen, hashable, validated on construction, convertible to and from a plain
dict (``to_dict`` / ``from_dict``) so that it can be stored next to every artefact it made. Specs
draw no random numbers and build no functions; makers (``MinHasher``, ``OPHSketcher``) do that.
Each spec declares its constraints as data (:mod:`neardup.params.rules`).

One module per concern: text (:class:`NormalizeSpec`, :class:`ShingleSpec`), sketches and
candidates (:class:`SketchSpec`, :class:`LSHSpec`), the join (:class:`JoinSpec`), passage units
(:class:`UnitSpec`), mirrors (:class:`MirrorSpec`), embeddings (:class:`EmbeddingSpec`), the
dedup algorithm (:class:`DedupConfig`), and how a file job reads its inputs (:class:`ReadSpec`)
and writes its outputs (:class:`OutputSpec`); every name is imported from here.
"""

from __future__ import annotations

from neardup.params.dedup import (
    ClusterMode,
    ConfigFile,
    DedupConfig,
    KeepDirection,
    KeepRule,
    PairsMode,
    VerifyMode,
    keep_field,
    load_config,
    moved_keys,
)
from neardup.params.embedding import COSINE_THRESHOLD, EmbeddingDevice, EmbeddingSpec
from neardup.params.join import JoinSpec
from neardup.params.mirrors import MirrorSpec
from neardup.params.output import Compression, OutputSpec
from neardup.params.read import DEFAULT_BATCH_BYTES, HtmlExtract, InputFormat, ReadSpec
from neardup.params.rules import MAX_SEED
from neardup.params.sketch import (
    DEFAULT_NUM_PERM,
    FEATURE_PRESETS,
    PSM_MAX_FLIPS,
    LSHSpec,
    Projection,
    Search,
    SketchSpec,
    Weighting,
    candidate_family,
    check_banding,
    check_psm_radius,
    per_word_radius,
)
from neardup.params.text import (
    DEFAULT_RABIN_POLYNOMIAL,
    STEM_LANGUAGES,
    STOPWORD_LANGUAGES,
    STOPWORD_LIST_PREFIX,
    FingerprintKind,
    NormalizeSpec,
    ShingleSpec,
    ShingleUnit,
    check_shingling,
)
from neardup.params.units import UnitKind, UnitSpec

__all__ = [
    "COSINE_THRESHOLD",
    "DEFAULT_BATCH_BYTES",
    "DEFAULT_NUM_PERM",
    "DEFAULT_RABIN_POLYNOMIAL",
    "FEATURE_PRESETS",
    "MAX_SEED",
    "PSM_MAX_FLIPS",
    "STEM_LANGUAGES",
    "STOPWORD_LANGUAGES",
    "STOPWORD_LIST_PREFIX",
    "ClusterMode",
    "Compression",
    "ConfigFile",
    "DedupConfig",
    "EmbeddingDevice",
    "EmbeddingSpec",
    "FingerprintKind",
    "HtmlExtract",
    "InputFormat",
    "JoinSpec",
    "KeepDirection",
    "KeepRule",
    "LSHSpec",
    "MirrorSpec",
    "NormalizeSpec",
    "OutputSpec",
    "PairsMode",
    "Projection",
    "ReadSpec",
    "Search",
    "ShingleSpec",
    "ShingleUnit",
    "SketchSpec",
    "UnitKind",
    "UnitSpec",
    "VerifyMode",
    "Weighting",
    "candidate_family",
    "check_banding",
    "check_psm_radius",
    "check_shingling",
    "keep_field",
    "load_config",
    "moved_keys",
    "per_word_radius",
]
