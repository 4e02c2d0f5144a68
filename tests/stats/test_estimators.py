"""MinHash and OPH estimates against exact Jaccard on real text pairs, with fixed seeds.

Tolerances come from the estimator's variance: one estimate from ``k`` slots has standard
deviation ``sigma = sqrt(J (1 - J) / k)`` (MMDS §3.3.3); a mean over ``n`` seeds has standard
error ``sigma / sqrt(n)``.
"""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from neardup import (
    CandidatePairs,
    Shingler,
    ShingleSpec,
    SketchSpec,
    estimate_jaccard,
    make_sketcher,
)
from neardup.sketch.oph import OPHSketcher
from tests import reference
from tests.conftest import NUM_PERM, read_rfcs, shared

KINDS = ["minhash", "oph"]


def _exact_jaccard(a: str, b: str) -> float:
    """The Jaccard of two texts' shingle sets, by Python set operations."""
    sets = Shingler().shingle_sets([a, b])
    return reference.jaccard(set(sets.set_of(0).tolist()), set(sets.set_of(1).tolist()))


def _estimates(
    pairs: list[tuple[str, str, float]], kind: str, seed: int, fingerprint: str = "nd64"
) -> np.ndarray:
    shingle = ShingleSpec(fingerprint=fingerprint)  # type: ignore[arg-type]
    spec = SketchSpec(kind=kind, num_perm=NUM_PERM, seed=seed, shingle=shingle)  # type: ignore[arg-type]
    sketcher = make_sketcher(spec)
    texts = [t for a, b, _ in pairs for t in (a, b)]
    sigs = sketcher.sketch(texts)
    first = np.arange(0, len(texts), 2, dtype=np.int64)
    return estimate_jaccard(sigs, CandidatePairs(first=first, second=first + 1))


@pytest.mark.parametrize("kind", KINDS)
def test_each_estimate_is_within_four_sigma(
    kind: str, licence_pairs: list[tuple[str, str, float]]
) -> None:
    estimates = _estimates(licence_pairs, kind, seed=11)
    for (_, _, j), est in zip(licence_pairs, estimates.tolist(), strict=True):
        # 4 sigma for 30 pairs of each kind (P(|Z| > 4) = 6e-5 each; measured: 2.2 at most),
        # plus half a step of 1 / k: an estimate is a count of agreeing slots over k.
        sigma = math.sqrt(j * (1 - j) / NUM_PERM)
        assert abs(est - j) <= 4 * sigma + 0.5 / NUM_PERM, (kind, j, est)


@pytest.mark.parametrize(
    ("kind", "fingerprint"),
    [(kind, fp) for kind in KINDS for fp in ("nd64", "rabin")]
    + [pytest.param("minhash-lead", "nd64", marks=pytest.mark.slow)],
)
def test_estimates_are_unbiased_with_the_theoretical_spread(
    kind: str, fingerprint: str, licence_pairs: list[tuple[str, str, float]]
) -> None:
    seeds = 150
    runs = np.stack([_estimates(licence_pairs, kind, seed, fingerprint) for seed in range(seeds)])
    exact = np.array([j for _, _, j in licence_pairs])
    sigma = np.sqrt(exact * (1 - exact) / NUM_PERM)
    # Unbiased: the mean over seeds is within 4 standard errors sigma / sqrt(150) of the
    # exact value, for each pair: 150 comparisons (30 pairs, 5 sketches) at P(|Z| > 4) = 6e-5
    # make a false alarm 1% likely, where 3 standard errors would make it 33% (measured: 3.0
    # at most, minhash-lead). No floor is needed: J <= 0.98 keeps sigma above 0.012.
    assert np.all(np.abs(runs.mean(axis=0) - exact) <= 4 * sigma / math.sqrt(seeds))
    # Spread: pooled variance over pairs relative to J(1-J)/k. A sample variance of 150
    # estimates has relative standard deviation sqrt(2 / 149); the mean of 30 pairs' ratios
    # sqrt(2 / 149 / 30) = 0.021, so 4 of those is 0.085. Classic MinHash samples with
    # replacement: 1 within that (measured 0.98 to 1.01). OPH samples without replacement
    # from the union, which lowers the variance by (|A u B| - k) / (|A u B| - 1): to half at
    # most, as every document here has at least 2k shingles (measured 0.92).
    ratio = float(np.mean(runs.var(axis=0, ddof=1) / sigma**2))
    spread = 4 * math.sqrt(2 / (seeds - 1) / len(exact))
    if kind.startswith("minhash"):
        assert abs(ratio - 1) <= spread, ratio
    else:
        assert 0.5 <= ratio <= 1 + spread, ratio


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.slow
def test_rabin_and_nd64_fingerprints_give_equivalent_estimates(
    kind: str, licence_pairs: list[tuple[str, str, float]]
) -> None:
    # Same pairs, 100 seeds each: the squared errors of the two schemes have equal means
    # (a two-sample z-test at 3 standard errors: 4 tests, 1% of a false alarm), and so do the
    # estimates themselves.
    exact = np.array([j for _, _, j in licence_pairs])
    errors = {
        fp: np.stack([_estimates(licence_pairs, kind, s, fp) - exact for s in range(100)])
        for fp in ("nd64", "rabin")
    }
    for stat in (lambda e: e**2, lambda e: e):
        a, b = stat(errors["nd64"]).ravel(), stat(errors["rabin"]).ravel()
        z = (a.mean() - b.mean()) / math.sqrt(a.var() / a.size + b.var() / b.size)
        assert abs(z) < 3, z


