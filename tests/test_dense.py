"""Dense duplicates: candidates in sorted runs on disk, and verification that skips the pairs
whose documents are already joined, give the outputs of measuring every candidate in memory.

The corpus: overlapping windows of 30-60 words over the bundled licence texts, one in ten a
recent window with a word replaced (bench/scale_corpus.py's dense corpus, small), so that most
documents have several near neighbours and clusters have cycles.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from neardup import DedupConfig, ReadSpec, pipeline
from neardup.candidates import candidate_scheme
from neardup.cluster import union_pairs
from neardup.io import setstore
from neardup.io.spill import KeyColumns, PairRuns
from neardup.jobs.dedup import dedup_files
from neardup.params import DEFAULT_BATCH_BYTES
from neardup.pipeline import (
    PairScorer,
    StringTexts,
    Timings,
    exact_groups,
    find_duplicates,
    flow,
    sketch_batches,
    sketching,
    verification,
    verify_and_join,
)
from tests.conftest import SAMPLE


@pytest.fixture(scope="module")
def windows() -> list[str]:
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        words = " ".join(json.loads(line)["text"] for line in f).split()[:6_000]
    rng = np.random.default_rng(7)
    texts: list[str] = []
    for _ in range(3000):
        if texts and rng.random() < 0.1:
            copy = texts[-int(rng.integers(1, min(len(texts), 50) + 1))].split()
            copy[int(rng.integers(len(copy)))] = "replaced"
            texts.append(" ".join(copy))
        else:
            start = int(rng.integers(0, len(words) - 60))
            texts.append(" ".join(words[start : start + int(rng.integers(30, 61))]))
    return texts


@pytest.fixture(scope="module")
def corpus(windows: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dense") / "windows.jsonl"
    lines = (json.dumps({"id": f"w{i}", "text": t}) for i, t in enumerate(windows))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _outputs(directory: Path) -> dict[str, bytes]:
    return {name: (directory / name).read_bytes() for name in ("clusters.jsonl", "pairs.jsonl")}


def test_skipping_joined_pairs_changes_no_output(corpus: Path, tmp_path: Path) -> None:
    spanning = dedup_files([corpus], tmp_path / "spanning", DedupConfig(pairs="spanning"))
    every = dedup_files([corpus], tmp_path / "all", DedupConfig(pairs="all"))
    counts, all_counts = spanning.summary.counts, every.summary.counts
    # Dense: most candidates join documents that earlier pairs joined already.
    assert counts.candidate_pairs == all_counts.candidate_pairs
    assert counts.already_joined > counts.candidate_pairs // 5
    assert all_counts.already_joined == 0
    assert spanning.clusters.labels.tolist() == every.clusters.labels.tolist()
    assert spanning.clusters.keep.tolist() == every.clusters.keep.tolist()
    assert np.array_equal(spanning.clusters.similarity, every.clusters.similarity)
    # The spanning pairs are the forest the pairs of --pairs all give, taken in order.
    _, forest = union_pairs(len(every.ids), every.pairs.first, every.pairs.second)
    assert spanning.pairs.first.tolist() == every.pairs.first[forest].tolist()
    assert spanning.pairs.second.tolist() == every.pairs.second[forest].tolist()
    assert counts.verified_pairs == counts.pairs_reported == len(spanning.pairs)
    # A pair is measured when its documents were apart when it was reached, unless its sets'
    # sizes alone keep it below the threshold; the accepted ones measured are exactly the
    # spanning ones; the histogram counts the measured pairs.
    histogram = spanning.summary.similarity_histogram
    assert histogram is not None
    assert counts.size_rejected
    assert all_counts.size_rejected is not None
    assert counts.size_rejected < all_counts.size_rejected  # some were already joined
    unmeasured = counts.already_joined + counts.size_rejected
    assert sum(histogram.candidates) == counts.candidate_pairs - unmeasured
    assert sum(histogram.verified) == counts.verified_pairs


def test_the_round_size_changes_nothing(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = DedupConfig()
    large = dedup_files([corpus], tmp_path / "large", config)
    monkeypatch.setattr(verification, "VERIFY_ROUND_PAIRS", 97)
    small = dedup_files([corpus], tmp_path / "small", config)
    assert _outputs(tmp_path / "small") == _outputs(tmp_path / "large")
    assert small.summary.counts == large.summary.counts
    assert small.summary.similarity_histogram == large.summary.similarity_histogram


@pytest.mark.parametrize(
    ("dense_share", "kept_text_bytes", "batches_skipped"), [(0.0, 300, 1), (0.15, 4096, 20)]
)
def test_sets_kept_while_sketching_change_no_output(
    corpus: Path,
    windows: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    dense_share: float,
    kept_text_bytes: int,
    batches_skipped: int,
) -> None:
    config = DedupConfig()
    read = ReadSpec(batch_bytes=20_000)  # about 45 batches
    monkeypatch.setattr(flow, "DEFAULT_BATCH_BYTES", 20_000)  # so in memory too
    monkeypatch.setattr(setstore, "KEPT_TEXT_BYTES", 0)  # no set kept: verification makes all
    none_kept = dedup_files([corpus], tmp_path / "none", config, read=read)
    none_in_memory = pipeline.dedup(windows, config=config)
    # Every batch after the first keeps the sets of texts up to 300 bytes, or batches keep
    # them where the one before held 15% of near copies (some do, most do not).
    monkeypatch.setattr(sketching, "DENSE_SHARE", dense_share)
    monkeypatch.setattr(setstore, "KEPT_TEXT_BYTES", kept_text_bytes)
    blocks: list[str] = []
    for method in ("append", "skip"):
        real = getattr(setstore.SketchedSets, method)
        monkeypatch.setattr(
            setstore.SketchedSets,
            method,
            lambda *args, _real=real, _name=method: blocks.append(_name) or _real(*args),
        )
    kept = dedup_files([corpus], tmp_path / "kept", config, read=read)
    assert blocks.count("append") > 3
    assert blocks.count("skip") >= batches_skipped  # the first, and those after sparser ones
    in_memory = pipeline.dedup(windows, config=config)
    assert _outputs(tmp_path / "none") == _outputs(tmp_path / "kept")
    assert none_kept.summary.counts == kept.summary.counts
    assert none_kept.summary.similarity_histogram == kept.summary.similarity_histogram
    assert none_in_memory.clusters.labels.tolist() == in_memory.clusters.labels.tolist()
    assert np.array_equal(none_in_memory.clusters.similarity, in_memory.clusters.similarity)
    assert none_in_memory.pairs.first.tolist() == in_memory.pairs.first.tolist()
    assert none_in_memory.pairs.second.tolist() == in_memory.pairs.second.tolist()


@pytest.mark.parametrize("pairs", ["spanning", "all"])
def test_candidates_spilled_in_runs_give_the_same_result(
    windows: list[str], tmp_path: Path, pairs: str
) -> None:
    config = DedupConfig(pairs=pairs)  # type: ignore[arg-type]
    ids = [str(i) for i in range(len(windows))]
    batches = flow._string_batches(ids, windows, DEFAULT_BATCH_BYTES)
    texts = StringTexts(windows, config)
    sketched = sketch_batches(batches, config, KeyColumns(), texts)
    _, is_first = exact_groups(sketched.fingerprints, sketched.is_empty)
    active = is_first & ~sketched.is_short
    scheme = candidate_scheme(config.sketch, config.lsh)
    # A budget of 500 pairs a run: the candidates go to many sorted runs on disk.
    runs = PairRuns(len(windows), tmp_path, memory_bytes=500 * 24, with_values=False)
    scheme.gather_pairs(sketched.keys, active, runs)
    assert runs.num_runs > 10
    assert sorted(p.name for p in tmp_path.iterdir())[0].startswith("pairs-")
    with PairScorer(texts, config) as scorer:
        spilled = verify_and_join(runs.pairs(), len(windows), scorer)
    runs.close()
    assert not list(tmp_path.iterdir())
    whole = find_duplicates(sketched, config, Timings())
    assert spilled.num_candidates == whole.summary.counts.candidate_pairs
    assert spilled.num_already_joined == whole.summary.counts.already_joined
    group_first, _ = exact_groups(sketched.fingerprints, sketched.is_empty)
    labels = spilled.components.labels()[group_first]
    assert labels.tolist() == whole.clusters.labels.tolist()
    # Spanning: the pairs kept are those that joined; all: every accepted pair.
    assert spilled.pairs.first.tolist() == whole.pairs.first.tolist()
    assert spilled.pairs.second.tolist() == whole.pairs.second.tolist()
