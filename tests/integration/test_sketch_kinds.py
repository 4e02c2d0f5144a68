"""Every sketch kind runs the whole dedup and finds the true near-duplicate pairs of real text."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from neardup import CandidatePairs, DedupConfig, LSHSpec, Shingler, SketchSpec, dedup
from neardup.candidates import candidate_scheme
from neardup.errors import NeardupWarning, ParameterError
from neardup.kinds import SKETCH_KINDS
from neardup.params import FEATURE_PRESETS
from neardup.sketch import SKETCHERS, IDFWeights, SimHasher
from neardup.sketch.features import PRESETS, acceptance_features
from neardup.sketch.weighted import cosine_similarity, term_counts, weighted_jaccard
from tests import reference
from tests.reference_allpairs import all_pairs_above

THRESHOLD = 0.7


@pytest.fixture(scope="module")
def corpus(licenses: list[dict[str, object]]) -> list[str]:
    return [str(r["text"]) for r in licenses[:700]]


def _found(
    texts: list[str], kind: str, family: str | None = None, **spec: object
) -> set[tuple[int, int]]:
    sketch = SketchSpec(kind=kind, **spec)  # type: ignore[arg-type]
    lsh = LSHSpec(family=family, threshold=THRESHOLD)
    config = DedupConfig(sketch=sketch, lsh=lsh, pairs="all")
    result = dedup(texts, config=config)
    return set(zip(result.pairs.first.tolist(), result.pairs.second.tolist(), strict=True))


def _near_pairs(texts: list[str], threshold: float) -> dict[tuple[int, int], float]:
    """Exact all-pairs truth among the first document of each exact-duplicate group (exact
    duplicates are linked before candidates are sought)."""
    first_of: dict[tuple[int, ...], int] = {}
    for doc, f in enumerate(map(tuple, SKETCHERS["oph"]().sketch(texts).fingerprints.tolist())):
        first_of.setdefault(f, doc)
    representatives = set(first_of.values())
    assert len(representatives) < len(texts)
    truth = all_pairs_above(Shingler().shingle_sets(texts), threshold)
    return {p: j for p, j in truth.items() if p[0] in representatives and p[1] in representatives}


# Every kind verified by set Jaccard, with every family it registers whose candidates are
# near-certain at the threshold (the feature filter accepts by its own curve: see below;
# canonical forms promise no recall at a threshold: tests/sketch/test_canonical.py).
SET_PAIRINGS = [
    (name, family)
    for name, kind in SKETCH_KINDS.items()
    if kind.exact == "jaccard" and name != "canonical"
    for family in kind.families
    if family not in ("features", "prefix", "containment")
]


@pytest.mark.parametrize(("kind", "family"), SET_PAIRINGS)
def test_set_sketches_find_the_pairs_above_the_threshold(
    corpus: list[str], kind: str, family: str
) -> None:
    truth = set(_near_pairs(corpus, THRESHOLD))
    found = _found(corpus, kind, family)
    assert found <= truth  # exact verification: no false positive
    assert len(found) >= 0.95 * len(truth), (kind, family, len(found), len(truth))


@pytest.mark.parametrize(
    "kind", [name for name, k in SKETCH_KINDS.items() if "prefix" in k.families]
)
def test_the_exact_prefix_family_finds_exactly_the_pairs_above_the_threshold(
    corpus: list[str], kind: str
) -> None:
    assert _found(corpus, kind, "prefix") == set(_near_pairs(corpus, THRESHOLD))


def test_a_family_the_kind_cannot_feed_is_refused() -> None:
    with pytest.raises(ParameterError, match="cannot pair 'oph' signatures; choose 'bands' or"):
        DedupConfig(sketch=SketchSpec(kind="oph"), lsh=LSHSpec(family="hamming"))
    with pytest.raises(ParameterError, match="hamming applies to family 'hamming'"):
        DedupConfig(sketch=SketchSpec(kind="oph"), lsh=LSHSpec(hamming=3))


@pytest.mark.slow
def test_weighted_kind_finds_pairs_above_the_weighted_threshold(corpus: list[str]) -> None:
    found = _found(corpus, "weighted")
    assert found
    pairs = np.array(sorted(found))
    exact = weighted_jaccard(
        term_counts(corpus), CandidatePairs(first=pairs[:, 0], second=pairs[:, 1])
    )
    assert np.all(exact >= THRESHOLD)


@pytest.mark.parametrize("weighting", ["tf", "tfidf"])
def test_simhash_finds_the_pairs_within_h_above_the_cosine(
    corpus: list[str], weighting: str
) -> None:
    # Truth by brute force: exact-group representatives whose fingerprints are at most h bits
    # apart and whose weighted vectors have cosine >= the threshold. Found pairs are such
    # pairs; every truth pair ends in one cluster (equal fingerprints link through the first).
    h = 6
    sketch = SketchSpec(kind="simhash", weighting=weighting)  # type: ignore[arg-type]
    config = DedupConfig(sketch=sketch, lsh=LSHSpec(threshold=THRESHOLD, hamming=h))
    result = dedup(corpus, config=config)
    idf = IDFWeights(sketch).fit(corpus) if weighting == "tfidf" else None
    signatures = SimHasher(sketch, idf).sketch(corpus)
    first_of: dict[tuple[int, ...], int] = {}
    for doc, f in enumerate(map(tuple, signatures.fingerprints.tolist())):
        first_of.setdefault(f, doc)
    reps = np.array(sorted(set(first_of.values()) - set(np.flatnonzero(signatures.is_short))))
    values = signatures.values[reps]
    close = np.triu(reference.hamming(values[:, None, :], values[None, :, :]) <= h, 1)
    i, j = np.nonzero(close)
    pairs = CandidatePairs(first=reps[i], second=reps[j])
    weighted = idf.transform(corpus) if idf is not None else term_counts(corpus, sketch)
    above = cosine_similarity(weighted, pairs) >= THRESHOLD
    truth = set(zip(pairs.first[above].tolist(), pairs.second[above].tolist(), strict=True))
    found = set(zip(result.pairs.first.tolist(), result.pairs.second.tolist(), strict=True))
    assert len(truth) >= 30
    assert found <= truth
    labels = result.clusters.labels
    assert all(labels[a] == labels[b] for a, b in truth)
    assert result.summary.lsh["scheme"] == "hamming"
    assert (result.summary.idf is not None) == (weighting == "tfidf")
    distance = reference.hamming(
        signatures.values[result.pairs.first], signatures.values[result.pairs.second]
    )
    estimate = np.cos(np.pi * distance / 64)
    assert np.allclose(result.pairs.estimate, estimate)


def test_supershingles_accept_as_the_formula_says(corpus: list[str]) -> None:
    # AltaVista's filter (2 of 6 supershingles of 14) is built for very high resemblance; the
    # pairs it finds above 0.9 number what seed 003's acceptance formula predicts.
    truth = _near_pairs(corpus, 0.9)
    found = _found(corpus, "supershingle")
    p = acceptance_features(np.array(list(truth.values())), PRESETS["altavista"])
    accepted = sum(pair in found for pair in truth)
    assert abs(accepted - p.sum()) <= 3 * np.sqrt(np.sum(p * (1 - p))) + 1, (accepted, p.sum())


def test_scheme_parameters_and_errors() -> None:
    lsh = LSHSpec(threshold=0.8)
    bbit = candidate_scheme(SketchSpec(kind="bbit", bbits=1), lsh).describe()
    oph = candidate_scheme(SketchSpec(), lsh).describe()
    assert bbit["num_rows"] > oph["num_rows"]  # 1-bit codes agree by chance half the time
    assert bbit["candidate_probability_at_threshold"] >= 0.9
    bottom = candidate_scheme(SketchSpec(kind="bottomk"), lsh).describe()
    assert bottom["candidate_probability_at_threshold"] >= 0.95
    assert set(PRESETS) == set(FEATURE_PRESETS)
    with pytest.raises(ParameterError, match="--num-perm 200"):
        candidate_scheme(SketchSpec(kind="supershingle", preset="altavista-variant"), lsh)


def test_simhash_psm_pairs_what_the_tables_pair(licenses: list[dict[str, object]]) -> None:
    """``--search psm``: exact without a budget; with one, each document's weight levels order
    its header flips (seed 004's VOSH), and 32 buckets keep >= 95% of the tables' candidates."""
    texts = [str(r["text"]) for r in licenses]
    found = {}
    for search, budget in [("tables", None), ("psm", None), ("psm", 32)]:
        lsh = LSHSpec(hamming=7, search=search, psm_budget=budget)  # type: ignore[arg-type]
        config = DedupConfig(sketch=SketchSpec(kind="simhash"), lsh=lsh, pairs="all")
        result = dedup(texts, config=config)
        found[search, budget] = set(
            zip(result.pairs.first.tolist(), result.pairs.second.tolist(), strict=True)
        )
        assert result.summary.lsh["search"] == search
    assert found["psm", None] == found["tables", None]
    assert found["psm", 32] <= found["tables", None]
    assert len(found["psm", 32]) >= 0.95 * len(found["tables", None]) > 300


def test_an_exact_psm_search_of_many_buckets_says_so() -> None:
    """Without a budget PSM visits every header bucket within h bits: beyond 4,096 a document
    (h = 7 from about 2^12.5 documents on) the run warns and names --psm-budget."""
    from neardup.candidates import _warn_exact_psm

    with pytest.warns(NeardupWarning, match="5,812 a document at 6,000 documents"):
        _warn_exact_psm(6000, 7)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NeardupWarning)
        _warn_exact_psm(6000, 3)  # 378 buckets
        _warn_exact_psm(5000, 7)  # 3,302 buckets
