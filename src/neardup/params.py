"""Frozen, validated parameter specs: the values every stage of the flow is built from.

A spec is a value: frozen, hashable, validated on construction, convertible to and from a plain
dict (``to_dict`` / ``from_dict``) so that it can be stored next to every artefact it made. Specs
draw no random numbers and build no functions; makers (``MinHasher``, ``OPHSketcher``) do that.

Each spec declares its constraints as data in ``_RULES``; one validator enforces them with one
message format, e.g. *"LSHSpec.threshold must be a float in (0, 1]; got 1.5."*
"""

from __future__ import annotations

import codecs
import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar, Literal, Self, cast

from neardup.errors import InputError, ParameterError
from neardup.kinds import FAMILIES, METRICS, SKETCH_KINDS, Measure

__all__ = [
    "DedupConfig",
    "EmbeddingSpec",
    "JoinSpec",
    "LSHSpec",
    "MirrorSpec",
    "NormalizeSpec",
    "ShingleSpec",
    "SketchSpec",
    "UnitSpec",
    "candidate_family",
    "check_shingling",
]

ShingleUnit = Literal["word", "char", "stopword"]
Weighting = Literal["tf", "tfidf"]
Projection = Literal["sign", "gaussian"]
FingerprintKind = Literal["nd64", "rabin"]
VerifyMode = Literal["exact", "signature", "none"]
KeepRule = Literal["first", "longest"]
KeepDirection = Literal["max", "min"]
PairsMode = Literal["all", "spanning", "none"]
Search = Literal["tables", "psm"]
"""How fingerprints within ``h`` bits are found: block-permuted tables (exact, ``C(G, g)``
copies), or PSM (one copy; exact with every flip set, approximate with a budget)."""
PSM_MAX_FLIPS = 8
"""The most bits of a 64-bit word PSM flips (:data:`neardup._kernels.vosh.MAX_SET_BITS`)."""
ClusterMode = Literal["components", "center"]
Compression = Literal["none", "gzip", "zstd"]
InputFormat = Literal["auto", "jsonl", "parquet", "arrow", "csv", "txt", "warc"]
HtmlExtract = Literal["text", "main", "altavista"]
UnitKind = Literal["line", "paragraph", "sentences"]
EmbeddingDevice = Literal["cpu", "cuda"]

MAX_SEED = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Rule:
    """One field's constraint: a predicate and the words that describe what it allows."""

    allowed: str
    check: Callable[[Any], bool]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def integer(low: int, high: int) -> Rule:
    """An int in the closed range [low, high]."""
    return Rule(f"an int in [{low}, {high}]", lambda v: _is_int(v) and low <= v <= high)


def optional_integer(low: int, high: int) -> Rule:
    """None, or an int in [low, high]."""
    inner = integer(low, high)
    return Rule(f"None or {inner.allowed}", lambda v: v is None or inner.check(v))


def real(low: float, high: float, *, low_open: bool = False, high_open: bool = False) -> Rule:
    """A finite float in the given interval (ints are accepted)."""
    left, right = "(" if low_open else "[", ")" if high_open else "]"

    def check(v: Any) -> bool:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            return False
        above = v > low if low_open else v >= low
        below = v < high if high_open else v <= high
        return above and below

    return Rule(f"a float in {left}{low}, {high}{right}", check)


def optional_real(low: float, high: float, *, low_open: bool = False) -> Rule:
    """A finite float in the interval (:func:`real`), or None: a default chosen elsewhere.

    The message names the float only: None is no value one types on the command line.
    """
    inner = real(low, high, low_open=low_open)
    return Rule(inner.allowed, lambda v: v is None or inner.check(v))


def one_of(*values: str) -> Rule:
    """One of the given strings."""
    listed = ", ".join(repr(v) for v in values)
    return Rule(f"one of {listed}", lambda v: isinstance(v, str) and v in values)


def boolean() -> Rule:
    """True or False."""
    return Rule("a bool", lambda v: isinstance(v, bool))


def text() -> Rule:
    """A non-empty string."""
    return Rule("a non-empty str", lambda v: isinstance(v, str) and v != "")


def optional_text() -> Rule:
    """None, or a non-empty string."""
    return Rule("None or a non-empty str", lambda v: v is None or (isinstance(v, str) and v != ""))


def _is_encoding(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        codecs.lookup(value)
    except LookupError:
        return False
    return True


def keep_field(spec: str) -> tuple[str, KeepDirection]:
    """``"FIELD[:max|:min]"`` as ``(field, direction)``; a field may hold colons itself.

    Examples
    --------
    >>> keep_field("quality"), keep_field("date:min"), keep_field("meta:score:max")
    (('quality', 'max'), ('date', 'min'), ('meta:score', 'max'))
    """
    name, _, direction = spec.rpartition(":")
    if name and direction in ("max", "min"):
        return name, cast(KeepDirection, direction)
    return spec, "max"


def _is_keep_by(value: Any) -> bool:
    if not isinstance(value, tuple) or not all(isinstance(v, str) and v for v in value):
        return False
    names = [keep_field(v)[0] for v in value]
    return all(names) and len(set(names)) == len(names)


def _fail(spec: object, name: str, allowed: str, value: Any) -> ParameterError:
    return ParameterError(f"{type(spec).__name__}.{name} must be {allowed}; got {value!r}.")


class _Spec:
    """Shared behaviour of the specs: rule checking, dict round trip."""

    __slots__ = ()
    _RULES: ClassVar[Mapping[str, Rule]] = {}

    def _validate(self) -> None:
        for name, rule in self._RULES.items():
            value = getattr(self, name)
            if not rule.check(value):
                raise _fail(self, name, rule.allowed, value)
        for f in fields(cast(Any, self)):
            value = getattr(self, f.name)
            if f.name not in self._RULES and not isinstance(value, _Spec):
                raise TypeError(f"{type(self).__name__}.{f.name} has no validation rule")

    def to_dict(self) -> dict[str, Any]:
        """A plain, JSON-serialisable dict of every field (nested specs become dicts)."""
        out: dict[str, Any] = {}
        for f in fields(cast(Any, self)):
            value = getattr(self, f.name)
            out[f.name] = value.to_dict() if isinstance(value, _Spec) else value
        return out

    @classmethod
    def _implied_dropped(cls, data: Mapping[str, Any]) -> Mapping[str, Any]:
        """``data`` without the keys that a stored dict may hold but that say nothing."""
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "") -> Self:
        """Build the spec from a dict; unknown keys are a :class:`ParameterError` naming them."""
        data = cls._implied_dropped(data)
        known = {f.name: f for f in fields(cast(Any, cls))}
        unknown = sorted(set(data) - set(known))
        if unknown:
            place = f" in {where}" if where else ""
            raise ParameterError(
                f"unknown key(s) {', '.join(map(repr, unknown))}{place} for {cls.__name__}; "
                f"valid keys: {', '.join(known)}."
            )
        kwargs: dict[str, Any] = {}
        for name, value in data.items():
            nested = _NESTED.get((cls.__name__, name))
            if nested is not None and isinstance(value, Mapping):
                sub = f"{where}.{name}" if where else name
                kwargs[name] = nested.from_dict(value, where=sub)
            else:
                kwargs[name] = value
        return cls(**kwargs)


