"""Stop words, stems and stop-word shingles (seed 004; MMDS §3.8.6) against plain Python."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from neardup import DedupConfig, NormalizeSpec, Shingler, ShingleSpec
from neardup._types import Batch
from neardup.cli.options import apply_flags
from neardup.errors import MissingExtraError, ParameterError
from neardup.params import STEM_LANGUAGES, STOPWORD_LANGUAGES
from neardup.pipeline import dedup
from neardup.text import lexicon, normalize_batch
from neardup.text.normalize import normalize_bytes
from neardup.text.shingle import KernelText
from neardup.text.spans import pack_strings
from tests import reference

Stemmer = pytest.importorskip("Stemmer")

LISTS = Path(lexicon.__file__).parent / "stopwords"
MAIN_LANGUAGES = ["english", "french", "german", "spanish", "italian", "portuguese", "dutch"]
MAIN_LANGUAGES += ["russian"]

SUDZO = (
    "A spokesperson for the Sudzo Corporation revealed today that studies have shown it is "
    "good for people to buy Sudzo products."
)
# MMDS Example 3.5: nine shingles of a stop word and the next two words (the book lists the
# first three; the rest follow from the Snowball English stop words a, for, the, that, have,
# it, is, to).
SUDZO_SHINGLES = [
    "A spokesperson for",
    "for the Sudzo",
    "the Sudzo Corporation",
    "that studies have",
    "have shown it",
    "it is good",
    "is good for",
    "for people to",
    "to buy Sudzo",
]


def _stop_words(language: str) -> set[str]:
    """The list file read by plain Python, folded as texts are."""
    return {w.casefold() for w in (LISTS / f"{language}.txt").read_text("utf-8").split()}


def _rewritten(texts: list[str], spec: NormalizeSpec) -> list[str]:
    """The texts as normalisation leaves them, ASCII folded (the kernels fold ASCII)."""
    batch = normalize_batch(texts, spec)
    data = bytes(batch.data)
    return [
        data[a:b].lower().decode("utf-8", "surrogateescape")
        for a, b in zip(batch.offsets[:-1].tolist(), batch.offsets[1:].tolist(), strict=True)
    ]


@pytest.fixture(scope="module")
def licence_texts(licenses: list[dict[str, object]]) -> list[str]:
    """About 400,000 characters of the bundled licence texts, taken evenly."""
    texts = [str(r["text"]) for r in licenses]
    chosen, total = [], 0
    for text in texts[::7]:
        if total > 400_000:
            break
        chosen.append(text)
        total += len(text)
    return chosen


def test_the_lists_are_the_languages_the_spec_accepts() -> None:
    assert sorted(p.stem for p in LISTS.glob("*.txt")) == sorted(STOPWORD_LANGUAGES)
    assert (LISTS / "README.md").read_text("utf-8").count("BSD") >= 1
    assert set(MAIN_LANGUAGES) <= set(STOPWORD_LANGUAGES) <= set(STEM_LANGUAGES)
    assert set(STEM_LANGUAGES) == set(Stemmer.algorithms())
    for language in STOPWORD_LANGUAGES:
        words = lexicon.stopword_list(language)
        assert len(words) >= 50
        assert all(w == w.strip() and w for w in words)


@pytest.mark.parametrize("strip", [False, True])
def test_stop_words_removed_equal_plain_python(licence_texts: list[str], strip: bool) -> None:
    spec = NormalizeSpec(stopwords="english", strip_punctuation=strip)
    stops = _stop_words("english")
    plain = NormalizeSpec(strip_punctuation=strip)
    got = _rewritten(licence_texts, spec)
    removed = 0
    for text, out in zip(licence_texts, got, strict=True):
        if strip:  # punctuation separates words: the library's word rule, in plain Python
            words = reference.tokens(text, ShingleSpec(), plain)
            kept = reference.tokens(out, ShingleSpec(), plain)
        else:
            words = reference.normalize(text).split()
            kept = out.split()
        expected = [w for w in words if w not in stops]
        assert kept == expected
        removed += len(words) - len(expected)
    assert removed > 10_000  # the test saw stop words to remove


@pytest.mark.parametrize("language", MAIN_LANGUAGES)
def test_stems_equal_pystemmer(licence_texts: list[str], language: str) -> None:
    texts = licence_texts[:: 1 if language == "english" else 4]
    stemmer = Stemmer.Stemmer(language)
    got = _rewritten(texts, NormalizeSpec(stem=language))
    changed = 0
    for text, out in zip(texts, got, strict=True):
        words = reference.normalize(text).split()
        expected = [stemmer.stemWord(w) for w in words]
        assert out.split() == expected
        changed += sum(a != b for a, b in zip(words, expected, strict=True))
    assert changed >= (0 if language == "russian" else 100)  # Russian: Cyrillic words below


def test_stems_in_other_languages_on_their_own_words() -> None:
    sentences = {
        "french": "Les chevaux couraient rapidement vers les montagnes enneigées",
        "german": "Die Kinder spielten fröhlich in den grünen Gärten",
        "russian": "Дети быстро бежали по зелёным полям",
        "spanish": "Los niños corrían rápidamente hacia las montañas",
    }
    for language, sentence in sentences.items():
        stemmer = Stemmer.Stemmer(language)
        stops = _stop_words(language)
        spec = NormalizeSpec(stopwords=language, stem=language)
        words = reference.normalize(sentence).split()
        expected = [stemmer.stemWord(w) for w in words if w not in stops]
        assert _rewritten([sentence], spec)[0].split() == expected
        assert expected != words


def test_stop_words_are_dropped_before_stemming(licence_texts: list[str]) -> None:
    stemmer = Stemmer.Stemmer("english")
    stops = _stop_words("english")
    spec = NormalizeSpec(stopwords="english", stem="english")
    texts = licence_texts[:40]
    for text, out in zip(texts, _rewritten(texts, spec), strict=True):
        words = reference.normalize(text).split()
        assert out.split() == [stemmer.stemWord(w) for w in words if w not in stops]


def test_the_vocabulary_grows_over_batches() -> None:
    spec = NormalizeSpec(stem="english", strip_punctuation=True)
    lex = lexicon.Lexicon(spec, *_tables(spec), np.empty(0, dtype=np.uint64))
    stemmer = Stemmer.Stemmer("english")
    first = ["Connected connections connecting", "The ponies ran"]
    second = ["Connecting PONIES generously", "generalizations"]
    for texts in (first, second, first + second):
        out = lex.rewrite(Batch(*pack_strings(texts)))
        data, bounds = bytes(out.data), out.offsets.tolist()
        for doc, text in enumerate(texts):
            words = data[bounds[doc] : bounds[doc + 1]].lower().decode().split()
            assert words == [stemmer.stemWord(w) for w in text.lower().split()]
    assert lex._stem_keys.shape[0] == 8  # each distinct word stemmed once, and kept


def _tables(spec: NormalizeSpec) -> tuple[np.ndarray, np.ndarray]:
    kt = KernelText.of(ShingleSpec(), spec)
    return kt.classes, kt.byte_words


@pytest.mark.parametrize("fingerprint", ["nd64", "rabin"])
def test_mmds_stop_word_shingles(fingerprint: str) -> None:
    spec = ShingleSpec(unit="stopword", k=3, fingerprint=fingerprint)  # type: ignore[arg-type]
    sets = Shingler(spec).shingle_sets([SUDZO, "Buy Sudzo."])
    words = Shingler(ShingleSpec(k=3, fingerprint=fingerprint))  # type: ignore[arg-type]
    listed = words.shingle_sets(SUDZO_SHINGLES)
    assert listed.sizes().tolist() == [1] * 9
    assert sets.set_of(0).tolist() == sorted(listed.hashes.tolist())
    assert sets.sizes().tolist() == [9, 0]  # "none from the ad"


def test_stop_word_shingles_equal_plain_python(licence_texts: list[str]) -> None:
    stops = _stop_words("french")
    spec = ShingleSpec(unit="stopword", k=4, stopwords="french")
    texts = [*licence_texts[:60], "Le chat est sur la table et le chien dort dans la maison."]
    sets = Shingler(spec).shingle_sets(texts)
    for doc, text in enumerate(texts):
        toks = reference.tokens(text, ShingleSpec())
        hashes = reference.shingle_fingerprints(text, ShingleSpec(k=4))
        expected = {h for i, h in enumerate(hashes) if toks[i] in stops}
        assert sets.set_of(doc).tolist() == sorted(expected)
    assert sets.sizes()[-1] == 6  # le, est, sur, la, et, le (dans, la: too near the end)


def test_mmds_stop_word_shingles_with_the_books_own_stop_words() -> None:
    # MMDS Example 3.5: "Here, we have italicized all the likely stop words, although there is
    # no set number of the most frequent words that should be considered stop words." The
    # italicised words as the user's own list give the nine shingles; a list of "the" alone,
    # the one shingle starting at it.
    italicised = ShingleSpec(unit="stopword", k=3, stopwords="words:A for the that have it is to")
    sets = Shingler(italicised).shingle_sets([SUDZO, "Buy Sudzo."])
    listed = Shingler(ShingleSpec(k=3)).shingle_sets(SUDZO_SHINGLES)
    assert sets.set_of(0).tolist() == sorted(listed.hashes.tolist())
    assert sets.sizes().tolist() == [9, 0]
    only_the = Shingler(ShingleSpec(unit="stopword", k=3, stopwords="words:the"))
    expected = Shingler(ShingleSpec(k=3)).shingle_sets(["the Sudzo Corporation"]).hashes
    assert only_the.shingle_sets([SUDZO]).set_of(0).tolist() == expected.tolist()


def test_a_corpus_derived_list_equals_plain_python(licence_texts: list[str]) -> None:
    words = lexicon.frequent_words(licence_texts, 40)
    counts: dict[str, int] = {}
    for text in licence_texts:
        for word in text.casefold().split():
            counts[word] = counts.get(word, 0) + 1
    assert list(words) == sorted(counts, key=lambda w: (-counts[w], w))[:40]
    assert {"the", "of", "or", "to"} <= set(words)  # licences' own stop words
    value = "words:" + " ".join(words)
    # Stop-word shingles start at the corpus's words; as a NormalizeSpec list they are dropped.
    spec = ShingleSpec(unit="stopword", k=3, stopwords=value)
    texts = licence_texts[:60]
    sets = Shingler(spec).shingle_sets(texts)
    stops = set(words)
    for doc, text in enumerate(texts):
        toks = reference.tokens(text, ShingleSpec())
        hashes = reference.shingle_fingerprints(text, ShingleSpec(k=3))
        assert sets.set_of(doc).tolist() == sorted(
            {h for i, h in enumerate(hashes) if toks[i] in stops}
        )
    dropped = _rewritten(texts, NormalizeSpec(stopwords=value))
    for text, out in zip(texts, dropped, strict=True):
        assert out.split() == [w for w in reference.normalize(text).split() if w not in stops]
    assert ShingleSpec.from_dict(spec.to_dict()) == spec  # the list is recorded as given


@pytest.mark.parametrize("bad", ["words:", "words:   ", "klingon", "words"])
def test_a_stop_word_field_names_a_language_or_its_words(bad: str) -> None:
    with pytest.raises(ParameterError, match="'words:' and the words"):
        NormalizeSpec(stopwords=bad)
    with pytest.raises(ParameterError, match="'words:' and the words"):
        ShingleSpec(unit="stopword", stopwords=bad)
    with pytest.raises(ParameterError, match="num_words must be an int >= 1"):
        lexicon.frequent_words(["a b"], 0)


def test_stop_word_shingles_with_stems() -> None:
    norm = NormalizeSpec(stem="english")
    got = Shingler(ShingleSpec(unit="stopword", k=3), norm).shingle_sets(["He does like apples"])
    listed = Shingler(ShingleSpec(k=3), norm).shingle_sets(["he does like", "does like apples"])
    assert got.set_of(0).tolist() == sorted(listed.hashes.tolist())  # "does" is stemmed "doe"


ARTICLE = (
    "The city council voted on Tuesday to expand the bus network into the northern suburbs, "
    "a plan that has been debated for more than a decade. Supporters said the new routes would "
    "cut commuting times for thousands of residents, while critics warned that the cost of the "
    "project could rise well above the estimates presented to the council. The mayor said that "
    "construction should begin in the spring and that the first buses would run by the end of "
    "next year, if the regional government approves the funding."
)
ADS_A = (
    "Sudzo Ultra Clean 50% OFF today only. Free shipping on orders over $25. Shop Sudzo "
    "deals now. Subscribe: weekly newsletter, exclusive coupons, members rewards program. "
    "Trending: celebrity diets, smartphone reviews, holiday gadgets, luxury watches sale."
)
ADS_B = (
    "Mega Motors spring sale: new SUVs from $199/month, zero down, 0% APR financing. Book "
    "test drive online. Sponsored: cheap flights Paris London Rome, hotel discounts, travel "
    "insurance quotes. Popular: stock tips, crypto news, fitness trackers, garden furniture."
)


def test_stop_word_shingles_favour_the_article_over_ads() -> None:
    page_a = ADS_A + " " + ARTICLE + " " + ADS_B[:80]
    page_b = ADS_B + " " + ARTICLE + " " + ADS_A[:60]

    def jaccard(shingle: ShingleSpec) -> float:
        sets = Shingler(shingle, NormalizeSpec(strip_punctuation=True)).shingle_sets(
            [page_a, page_b]
        )
        a, b = set(sets.set_of(0).tolist()), set(sets.set_of(1).tolist())
        return len(a & b) / len(a | b)

    stop_word, word = jaccard(ShingleSpec(unit="stopword", k=3)), jaccard(ShingleSpec(k=3))
    assert stop_word > word + 0.2
    assert stop_word > 0.8


def test_options_off_change_nothing() -> None:
    batch = Batch(*pack_strings(["The Ponies were running", "Ça va"]))
    assert normalize_bytes(batch, NormalizeSpec()) is not None
    plain = Batch(*pack_strings(["The Ponies were running"]))
    assert normalize_bytes(plain, NormalizeSpec()) is plain  # no copy, no pass
    kt = KernelText.of(ShingleSpec(), NormalizeSpec())
    assert kt.stop_keys.shape == (0,)
    old = {"nfkc": True, "casefold": True, "strip_punctuation": False}  # as stored before
    assert NormalizeSpec.from_dict(old) == NormalizeSpec()
    assert NormalizeSpec().to_dict() == old  # stored dicts stay byte for byte the same
    old_shingle = {"unit": "word", "k": 5, "fingerprint": "nd64", "polynomial": None}
    assert ShingleSpec.from_dict(old_shingle) == ShingleSpec()
    assert ShingleSpec().to_dict() == old_shingle


def test_specs_record_and_validate_the_options() -> None:
    spec = NormalizeSpec(stopwords="german", stem="german")
    assert NormalizeSpec.from_dict(spec.to_dict()) == spec
    assert spec != NormalizeSpec(stem="german")  # stored signatures of the two do not mix
    shingle = ShingleSpec.parse("stopword:3")
    assert shingle.to_dict()["stopwords"] == "english"
    with pytest.raises(ParameterError, match=r"'english'.*'french'"):
        NormalizeSpec(stopwords="klingon")
    with pytest.raises(ParameterError, match="'porter'"):
        NormalizeSpec(stem="klingon")
    with pytest.raises(ParameterError, match="only used with unit='stopword'"):
        ShingleSpec(unit="word", stopwords="french")
    with pytest.raises(ParameterError, match="drops them"):
        Shingler(ShingleSpec(unit="stopword", k=3), NormalizeSpec(stopwords="english"))


def test_missing_pystemmer_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "Stemmer", None)
    with pytest.raises(MissingExtraError, match=r"neardup\[web\]"):
        lexicon.stem_words(["running"], "english")


def test_command_line_flags() -> None:
    config = apply_flags(DedupConfig(), {"stopwords": "french", "stem": "french"})
    assert config.sketch.normalize.stopwords == "french"
    assert config.sketch.normalize.stem == "french"
    config = apply_flags(DedupConfig(), {"shingle": "stopword:3", "stopwords": "german"})
    assert config.sketch.shingle.unit == "stopword"
    assert config.sketch.shingle.stopwords == "german"
    assert config.sketch.normalize.stopwords is None
    again = apply_flags(config, {"shingle": "stopword:4"})
    assert again.sketch.shingle.stopwords == "german"
    assert apply_flags(config, {"shingle": "word:5"}).sketch.shingle.stopwords is None


def test_dedup_finds_inflected_copies_only_with_stems() -> None:
    base = (
        "The committee reviewed the proposals and rejected the plans that were submitted late, "
        "asking the applicants to resubmit their documents with the corrected figures"
    )
    variant = (
        "A committee reviews a proposal and rejects plans which are submitted late, asking "
        "applicants to resubmit the document with corrected figure"
    )
    other = "Completely unrelated text about gardening, tomatoes, watering schedules and soil"
    texts, ids = [base, variant, other], ["a", "b", "c"]
    flags = {"shingle": "word:2", "threshold": 0.5, "strip_punctuation": True}
    plain = dedup(texts, ids, apply_flags(DedupConfig(), flags))
    stemmed = dedup(
        texts, ids, apply_flags(DedupConfig(), {**flags, "stopwords": "english", "stem": "english"})
    )
    assert plain.clusters.labels.tolist() == [0, 1, 2]
    assert stemmed.clusters.labels.tolist() == [0, 0, 2]
