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
    exact_jaccard,
    make_sketcher,
)
from tests.conftest import read_rfcs, shared

KINDS = ["minhash", "oph"]
NUM_PERM = 128
BINS = [(0.05, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 0.99)]


def _pairs_by_similarity(texts: list[str], per_bin: int) -> list[tuple[str, str, float]]:
    """Pairs of neighbouring licence texts (sorted by id, so variants sit side by side),
    ``per_bin`` from each similarity band, each document with at least 2 * NUM_PERM shingles."""
    sets = Shingler().shingle_sets(texts)
    n = len(texts)
    first = np.arange(n - 1, dtype=np.int64)
    jaccard = exact_jaccard(sets, CandidatePairs(first=first, second=first + 1))
    big = sets.sizes() >= 2 * NUM_PERM
    chosen: list[tuple[str, str, float]] = []
    for low, high in BINS:
        picks = np.flatnonzero((jaccard >= low) & (jaccard < high) & big[:-1] & big[1:])[:per_bin]
        chosen.extend((texts[i], texts[i + 1], float(jaccard[i])) for i in picks)
    return chosen


@pytest.fixture(scope="module")
def licence_pairs(licenses: list[dict[str, object]]) -> list[tuple[str, str, float]]:
    ordered = sorted(licenses, key=lambda r: str(r["id"]))
    pairs = _pairs_by_similarity([str(r["text"]) for r in ordered], per_bin=6)
    assert len(pairs) >= 25, "the sample should span the similarity range"
    return pairs


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
        sigma = math.sqrt(j * (1 - j) / NUM_PERM)
        assert abs(est - j) <= 4 * sigma + 1 / NUM_PERM, (kind, j, est)


@pytest.mark.parametrize(
    ("kind", "fingerprint"),
    [(kind, fp) for kind in KINDS for fp in ("nd64", "rabin")] + [("minhash-lead", "nd64")],
)
def test_estimates_are_unbiased_with_the_theoretical_spread(
    kind: str, fingerprint: str, licence_pairs: list[tuple[str, str, float]]
) -> None:
    seeds = 150
    runs = np.stack([_estimates(licence_pairs, kind, seed, fingerprint) for seed in range(seeds)])
    exact = np.array([j for _, _, j in licence_pairs])
    sigma = np.sqrt(exact * (1 - exact) / NUM_PERM)
    # Unbiased: the mean over seeds is within 3 standard errors of the exact value (each pair).
    assert np.all(np.abs(runs.mean(axis=0) - exact) <= 3 * sigma / math.sqrt(seeds) + 1e-3)
    # Spread: pooled variance over pairs relative to J(1-J)/k. Classic MinHash matches it
    # (sampling with replacement); OPH samples without replacement, so it may only be smaller.
    ratio = float(np.mean(runs.var(axis=0, ddof=1) / sigma**2))
    if kind.startswith("minhash"):
        assert 0.85 <= ratio <= 1.15, ratio
    else:
        assert 0.5 <= ratio <= 1.1, ratio


@pytest.mark.parametrize("kind", KINDS)
def test_rabin_and_nd64_fingerprints_give_equivalent_estimates(
    kind: str, licence_pairs: list[tuple[str, str, float]]
) -> None:
    # Same pairs, 100 seeds each: the squared errors of the two schemes have equal means
    # (a two-sample z-test at 3 standard errors), and so do the estimates themselves.
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
    assert rmse["oph"] <= 1.1 * rmse["minhash"], rmse


def test_oph_densification_is_unbiased_on_short_documents(
    licenses: list[dict[str, object]],
) -> None:
    # Real short licence texts (fewer shingles than bins: most bins start empty), each paired
    # with itself minus a stretch of words: exact Jaccard spans the middle of the range.
    shingler = Shingler()
    texts = [str(r["text"]) for r in licenses]
    sizes = shingler.shingle_sets(texts).sizes()
    short = [t for t, s in zip(texts, sizes.tolist(), strict=True) if 20 <= s <= 60][:20]
    pairs = []
    for text in short:
        words = text.split()
        cut = len(words) // 3
        edited = " ".join(words[:cut] + words[2 * cut :])
        sets = shingler.shingle_sets([text, edited])
        j = float(exact_jaccard(sets, CandidatePairs(first=np.array([0]), second=np.array([1])))[0])
        pairs.append((text, edited, j))
    seeds = 300
    runs = np.stack([_estimates(pairs, "oph", seed) for seed in range(seeds)])
    exact = np.array([j for _, _, j in pairs])
    sigma = np.sqrt(exact * (1 - exact) / NUM_PERM)
    # Densified bins are correlated, so allow the per-pair spread to be up to 3x MinHash's.
    bound = 3 * (3 * sigma) / math.sqrt(seeds) + 1e-3
    assert np.all(np.abs(runs.mean(axis=0) - exact) <= bound), (runs.mean(axis=0) - exact, bound)


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
        sets = Shingler().shingle_sets([new, old])
        j = float(exact_jaccard(sets, CandidatePairs(first=np.array([0]), second=np.array([1])))[0])
        pairs.append((new, old, j))
    estimates = np.stack([_estimates(pairs, kind, seed) for seed in range(30)])
    exact = np.array([j for _, _, j in pairs])
    sigma = np.sqrt(exact * (1 - exact) / NUM_PERM)
    assert np.all(np.abs(estimates[0] - exact) <= 4 * sigma + 1 / NUM_PERM)
    assert np.all(np.abs(estimates.mean(axis=0) - exact) <= 3 * sigma / math.sqrt(30) + 2e-3)
