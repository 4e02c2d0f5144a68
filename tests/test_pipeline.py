"""The pipeline's guarantees: clusters independent of input order, exact and short paths."""

from __future__ import annotations

import numpy as np
import pytest

from neardup import DedupConfig, InputError, LSHSpec, NeardupWarning, SketchSpec, dedup


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
    assert forward.summary["counts"]["clusters"] > 100  # the sample is full of variants


def test_short_documents_match_only_exactly() -> None:
    texts = ["one two three", "one two three", "one two four", "", "  ", "a b c d e f g"]
    result = dedup(texts)
    assert result.clusters.labels.tolist() == [0, 0, 2, 3, 3, 5]
    assert result.summary["counts"]["short_documents"] == 5
    assert result.summary["counts"]["exact_duplicates"] == 2


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
    boilerplate = "all rights reserved by the authors of this page " * 3
    texts = [boilerplate + f"item {i}" for i in range(300)]
    config = DedupConfig(lsh=LSHSpec(max_bucket_size=20), verify="signature")
    with pytest.warns(NeardupWarning, match="LSH buckets held more than 20 documents"):
        result = dedup(texts, config=config)
    assert result.summary["counts"]["giant_buckets"] > 0
    assert result.summary["counts"]["candidate_pairs"] <= 16 * 300 * 19
    assert result.clusters.num_duplicate_clusters == 1


def test_ids_must_match_texts() -> None:
    with pytest.raises(InputError, match="2 texts but 1 ids"):
        dedup(["a", "b"], ids=["x"])
    with pytest.raises(InputError, match="no usable records"):
        dedup([])