def test_oph_is_at_least_as_accurate_as_minhash(
    licence_pairs: list[tuple[str, str, float]],
) -> None:
    exact = np.array([j for _, _, j in licence_pairs])
    rmse = {
        kind: float(
            np.sqrt(np.mean([(_estimates(licence_pairs, kind, s) - exact) ** 2 for s in range(60)]))
        )
        for kind in KINDS
    }
    # OPH's variance is at most MinHash's (sampling without replacement), so its RMSE is in
    # expectation. Each RMSE comes from 60 x 30 = 1,800 errors: relative standard deviation
    # about 1 / sqrt(2 * 1,800) = 1.7%, 2.4% for the ratio of two; 4 of those is 10%.
    assert rmse["oph"] <= 1.1 * rmse["minhash"], rmse


def _short_pairs(licenses: list[dict[str, object]]) -> list[tuple[str, str, float]]:
    """Real short licence texts (fewer shingles than bins: most bins start empty), each paired
    with itself minus a stretch of words: exact Jaccard spans the middle of the range."""
    shingler = Shingler()
    texts = [str(r["text"]) for r in licenses]
    sizes = shingler.shingle_sets(texts).sizes()
    short = [t for t, s in zip(texts, sizes.tolist(), strict=True) if 20 <= s <= 60][:20]
    pairs = []
    for text in short:
        words = text.split()
        cut = len(words) // 3
        edited = " ".join(words[:cut] + words[2 * cut :])
        pairs.append((text, edited, _exact_jaccard(text, edited)))
    return pairs


def test_oph_densification_is_unbiased_on_short_documents(
    licenses: list[dict[str, object]],
) -> None:
    pairs = _short_pairs(licenses)
    seeds = 300
    runs = np.stack([_estimates(pairs, "oph", seed) for seed in range(seeds)])
    exact = np.array([j for _, _, j in pairs])
    sigma = np.sqrt(exact * (1 - exact) / NUM_PERM)
    # Densified bins copy other bins, so their agreements are correlated and the spread may
    # exceed MinHash's sigma: measure it (300 seeds give each pair's standard deviation to
    # within 4%), allowing up to 3 sigma (measured: 1.2 sigma at most). Unbiased: the mean of
    # 300 seeds within 4 of its own standard errors (20 pairs; measured: 2.9 at most).
    spread = runs.std(axis=0, ddof=1)
    assert np.all(spread <= 3 * sigma), spread / sigma
    error = runs.mean(axis=0) - exact
    assert np.all(np.abs(error) <= 4 * spread / math.sqrt(seeds)), error / spread


def test_seed_000s_oph_estimate_without_densification_is_unbiased_and_tighter_on_short_texts(
    licenses: list[dict[str, object]],
) -> None:
    # Seed 000: "Some of the bins may end up empty with short (<2000 feature) documents, but
    # empty != non-empty for comparing vectors, but empty vs. empty doesn't count at all. The
    # proof of approximation still works."
    pairs = _short_pairs(licenses)
    sets = Shingler().shingle_sets([t for a, b, _ in pairs for t in (a, b)])
    first = np.arange(0, 2 * len(pairs), 2, dtype=np.int64)
    seeds = 300
    runs = {"seed 000": [], "densified": []}
    for seed in range(seeds):
        sketcher = OPHSketcher(SketchSpec(kind="oph", num_perm=NUM_PERM, seed=seed))
        runs["seed 000"].append(sketcher.estimate_without_densification(sets, first, first + 1))
        runs["densified"].append(sketcher.agreement_of_sets(sets, first, first + 1))
    exact = np.array([j for _, _, j in pairs])
    undensified = np.stack(runs["seed 000"])
    spread = undensified.std(axis=0, ddof=1)
    error = undensified.mean(axis=0) - exact
    assert np.all(np.abs(error) <= 4 * spread / math.sqrt(seeds)), error / spread
    # On short texts it uses only the filled bins, which hold every shingle nearly alone: its
    # error is smaller than the densified rows' (RMSE measured 0.033 against 0.049; each RMSE
    # from 6,000 errors is known to about 1%).
    rmse = {name: float(np.sqrt(np.mean((np.stack(r) - exact) ** 2))) for name, r in runs.items()}
    assert rmse["seed 000"] <= 0.8 * rmse["densified"], rmse


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_estimates_on_rfc_obsoletes_pairs(kind: str) -> None:
    table = shared("rfc/rfc_pair_similarity.tsv")
    with table.open(encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if r["relation"] == "obsoletes"]
    # Forty pairs spread over the similarity range, by the data set's own Jaccard label.
    rows.sort(key=lambda r: float(r["jaccard_w5"]))
    picks = [rows[i] for i in np.linspace(0, len(rows) - 1, 40).astype(int)]
    numbers = {int(r["rfc_new"]) for r in picks} | {int(r["rfc_old"]) for r in picks}
    texts = read_rfcs(numbers)
    pairs = []
    for r in picks:
        new, old = texts[int(r["rfc_new"])], texts[int(r["rfc_old"])]
        pairs.append((new, old, _exact_jaccard(new, old)))
    estimates = np.stack([_estimates(pairs, kind, seed) for seed in range(30)])
    exact = np.array([j for _, _, j in pairs])
    sigma = np.sqrt(exact * (1 - exact) / NUM_PERM)
    # 40 pairs: one seed's estimate within 4 sigma plus half a step of 1 / k; the mean of 30
    # seeds within 4 standard errors (1% of a false alarm over 80 comparisons). Pairs of
    # J = 0 or 1 have sigma = 0 and are estimated exactly (no shared shingle, or the same set).
    assert np.all(np.abs(estimates[0] - exact) <= 4 * sigma + 0.5 / NUM_PERM)
    assert np.all(np.abs(estimates.mean(axis=0) - exact) <= 4 * sigma / math.sqrt(30))