STOPWORD_LANGUAGES = (
    "danish", "dutch", "english", "finnish", "french", "german", "hungarian", "italian",
    "norwegian", "portuguese", "russian", "spanish", "swedish", "turkish",
)  # fmt: skip
"""Languages with a stop-word list (the Snowball lists shipped in ``neardup/text/stopwords``)."""

STEM_LANGUAGES = (
    "arabic", "armenian", "basque", "catalan", "czech", "danish", "dutch", "dutch_porter",
    "english", "esperanto", "estonian", "finnish", "french", "german", "greek", "hindi",
    "hungarian", "indonesian", "irish", "italian", "lithuanian", "nepali", "norwegian",
    "persian", "polish", "porter", "portuguese", "romanian", "russian", "serbian", "sesotho",
    "spanish", "swedish", "tamil", "turkish", "yiddish",
)  # fmt: skip
"""The Snowball stemmers of PyStemmer 3.1 (``Stemmer.algorithms()``; ``porter`` is the original
Porter stemmer, ``english`` its Snowball successor)."""


STOPWORDS_FORMS = (
    f"None, a stop-word language ({', '.join(map(repr, STOPWORD_LANGUAGES))}), or 'words:' "
    "and the words"
)
"""What a stop-word field may be, as its messages say it."""

STOPWORD_LIST_PREFIX = "words:"
"""A stop-word field naming its own words: ``"words:a for the"`` (recorded as given)."""


def _is_stopwords(value: Any) -> bool:
    """None, a language with a list, or ``"words:"`` and at least one word."""
    if value is None or value in STOPWORD_LANGUAGES:
        return True
    return (
        isinstance(value, str)
        and value.startswith(STOPWORD_LIST_PREFIX)
        and bool(value[len(STOPWORD_LIST_PREFIX) :].split())
    )


def optional_language(languages: tuple[str, ...]) -> Rule:
    """None, or one of ``languages``."""
    listed = ", ".join(repr(v) for v in languages)
    return Rule(f"None or one of {listed}", lambda v: v is None or v in languages)


TOKENIZER_FORMS = "None, 'jieba' or 'tiktoken:NAME' with NAME a tiktoken encoding"
"""What :attr:`NormalizeSpec.tokenizer` may be, as its messages say it."""

_TIKTOKEN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _is_tokenizer(value: Any) -> bool:
    """None, ``"jieba"``, or ``"tiktoken:NAME"`` (NAME spelled as tiktoken's encodings are)."""
    if value is None or value == "jieba":
        return True
    if not isinstance(value, str):
        return False
    family, sep, name = value.partition(":")
    return family == "tiktoken" and bool(sep) and _TIKTOKEN_NAME.fullmatch(name) is not None


