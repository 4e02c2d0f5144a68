"""How a document becomes a signature, and how candidates are found among signatures.

:class:`SketchSpec` and :class:`LSHSpec`, with the rules that tie them together.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from neardup.errors import ParameterError
from neardup.kinds import FAMILIES, SKETCH_KINDS
from neardup.params.rules import (
    MAX_SEED,
    Rule,
    Spec,
    check_options,
    defaults_dropped,
    integer,
    is_int,
    one_of,
    only_chosen,
    optional_integer,
    options_of,
    real,
)
from neardup.params.text import NormalizeSpec, ShingleSpec, check_shingling

Weighting = Literal["tf", "tfidf"]
Projection = Literal["sign", "gaussian"]

DEFAULT_NUM_PERM = 128
"""Signature slots unless asked otherwise (``SketchSpec.num_perm``; the banding follows it)."""

FEATURE_PRESETS = ("altavista", "altavista-variant", "bing", "8bytes-small", "8bytes-large")
"""Names of Broder's feature-filter presets (defined in :mod:`neardup.sketch.features`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SketchSpec(Spec):
    """How a document becomes a signature: text → shingles → a sketch of the shingle set.

    Parameters
    ----------
    kind
        A kind of :data:`neardup.kinds.SKETCH_KINDS` (``"oph"``, the default, is as accurate as
        ``"minhash"`` and much faster); see ``docs/sketches.md`` for when to use which. Each
        kind owns some of the options below: another kind's, set off its default, is an error,
        and only the kind's own appear in :meth:`to_dict` (so only they count when stored
        signatures are compared).
    num_perm
        Slots per signature (*n* in MMDS §3.3.4; bins for OPH; *k* for bottom-k).
    seed
        Draws every random parameter; same seed, same signatures.
    bbits
        Bits kept per slot by ``"bbit"``: 1, 2, 4 or 8.
    preset
        Feature-filter parameters of ``"supershingle"``, one of :data:`FEATURE_PRESETS`.
    simhash_bits
        Bits of a ``"simhash"`` fingerprint: 64 or 128.
    weighting
        Shingle weights of ``"simhash"``: ``"tf"`` (occurrences) or ``"tfidf"`` (occurrences
        times the IDF learned from the corpus by :class:`~neardup.sketch.IDFWeights`).
    projection
        Random hyperplanes of ``"simhash"``: ``"gaussian"`` (each shingle adds its weight
        times a Gaussian per bit, Charikar's equation (4) in seed 004: distance tracks the
        angle exactly) or ``"sign"`` (adds or subtracts it by a hash bit, Manku et al.; 1.3x as
        fast, but a feature heavier than all others together fixes every bit, which
        ruins precision on text with repeated boilerplate: ``docs/simhash.md``).
    idf_low, idf_high
        The band of normalised IDF ``log(N / df) / log(N)`` (0: a term of every document, 1:
        of one) whose terms make a ``"canonical"`` fingerprint (I-Match, seed 004 [9]): terms
        below ``idf_low`` are too common, above ``idf_high`` too rare to count. The default
        keeps the terms of between ``N^-0.2`` and ``N^-0.1`` of the documents (21% to 46% of
        2,310 licences), the band that found the most near copies on our licence and RFC
        studies (``docs/sketches.md``).
    shingle, normalize
        The shingling and normalisation the signature was made from.

    ``num_perm`` of a kind with a fixed number of slots
    (:attr:`neardup.kinds.SketchKind.num_slots`: ``"canonical"``) is that number.
    """

    kind: str = "oph"
    num_perm: int = DEFAULT_NUM_PERM
    seed: int = 42
    bbits: int = 2
    preset: str = "altavista"
    simhash_bits: int = 64
    weighting: Weighting = "tf"
    projection: Projection = "gaussian"
    idf_low: float = 0.1
    idf_high: float = 0.2
    shingle: ShingleSpec = field(default_factory=ShingleSpec)
    normalize: NormalizeSpec = field(default_factory=NormalizeSpec)

    _NESTED: ClassVar[Mapping[str, type[Spec]]] = {
        "shingle": ShingleSpec,
        "normalize": NormalizeSpec,
    }
    _RULES: ClassVar[Mapping[str, Rule]] = {
        "kind": one_of(*SKETCH_KINDS),  # the registry: neardup.kinds
        "num_perm": integer(1, 4096),
        "seed": integer(0, MAX_SEED),
        "bbits": Rule("one of 1, 2, 4, 8", lambda v: is_int(v) and v in (1, 2, 4, 8)),
        "preset": one_of(*FEATURE_PRESETS),
        "simhash_bits": Rule("one of 64, 128", lambda v: is_int(v) and v in (64, 128)),
        "weighting": one_of("tf", "tfidf"),
        "projection": one_of("sign", "gaussian"),
        "idf_low": real(0.0, 1.0),
        "idf_high": real(0.0, 1.0),
    }

    def __post_init__(self) -> None:
        self._validate()
        check_options(self, "kind", SKETCH_KINDS, _KIND_OPTION_DEFAULTS)
        check_shingling(self.shingle, self.normalize)
        if self.idf_low > self.idf_high:
            raise ParameterError(
                "SketchSpec.idf_low must not exceed idf_high (the band of kept terms); got "
                f"idf_low={self.idf_low!r}, idf_high={self.idf_high!r}."
            )
        num_slots = SKETCH_KINDS[self.kind].num_slots
        if num_slots is not None:
            object.__setattr__(self, "num_perm", num_slots)

    def to_dict(self) -> dict[str, Any]:
        """The common fields and this kind's options (:attr:`neardup.kinds.SketchKind.options`).

        The options of other kinds are left out: they do not change these signatures, so two
        specs that make the same signatures have the same dict (stored files compare them).
        """
        return only_chosen(Spec.to_dict(self), _KIND_OPTION_DEFAULTS, SKETCH_KINDS[self.kind])

    @classmethod
    def _implied_dropped(cls, data: Mapping[str, Any]) -> Mapping[str, Any]:
        """Without options left at their defaults (older versions wrote every kind's)."""
        return defaults_dropped(data, _KIND_OPTION_DEFAULTS)

    def with_kind(self, kind: str, **options: Any) -> SketchSpec:
        """The same shingling, normalisation, ``num_perm`` and seed for another ``kind``.

        Its ``options`` are as given, the rest at their defaults.
        """
        data = {k: v for k, v in self.to_dict().items() if k not in _KIND_OPTION_DEFAULTS}
        return SketchSpec.from_dict({**data, "kind": kind, **options})


