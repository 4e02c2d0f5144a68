"""Canonical forms (I-Match) against a plain-Python transcription, and through ``neardup dedup``."""

from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from neardup import DedupConfig, ShingleSpec, SketchSpec
from neardup.candidates import candidate_scheme
from neardup.errors import IncompatibleError, ParameterError
from neardup.sketch import IDFWeights, make_sketcher
from neardup.sketch.canonical import CanonicalSketcher, normalized_idf
from tests import reference
from tests.integration.conftest import NEARDUP, run

SPEC = SketchSpec(kind="canonical", shingle=ShingleSpec(k=1))
START = 0x9E3779B97F4A7C15
NO_TERM = 2**64 - 1


def _i_match(texts: list[str], low: float, high: float) -> list[tuple[int, int]]:
    """I-Match as seed 004 [9] describes it, in plain Python: (fingerprint, kept terms) each.

    A document's terms are its distinct words (tests/reference.py hashes them); the collection
    gives each the normalised IDF ``log(N / df) / log(N)``; the terms in ``[low, high]``,
    ascending, are folded by ``h = fmix64(h ^ x)`` from ``START``.
    """
    terms = [set(reference.shingle_fingerprints(t, SPEC.shingle)) for t in texts]
    df = Counter(x for doc in terms for x in doc)
    n = len(texts)
    out = []
    for doc in terms:
        kept = sorted(x for x in doc if low <= math.log(n / df[x]) / math.log(n) <= high)
        h = START
        for x in kept:
            h = reference.fmix64(h ^ x)
        out.append((h if kept else NO_TERM, len(kept)))
    return out


def test_fingerprints_equal_a_plain_python_i_match(real_texts: list[str]) -> None:
    idf = IDFWeights(SPEC).fit(real_texts)
    nidf = normalized_idf(idf)
    edges = np.array([SPEC.idf_low, SPEC.idf_high])
    # No term within rounding of a band edge, where two correct logarithms may disagree.
    assert np.abs(nidf[:, None] - edges).min() > 1e-9
    got = CanonicalSketcher(SPEC, idf).sketch(real_texts)
    expected = _i_match(real_texts, SPEC.idf_low, SPEC.idf_high)
    assert list(zip(got.values[:, 0].tolist(), got.num_shingles.tolist(), strict=True)) == expected
    # Without collection statistics nothing is dropped: the whole distinct term set.
    whole = CanonicalSketcher(SPEC).sketch(real_texts)
    assert whole.values[:, 0].tolist() == [h for h, _ in _i_match(real_texts, 0.0, 1.0)]
    assert 0 < got.num_shingles.sum() < whole.num_shingles.sum()


@pytest.fixture(scope="module")
def corpus(licenses: list[dict[str, object]]) -> list[str]:
    """Licences of at least 100 distinct words, one text each."""
    texts = dict.fromkeys(str(r["text"]) for r in licenses)
    return [t for t in texts if len(set(t.casefold().split())) >= 100][:400]


def _copies(corpus: list[str], words: list[str]) -> list[str]:
    """The first 40 texts, each with the next of ``words`` inserted in its middle."""
    out = []
    for i, text in enumerate(corpus[:40]):
        tokens = text.split()
        middle = len(tokens) // 2
        out.append(" ".join([*tokens[:middle], *words[i].split(), *tokens[middle:]]))
    return out


def _dropped_copies(corpus: list[str]) -> list[str]:
    """Copies that gain only dropped words: ``the`` (too common) and a word of their own (in
    one document: too rare)."""
    return _copies(corpus, [f"the qzx{i}vw" for i in range(40)])


def _word_hash(word: str) -> np.uint64:
    return np.uint64(reference.shingle_fingerprints(word, SPEC.shingle)[0])


