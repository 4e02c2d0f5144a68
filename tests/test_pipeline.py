"""The pipeline's guarantees: clusters independent of input order, exact and short paths."""

from __future__ import annotations

import numpy as np
import pytest

from neardup import (
    DedupConfig,
    InputError,
    LSHSpec,
    NeardupWarning,
    SketchSpec,
    connected_components,
    dedup,
    make_sketcher,
)
from tests import reference


def _partition(ids: list[str], labels: np.ndarray) -> set[frozenset[str]]:
    groups: dict[int, set[str]] = {}
    for doc_id, label in zip(ids, labels.tolist(), strict=True):
        groups.setdefault(label, set()).add(doc_id)
    return {frozenset(g) for g in groups.values()}


@pytest.mark.parametrize("kind", ["oph", "minhash"])
def test_clusters_do_not_depend_on_input_order(
    kind: str, licenses: list[dict[str, object]]
) -> None:
    ids = [str(r["id"]) for r in licenses]
    texts = [str(r["text"]) for r in licenses]
    config = DedupConfig(sketch=SketchSpec(kind=kind))  # type: ignore[arg-type]
    forward = dedup(texts, ids, config)
    order = np.random.default_rng(7).permutation(len(ids))
    shuffled = dedup([texts[i] for i in order], [ids[i] for i in order], config)
    assert _partition(ids, forward.clusters.labels) == _partition(
        [ids[i] for i in order], shuffled.clusters.labels
    )
    assert forward.summary.counts.clusters > 100  # the sample is full of variants


def test_short_documents_match_only_exactly_and_texts_without_a_word_match_nothing() -> None:
    texts = ["one two three", "one two three", "one two four", "", "  ", "a b c d e f g", "\t"]
    result = dedup(texts)
    assert result.clusters.labels.tolist() == [0, 0, 2, 3, 4, 5, 6]
    assert result.clusters.keep.tolist() == [True, False, True, True, True, True, True]
    counts = result.summary.counts
    assert (counts.short_documents, counts.empty_documents) == (6, 3)
    assert counts.exact_duplicates == 1


def test_ids_must_be_unique() -> None:
    with pytest.raises(InputError, match=r"ids\[0\] and ids\[2\] are both 'a'"):
        dedup(["x y", "y z", "z w"], ids=["a", "b", "a"])


def test_signature_and_no_verification_modes() -> None:
    base = " ".join(f"w{i}" for i in range(60))
    texts = [base, base + " extra words here", "something else entirely different here today"]
    exact = dedup(texts, config=DedupConfig(verify="exact"))
    signature = dedup(texts, config=DedupConfig(verify="signature"))
    assert exact.clusters.labels.tolist() == signature.clusters.labels.tolist() == [0, 0, 2]
    assert not np.isnan(exact.pairs.jaccard).any()
    assert np.isnan(signature.pairs.jaccard).all()
    everything = dedup(
        texts, config=DedupConfig(verify="none", lsh=LSHSpec(num_bands=128, num_rows=1))
    )
    assert len(everything.pairs) >= len(exact.pairs)


def test_giant_buckets_warn_and_stay_linear() -> None:
    # Every pair is a near duplicate (J = 10/12: nine boilerplate shingles and "... page item"
    # shared, one shingle of its own each), so most bands put hundreds of documents in one
    # bucket, and uncapped they would pair nearly all C(1000, 2) = 499,500 pairs.
    n, cap = 1000, 20
    boilerplate = "all rights reserved by the authors of this page " * 3
    texts = [boilerplate + f"item {i}" for i in range(n)]
    config = DedupConfig(lsh=LSHSpec(max_bucket_size=cap), verify="signature")
    with pytest.warns(NeardupWarning, match=f"LSH buckets held more than {cap} documents"):
        result = dedup(texts, config=config)
    counts = result.summary.counts
    assert counts.giant_buckets > 0
    assert result.clusters.num_duplicate_clusters == 1
    # Truth: the documented cap applied band by band to the same signatures, with band keys
    # and buckets from the plain-Python reference.
    b, r = result.summary.lsh["num_bands"], result.summary.lsh["num_rows"]
    values = make_sketcher(config.sketch).sketch(texts).values.tolist()
    keys = np.array([reference.band_keys(row, b, r) for row in values], dtype=np.uint64)
    expected = reference.candidate_pairs(keys, max_bucket_size=cap)
    assert counts.candidate_pairs == len(expected)
    # Linear: in each band a document is paired with at most cap - 1 documents before it (all
    # of a bucket of g <= cap gives g (g - 1) / 2 <= g (cap - 1) / 2 pairs; a giant bucket
    # pairs each member with the cap - 1 before it), so at most b (cap - 1) n pairs in all:
    # 16 * 19 * 1,000 = 304,000, below the 499,500 pairs that exist.
    assert counts.candidate_pairs <= b * (cap - 1) * n < n * (n - 1) // 2