_KIND_OPTION_DEFAULTS = options_of(SKETCH_KINDS, SketchSpec)
"""Every kind's own options, with their defaults."""


MAX_BUCKET_SIZE = 1000
"""Bucket members paired each with all the others unless asked otherwise (``max_bucket_size``)."""

Search = Literal["tables", "psm"]
"""How fingerprints within ``h`` bits are found: block-permuted tables (exact, ``C(G, g)``
copies), or PSM (one copy; exact with every flip set, approximate with a budget)."""
PSM_MAX_FLIPS = 8
"""The most bits of a 64-bit word PSM flips (:data:`neardup._kernels.vosh.MAX_SET_BITS`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LSHSpec(Spec):
    """How candidate pairs are found: a family (:data:`neardup.kinds.FAMILIES`) and its fields.

    For the ``"bands"`` family (LSH banding: ``num_bands`` bands of ``num_rows`` rows over a
    MinHash signature), give ``threshold`` alone and the bands and rows are chosen by
    :func:`neardup.lsh.bands_rows`, minimising the weighted false-positive and false-negative
    mass under the S-curve; or give both ``num_bands`` and ``num_rows``. Each family reads only
    its own fields (:attr:`neardup.kinds.CandidateFamily.options`); setting another family's is
    an error.

    Parameters
    ----------
    family
        The candidate family; ``None``: the sketch kind's first
        (:attr:`neardup.kinds.SketchKind.families`), which :class:`DedupConfig` fills in.
    threshold
        The Jaccard similarity that makes a near-duplicate (*t* in MMDS §3.4.3).
    num_bands, num_rows
        *b* and *r* of MMDS §3.4.1, with ``num_bands * num_rows`` at most the signature's
        slots (``SketchSpec.num_perm``, the one place the number of slots is set;
        :func:`check_banding`).
    false_positive_weight, false_negative_weight
        Weights of the two error masses when choosing *b* and *r*. Every candidate is verified,
        so a false positive costs one verification while a false negative loses a duplicate:
        the default weighs a miss 19 times as heavily, which makes a pair exactly at the
        threshold a candidate with probability at least 0.9 for thresholds 0.5 to 0.95.
    max_bucket_size
        Buckets (documents sharing one band) up to this size yield all their pairs; in a larger
        bucket each document is paired only with the ``max_bucket_size - 1`` documents before it,
        so boilerplate cannot make candidate generation quadratic.
    hamming
        For ``SketchSpec(kind="simhash")``: pairs are fingerprints at most this many bits apart
        (``h``). 7 is where precision meets recall against TF-IDF cosine >= 0.9 for 64 bits
        on our licence and RFC studies (``docs/simhash.md``); about twice that for 128 bits.
    hamming_blocks
        Blocks ``G > h`` of the block-permuted tables that find them (``C(G, G - h)`` tables);
        ``None`` chooses ``G`` from the number of fingerprints
        (:func:`neardup.hamming.choose_blocks`).
    search
        How fingerprints within ``h`` bits are found: ``"tables"`` (block-permuted tables,
        exact, ``C(G, G - h)`` copies) or ``"psm"`` (seed 004's probabilistic SimHash matching:
        one sorted copy, its header buckets visited in the order of likely bit flips).
    psm_budget
        PSM's header buckets per query and 64-bit word, its own included; ``None`` visits every
        bucket within ``h`` header bits (exact). ``docs/simhash.md`` measures the trade.
    """

    family: str | None = None
    threshold: float = 0.8
    num_bands: int | None = None
    num_rows: int | None = None
    false_positive_weight: float = 0.05
    false_negative_weight: float = 0.95
    max_bucket_size: int = MAX_BUCKET_SIZE
    hamming: int = 7
    hamming_blocks: int | None = None
    search: Search = "tables"
    psm_budget: int | None = None

    _RULES: ClassVar[Mapping[str, Rule]] = {
        "family": Rule(
            f"None or one of {', '.join(map(repr, FAMILIES))}", lambda v: v is None or v in FAMILIES
        ),
        "threshold": real(0.0, 1.0, low_open=True),
        "num_bands": optional_integer(1, 4096),
        "num_rows": optional_integer(1, 4096),
        "false_positive_weight": real(0.0, 1.0),
        "false_negative_weight": real(0.0, 1.0),
        "max_bucket_size": integer(2, 2**31 - 1),
        "hamming": integer(0, 32),
        "hamming_blocks": optional_integer(2, 64),
        "search": one_of("tables", "psm"),
        "psm_budget": optional_integer(1, 2**31 - 1),
    }

    def __post_init__(self) -> None:
        self._validate()
        if (self.num_bands is None) != (self.num_rows is None):
            given = "num_bands" if self.num_rows is None else "num_rows"
            raise ParameterError(
                "LSHSpec.num_bands and LSHSpec.num_rows must be given together (or neither, to "
                f"choose them from the threshold); got LSHSpec.{given} only."
            )
        if self.false_positive_weight + self.false_negative_weight <= 0:
            raise ParameterError(
                "LSHSpec.false_positive_weight + false_negative_weight must be positive; got 0."
            )
        if self.psm_budget is not None and self.search != "psm":
            raise ParameterError(
                "LSHSpec.psm_budget applies to PSM: give LSHSpec.search 'psm' too, or drop it."
            )
        if self.hamming_blocks is not None and self.search == "psm":
            raise ParameterError(
                "LSHSpec.hamming_blocks applies to the tables, not to PSM: drop it, or give "
                "LSHSpec.search 'tables'."
            )
        if self.hamming_blocks is not None and self.hamming_blocks <= self.hamming:
            raise ParameterError(
                "LSHSpec.hamming_blocks must exceed hamming (pigeonhole: h edits leave G - h "
                f"blocks intact); got hamming_blocks={self.hamming_blocks}, "
                f"hamming={self.hamming}."
            )
        check_options(self, "family", FAMILIES, _FAMILY_OPTION_DEFAULTS)

    def to_dict(self) -> dict[str, Any]:
        """The common fields and the chosen family's (every field while none is chosen)."""
        data = Spec.to_dict(self)
        if self.family is None:
            return data
        return only_chosen(data, _FAMILY_OPTION_DEFAULTS, FAMILIES[self.family])

    @classmethod
    def _implied_dropped(cls, data: Mapping[str, Any]) -> Mapping[str, Any]:
        """Without family fields left at their defaults (older versions wrote every one).

        And without ``num_perm``, which older versions kept here as the banding's copy of
        ``SketchSpec.num_perm``.
        """
        data = {k: v for k, v in data.items() if k != "num_perm"}
        return defaults_dropped(data, _FAMILY_OPTION_DEFAULTS)


