"""The registry: every sketch kind and candidate family, described once.

A :class:`SketchKind` says how a kind's signatures are made (its maker), which candidate
families can pair them, what verification measures for it, how its estimates are computed, which
of :class:`~neardup.params.SketchSpec`'s options change its signatures, and whether the index and
the Spark engine take it. A :class:`CandidateFamily` says which scheme finds candidates and which
:class:`~neardup.params.LSHSpec` fields it reads. The command line's choices, the specs'
validation, the engines, the index and ``compare`` all derive from these two tables; adding a
kind is writing its maker (and kernel) and an entry here (see CONTRIBUTING.md).

Implementations are named as ``"module:attribute"`` and imported on first use (:func:`load`), so
this registry sits at the bottom of the house, below the specs that validate against it, and
``import neardup`` stays light.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, Literal

from neardup.errors import ParameterError

__all__ = [
    "ESTIMATED_KINDS",
    "FAMILIES",
    "INDEX_KINDS",
    "METRICS",
    "SKETCH_KINDS",
    "CandidateFamily",
    "ExactMeasure",
    "JoinInput",
    "Measure",
    "Metric",
    "SketchKind",
    "estimated_kinds",
    "load",
]

ExactMeasure = Literal["jaccard", "weighted-jaccard", "cosine"]
"""What ``--verify exact`` computes for a kind: Jaccard of shingle sets, weighted Jaccard of
shingle counts (``sum min / sum max``), or the cosine of (TF or TF-IDF weighted) shingle
vectors."""

Measure = Literal["jaccard", "weighted-jaccard", "cosine", "containment"]
"""What a dedup run's similarity is: its kind's :data:`ExactMeasure`, or, with the
``containment`` family, the containment ``|A ∩ B| / |A|`` of the shorter document's shingle
set in the longer's."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SketchKind:
    """One sketch kind, as every part of neardup sees it.

    Attributes
    ----------
    name
        Its name in specs, files and on the command line (``--sketch``).
    summary
        One line for ``--help``.
    maker
        The :class:`~neardup.sketch.TextSketcher` class that makes its signatures.
    families
        The candidate families that can pair its signatures; the first is the default.
    exact
        What exact verification measures.
    estimator
        ``f(signatures, pairs) -> float64[n]``: the similarity its signatures estimate.
    options
        The :class:`~neardup.params.SketchSpec` fields beyond the common ones (``num_perm``,
        ``seed``, shingling, normalisation) that change its signatures: only these count when
        two signatures are compared for compatibility.
    tag
        Mixed into the seed of its random draws, so two kinds never share permutations (never
        change one: stored signatures depend on it).
    index, spark
        Whether the persistent LSH index, and the Spark engine, take it.
    uses_idf
        Whether its maker takes learned IDF weights (``SketchSpec.weighting="tfidf"`` of
        ``"simhash"``; the IDF band of ``"canonical"``).
    num_slots
        The slots of a kind whose signature has a fixed size (``"canonical"``: one
        fingerprint), which ``SketchSpec.num_perm`` is set to; ``None``: ``num_perm`` slots.
    """

    name: str
    summary: str
    maker: str
    families: tuple[str, ...]
    exact: ExactMeasure
    estimator: str
    options: tuple[str, ...] = ()
    tag: int
    index: bool = False
    spark: bool = False
    uses_idf: bool = False
    num_slots: int | None = None

    @property
    def family(self) -> str:
        """The default candidate family."""
        return self.families[0]


@dataclass(frozen=True, slots=True, kw_only=True)
class CandidateFamily:
    """One way of finding candidate pairs (``LSHSpec.family``).

    Attributes
    ----------
    name
        Its name in specs and summaries.
    summary
        One line for documentation.
    scheme
        The :class:`~neardup.candidates.CandidateScheme` class that implements it.
    options
        The :class:`~neardup.params.LSHSpec` fields it reads beyond the threshold and the
        bucket cap.
    caps_buckets
        Whether it pairs the members of buckets, and so reads the bucket cap
        (``LSHSpec.max_bucket_size``); the exact families find every pair without buckets.
    """

    name: str
    summary: str
    scheme: str
    options: tuple[str, ...] = ()
    caps_buckets: bool = True


_AGREEMENT = "neardup.verify:estimate_jaccard"