def test_ids_must_match_texts() -> None:
    with pytest.raises(InputError, match="2 texts but 1 ids"):
        dedup(["a", "b"], ids=["x"])
    with pytest.raises(InputError, match="no usable records"):
        dedup([])


def test_spanning_pairs_are_a_spanning_forest_of_the_clusters(
    licenses: list[dict[str, object]],
) -> None:
    ids = [str(r["id"]) for r in licenses]
    texts = [str(r["text"]) for r in licenses]
    everything = dedup(texts, ids, DedupConfig(pairs="all"))
    spanning = dedup(texts, ids, DedupConfig(pairs="spanning"))
    assert spanning.clusters.labels.tolist() == everything.clusters.labels.tolist()
    all_pairs = set(
        zip(everything.pairs.first.tolist(), everything.pairs.second.tolist(), strict=True)
    )
    forest = list(zip(spanning.pairs.first.tolist(), spanning.pairs.second.tolist(), strict=True))
    assert set(forest) <= all_pairs
    assert len(forest) < len(all_pairs)  # the sample's clusters have cycles
    # A forest: its edges and the exact links join exactly the clusters, with no cycle, so
    # they number documents-in-clusters minus clusters.
    exact_first, exact_second = spanning.exact_pairs
    first = np.concatenate([exact_first, spanning.pairs.first])
    second = np.concatenate([exact_second, spanning.pairs.second])
    rebuilt = connected_components(len(ids), first, second)
    assert rebuilt.labels.tolist() == everything.clusters.labels.tolist()
    sizes = everything.clusters.sizes()
    assert first.shape[0] == int(sizes[sizes > 1].sum()) - int((sizes > 1).sum())
    # The forest is the first pair (in pair order) to reach each document: the minimum
    # spanning forest under that order.
    assert forest == sorted(forest)
    # Every candidate is measured for all the pairs; for the spanning ones, a candidate whose
    # documents an earlier pair joined is not, and the pairs accepted are the forest's.
    every, counts = everything.summary.counts, spanning.summary.counts
    assert every.verified_pairs == len(all_pairs)
    assert every.already_joined == 0
    assert counts.verified_pairs == counts.pairs_reported == len(forest)
    assert counts.candidate_pairs == every.candidate_pairs > counts.already_joined > 0


def test_near_identical_groups_give_linear_spanning_pairs() -> None:
    base = " ".join(f"word{i}" for i in range(80))
    texts = [f"{base} variant {i}" for i in range(600)]
    spanning = dedup(texts, config=DedupConfig(pairs="spanning"))
    assert spanning.clusters.num_duplicate_clusters == 1
    assert len(spanning.pairs) == 599
    everything = dedup(texts, config=DedupConfig(pairs="all"))
    assert len(everything.pairs) > 10 * 599
    assert len(dedup(texts, config=DedupConfig(pairs="none")).pairs) == 0


@pytest.mark.parametrize("mode", ["components", "center"])
@pytest.mark.slow
def test_each_document_carries_its_exact_similarity_to_its_representative(
    licenses: list[dict[str, object]], mode: str
) -> None:
    texts = [str(r["text"]) for r in licenses]
    config = DedupConfig(keep="longest", cluster=mode)  # type: ignore[arg-type]
    clusters = dedup(texts, [str(r["id"]) for r in licenses], config).clusters
    shingle = config.sketch.shingle
    representative = clusters.representative_of()
    members = np.flatnonzero(clusters.sizes()[clusters.labels] > 1)
    for doc in members.tolist():
        rep = int(representative[doc])
        expected = reference.jaccard(
            set(reference.shingles(texts[doc], shingle)),
            set(reference.shingles(texts[rep], shingle)),
        )
        assert clusters.similarity[doc] == pytest.approx(expected, abs=1e-12), (doc, rep)
    least = clusters.min_similarity()
    chained = np.unique(clusters.labels[least < config.lsh.threshold])
    if mode == "center":
        assert chained.shape[0] == 0
    else:  # the licences chain: variants joined through intermediate variants
        assert chained.shape[0] >= 10
    assert (clusters.similarity[np.setdiff1d(np.arange(len(texts)), members)] == 1.0).all()
