"""``neardup.plan``: the sample, the shingle-size rule, the S-curve arithmetic, the design choice,
the TOML writer, and the predictions against a real run on the bundled licences."""

from __future__ import annotations

import json
import math
import re
import tomllib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup import (
    DedupConfig,
    LSHSpec,
    NeardupWarning,
    NormalizeSpec,
    OutputSpec,
    ParameterError,
    ReadSpec,
    ShingleSpec,
    SketchSpec,
)
from neardup._kernels.compiling import Stopwatch
from neardup._types import Batch
from neardup.jobs.dedup import dedup_files
from neardup.jobs.plan import MIN_SAMPLE_DOCS, plan
from neardup.params import ConfigFile, load_config
from neardup.plan.design import (
    GRID,
    NUM_PERMS,
    Design,
    PairDistribution,
    choose_design,
)
from neardup.plan.measure import Quantiles, measure_pairs, measure_rates, shingle_size, vocabulary
from neardup.plan.sample import sample_inputs
from neardup.plan.toml import toml_text
from tests.conftest import SAMPLE


def _write_jsonl(path: Path, texts: list[str]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i, text in enumerate(texts):
            f.write(json.dumps({"id": f"d{i}", "text": text}) + "\n")
    return path


# --- the sample ----------------------------------------------------------------------------------


def _sampled(path: Path, size: int, seed: int, batch_bytes: int = 32 << 20) -> list[str]:
    sample = sample_inputs([path], ReadSpec(batch_bytes=batch_bytes), size, seed)
    return sample.strings()


def test_sample_is_deterministic_in_order_and_independent_of_batches(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "in.jsonl", [f"document number {i}" for i in range(1000)])
    first = _sampled(path, 100, seed=7)
    assert first == _sampled(path, 100, seed=7)
    assert first == _sampled(path, 100, seed=7, batch_bytes=2000)  # about ten batches
    assert first != _sampled(path, 100, seed=8)
    numbers = [int(t.split()[-1]) for t in first]
    assert len(set(numbers)) == 100
    assert numbers == sorted(numbers)
    sample = sample_inputs([path], ReadSpec(), 100, 7)
    assert sample.num_docs == 1000
    assert sample.num_bytes == sum(len(f"document number {i}") for i in range(1000))
    assert len(_sampled(path, 5000, seed=1)) == 1000  # fewer documents than asked: all


def test_a_byte_budget_takes_the_documents_in_key_order_while_they_fit(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    texts = [" ".join(["word"] * int(n)) for n in rng.integers(1, 400, 600)]
    path = _write_jsonl(tmp_path / "in.jsonl", texts)
    read = ReadSpec(batch_bytes=3000)  # dozens of batches: the bound is applied online
    budget = 20_000
    sample = sample_inputs([path], read, 500, 3, sample_bytes=budget)
    assert sample.texts.num_bytes <= budget
    in_one_batch = sample_inputs([path], ReadSpec(), 500, 3, sample_bytes=budget)
    assert in_one_batch.strings() == sample.strings()
    # The same as drawing every key first and taking them in key order until one does not fit.
    keys = np.random.default_rng(3).random(len(texts))
    sizes = np.array([len(t) for t in texts])[np.argsort(keys, kind="stable")]
    fit = int(np.searchsorted(np.cumsum(sizes), budget, side="right"))
    expected = sorted(np.argsort(keys, kind="stable")[:fit].tolist())
    assert sample.strings() == [texts[i] for i in expected]
    # One document larger than the budget still makes a sample of one.
    assert sample_inputs([path], read, 500, 3, sample_bytes=1).size == 1


def test_sample_is_uniform_over_records(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "in.jsonl", [f"doc {i:03d}" for i in range(200)])
    hits = np.zeros(200)
    for seed in range(60):  # batches of about 20 documents: the reservoir spans them
        for text in _sampled(path, 40, seed, batch_bytes=700):
            hits[int(text.split()[1])] += 1
    # Each document is drawn with probability 40/200 per seed: 12 expected, sd 3.1.
    assert abs(hits[:100].sum() - hits[100:].sum()) < 4 * math.sqrt(2 * 100 * 12)
    chi2 = float(((hits - 12) ** 2 / 12).sum())
    assert chi2 < 199 + 4 * math.sqrt(2 * 199)  # chi-square, 199 degrees of freedom


# --- MMDS's shingle-size rule ---------------------------------------------------------------------


def test_word_rule_on_a_uniform_vocabulary_of_ten_words() -> None:
    # Ten words, each ten times per document: effective vocabulary exactly 10, length 100.
    # The smallest k with 10^k >= 100 * 100 is 4.
    words = [f"w{i}" for i in range(10)]
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.permutation(words * 10).tolist()) for _ in range(30)]
    vocab = vocabulary(texts, NormalizeSpec())
    assert vocab.distinct == 10
    assert vocab.effective == pytest.approx(10.0)
    tokens = Quantiles.of(np.full(30, 100))
    chars = Quantiles.of(np.array([len(t) for t in texts]))
    spec, reason = shingle_size(tokens, chars, vocab.effective, threshold=0.8)
    assert (spec.unit, spec.k) == ("word", 4)
    assert "10^4" in reason


