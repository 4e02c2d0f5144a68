"""How text is read before it is compared: normalisation and shingling (and their languages)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, cast

from neardup.errors import ParameterError
from neardup.params.rules import (
    Rule,
    Spec,
    boolean,
    integer,
    one_of,
    unset_dropped,
)

ShingleUnit = Literal["word", "char", "stopword"]
FingerprintKind = Literal["nd64", "rabin"]

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


DEFAULT_RABIN_POLYNOMIAL = "0x1123a0ec875b778cd"
"""The Rabin polynomial a spec records when it names none (``random_irreducible(seed=0)``)."""


def _is_polynomial(value: Any) -> bool:
    if not isinstance(value, str) or len(value) != 19 or not value.startswith("0x1"):
        return False
    return all(c in "0123456789abcdef" for c in value[2:])


@dataclass(frozen=True, slots=True, kw_only=True)
class NormalizeSpec(Spec):
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
        return unset_dropped(Spec.to_dict(self), ("stopwords", "stem", "tokenizer"))

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
class ShingleSpec(Spec):
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
        return unset_dropped(Spec.to_dict(self), ("stopwords",))

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