def test_copies_differing_only_in_dropped_words_collide(corpus: list[str]) -> None:
    probe = IDFWeights(SPEC).fit(corpus)
    nidf = normalized_idf(probe)
    assert nidf[np.searchsorted(probe.features_, _word_hash("the"))] < SPEC.idf_low
    # Control: copies that gain a word of the band (well inside it, so that it stays there
    # when the copies join the collection) which the text lacks.
    inside = (nidf > SPEC.idf_low + 0.02) & (nidf < SPEC.idf_high - 0.02)
    band = {int(h) for h in probe.features_[inside]}
    vocabulary = sorted({w for t in corpus for w in t.casefold().split() if w.isalpha()})
    in_band = [w for w in vocabulary if int(_word_hash(w)) in band]
    lacking = [next(w for w in in_band if w not in t.casefold().split()) for t in corpus[:40]]
    dropped, gained = _dropped_copies(corpus), _copies(corpus, lacking)
    texts = corpus + dropped + gained
    sketcher = CanonicalSketcher(SPEC, IDFWeights(SPEC).fit(texts))
    assert np.isin([_word_hash(w) for w in lacking], sketcher.lexicon).all()
    values = sketcher.sketch(texts).values[:, 0]
    n = len(corpus)
    originals = values[:40]
    assert np.array_equal(values[n : n + 40], originals)
    assert np.all(values[n + 40 :] != originals)
    # Distinct licences mostly keep distinct forms.
    assert np.unique(values[:n]).shape[0] >= 0.8 * n


def test_the_spec_records_its_band_and_refuses_mixing() -> None:
    spec = SketchSpec(kind="canonical", idf_low=0.2, idf_high=0.9, num_perm=64)
    assert spec.to_dict() | {"shingle": None, "normalize": None} == {
        "kind": "canonical",
        "num_perm": 1,  # one fingerprint, whatever was asked
        "seed": 42,
        "idf_low": 0.2,
        "idf_high": 0.9,
        "shingle": None,
        "normalize": None,
    }
    assert SketchSpec.from_dict(spec.to_dict()) == spec
    with pytest.raises(ParameterError, match="idf_low applies to kind 'canonical', not to 'oph'"):
        SketchSpec(idf_low=0.2)
    with pytest.raises(ParameterError, match="idf_low must not exceed idf_high"):
        SketchSpec(kind="canonical", idf_low=0.5, idf_high=0.4)
    texts = ["a b c d", "a b c e", "a f g h"]
    wide_spec = SketchSpec.from_dict({**SPEC.to_dict(), "idf_high": 0.5})
    narrow = make_sketcher(SPEC, IDFWeights(SPEC).fit(texts)).sketch(texts)
    wide = make_sketcher(wide_spec, IDFWeights(wide_spec).fit(texts)).sketch(texts)
    with pytest.raises(IncompatibleError, match=r"sketch.idf_high \(0.2 != 0.5\)"):
        narrow.check_compatible(wide)


def test_equal_fingerprints_are_the_candidates() -> None:
    config = DedupConfig(sketch=SPEC)
    scheme = candidate_scheme(config.sketch, config.lsh)
    assert scheme.describe()["label"] == "b=1, r=1"
    keys = scheme.keys(np.array([[5], [7], [5]], dtype=np.uint64))
    assert keys.shape == (3, 1)
    assert keys[0, 0] == keys[2, 0] != keys[1, 0]


def test_dedup_command_groups_copies_differing_in_dropped_words(
    tmp_path: Path, corpus: list[str]
) -> None:
    if not NEARDUP.exists():
        pytest.skip(f"the neardup command is not installed at {NEARDUP}")
    dropped = _dropped_copies(corpus)
    records = [{"id": f"o{i}", "text": t} for i, t in enumerate(corpus)]
    records += [{"id": f"c{i}", "text": t} for i, t in enumerate(dropped)]
    source = tmp_path / "in.jsonl.gz"
    with gzip.open(source, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)
    out = tmp_path / "out"
    done = run("dedup", source, "-o", out, "-q", "--sketch", "canonical", "--shingle", "word:1")
    assert done.returncode == 0, done.stderr
    clusters = {}
    for line in (out / "clusters.jsonl").read_text().splitlines():
        row = json.loads(line)
        clusters[row["id"]] = row["cluster"]
    assert all(clusters[f"c{i}"] == clusters[f"o{i}"] for i in range(len(dropped)))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["params"]["sketch"]["idf_low"] == SPEC.idf_low
    assert summary["params"]["sketch"]["idf_high"] == SPEC.idf_high
    assert summary["idf"]["num_docs"] == len(records)
    assert summary["lsh"]["label"] == "b=1, r=1"
    mixed = run("dedup", source, "-o", tmp_path / "x", "--idf-low", "0.2")
    assert mixed.returncode == 2
    assert "--idf-low applies to --sketch canonical, not to oph" in mixed.stderr