def test_word_rule_counts_the_ninetieth_percentile_length() -> None:
    # V = 30: 30^2 = 900 < 100 * 10 = 1,000 <= 30^3; with p90 = 9 words, 900 >= 900: k = 2.
    def rule(p90: float) -> ShingleSpec:
        return shingle_size(Quantiles(5, 500, p90, p90, p90), Quantiles(0, 0, 0, 0, 0), 30.0, 0.5)[
            0
        ]

    assert rule(10).k == 3
    assert rule(9).k == 2


def test_short_documents_get_character_shingles_by_the_twenty_letter_rule() -> None:
    # Five words: after one changed word, 3 shingles of k = 3 leave (3 - 3) / (3 + 3) < 0.8.
    # Characters p90 = 30: the smallest k with 20^k >= 3,000 is 3 (8,000; 20^2 = 400).
    tokens = Quantiles(5, 5, 5, 5, 5)
    chars = Quantiles(25, 28, 30, 30, 30)
    spec, reason = shingle_size(tokens, chars, effective_vocabulary=1000.0, threshold=0.8)
    assert (spec.unit, spec.k) == ("char", 3)
    assert "too few" in reason


def test_word_unit_needs_the_median_document_to_survive_one_changed_word() -> None:
    # k = 2 (V = 100, p90 = 50: 100^2 >= 5,000). n (1 - t) >= k (1 + t) at t = 0.8 needs
    # n >= 18 shingles, i.e. 19 words.
    def unit(p50: float) -> str:
        return shingle_size(Quantiles(1, p50, 50, 50, 50), Quantiles(9, 9, 99, 99, 99), 100.0, 0.8)[
            0
        ].unit

    assert unit(19) == "word"
    assert unit(18) == "char"


def test_a_tokenizers_text_gets_word_shingles_however_short() -> None:
    # As above, too short for words; but a tokenizer's text is token words only.
    tokens = Quantiles(5, 5, 5, 5, 5)
    chars = Quantiles(25, 28, 30, 30, 30)
    spec, reason = shingle_size(tokens, chars, 1000.0, 0.8, words_only=True)
    assert (spec.unit, spec.k) == ("word", 1)
    assert reason.startswith("word 1-shingles, the only kind a tokenizer's text has, though")
    spec, reason = shingle_size(tokens, chars, 1.0, 0.8, words_only=True)  # no varied tokens
    assert (spec.unit, spec.k) == ("word", ShingleSpec().k)