_FAMILY_OPTION_DEFAULTS = options_of(FAMILIES, LSHSpec)
"""Every family's own fields, with their defaults."""


def candidate_family(sketch: SketchSpec, lsh: LSHSpec) -> str:
    """The family that finds candidates for ``sketch``: ``lsh.family``, or the kind's first.

    A family the kind cannot feed is an error naming those that can.
    """
    kind = SKETCH_KINDS[sketch.kind]
    family = lsh.family or kind.family
    if family not in kind.families:
        raise ParameterError(
            f"LSHSpec.family {family!r} cannot pair {sketch.kind!r} signatures; choose "
            f"{' or '.join(map(repr, kind.families))}."
        )
    return family


def check_banding(sketch: SketchSpec, lsh: LSHSpec) -> None:
    """Refuse bands and rows that need more slots than the signature has.

    Examples
    --------
    >>> check_banding(SketchSpec(num_perm=64), LSHSpec(num_bands=16, num_rows=8))
    Traceback (most recent call last):
    ...
    neardup.errors.ParameterError: LSHSpec.num_bands * num_rows must be at most \
SketchSpec.num_perm (64); got 16 * 8.
    """
    b, r = lsh.num_bands, lsh.num_rows
    if b is not None and r is not None and b * r > sketch.num_perm:
        raise ParameterError(
            "LSHSpec.num_bands * num_rows must be at most SketchSpec.num_perm "
            f"({sketch.num_perm}); got {b} * {r}."
        )