SKETCH_KINDS: dict[str, SketchKind] = {
    kind.name: kind
    for kind in (
        SketchKind(
            name="oph",
            summary="one-permutation hashing with optimal densification (fast)",
            maker="neardup.sketch.oph:OPHSketcher",
            families=("bands", "prefix", "containment"),
            exact="jaccard",
            estimator=_AGREEMENT,
            tag=2,
            index=True,
            spark=True,
        ),
        SketchKind(
            name="minhash",
            summary="classic MinHash, num_perm linear permutations",
            maker="neardup.sketch.minhash:MinHasher",
            families=("bands", "prefix", "containment"),
            exact="jaccard",
            estimator=_AGREEMENT,
            tag=1,
            index=True,
            spark=True,
        ),
        SketchKind(
            name="minhash-lead",
            summary="the same MinHash by left-to-right minima over lead bytes",
            maker="neardup.sketch.minhash:LeadByteMinHasher",
            families=("bands", "prefix", "containment"),
            exact="jaccard",
            estimator=_AGREEMENT,
            tag=7,
            index=True,
            spark=True,
        ),
        SketchKind(
            name="bottomk",
            summary="the num_perm smallest hashes under one function (resemblance, containment)",
            maker="neardup.sketch.bottomk:BottomKSketcher",
            families=("bottomk-pairs", "prefix", "containment"),
            exact="jaccard",
            estimator="neardup.sketch.bottomk:resemblance",
            tag=3,
            spark=True,
        ),
        SketchKind(
            name="bbit",
            summary="OPH slots cut to --bbits bits",
            maker="neardup.sketch.bbit:BBitSketcher",
            families=("bands", "prefix", "containment"),
            exact="jaccard",
            estimator="neardup.sketch.bbit:bbit_estimate",
            options=("bbits",),
            tag=8,
            spark=True,
        ),
        SketchKind(
            name="supershingle",
            summary="MinHash cut into Broder's features (--preset)",
            maker="neardup.sketch.minhash:SupershingleSketcher",
            families=("features", "bands", "prefix", "containment"),
            exact="jaccard",
            estimator=_AGREEMENT,
            options=("preset",),
            tag=6,
        ),
        SketchKind(
            name="weighted",
            summary="ICWS weighted MinHash of shingle counts (weighted Jaccard)",
            maker="neardup.sketch.weighted:WeightedMinHasher",
            families=("bands",),
            exact="weighted-jaccard",
            estimator=_AGREEMENT,
            tag=5,
            spark=True,
        ),
        SketchKind(
            name="simhash",
            summary="SimHash of the weighted shingle vector (cosine; see --method)",
            maker="neardup.sketch.simhash:SimHasher",
            families=("hamming",),
            exact="cosine",
            estimator="neardup.sketch.simhash:estimate_simhash_cosine",
            options=("simhash_bits", "weighting", "projection"),
            tag=9,
            uses_idf=True,
            index=True,
        ),
        SketchKind(
            name="canonical",
            summary="I-Match: one fingerprint of the distinct terms in a middle IDF band "
            "(--idf-low, --idf-high); equal fingerprints are candidates",
            maker="neardup.sketch.canonical:CanonicalSketcher",
            families=("bands",),
            exact="jaccard",
            estimator=_AGREEMENT,
            options=("idf_low", "idf_high"),
            tag=10,
            uses_idf=True,
            num_slots=1,
        ),
    )
}
"""Every sketch kind, by name (in the order ``--help`` lists them)."""

ESTIMATED_KINDS = tuple(kind for kind in SKETCH_KINDS if kind != "canonical")
"""The sketch kinds whose signatures estimate a similarity (``neardup compare --sketches``):
all but the canonical form, whose one fingerprint is equal or not."""

INDEX_KINDS = tuple(name for name, kind in SKETCH_KINDS.items() if kind.index)
"""Sketch kinds an index accepts: those whose slots agree with probability J (LSH bands), and
SimHash (fingerprints within h bits)."""


def estimated_kinds(names: Collection[str]) -> list[str]:
    """The kinds of :data:`ESTIMATED_KINDS` ``names`` asks for (``"all"``: every one), in order.

    Raises
    ------
    ParameterError
        A name that is no such kind.

    Examples
    --------
    >>> estimated_kinds({"simhash", "oph"})
    ['oph', 'simhash']
    """
    if "all" in names:
        return list(ESTIMATED_KINDS)
    unknown = sorted(set(names) - set(ESTIMATED_KINDS))
    if unknown:
        raise ParameterError(
            f"compare estimates with {', '.join(ESTIMATED_KINDS)} (or all); got "
            f"{', '.join(map(repr, unknown))}"
            + (": the canonical form gives no similarity" if "canonical" in unknown else "")
        )
    return [kind for kind in ESTIMATED_KINDS if kind in names]


FAMILIES: dict[str, CandidateFamily] = {
    family.name: family
    for family in (
        CandidateFamily(
            name="bands",
            summary="LSH banding: b bands of r slots, a candidate when a band agrees (MMDS 3.4)",
            scheme="neardup.candidates:Banding",
            options=("num_bands", "num_rows", "false_positive_weight", "false_negative_weight"),
        ),
        CandidateFamily(
            name="bottomk-pairs",
            summary="documents sharing two of their L smallest hashes",
            scheme="neardup.candidates:BottomKPairs",
        ),
        CandidateFamily(
            name="features",
            summary="Broder's feature filter: enough shared supershingles (Broder 2000)",
            scheme="neardup.candidates:FeatureFilter",
        ),
        CandidateFamily(
            name="prefix",
            summary="exact: every pair of shingle sets at Jaccard >= the threshold, by length, "
            "prefix, position and suffix filtering (MMDS 3.9); no false negatives",
            scheme="neardup.candidates:PrefixFilter",
            caps_buckets=False,
        ),
        CandidateFamily(
            name="containment",
            summary="exact: every pair where the shorter document's shingle set is at least "
            "the threshold contained in the longer's (prefix filtering); the measure is then "
            "containment",
            scheme="neardup.candidates:ContainmentFilter",
            caps_buckets=False,
        ),
        CandidateFamily(
            name="hamming",
            summary="fingerprints at most h bits apart, by block-permuted tables or PSM",
            scheme="neardup.candidates:HammingPairs",
            options=("hamming", "hamming_blocks", "search", "psm_budget"),
        ),
    )
}
"""Every candidate family, by name."""


