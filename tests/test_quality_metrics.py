"""The metrics of bench/quality.py against brute force in plain Python."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np
import pytest
from bench.quality import band_names, band_of, chained, pair_agreement, pair_similarity, purity

from neardup import Clusters, ParameterError


def brute_purity(labels: list[int], classes: list[str]) -> tuple[float, int]:
    members: dict[int, list[str]] = {}
    for label, cls in zip(labels, classes, strict=True):
        members.setdefault(label, []).append(cls)
    grouped = [m for m in members.values() if len(m) > 1]
    total = sum(len(m) for m in grouped)
    majority = sum(Counter(m).most_common(1)[0][1] for m in grouped)
    return (majority / total if total else 1.0), total


def brute_pairs(labels: list[int], classes: list[str]) -> tuple[float, float]:
    pairs = list(combinations(range(len(labels)), 2))
    together = [(a, b) for a, b in pairs if labels[a] == labels[b]]
    same = [(a, b) for a, b in pairs if classes[a] == classes[b]]
    both = [p for p in together if classes[p[0]] == classes[p[1]]]
    return (
        len(both) / len(together) if together else 1.0,
        len(both) / len(same) if same else 1.0,
    )


@pytest.mark.parametrize("seed", range(20))
def test_purity_and_pairs_match_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    labels = rng.integers(0, int(rng.integers(1, n + 1)), n) * 7 + 3  # not 0..n-1: any labels
    classes = np.array([f"c{c}" for c in rng.integers(0, int(rng.integers(1, 6)), n)])
    pure, total = purity(labels, classes)
    want_pure, want_total = brute_purity(labels.tolist(), classes.tolist())
    assert total == want_total
    assert pure == pytest.approx(want_pure)
    assert pair_agreement(labels, classes) == pytest.approx(
        brute_pairs(labels.tolist(), classes.tolist())
    )


def test_purity_of_a_worked_example() -> None:
    # Clusters {a, a, b}, {b, b}, {c}: 2 + 2 of 5 grouped documents in the majority class.
    labels = np.array([0, 0, 0, 5, 5, 9])
    classes = np.array(["a", "a", "b", "b", "b", "c"])
    assert purity(labels, classes) == (0.8, 5)
    # Together: 3 + 1 pairs, 1 + 1 of them same-class; same-class pairs: 1 (a) + 3 (b).
    assert pair_agreement(labels, classes) == (0.5, 0.5)
    assert purity(np.arange(3), np.array(["a", "a", "b"])) == (1.0, 0)


def test_pair_similarity_matches_python_sets() -> None:
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "mu"]
    texts = [" ".join(words), " ".join(words[:8]), " ".join([*words[4:], "nu", "xi"]), "alpha"]

    def shingles(text: str) -> set[tuple[str, ...]]:
        tokens = text.split()
        return {tuple(tokens[i : i + 5]) for i in range(len(tokens) - 4)} or {tuple(tokens)}

    first, second = np.array([0, 0, 1, 0]), np.array([1, 2, 2, 3])
    jaccard, a_in_b, b_in_a = pair_similarity(texts, first, second)
    for i, (a, b) in enumerate(zip(first, second, strict=True)):
        set_a, set_b = shingles(texts[a]), shingles(texts[b])
        shared = len(set_a & set_b)
        assert jaccard[i] == pytest.approx(shared / len(set_a | set_b))
        assert a_in_b[i] == pytest.approx(shared / len(set_a))
        assert b_in_a[i] == pytest.approx(shared / len(set_b))


def test_pair_similarity_refuses_unequal_pairs() -> None:
    with pytest.raises(ParameterError, match="one of each per pair"):
        pair_similarity(["a b", "c d"], np.array([0, 0]), np.array([1]))


def test_bands_are_half_open_but_the_last() -> None:
    values = np.array([0.0, 0.29, 0.3, 0.5, 0.79, 0.8, 0.9, 1.0])
    assert band_of(values).tolist() == [0, 0, 1, 2, 3, 4, 5, 5]
    assert band_names() == [
        "[0, 0.3)",
        "[0.3, 0.5)",
        "[0.5, 0.7)",
        "[0.7, 0.8)",
        "[0.8, 0.9)",
        "[0.9, 1]",
    ]


def test_chained_counts_clusters_with_a_member_below_the_threshold() -> None:
    clusters = Clusters(
        labels=np.array([0, 0, 0, 3, 3, 5]),
        keep=np.array([True, False, False, True, False, True]),
        similarity=np.array([1.0, 0.9, 0.6, 1.0, 0.85, 1.0]),
    )
    assert chained(clusters, 0.8) == 1
    assert chained(clusters, 0.5) == 0
    assert chained(clusters, 0.9) == 2