def check_bucket_cap(lsh: LSHSpec, family: str, *, with_embedding: bool = False) -> None:
    """Refuse a bucket cap that nothing reads: the exact families pair no bucket's members.

    ``with_embedding``: the embedding method's cosine join runs beside (it caps its buckets).

    Examples
    --------
    >>> check_bucket_cap(LSHSpec(max_bucket_size=50), "prefix")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    neardup.errors.ParameterError: LSHSpec.max_bucket_size caps the buckets ... 'prefix' ...
    """
    if with_embedding or FAMILIES[family].caps_buckets:
        return
    if lsh.max_bucket_size != MAX_BUCKET_SIZE:
        raise ParameterError(
            "LSHSpec.max_bucket_size caps the buckets whose members are paired; family "
            f"{family!r} finds every pair exactly, from no bucket: drop it"
        )


def per_word_radius(bits: int, hamming: int) -> int:
    """The radius each 64-bit word of a fingerprint is searched with.

    ``h`` for one word; for two, ``h // 2``: by pigeonhole, two fingerprints within ``h`` bits
    are within ``h // 2`` on one of their words.

    Examples
    --------
    >>> per_word_radius(64, 7), per_word_radius(128, 7)
    (7, 3)
    """
    return hamming if bits == 64 else hamming // 2


def check_psm_radius(bits: int, hamming: int) -> None:
    """Refuse a radius PSM cannot search: more than :data:`PSM_MAX_FLIPS` bits of a word."""
    per_word = per_word_radius(bits, hamming)
    if per_word > PSM_MAX_FLIPS:
        raise ParameterError(
            f"--search psm flips at most {PSM_MAX_FLIPS} bits of a 64-bit word; --hamming "
            f"{hamming} of {bits} bits needs {per_word}: lower --hamming, or use --search tables."
        )