@pytest.mark.slow  # the rates time tokenising the sample repeated to 4 MiB (TIMED_BYTES)
def test_plan_of_model_tokens_keeps_the_tokenizer_and_word_shingles(
    tmp_path: Path, offline_tiktoken: Path
) -> None:
    rng = np.random.default_rng(2)
    words = ["bridge", "river", "study", "origin", "life", "design", "build", "rail", "road"]
    texts = [" ".join(rng.choice(words, size=6).tolist()) for _ in range(150)]
    path = _write_jsonl(tmp_path / "in.jsonl", texts)
    tokens = NormalizeSpec(tokenizer="tiktoken:cl100k_base")
    result = plan(
        [path], threshold=0.8, recall=0.9, config=DedupConfig(sketch=SketchSpec(normalize=tokens))
    )
    assert result.config.sketch.normalize == tokens
    assert result.config.sketch.shingle.unit == "word"  # six tokens: too few for words, else
    assert "the only kind a tokenizer's text has" in result.measurements.shingle_reason


def test_plan_applies_the_rule_to_its_sample(tmp_path: Path) -> None:
    words = [f"w{i}" for i in range(10)]
    rng = np.random.default_rng(1)
    texts = [" ".join(rng.permutation(words * 10).tolist()) for _ in range(60)]
    path = _write_jsonl(tmp_path / "in.jsonl", texts)
    with pytest.warns(NeardupWarning, match="40 of 60 documents"):  # fewer than 100
        result = plan([path], threshold=0.8, recall=0.9, sample_docs=40)
    assert result.measurements.shingle == ShingleSpec(unit="word", k=4)
    assert result.config.sketch.shingle == ShingleSpec(unit="word", k=4)
    assert result.measurements.sample_docs == 40
    assert result.measurements.num_docs == 60


# --- the S-curve arithmetic and the choice --------------------------------------------------------


def _recall_of(d: PairDistribution, num_bands: int, num_rows: int) -> float:
    """The expected recall ``choose_design`` reports for the design it is made to pick."""

    def cost(design: Design, candidates: float) -> dict[str, float]:
        picked = (design.num_perm, design.num_bands, design.num_rows) == (256, num_bands, num_rows)
        return {"total": 0.0 if picked else 1.0}

    choice = choose_design(d, lambda s: s, threshold=0.8, recall=0.01, precision=0.0, cost=cost)
    assert (choice.design.num_bands, choice.design.num_rows) == (num_bands, num_rows)
    return choice.expected_recall


def test_expected_recall_is_the_mean_s_curve_over_the_pairs_above_the_threshold() -> None:
    similarity = np.array([0.8, 0.85, 0.9, 0.95, 1.0, 0.3, 0.79])
    weights = np.array([3.0, 1.0, 2.0, 1.0, 5.0, 100.0, 7.0])
    d = PairDistribution.of(similarity, weights, threshold=0.8)
    for b, r in [(20, 5), (16, 8), (9, 13), (1, 1)]:
        direct = sum(
            w * (1 - (1 - s**r) ** b) for s, w in zip(similarity[:5], weights[:5], strict=True)
        )
        assert _recall_of(d, b, r) == pytest.approx(direct / weights[:5].sum(), rel=1e-12)
    assert d.num_near == 12.0
    # Off the grid, a pair counts a little below its similarity: never more recall than due.
    off = PairDistribution.of(np.array([0.8125]), np.ones(1), threshold=0.8)
    assert _recall_of(off, 16, 8) <= 1 - (1 - 0.8125**8) ** 16
    assert math.isnan(_recall_of(PairDistribution.of(np.array([0.1]), np.ones(1), 0.8), 2, 2))