JoinInput = Literal["vectors", "counts", "bits", "sets", "strings"]
"""What a join metric compares: float vectors, non-negative integer vectors, bit strings
(packed 64 bits to a word), sets of 64-bit item hashes, or short strings."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Metric:
    """One measure ``neardup join`` (:func:`neardup.join.similarity_join`) finds close pairs under.

    Attributes
    ----------
    name
        Its name in specs, summaries and on the command line (``--metric``).
    summary
        One line for ``--help``.
    measure
        ``"similarity"``: pairs with a value at least the threshold; ``"distance"``: at most.
    low, high
        The threshold's range (``high`` ``None``: unbounded).
    low_open
        Whether ``low`` itself is outside the range (Jaccard 0 would pair every two sets).
    integral
        Whether the threshold and the values are whole numbers (Hamming and edit distances).
    input
        What it compares (:data:`JoinInput`).
    family
        The :class:`~neardup.lsh.family.VectorHasher` (or set hasher) whose elementary hashes
        collide with a probability that falls with the distance; ``None`` where candidates come
        from an exact filter only (edit distance). Where the metric has several, the default.
    families
        The families ``JoinSpec.family`` (``--family``) chooses between, by name, where the
        metric has more than one (``family`` among them); empty otherwise.
    has_exact_join
        Whether ``JoinSpec.exact`` (an exact filter instead of LSH, no false negatives) applies.
    spark
        Whether the Spark engine runs its join.
    """

    name: str
    summary: str
    measure: Literal["similarity", "distance"]
    low: float
    high: float | None
    low_open: bool = False
    integral: bool = False
    input: JoinInput
    family: str | None
    has_exact_join: bool = False
    spark: bool = False
    families: Mapping[str, str] = field(default_factory=dict)

    def family_named(self, name: str | None) -> str | None:
        """The family ``name`` of :attr:`families`; ``None``: the default, :attr:`family`."""
        return self.family if name is None else self.families[name]


METRICS: dict[str, Metric] = {
    metric.name: metric
    for metric in (
        Metric(
            name="cosine",
            summary="cosine similarity of float vectors; random hyperplanes",
            measure="similarity",
            low=-1.0,
            high=1.0,
            input="vectors",
            family="neardup.lsh.hyperplanes:HyperplaneHasher",
            spark=True,
        ),
        Metric(
            name="hamming",
            summary="Hamming distance of bit strings; bit sampling",
            measure="distance",
            low=0.0,
            high=None,
            integral=True,
            input="bits",
            family="neardup.lsh.bitsampling:BitSampler",
        ),
        Metric(
            name="l1",
            summary="L1 distance of integer vectors; Cauchy projections, or the unary code",
            measure="distance",
            low=0.0,
            high=None,
            input="counts",
            family="neardup.lsh.pstable:CauchyHasher",
            families={
                "cauchy": "neardup.lsh.pstable:CauchyHasher",
                "unary": "neardup.lsh.bitsampling:UnaryBitSampler",
            },
        ),
        Metric(
            name="l2",
            summary="Euclidean distance of float vectors; p-stable projections into buckets",
            measure="distance",
            low=0.0,
            high=None,
            input="vectors",
            family="neardup.lsh.pstable:PStableHasher",
        ),
        Metric(
            name="jaccard",
            summary="Jaccard similarity of item sets; MinHash, or exact prefix filtering",
            measure="similarity",
            low=0.0,
            high=1.0,
            low_open=True,
            input="sets",
            family="neardup.lsh.sets:SetHasher",
            has_exact_join=True,
            spark=True,
        ),
        Metric(
            name="containment",
            summary="containment |A ∩ B| / |A| of the smaller item set in the larger; exact "
            "prefix filtering",
            measure="similarity",
            low=0.0,
            high=1.0,
            low_open=True,
            input="sets",
            family=None,
            has_exact_join=True,
        ),
        Metric(
            name="edit",
            summary="edit (Levenshtein) distance of short strings; q-gram filtering",
            measure="distance",
            low=0.0,
            high=None,
            integral=True,
            input="strings",
            family=None,
            has_exact_join=True,
        ),
    )
}
"""Every join metric, by name."""


def load(reference: str) -> Any:
    """The object a ``"module:attribute"`` reference names, importing its module.

    Examples
    --------
    >>> load("neardup.kinds:SKETCH_KINDS") is SKETCH_KINDS
    True
    """
    module, _, name = reference.partition(":")
    return getattr(import_module(module), name)
