"""End to end on real RFCs: recall against exact all-pairs Jaccard, and every pair verifies."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from neardup import DedupConfig, LSHSpec, Shingler, bands_rows, dedup, s_curve
from tests.conftest import read_rfcs, shared
from tests.reference_allpairs import all_pairs_above


@pytest.fixture(scope="module")
def rfc_subset() -> tuple[list[str], list[str]]:
    """The first 1,200 RFCs plus every RFC of an obsoletes/updates pair with w5 J >= 0.5."""
    table = shared("rfc/rfc_pair_similarity.tsv")
    with table.open(encoding="utf-8") as f:
        related = {
            int(r[side])
            for r in csv.DictReader(f, delimiter="\t")
            if float(r["jaccard_w5"]) >= 0.5
            for side in ("rfc_new", "rfc_old")
        }
    numbers = set(range(1, 1201)) | related
    texts = read_rfcs(numbers)
    ordered = sorted(texts)
    return [f"rfc{n}" for n in ordered], [texts[n] for n in ordered]


@pytest.mark.slow
@pytest.mark.parametrize("threshold", [0.5, 0.8])
def test_recall_is_at_least_what_the_s_curve_predicts(
    rfc_subset: tuple[list[str], list[str]], threshold: float
) -> None:
    ids, texts = rfc_subset
    config = DedupConfig(lsh=LSHSpec(threshold=threshold), pairs="all")  # every verified pair
    result = dedup(texts, ids, config)
    sets = Shingler().shingle_sets(texts)
    truth = all_pairs_above(sets, threshold)
    assert len(truth) > 50, "the subset should hold many true near-duplicate pairs"

    # Pairs between documents of one exact group are found by their fingerprint; the others
    # must have become LSH candidates (and, with exact verification, verified pairs).
    labels = result.clusters.labels
    exact_first = np.arange(len(ids))
    exact_first[result.exact_pairs[1]] = result.exact_pairs[0]
    reported = set(zip(result.pairs.first.tolist(), result.pairs.second.tolist(), strict=True))
    num_bands, num_rows = bands_rows(config.lsh, config.sketch.num_perm)
    found, expected, variance, near = 0, 0.0, 0.0, 0
    for (a, b), j in truth.items():
        ra, rb = sorted((int(exact_first[a]), int(exact_first[b])))
        if ra == rb:
            assert labels[a] == labels[b]
            continue
        near += 1
        p = float(s_curve(j, num_bands, num_rows))
        expected += p
        variance += p * (1 - p)
        found += (ra, rb) in reported
    # Observed recall is at least the S-curve's prediction, less three binomial deviations.
    assert found >= expected - 3 * math.sqrt(variance), (found, expected, near)
    print(f"threshold {threshold}: found {found} of {near} near pairs; S-curve: {expected:.1f}")

    # Every reported pair verifies: its exact Jaccard reaches the threshold, recomputed here.
    for a, b, jac in zip(
        result.pairs.first.tolist(),
        result.pairs.second.tolist(),
        result.pairs.jaccard.tolist(),
        strict=True,
    ):
        assert jac >= threshold
        assert truth[(a, b)] == pytest.approx(jac)