def _direct_choice(
    similarity: list[float], weights: list[float], t: float, recall: float, precision: float
) -> tuple[int, int, int]:
    """The selection rule restated with Python loops: cheapest design (num_perm + candidates /
    100) with 1 - (1 - t^r)^b >= recall, among those with precision >= the target if any."""
    rows = []
    for p in NUM_PERMS:
        for r in range(1, p + 1):
            for b in range(1, p // r + 1):
                cand = sum(
                    w * (1 - (1 - (math.floor(s * 1000 + 1e-9) / 1000) ** r) ** b)
                    for s, w in zip(similarity, weights, strict=True)
                )
                good = sum(
                    w * (1 - (1 - (math.floor(s * 1000 + 1e-9) / 1000) ** r) ** b)
                    for s, w in zip(similarity, weights, strict=True)
                    if s >= t
                )
                prec = good / cand if cand > 0 else 1.0
                rows.append((p, b, r, 1 - (1 - t**r) ** b, prec, p + cand / 100))
    feasible = [row for row in rows if row[3] >= recall]
    precise = [row for row in feasible if row[4] >= precision]
    best = min(precise, key=lambda row: row[5])
    return best[0], best[1], best[2]


def test_choice_is_the_cheapest_design_meeting_both_targets() -> None:
    rng = np.random.default_rng(3)
    similarity = np.concatenate([rng.uniform(0.0, 0.3, 40), rng.uniform(0.5, 1.0, 40)])
    weights = np.concatenate([np.full(40, 1000.0), np.full(40, 3.0)])
    d = PairDistribution.of(similarity, weights, threshold=0.7)

    def cost(design: Design, candidates: float) -> dict[str, float]:
        return {"total": design.num_perm + candidates / 100}

    choice = choose_design(d, lambda s: s, threshold=0.7, recall=0.9, precision=0.6, cost=cost)
    expected = _direct_choice(similarity.tolist(), weights.tolist(), 0.7, 0.9, 0.6)
    assert (choice.design.num_perm, choice.design.num_bands, choice.design.num_rows) == expected
    assert choice.meets_recall
    assert choice.meets_precision
    b, r = choice.design.num_bands, choice.design.num_rows
    assert choice.chance_at_threshold == pytest.approx(1 - (1 - 0.7**r) ** b)
    assert choice.chance_at_threshold >= 0.9


def test_choice_says_when_precision_cannot_be_reached() -> None:
    # Half the pairs sit just below the threshold: no S-curve separates them well enough.
    d = PairDistribution.of(np.array([0.79, 0.8]), np.array([1e6, 1.0]), threshold=0.8)
    choice = choose_design(
        d, lambda s: s, threshold=0.8, recall=0.9, precision=0.9,
        cost=lambda design, c: {"total": float(design.num_perm)},
    )  # fmt: skip
    assert choice.meets_recall
    assert not choice.meets_precision
    assert choice.chance_at_threshold >= 0.9


def test_grid_holds_thousandths() -> None:
    assert GRID.shape == (1001,)
    assert GRID[800] == pytest.approx(0.8)


# --- arguments ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"recall": 1.0}, "recall must be a float in (0, 1)"),
        ({"threshold": 0.0}, "threshold must be a float in (0, 1]"),
        ({"precision": 1.5}, "precision must be a float in [0, 1]"),
        ({"sample_docs": 1}, "sample_docs (--sample) must be an int >= 2"),
        ({"sample_bytes": 0}, "sample_bytes (--sample-mb) must be an int >= 1"),
        (
            {"config": DedupConfig(sketch=SketchSpec(kind="simhash"))},
            "sketch.kind 'simhash' has none to band: set sketch.kind to one of oph, minhash",
        ),
        (
            {"config": DedupConfig(lsh=LSHSpec(family="prefix"))},
            "lsh.family 'prefix' has none to choose: prefix filtering is exact",
        ),
        (
            {"config": DedupConfig(sketch=SketchSpec(kind="supershingle"))},
            "lsh.family 'features' (supershingle's default) has none to choose: to plan "
            'banding, set family = "bands"',
        ),
    ],
)
def test_bad_arguments_are_parameter_errors(kwargs: dict[str, object], words: str) -> None:
    with pytest.raises(ParameterError, match=re.escape(words)):
        plan([SAMPLE], **kwargs)  # type: ignore[arg-type]