def _unset_dropped(data: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """``data`` without the keys of ``names`` whose value is None (fields added later)."""
    return {k: v for k, v in data.items() if k not in names or v is not None}


@dataclass(frozen=True, slots=True, kw_only=True)
class NormalizeSpec(_Spec):
    """How text is normalised before shingling.

    Whitespace is always collapsed (runs of Unicode whitespace are one separator, and leading and
    trailing whitespace is ignored).

    Parameters
    ----------
    nfkc
        Apply Unicode NFKC normalisation (compatibility forms such as full-width letters and
        ligatures become their plain equivalents).
    casefold
        Apply Unicode case folding (a stronger lower-casing).
    strip_punctuation
        Treat Unicode punctuation (general category P*) as whitespace.
    stopwords
        A language of :data:`STOPWORD_LANGUAGES`, or ``"words:"`` followed by the words
        themselves, whitespace-separated (a list of the user's or the corpus's own, MMDS §3.2.4:
        "there is no set number of the most frequent words that should be considered stop
        words"): drop those stop words (seed 004), or None. A word is dropped when it equals a
        listed word after NFKC and case folding; with punctuation kept, ``"it,"`` is not
        ``"it"`` (strip punctuation to drop those too).
    stem
        A language of :data:`STEM_LANGUAGES`: replace each word by its Snowball stem (seed
        004; needs PyStemmer, ``pip install 'neardup[web]'``), or None. Stop words are dropped
        before the rest are stemmed.
    tokenizer
        Rewrite each text, after the steps above, as a sequence of *token words* (one ASCII
        word per token, :mod:`neardup.text.tokenizers`), so that word shingles are shingles of
        tokens: ``"tiktoken:NAME"`` for the model tokens of a tiktoken encoding (``NAME``
        e.g. ``cl100k_base``, ``o200k_base``), ``"jieba"`` for the words of jieba's Chinese
        segmentation; None (the default) keeps the text's own words. Needs ``pip install
        'neardup[tokens]'``, and word shingles (:func:`check_shingling`).

    Examples
    --------
    >>> NormalizeSpec(stopwords="english", stem="english").to_dict()["stem"]
    'english'
    >>> NormalizeSpec(tokenizer="tiktoken:cl100k_base").to_dict()["tokenizer"]
    'tiktoken:cl100k_base'
    >>> "tokenizer" in NormalizeSpec().to_dict()
    False
    """

    nfkc: bool = True
    casefold: bool = True
    strip_punctuation: bool = False
    stopwords: str | None = None
    stem: str | None = None
    tokenizer: str | None = None

    _RULES: ClassVar[Mapping[str, Rule]] = {
        "nfkc": boolean(),
        "casefold": boolean(),
        "strip_punctuation": boolean(),
        "stopwords": Rule(STOPWORDS_FORMS, _is_stopwords),
        "stem": optional_language(STEM_LANGUAGES),
        "tokenizer": Rule(TOKENIZER_FORMS, _is_tokenizer),
    }

    def to_dict(self) -> dict[str, Any]:
        """Every field, but ``stopwords``, ``stem`` and ``tokenizer`` only when set.

        Stored specs of earlier versions, which had none of them, stay byte for byte what they
        were (each reads back as None).
        """
        return _unset_dropped(_Spec.to_dict(self), ("stopwords", "stem", "tokenizer"))

    @property
    def rewrites_words(self) -> bool:
        """Whether words are dropped or replaced (stop words, stems) after NFKC and folding.

        A :attr:`tokenizer` does not count: it rewrites the whole text, words and separators,
        as token words (:mod:`neardup.text.tokenizers`), after these rewrites.
        """
        return self.stopwords is not None or self.stem is not None

    def __post_init__(self) -> None:
        self._validate()


@dataclass(frozen=True, slots=True, kw_only=True)
class ShingleSpec(_Spec):
    """Which shingles represent a document, and how each is fingerprinted into 64 bits.

    Words are maximal runs of non-whitespace characters; every character of a script written
    without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar, ...) is a word of its own.
    Character shingles are taken over the normalised text with whitespace collapsed to one space.

    Parameters
    ----------
    unit, k
        Word or character shingles of ``k`` tokens; or ``"stopword"``: the word shingles that
        start at a stop word (MMDS §3.8.6: ``k=3`` is a stop word and the next two words; news
        pages whose ads differ keep the article's shingles, since ads have few stop words).
    stopwords
        The stop words of ``unit="stopword"``: a language (:data:`STOPWORD_LANGUAGES`; None
        picks ``"english"``, recorded either way) or ``"words:"`` and the words, as
        :attr:`NormalizeSpec.stopwords`; only with that unit. A field of its own rather than
        :attr:`NormalizeSpec.stopwords`, which *drops* stop words: the two cannot be combined.
    fingerprint
        ``"nd64"``: FNV-1a + fmix64 token hashes combined by a rolling polynomial (the default,
        fastest); ``"rabin"``: Rabin fingerprints modulo ``polynomial`` (seed 003).
    polynomial
        The irreducible degree-64 polynomial of ``"rabin"``, as 17 hex digits (``None`` picks
        :data:`neardup.hashing.DEFAULT_POLYNOMIAL`; it is recorded either way).

    Examples
    --------
    >>> ShingleSpec.parse("char:9")
    ShingleSpec(unit='char', k=9, fingerprint='nd64', polynomial=None, stopwords=None)
    >>> ShingleSpec.parse("stopword:3").stopwords
    'english'
    """

    unit: ShingleUnit = "word"
    k: int = 5
    fingerprint: FingerprintKind = "nd64"
    polynomial: str | None = None
    stopwords: str | None = None

    _RULES: ClassVar[Mapping[str, Rule]] = {
        "unit": one_of("word", "char", "stopword"),
        "k": integer(1, 64),
        "fingerprint": one_of("nd64", "rabin"),
        "polynomial": Rule(
            "None or a hex string of 17 digits starting 0x1 (a degree-64 polynomial)",
            lambda v: v is None or _is_polynomial(v),
        ),
        "stopwords": Rule(STOPWORDS_FORMS, _is_stopwords),
    }

    def __post_init__(self) -> None:
        self._validate()
        if self.unit != "stopword" and self.stopwords is not None:
            raise ParameterError(
                "ShingleSpec.stopwords is only used with unit='stopword'; got "
                f"stopwords={self.stopwords!r} with unit={self.unit!r}."
            )
        if self.unit == "stopword" and self.stopwords is None:
            object.__setattr__(self, "stopwords", "english")
        if self.fingerprint == "nd64" and self.polynomial is not None:
            raise ParameterError(
                "ShingleSpec.polynomial is only used with fingerprint='rabin'; "
                f"got polynomial={self.polynomial!r} with fingerprint='nd64'."
            )
        if self.fingerprint == "rabin" and self.polynomial is None:
            object.__setattr__(self, "polynomial", DEFAULT_RABIN_POLYNOMIAL)

    def to_dict(self) -> dict[str, Any]:
        """Every field, but ``stopwords`` only with stop-word shingles.

        As :meth:`NormalizeSpec.to_dict`: dicts stored before the field existed stay the same.
        """
        return _unset_dropped(_Spec.to_dict(self), ("stopwords",))

    @classmethod
    def parse(cls, value: str) -> ShingleSpec:
        """Parse ``UNIT:K`` as written on the command line, e.g. ``word:5`` or ``char:9``."""
        unit, sep, k = value.partition(":")
        if not sep or not k.strip().isdigit():
            raise ParameterError(
                "ShingleSpec must be written UNIT:K, e.g. 'word:5', 'char:9' or 'stopword:3'; "
                f"got {value!r}."
            )
        return cls(unit=cast(ShingleUnit, unit.strip()), k=int(k))

    def __str__(self) -> str:
        return f"{self.unit}:{self.k}"


def check_shingling(shingle: ShingleSpec, normalize: NormalizeSpec) -> None:
    """Refuse shingles that cannot be taken of the text ``normalize`` makes.

    With a :attr:`NormalizeSpec.tokenizer` the text is token words, one per token: only word
    shingles (K consecutive tokens) mean something there. Character shingles would cut the
    made-up spelling of token ids, and stop-word shingles would look for stop words among
    them. Checked by :class:`SketchSpec` and by every shingler built from two specs.

    Examples
    --------
    >>> chars, tokens = ShingleSpec(unit="char", k=5), NormalizeSpec(tokenizer="jieba")
    >>> check_shingling(chars, tokens)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    neardup.errors.ParameterError: ShingleSpec must be of unit 'word' with ... got 'char:5'. ...
    """
    if normalize.tokenizer is not None and shingle.unit != "word":
        raise ParameterError(
            f"ShingleSpec must be of unit 'word' with NormalizeSpec.tokenizer "
            f"{normalize.tokenizer!r} (the text becomes one word per token); got "
            f"{str(shingle)!r}. Take word shingles of K tokens instead (word:K)."
        )


DEFAULT_RABIN_POLYNOMIAL = "0x1123a0ec875b778cd"
"""The Rabin polynomial a spec records when it names none (``random_irreducible(seed=0)``)."""


_DEFAULT_NUM_PERM = 128
"""Signature slots unless asked otherwise (``SketchSpec.num_perm``; the banding follows it)."""


def _is_polynomial(value: Any) -> bool:
    if not isinstance(value, str) or len(value) != 19 or not value.startswith("0x1"):
        return False
    return all(c in "0123456789abcdef" for c in value[2:])


FEATURE_PRESETS = ("altavista", "altavista-variant", "bing", "8bytes-small", "8bytes-large")
"""Names of Broder's feature-filter presets (defined in :mod:`neardup.sketch.features`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SketchSpec(_Spec):
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
    num_perm: int = _DEFAULT_NUM_PERM
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

    _RULES: ClassVar[Mapping[str, Rule]] = {
        "kind": one_of(*SKETCH_KINDS),  # the registry: neardup.kinds
        "num_perm": integer(1, 4096),
        "seed": integer(0, MAX_SEED),
        "bbits": Rule("one of 1, 2, 4, 8", lambda v: _is_int(v) and v in (1, 2, 4, 8)),
        "preset": one_of(*FEATURE_PRESETS),
        "simhash_bits": Rule("one of 64, 128", lambda v: _is_int(v) and v in (64, 128)),
        "weighting": one_of("tf", "tfidf"),
        "projection": one_of("sign", "gaussian"),
        "idf_low": real(0.0, 1.0),
        "idf_high": real(0.0, 1.0),
    }

    def __post_init__(self) -> None:
        self._validate()
        _check_options(self, "kind", SKETCH_KINDS, _KIND_OPTION_DEFAULTS)
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
        return _only_chosen(_Spec.to_dict(self), _KIND_OPTION_DEFAULTS, SKETCH_KINDS[self.kind])

    @classmethod
    def _implied_dropped(cls, data: Mapping[str, Any]) -> Mapping[str, Any]:
        """Without options left at their defaults (older versions wrote every kind's)."""
        return _defaults_dropped(data, _KIND_OPTION_DEFAULTS)

    def with_kind(self, kind: str, **options: Any) -> SketchSpec:
        """The same shingling, normalisation, ``num_perm`` and seed for another ``kind``.

        Its ``options`` are as given, the rest at their defaults.
        """
        data = {k: v for k, v in self.to_dict().items() if k not in _KIND_OPTION_DEFAULTS}
        return SketchSpec.from_dict({**data, "kind": kind, **options})


def _options_of(table: Mapping[str, Any], spec: type[_Spec]) -> dict[str, Any]:
    """The fields of ``spec`` that some entry of ``table`` (kinds, families) owns, and defaults.

    An entry that does not own one leaves it at its default.
    """
    return {
        f.name: f.default
        for f in fields(cast(Any, spec))
        if any(f.name in entry.options for entry in table.values())
    }


def _check_options(
    spec: _Spec, selector: str, table: Mapping[str, Any], defaults: Mapping[str, Any]
) -> None:
    """Refuse an option of another entry than the one ``selector`` names, set off its default."""
    chosen = getattr(spec, selector)
    if chosen is None:
        return
    for name, default in defaults.items():
        value = getattr(spec, name)
        if name not in table[chosen].options and value != default:
            owners = " or ".join(repr(key) for key, entry in table.items() if name in entry.options)
            raise ParameterError(
                f"{type(spec).__name__}.{name} applies to {selector} {owners}, not to "
                f"{chosen!r}; got {value!r}. Leave it out, or choose that {selector}."
            )


def _only_chosen(data: dict[str, Any], defaults: Mapping[str, Any], chosen: Any) -> dict[str, Any]:
    """``data`` without the options (``defaults``' keys) that the ``chosen`` entry does not own."""
    return {k: v for k, v in data.items() if k not in defaults or k in chosen.options}


def _defaults_dropped(data: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without the options still at their defaults (they are implied)."""
    return {k: v for k, v in data.items() if k not in defaults or v != defaults[k]}


_KIND_OPTION_DEFAULTS = _options_of(SKETCH_KINDS, SketchSpec)
"""Every kind's own options, with their defaults."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LSHSpec(_Spec):
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
    num_perm
        Signature length the bands are cut from.
    num_bands, num_rows
        *b* and *r* of MMDS §3.4.1, with ``num_bands * num_rows <= num_perm``.
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
    num_perm: int = _DEFAULT_NUM_PERM
    num_bands: int | None = None
    num_rows: int | None = None
    false_positive_weight: float = 0.05
    false_negative_weight: float = 0.95
    max_bucket_size: int = 1000
    hamming: int = 7
    hamming_blocks: int | None = None
    search: Search = "tables"
    psm_budget: int | None = None

    _RULES: ClassVar[Mapping[str, Rule]] = {
        "family": Rule(
            f"None or one of {', '.join(map(repr, FAMILIES))}", lambda v: v is None or v in FAMILIES
        ),
        "threshold": real(0.0, 1.0, low_open=True),
        "num_perm": integer(1, 4096),
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
        if (
            self.num_bands is not None
            and self.num_rows is not None
            and self.num_bands * self.num_rows > self.num_perm
        ):
            raise ParameterError(
                "LSHSpec.num_bands * num_rows must be at most num_perm "
                f"({self.num_perm}); got {self.num_bands} * {self.num_rows}."
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
        _check_options(self, "family", FAMILIES, _FAMILY_OPTION_DEFAULTS)

    def to_dict(self) -> dict[str, Any]:
        """The common fields and the chosen family's (every field while none is chosen)."""
        data = _Spec.to_dict(self)
        if self.family is None:
            return data
        return _only_chosen(data, _FAMILY_OPTION_DEFAULTS, FAMILIES[self.family])

    @classmethod
    def _implied_dropped(cls, data: Mapping[str, Any]) -> Mapping[str, Any]:
        """Without family fields left at their defaults (older versions wrote every one)."""
        return _defaults_dropped(data, _FAMILY_OPTION_DEFAULTS)


_FAMILY_OPTION_DEFAULTS = _options_of(FAMILIES, LSHSpec)
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


def _metric_family(metric: str, family: str | None) -> str:
    return f"{metric!r}" + (f" with family {family!r}" if family else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinSpec(_Spec):
    """How a similarity join finds close pairs: the metric, its threshold and the LSH family's.

    The family is the metric's (:data:`neardup.kinds.METRICS`); its elementary hashes are
    amplified by ``num_rows``-way AND within a band and ``num_bands``-way OR across bands (MMDS
    §3.6.3), chosen from the threshold, ``recall`` and the data when not given.

    Parameters
    ----------
    metric
        One of :data:`neardup.kinds.METRICS`.
    threshold
        A similarity for ``cosine`` and ``jaccard`` (pairs at or above it), a distance for
        ``hamming``, ``l1``, ``l2`` and ``edit`` (pairs at or below it; whole numbers for
        ``hamming`` and ``edit``).
    recall
        The chance the amplified family makes a pair exactly at the threshold a candidate, which
        the choice of ``num_bands`` and ``num_rows`` must reach.
    num_bands, num_rows
        *b* (OR) and *r* (AND); given together, or neither to choose them.
    max_hashes
        The most elementary hashes ``num_bands * num_rows`` the chooser may use.
    family
        The metric's LSH family by name, where it has several (``l1``: ``"cauchy"``, 1-stable
        projections into buckets, any range of values; ``"unary"``, seed 002's bit sampling of
        the unary code of values in ``[0, C]``); ``None``: the metric's default (the first).
    bucket_width
        ``l2``, and ``l1`` by projections: the width *a* of the buckets each random line is
        cut into (seed 002); ``None``: chosen from the threshold.
    max_value
        ``l1`` by the unary code only: the coordinates' range ``[0, C]`` (seed 002); ``None``:
        the largest coordinate of the data.
    qgram
        ``edit`` only: the length *q* of the q-grams that filter candidates.
    exact
        An exact filter instead of LSH where the metric has one (``jaccard``: length, prefix,
        position and suffix filtering, MMDS §3.9; ``edit`` always filters exactly): no false
        negatives.
    max_bucket_size
        Buckets up to this size yield all their pairs; in a larger one each item is paired with
        the ``max_bucket_size - 1`` before it (as in :class:`LSHSpec`).
    seed
        Seeds every random draw of the family.
    """

    metric: str = "cosine"
    threshold: float = 0.8
    recall: float = 0.95
    num_bands: int | None = None
    num_rows: int | None = None
    max_hashes: int = 1024
    family: str | None = None
    bucket_width: float | None = None
    max_value: int | None = None
    qgram: int = 2
    exact: bool = False
    max_bucket_size: int = 1000
    seed: int = 42

    _RULES: ClassVar[Mapping[str, Rule]] = {
        "metric": one_of(*METRICS),
        "threshold": real(-1.0, math.inf, high_open=True),
        "recall": real(0.0, 1.0, low_open=True, high_open=True),
        "num_bands": optional_integer(1, 4096),
        "num_rows": optional_integer(1, 4096),
        "max_hashes": integer(1, 65536),
        "family": Rule("None or a family's name", lambda v: v is None or isinstance(v, str)),
        "bucket_width": Rule(
            "None or a float > 0",
            lambda v: v is None or (real(0.0, math.inf, low_open=True, high_open=True).check(v)),
        ),
        "max_value": optional_integer(1, 2**31 - 1),
        "qgram": integer(1, 8),
        "exact": boolean(),
        "max_bucket_size": integer(2, 2**31 - 1),
        "seed": integer(0, MAX_SEED),
    }

    def __post_init__(self) -> None:
        self._validate()
        metric = METRICS[self.metric]
        above = self.threshold > metric.low if metric.low_open else self.threshold >= metric.low
        bounded = metric.high is None or self.threshold <= metric.high
        whole = not metric.integral or float(self.threshold).is_integer()
        if not (above and bounded and whole):
            kind = "a whole-number distance" if metric.integral else f"a {metric.measure}"
            opening = "(" if metric.low_open else "["
            closing = ", inf)" if metric.high is None else f", {metric.high:g}]"
            raise ParameterError(
                f"JoinSpec.threshold for {self.metric!r} must be {kind} in "
                f"{opening}{metric.low:g}{closing}; got {self.threshold!r}."
            )
        if (self.num_bands is None) != (self.num_rows is None):
            given = "num_bands" if self.num_rows is None else "num_rows"
            raise ParameterError(
                "JoinSpec.num_bands and JoinSpec.num_rows must be given together (or neither, "
                f"to choose them); got JoinSpec.{given} only."
            )
        if self.exact and not metric.has_exact_join:
            exact = [m.name for m in METRICS.values() if m.has_exact_join]
            raise ParameterError(
                f"JoinSpec.exact applies to {' and '.join(exact)}; got metric {self.metric!r}."
            )
        if self.family is not None and self.family not in metric.families:
            choices = {name: ", ".join(map(repr, m.families)) for name, m in METRICS.items()}
            choice = [f"{name!r} ({names})" for name, names in choices.items() if names]
            raise ParameterError(
                f"JoinSpec.family chooses among the families of {' and '.join(choice)}; got "
                f"{self.family!r} for metric {self.metric!r}."
            )
        family = self.family_name
        for name, owners in (
            ("bucket_width", (("l2", None), ("l1", "cauchy"))),
            ("max_value", (("l1", "unary"),)),
        ):
            if getattr(self, name) is not None and (self.metric, family) not in owners:
                where = " or ".join(_metric_family(m, f) for m, f in owners)
                raise ParameterError(
                    f"JoinSpec.{name} applies to metric {where}; got metric "
                    f"{_metric_family(self.metric, family)}."
                )

    @property
    def family_name(self) -> str | None:
        """The name of the family in use, where the metric has several (None otherwise)."""
        families = METRICS[self.metric].families
        return self.family or next(iter(families), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class UnitSpec(_Spec):
    """How passage-level dedup cuts documents into units (``neardup dedup --unit``).

    Parameters
    ----------
    kind
        ``"line"``; ``"paragraph"`` (lines up to a blank line); ``"sentences"`` (every run of
        ``num_sentences`` consecutive sentences of a document, overlapping, as datatrove's
        sentence dedup: a document with fewer sentences is one unit).
    num_sentences
        Sentences per unit (``kind="sentences"`` only; 1 otherwise).
    min_chars
        Units with fewer characters (whitespace left out) are never removed (0: every unit
        that is not blank is a candidate).
    min_doc_chars
        A document left with fewer characters (whitespace left out) after its repeated units
        are removed is dropped from the kept corpus (0: none is).
    fold_digits
        Match units with every ASCII digit read as 0, as CCNet does, so page footers and
        headers that differ only by their page number or date are one unit.

    Examples
    --------
    >>> UnitSpec.parse("sentences:3").num_sentences
    3
    """

    kind: UnitKind = "line"
    num_sentences: int = 1
    min_chars: int = 0
    min_doc_chars: int = 0
    fold_digits: bool = True

    _RULES: ClassVar[Mapping[str, Rule]] = {
        "kind": one_of("line", "paragraph", "sentences"),
        "num_sentences": integer(1, 1024),
        "min_chars": integer(0, 2**31),
        "min_doc_chars": integer(0, 2**31),
        "fold_digits": boolean(),
    }

    def __post_init__(self) -> None:
        self._validate()
        if self.kind != "sentences" and self.num_sentences != 1:
            raise ParameterError(
                f"UnitSpec.num_sentences applies to kind='sentences'; got "
                f"{self.num_sentences!r} with kind={self.kind!r}."
            )

    @classmethod
    def parse(cls, value: str, **rest: Any) -> UnitSpec:
        """The spec of ``--unit``: ``line``, ``paragraph`` or ``sentences:K``."""
        kind, _, count = value.partition(":")
        if kind == "sentences" and count:
            if not count.isdigit():
                raise ParameterError(
                    f"--unit sentences:K needs a whole number of sentences; got {value!r}."
                )
            return cls(kind="sentences", num_sentences=int(count), **rest)
        if count or kind not in ("line", "paragraph", "sentences"):
            raise ParameterError(f"--unit must be line, paragraph or sentences:K; got {value!r}.")
        return cls(kind=cast(UnitKind, kind), **rest)

    @property
    def label(self) -> str:
        """The ``--unit`` value that gives this spec's cut."""
        return f"sentences:{self.num_sentences}" if self.kind == "sentences" else self.kind


@dataclass(frozen=True, slots=True, kw_only=True)
class MirrorSpec(_Spec):
    """How mirrors are told from hosts that merely look alike.

    Parameters
    ----------
    copy_threshold
        Word-shingle Jaccard at which a page on one host is a copy of a page on another.
    unchanged
        Jaccard (templates left out) at which a copy is unchanged; below it, edited.
    min_coverage
        Share of a host's pages with a copy on the other host that makes it a mirror of it.
    min_pages
        Fewest shared pages for a mirror (fewer is "a few copied pages").
    stale_share
        Share of edited copies from which a mirror is stale.
    url_threshold
        URL-shingle Jaccard of two hosts from which they are a candidate pair.
    shingle
        The content shingles.
    seed
        Seed of the MinHash permutations.
    """

    copy_threshold: float = 0.5
    unchanged: float = 0.95
    min_coverage: float = 0.8
    min_pages: int = 3
    stale_share: float = 0.1
    url_threshold: float = 0.3
    shingle: ShingleSpec = field(default_factory=ShingleSpec)
    seed: int = 42

    _RULES: ClassVar[Mapping[str, Rule]] = {
        "copy_threshold": real(0.0, 1.0, low_open=True),
        "unchanged": real(0.0, 1.0, low_open=True),
        "min_coverage": real(0.0, 1.0, low_open=True),
        "min_pages": integer(1, 2**31),
        "stale_share": real(0.0, 1.0, low_open=True),
        "url_threshold": real(0.0, 1.0, low_open=True),
        "shingle": Rule("a ShingleSpec", lambda v: isinstance(v, ShingleSpec)),
        "seed": integer(0, MAX_SEED),
    }

    def __post_init__(self) -> None:
        self._validate()


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddingSpec(_Spec):
    """The embedding method (``neardup dedup --method embedding``): where the vectors come from.

    Documents are encoded by a model (:mod:`neardup.embed`), or their vectors read from a file
    an earlier run saved; pairs are joined by the exact cosine of their vectors at
    ``DedupConfig.lsh.threshold``, candidates found by random-hyperplane LSH (seed 002) with
    bands chosen for ``recall`` at the threshold (:func:`neardup.join.vector_join`).

    Parameters
    ----------
    model
        The directory of a model saved on disk (``--model``), e.g. a sentence-transformers
        model; ``None`` where ``embeddings`` gives the vectors, or an encoder object is passed
        to the Python API.
    embeddings
        An ``embeddings.npy`` an earlier run of the same inputs saved (``--embeddings``): no
        encoding; refused when made for other documents or with another model. Or a
        ``.parquet`` table of vectors made elsewhere, an ``id`` and an ``embedding`` (a list of
        floats) per document (:func:`neardup.io.embeddings.read_embedding_table`).
    save
        Write the documents' vectors to the output as ``embeddings.npy`` (``--save-embeddings``,
        with ``embeddings.json`` saying how they were made).
    recall
        The chance a pair exactly at the threshold becomes a candidate (nearer pairs: more).
    device
        ``"cpu"``: neardup's own forward pass (NumPy, every core; the same vectors at every
        run, whatever the number of threads); ``"cuda"``: the model run by
        sentence-transformers on the GPU (``--device``; needs torch with CUDA), its vectors
        within about 1e-4 of the CPU's.
    with_shingles
        Also find pairs by their shingles (``--method minhash+embedding``): a pair is a near
        duplicate when its shingle Jaccard reaches ``DedupConfig.lsh.threshold`` *or* its
        cosine reaches ``cosine_threshold``, and ``pairs.jsonl`` says which did (``found_by``).
    cosine_threshold
        The cosine at which a pair is a near duplicate when ``with_shingles`` (``None``:
        :data:`COSINE_THRESHOLD`); the embedding method alone joins at
        ``DedupConfig.lsh.threshold``, and this must then be ``None``.
    """

    model: str | None = None
    embeddings: str | None = None
    save: bool = False
    recall: float = 0.95
    device: EmbeddingDevice = "cpu"
    with_shingles: bool = False
    cosine_threshold: float | None = None

    _RULES: ClassVar[Mapping[str, Rule]] = {
        "model": optional_text(),
        "embeddings": optional_text(),
        "save": boolean(),
        "recall": real(0.0, 1.0, low_open=True, high_open=True),
        "device": one_of("cpu", "cuda"),
        "with_shingles": boolean(),
        "cosine_threshold": optional_real(0.0, 1.0, low_open=True),
    }

    def __post_init__(self) -> None:
        self._validate()
        if self.cosine_threshold is not None and not self.with_shingles:
            raise ParameterError(
                "EmbeddingSpec.cosine_threshold applies with shingles (with_shingles); the "
                "embedding method alone joins at DedupConfig.lsh.threshold: set that instead"
            )


COSINE_THRESHOLD = 0.9
"""The cosine of a near duplicate by its embeddings when none is given (``--threshold`` of
``--method embedding``, ``--cosine-threshold`` of ``minhash+embedding``). On a corpus about one
subject every text is near every other: Clough & Stevenson's answers to one question that copy
nothing reach 0.83 with their source (all-MiniLM-L6-v2), and 10% of the pairs of answers to one
question pass 0.87 (docs/semantic.md)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DedupConfig(_Spec):
    """Everything one ``dedup`` run needs: the specs plus reading and writing settings.

    Parameters
    ----------
    sketch, lsh
        The sketch and candidate specs; ``lsh.num_perm`` follows ``sketch.num_perm`` (left at
        its default, it is set to it; set to another number, it is an error), and ``lsh.family``
        left ``None`` becomes the sketch kind's first (:func:`candidate_family`).
    verify
        ``"exact"``: keep a candidate pair when the exact Jaccard of its shingle sets reaches the
        threshold; ``"signature"``: when the signature estimate does; ``"none"``: keep every
        candidate. ``None`` picks ``"exact"`` (texts are always reachable by a second pass).
    keep
        The representative of each cluster: the ``"first"`` document in input order, or the
        ``"longest"`` (ties go to the first). With ``lsh.family="containment"`` it must be
        ``"longest"``: the container is kept.
    keep_by
        Fields that choose the representative instead: ``"FIELD"`` or ``"FIELD:max"`` prefers
        the largest value, ``"FIELD:min"`` the smallest; each later field breaks the ties of
        the ones before, and input order the rest. Numbers (JSON numbers, Parquet numeric,
        date and time columns, CSV columns whose every value is a number) compare as numbers,
        strings by code point (ISO dates in order); a record without the field, or with
        null, is preferred last (:func:`~neardup.cluster.preference_order`). ``keep`` must be
        ``"first"`` then.
    annotate
        Instead of the kept corpus, write every record with this field added (``{"cluster",
        "keep", "similarity"}``, as ``clusters.jsonl`` gives them): ``annotated.jsonl``,
        ``.csv`` (three columns ``FIELD.cluster``, ...) or ``.parquet`` (a struct column).
        ``None``: the kept corpus.
    cluster
        ``"components"``: the connected components of the verified pairs (single link: A ~ B
        ~ C joins A and C even when they share little); ``"center"``: clusters that do not
        chain, every member verified against its representative at the threshold
        (:func:`~neardup.cluster.center_clusters`). Either way each document's similarity to
        its representative is measured and written.
    batch_bytes
        Text bytes read per batch; memory is bounded by this, not by the corpus.
    text_field
        The field (JSONL, Parquet) or column (CSV) holding the text.
    id_field
        Where ids come from. ``None`` (the default): the ``id`` field of a record that has one,
        else ``FILE:LINE`` (JSONL, CSV) or ``FILE:ROW`` (Parquet); a name: that field, which
        every record must have (a misspelt name is an error, not a silent fallback); ``""``:
        ``FILE:LINE`` (or ``FILE:ROW``) for every record. ``FILE`` is the input's name, or as
        much of its path as tells it from the run's other inputs. ``.txt`` files are named by
        their relative paths. Ids must be unique within a run.
    encoding
        The text encoding of CSV and ``.txt`` inputs (any Python codec name); JSON Lines and
        Parquet are UTF-8 by definition. A leading UTF-8 byte-order mark is skipped.
    input_format
        ``"auto"`` decides from the file extension (``.warc``/``.arc``, optionally ``.gz``, are
        web archives: each HTML response a document, its target URI the id).
    html_field
        The field (JSONL, Parquet) or column (CSV) holding a page's HTML, turned into text as
        ``html_extract`` says; ``None``: the inputs hold plain text (``text_field``).
    html_extract
        What is taken of an HTML page (a web archive's, or ``html_field``'s): ``"text"``, its
        visible text; ``"main"``, the main content only (navigation, headers and footers
        dropped); ``"altavista"``, the feature text of seed 000 (the words of the text with the
        URLs of HREF and IMG attributes as words where they stand, markup dropped).
    skip_bad_records
        Skip malformed records, counting them in the summary, instead of stopping.
    compress
        Compression of the written deduplicated corpus (JSONL or CSV).
    pairs
        Which verified near-duplicate pairs are reported (``pairs.jsonl``, ``DedupResult.pairs``):
        ``"spanning"`` (the default) keeps those that join two clusters, taken in pair order:
        a spanning forest of each cluster, at most one pair per duplicate, enough to explain
        every cluster; ``"all"`` keeps every verified pair (it grows quadratically in
        near-identical groups); ``"none"`` reports none and writes no pairs file at all. In
        ``pairs.jsonl``, the first two also list every exact duplicate, linked to the first
        document of its group (``DedupResult.exact_pairs`` always holds those links). Clusters
        do not depend on it.
    memory_bytes
        Working memory for verification chunks (``--memory-gb``); ``None`` takes an eighth of
        the machine's memory, at most 1 GiB. Results never depend on it.
    explain
        Give each near pair of ``pairs.jsonl`` its shared passages
        (:func:`neardup.explain.shared_passages`, character offsets into the texts as read),
        at the cost of one more pass over the inputs. Local engine only.
    host_templates
        Leave each web host's template (the shingles on half or more of its pages: navigation,
        footers, a mirror's banner) out of its pages' texts before they are compared, each
        host's template learned from its first pages in a first pass
        (:class:`neardup.templates.HostTemplates`, ``--host-templates``). A page's host is that
        of its id when the id is an ``http(s)`` URL, as web archives give it. Local engine.
    embedding
        The embedding method (:class:`EmbeddingSpec`, ``--method embedding``): pairs by the
        cosine of the texts' vectors, at ``lsh.threshold``; with its ``with_shingles``
        (``--method minhash+embedding``), by either the shingles' Jaccard or the cosine.
        ``None``: shingles only.
    """

    sketch: SketchSpec = field(default_factory=SketchSpec)
    lsh: LSHSpec = field(default_factory=LSHSpec)
    verify: VerifyMode | None = None
    keep: KeepRule = "first"
    keep_by: tuple[str, ...] = ()
    annotate: str | None = None
    cluster: ClusterMode = "components"
    batch_bytes: int = 32 * 2**20
    text_field: str = "text"
    id_field: str | None = None
    encoding: str = "utf-8"
    input_format: InputFormat = "auto"
    html_field: str | None = None
    html_extract: HtmlExtract = "text"
    skip_bad_records: bool = False
    compress: Compression = "none"
    pairs: PairsMode = "spanning"
    memory_bytes: int | None = None
    explain: bool = False
    host_templates: bool = False
    embedding: EmbeddingSpec | None = None

    _RULES: ClassVar[Mapping[str, Rule]] = {
        "verify": Rule(
            "None or one of 'exact', 'signature', 'none'",
            lambda v: v is None or v in ("exact", "signature", "none"),
        ),
        "keep": one_of("first", "longest"),
        "keep_by": Rule(
            "a tuple of 'FIELD', 'FIELD:max' or 'FIELD:min' (each field once)", _is_keep_by
        ),
        "annotate": optional_text(),
        "cluster": one_of("components", "center"),
        "batch_bytes": integer(1, 2**40),
        "text_field": text(),
        "id_field": Rule("None or a str", lambda v: v is None or isinstance(v, str)),
        "encoding": Rule("a text encoding Python knows", _is_encoding),
        "input_format": one_of("auto", "jsonl", "parquet", "arrow", "csv", "txt", "warc"),
        "html_field": optional_text(),
        "html_extract": one_of("text", "main", "altavista"),
        "skip_bad_records": boolean(),
        "compress": one_of("none", "gzip", "zstd"),
        "pairs": one_of("all", "spanning", "none"),
        "memory_bytes": optional_integer(1 << 24, 1 << 50),
        "explain": boolean(),
        "host_templates": boolean(),
        "embedding": Rule(
            "None or an EmbeddingSpec", lambda v: v is None or isinstance(v, EmbeddingSpec)
        ),
    }

    def __post_init__(self) -> None:
        given: Any = self.keep_by
        if isinstance(given, list):  # as a dict or TOML file gives it
            object.__setattr__(self, "keep_by", tuple(given))
        self._validate()
        if self.lsh.num_perm != self.sketch.num_perm:
            if self.lsh.num_perm != _DEFAULT_NUM_PERM:
                raise ParameterError(
                    f"DedupConfig.lsh.num_perm must equal sketch.num_perm "
                    f"({self.sketch.num_perm}); got {self.lsh.num_perm}. Set the number of slots "
                    "once, as sketch.num_perm: the banding follows it."
                )
            # The number of slots is the sketch's; the banding follows it.
            object.__setattr__(self, "lsh", replace(self.lsh, num_perm=self.sketch.num_perm))
        family = candidate_family(self.sketch, self.lsh)
        if self.lsh.family is None:
            object.__setattr__(self, "lsh", replace(self.lsh, family=family))
        if family == "hamming" and self.lsh.search == "psm":
            check_psm_radius(self.sketch.simhash_bits, self.lsh.hamming)
        if family == "containment":
            self._check_containment()
        if self.keep_by and self.keep != "first":
            raise ParameterError(
                "keep_by (--keep-by) chooses each cluster's representative, ties in input "
                f"order; keep={self.keep!r} (--keep {self.keep}) would choose it too: drop it."
            )
        if self.embedding is not None:
            self._check_embedding()

    def _check_embedding(self) -> None:
        """The embedding method measures the exact cosine of vectors (and Jaccard, combined)."""
        assert self.embedding is not None
        method = self.embedding_method
        if self.lsh.family == "containment":
            raise ParameterError(
                f"{method} joins by the cosine of embeddings; containment (--measure "
                "containment) measures how much of one shingle set is in another: drop one of them"
            )
        if self.verify_mode != "exact":
            measures = "Jaccard and cosine" if self.embedding.with_shingles else "cosine"
            raise ParameterError(
                f"{method} measures every pair's {measures} exactly: drop --verify {self.verify}"
            )
        if not self.embedding.with_shingles:
            if self.explain:
                raise ParameterError(
                    "the embedding method (--method embedding) has no shared passages to show: "
                    "drop --explain, or find pairs by shingles too (--method minhash+embedding)"
                )
            return
        if SKETCH_KINDS[self.sketch.kind].exact != "jaccard":
            raise ParameterError(
                f"--method minhash+embedding measures the shingles' Jaccard beside the cosine; "
                f"--sketch {self.sketch.kind} measures {SKETCH_KINDS[self.sketch.kind].exact}: "
                "choose a MinHash sketch (the default, oph) or --method embedding"
            )
        if self.cluster == "center":
            raise ParameterError(
                "--cluster center ranks each document's pairs by one measure; "
                "--method minhash+embedding joins by two: use --cluster components, or one method"
            )

    def _check_containment(self) -> None:
        """Containment is measured exactly, and a cluster keeps its container (the longest)."""
        if self.verify_mode != "exact":
            raise ParameterError(
                "DedupConfig.verify must be 'exact' (or None) with the containment family: "
                f"containment is measured on the shingle sets; got {self.verify!r}."
            )
        if self.keep != "longest" or self.keep_by:
            raise ParameterError(
                "DedupConfig.keep must be 'longest' with the containment family: a cluster "
                "keeps its container, the longest document (the shorter is the contained "
                f"one); got keep={self.keep!r}"
                + (f", keep_by={list(self.keep_by)!r}." if self.keep_by else ".")
            )

    @property
    def keep_fields(self) -> tuple[tuple[str, KeepDirection], ...]:
        """``keep_by`` as ``(field, "max" | "min")`` pairs, in order of precedence."""
        return tuple(keep_field(spec) for spec in self.keep_by)

    @property
    def measure(self) -> Measure:
        """What the similarity of a pair is: the kind's exact measure, containment, or cosine.

        With ``embedding.with_shingles`` it is the shingles' measure; the cosine comes beside it.
        """
        if self.lsh.family == "containment":
            return "containment"
        if self.embedding_only:
            return "cosine"
        return SKETCH_KINDS[self.sketch.kind].exact

    @property
    def embedding_only(self) -> bool:
        """Whether pairs are found and measured by embeddings alone (``--method embedding``)."""
        return self.embedding is not None and not self.embedding.with_shingles

    @property
    def embedding_method(self) -> str:
        """The ``--method`` of a run with embeddings, as typed (``""`` without them)."""
        if self.embedding is None:
            return ""
        return "--method " + ("minhash+embedding" if self.embedding.with_shingles else "embedding")

    @property
    def combined(self) -> bool:
        """Whether a pair is joined by its shingles or by its embeddings (minhash+embedding)."""
        return self.embedding is not None and self.embedding.with_shingles

    @property
    def cosine_threshold(self) -> float | None:
        """The cosine at which the embedding method joins a pair (``None``: no embeddings)."""
        if self.embedding is None:
            return None
        if self.embedding_only:
            return self.lsh.threshold
        given = self.embedding.cosine_threshold
        return COSINE_THRESHOLD if given is None else given

    @property
    def verify_mode(self) -> VerifyMode:
        """The verification in use (``verify``, or ``"exact"`` when left to choose)."""
        return "exact" if self.verify is None else self.verify

    @property
    def working_memory(self) -> int:
        """``memory_bytes``, or an eighth of the machine's memory, at most 1 GiB."""
        if self.memory_bytes is not None:
            return self.memory_bytes
        try:
            physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            physical = 8 << 30
        return max(1 << 26, min(1 << 30, physical // 8))

    @classmethod
    def from_toml(cls, path: Path | str) -> DedupConfig:
        """Load a config from a TOML file; unknown keys are errors naming the file and key.

        Examples
        --------
        A file with ``[lsh]`` ``threshold = 0.7`` and ``[sketch.shingle]`` ``unit = "char"``
        gives ``DedupConfig(lsh=LSHSpec(threshold=0.7), sketch=SketchSpec(shingle=...))``.
        """
        path = Path(path)
        try:
            with path.open("rb") as f:
                data = tomllib.load(f)
        except OSError as exc:
            raise InputError(f"cannot read config: {exc.strerror}", path=path) from exc
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"not valid TOML: {exc}", path=path) from exc
        try:
            return cls.from_dict(data)
        except ParameterError as exc:
            raise ParameterError(f"{path}: {exc}") from exc


_NESTED: dict[tuple[str, str], type[_Spec]] = {
    ("MirrorSpec", "shingle"): ShingleSpec,
    ("SketchSpec", "shingle"): ShingleSpec,
    ("SketchSpec", "normalize"): NormalizeSpec,
    ("DedupConfig", "sketch"): SketchSpec,
    ("DedupConfig", "lsh"): LSHSpec,
    ("DedupConfig", "embedding"): EmbeddingSpec,
}