def test_the_error_for_prefix_filtering_says_what_is_wrong_and_what_to_do() -> None:
    with pytest.raises(ParameterError) as caught:
        plan([SAMPLE], config=DedupConfig(lsh=LSHSpec(family="prefix")))
    message = str(caught.value)
    assert "remove family from the config's [lsh] table" in message
    assert "use one of" not in message  # the kind was never the problem


# --- the sample's size ----------------------------------------------------------------------------


def test_a_byte_budget_that_leaves_one_document_is_refused() -> None:
    with pytest.raises(ParameterError, match=r"sample_bytes \(--sample-mb\) of 100 bytes") as e:
        plan([SAMPLE], sample_bytes=100)
    assert "1 of the input's 2,310 documents" in str(e.value)
    assert "no pair to measure" in str(e.value)


def test_a_tiny_sample_warns_and_states_its_size() -> None:
    with pytest.warns(NeardupWarning) as caught:
        result = plan([SAMPLE], sample_docs=2)
    (warning,) = caught
    message = str(warning.message)
    m = result.measurements
    assert f"2 of 2,310 documents ({m.sample_bytes:,} bytes of text)" in message
    assert f"fewer than {MIN_SAMPLE_DOCS} documents" in message
    assert "its 0 pairs at or above 0.5" in message
    assert "raise --sample " in message


def test_a_sample_that_is_the_whole_input_is_exact_and_does_not_warn(tmp_path: Path) -> None:
    texts = [f"document {i} says something of its own about {i * 7}" for i in range(20)]
    path = _write_jsonl(tmp_path / "in.jsonl", texts)
    result = plan([path])  # warnings are errors in the tests
    assert result.measurements.sample_docs == result.measurements.num_docs == 20


def test_rates_on_a_tiny_sample_leave_out_fixed_costs() -> None:
    """Two short texts once timed at 0.1 MB/s sketching and 3.5 s per verified pair: the
    kernels' loading and each call's fixed costs had been divided by a few kilobytes."""
    texts = ["the quick brown fox jumps over the lazy dog " * 8, "a b c d e f g h i j k l " * 8]
    config = replace(DedupConfig(), sketch=replace(SketchSpec(), shingle=ShingleSpec(k=3)))
    data = "".join(texts).encode()
    offsets = np.cumsum([0, *(len(t.encode()) for t in texts)]).astype(np.int64)
    raw = Batch(data=np.frombuffer(data, dtype=np.uint8).copy(), offsets=offsets)
    pairs = measure_pairs(texts, 2310, config, seed=1)
    rates = measure_rates(raw, 0.0, config, pairs.verify_per_pair, num_docs=2310)
    # A hundred times below what two cores do (hundreds of MB/s, microseconds per pair).
    assert all(seconds < 1e-6 for seconds in rates.sketch_per_byte.values()), rates
    assert rates.normalize_per_byte < 1e-6, rates
    assert 0 < pairs.verify_per_pair < 1e-3, pairs.verify_per_pair
    assert rates.band_per_key < 1e-5, rates


def test_the_stopwatch_leaves_out_compiling() -> None:
    import numba

    @numba.njit
    def fresh(n: int) -> int:  # a new function: compiled on its first call, inside the watch
        total = 0
        for i in range(n):
            total += i * i
        return total

    watch = Stopwatch()
    with watch.running():
        fresh(10)
    assert watch.compile_seconds > 0.01
    assert watch.seconds < watch.compile_seconds


# --- TOML -----------------------------------------------------------------------------------------

_CONFIGS = [
    ConfigFile(DedupConfig(), ReadSpec(), OutputSpec()),
    ConfigFile(
        DedupConfig(
            sketch=SketchSpec(
                kind="minhash",
                num_perm=64,
                shingle=ShingleSpec(unit="char", k=7, fingerprint="rabin"),
                normalize=NormalizeSpec(strip_punctuation=True, stopwords="english"),
            ),
            lsh=LSHSpec(threshold=0.65, num_bands=8, num_rows=8),
            memory_bytes=1 << 30,
            cluster="center",
            pairs="all",
        ),
        ReadSpec(id_field="", text_field='body "main" \\ é\u007f\t', encoding="cp1252"),
        OutputSpec(compress="zstd", annotate="dup"),
    ),
    ConfigFile(
        DedupConfig(
            sketch=SketchSpec(kind="bbit", bbits=4, shingle=ShingleSpec(unit="stopword", k=3))
        ),
        ReadSpec(),
        OutputSpec(),
    ),
    ConfigFile(
        DedupConfig(sketch=SketchSpec(normalize=NormalizeSpec(tokenizer="tiktoken:cl100k_base"))),
        ReadSpec(),
        OutputSpec(),
    ),
]


@pytest.mark.parametrize("settings", _CONFIGS)
def test_toml_round_trips_to_an_equal_config(settings: ConfigFile, tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(toml_text(settings.to_dict(), ["a comment", "two\nlines"]), encoding="utf-8")
    assert load_config(path) == settings


scalars = st.one_of(
    st.text(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    st.booleans(),
)


@given(
    st.dictionaries(st.text(min_size=1), st.one_of(scalars, st.dictionaries(st.text(), scalars)))
)
def test_toml_text_is_read_back_by_tomllib(data: dict[str, object]) -> None:
    assert tomllib.loads(toml_text(data)) == data


def test_toml_text_leaves_out_none_writes_arrays_and_refuses_the_rest() -> None:
    assert tomllib.loads(toml_text({"a": None, "t": {"b": None, "c": 1}})) == {"t": {"c": 1}}
    data = {"t": {"x": ["q:max", 'a "b"'], "y": (1, 2.5, True)}}
    assert tomllib.loads(toml_text(data)) == {"t": {"x": ["q:max", 'a "b"'], "y": [1, 2.5, True]}}
    with pytest.raises(ParameterError, match=re.escape("got bytes at 't.x'")):
        toml_text({"t": {"x": [b"1"]}})


# --- the whole plan on the licences ---------------------------------------------------------------


@pytest.fixture(scope="module")
def licence_plan() -> object:
    return plan([SAMPLE], threshold=0.8, recall=0.9, precision=0.5, sample_docs=1500)


def test_plan_writes_a_config_dedup_reads(licence_plan: object, tmp_path: Path) -> None:
    from neardup.plan import Plan

    assert isinstance(licence_plan, Plan)
    path = licence_plan.write(tmp_path / "plan.toml")
    assert load_config(path) == (licence_plan.config, ReadSpec(), OutputSpec())
    assert "\n[read]\n" in path.read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir()] == ["plan.toml"]  # no temporary left
    text = path.read_text(encoding="utf-8")
    assert "# Predicted for the whole input:" in text
    config = licence_plan.config
    assert config.lsh.num_bands is not None
    assert config.lsh.num_rows is not None
    assert config.lsh.num_bands * config.lsh.num_rows <= config.sketch.num_perm
    assert config.sketch.num_perm in NUM_PERMS


def test_predictions_match_a_real_run(licence_plan: object, tmp_path: Path) -> None:
    from neardup.plan import Plan

    assert isinstance(licence_plan, Plan)
    m, p = licence_plan.measurements, licence_plan.predictions
    assert (m.num_docs, m.sample_docs) == (2310, 1500)
    assert p.chance_at_threshold >= 0.9
    assert p.meets_recall
    # Every candidate measured (pairs="all"), so that the verified pairs are all of them.
    config = replace(licence_plan.config, pairs="all")
    result = dedup_files([SAMPLE], tmp_path / "out", config)
    counts = result.summary.counts
    # Scaled from 1,500 of 2,310 documents: candidates and pairs within a factor of 1.5.
    assert counts.candidate_pairs / 1.5 <= p.candidates <= counts.candidate_pairs * 1.5
    assert counts.verified_pairs / 1.5 <= p.near_pairs <= counts.verified_pairs * 1.5
