"""``neardup plan``: measure a sample of the input, recommend a dedup config, predict its cost.

It sits before a run. One streaming pass samples the input uniformly and counts it
(:mod:`neardup.plan.sample`); the sample's lengths, vocabulary, boilerplate and pair
similarities are measured (:mod:`neardup.plan.measure`) and scaled to the whole input; the
cheapest banding that reaches the asked recall at the threshold is chosen
(:mod:`neardup.plan.design`); the config is written as TOML that ``neardup dedup --config``
reads, with the measurements and predictions as comments (:mod:`neardup.plan.toml`). How it
decides, and an example: ``docs/plan.md``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from neardup._faults import crash_point
from neardup._progress import Progress
from neardup.errors import NeardupWarning, ParameterError, advice
from neardup.kinds import SKETCH_KINDS
from neardup.params import DedupConfig, OutputSpec, ReadSpec, ShingleSpec
from neardup.plan.design import Choice, Design, choose_design, peak_memory
from neardup.plan.measure import (
    Quantiles,
    boilerplate_share,
    measure_pairs,
    measure_rates,
    shingle_size,
    vocabulary,
)
from neardup.plan.result import Measurements, Plan, Predictions
from neardup.plan.sample import Sample, sample_inputs
from neardup.sketch import make_sketcher
from neardup.text.normalize import normalize_bytes
from neardup.text.shingle import Shingler

__all__ = ["MIN_NEAR_PAIRS", "MIN_SAMPLE_DOCS", "SAMPLE_BYTES", "plan"]


SAMPLE_BYTES = 64 * 2**20
"""Bytes of text a plan samples at most by default: 20,000 web pages, or about 1,100 RFCs. The
planner holds about nine bytes per byte of sample, on top of the process's 210 MB."""

MIN_SAMPLE_DOCS = 100
"""A sample of fewer documents, drawn from more, is too small to predict from (a warning says
so): the shingle rule reads the 90th percentile of lengths, which then rests on fewer than ten
documents, and the effective vocabulary of a few documents is well below the input's (on the
licences, samples of 2 to 20 documents chose word 3-shingles; 50 or more, word 2-shingles, as
all 2,310 do)."""

MIN_NEAR_PAIRS = 30
"""A sample holding fewer pairs at or above the floor (scaled by the share of the input's pairs
it leaves out) is too small to predict pairs and candidates from (a warning says so): a count
*k* of sampled pairs estimates the input's with a relative error of about 1/sqrt(k), 18% at 30,
and more where near duplicates come in clusters (on the licences, every sample with fewer than
30 predicted from none to a third of the run's candidates; see ``docs/plan.md``)."""


def _check(
    threshold: float, recall: float, precision: float, sample_docs: int, sample_bytes: int
) -> None:
    checks = (
        ("threshold", "--threshold", threshold, 0.0 < threshold <= 1.0, "a float in (0, 1]"),
        ("recall", "--recall", recall, 0.0 < recall < 1.0, "a float in (0, 1)"),
        ("precision", "--precision", precision, 0.0 <= precision <= 1.0, "a float in [0, 1]"),
        ("sample_docs", "--sample", sample_docs, sample_docs >= 2, "an int >= 2"),
        ("sample_bytes", "--sample-mb", sample_bytes, sample_bytes >= 1, "an int >= 1"),
    )
    for name, option, value, ok, allowed in checks:
        if not ok:
            flag = advice(option, f" ({option})") if option != f"--{name}" else ""
            raise ParameterError(f"plan.{name}{flag} must be {allowed}; got {value!r}.")


def _check_kind(config: DedupConfig) -> None:
    """Plans design LSH bands over slots that agree with a pair's Jaccard (or a function of it)."""
    kind = SKETCH_KINDS[config.sketch.kind]
    banded = [
        k.name
        for k in SKETCH_KINDS.values()
        if "bands" in k.families and k.exact == "jaccard" and k.num_slots is None
    ]
    if kind.name not in banded:
        raise ParameterError(
            "plan designs LSH bands over sketch slots that each agree with a pair's Jaccard "
            f"similarity; the config's sketch.kind {kind.name!r} has none to band: set "
            f"sketch.kind to one of {', '.join(banded)} (or leave it out: oph)."
        )
    family = config.lsh.family or kind.family
    if family != "bands":
        if family == "prefix":
            fix = (
                "prefix filtering is exact (it finds every pair at or above the threshold) and "
                "needs no plan: run dedup with that config as it is; to plan banding instead, "
                "remove family from the config's [lsh] table"
            )
        else:
            fix = 'to plan banding, set family = "bands" in the config\'s [lsh] table'
        default = f" ({kind.name}'s default)" if family == kind.family else ""
        raise ParameterError(
            'plan chooses the bands and rows of LSH banding (lsh.family "bands"); the '
            f"config's lsh.family {family!r}{default} has none to choose: {fix}."
        )


def _check_sample(sample: Sample, sample_bytes: int) -> None:
    """Refuse a sample of one document from an input of more: it holds no pair to measure."""
    if sample.size >= 2 or sample.num_docs < 2:
        return
    mean = sample.num_bytes / sample.num_docs
    raise ParameterError(
        f"plan.sample_bytes{advice('--sample-mb', ' (--sample-mb)')} of {sample_bytes:,} bytes "
        f"({sample_bytes / 2**20:.3g} MiB) leaves a sample of 1 of the input's "
        f"{sample.num_docs:,} documents (the first drawn, {sample.texts.num_bytes:,} bytes): no "
        f"pair to measure. The documents average {mean:,.0f} bytes; {MIN_SAMPLE_DOCS} of them "
        f"take about {MIN_SAMPLE_DOCS * mean / 2**20:.2g} MiB."
    )


def _warn_if_small(m: Measurements, sample_docs: int) -> None:
    """Warn when the sample, drawn from a larger input, is too small to predict from.

    Too few documents (:data:`MIN_SAMPLE_DOCS`) to measure lengths and vocabulary, or too few
    pairs at or above the floor (:data:`MIN_NEAR_PAIRS`, times the share of the input's pairs
    the sample leaves out: none when it is the whole input).
    """
    n, total = m.sample_docs, m.num_docs
    if n >= total:
        return
    kept = n * (n - 1) / (total * (total - 1))
    reasons = []
    if n < MIN_SAMPLE_DOCS:
        reasons.append(
            f"fewer than {MIN_SAMPLE_DOCS} documents measure lengths and vocabulary (and so "
            "the shingle size) poorly"
        )
    if m.pairs.near_pairs < MIN_NEAR_PAIRS * (1 - kept):
        each = f", each standing for {1 / kept:,.0f} of the input's" if kept > 0 else ""
        reasons.append(
            f"its {m.pairs.near_pairs:,} pairs at or above {m.pairs.floor:g}{each}, are too "
            f"few (under {MIN_NEAR_PAIRS}) to predict the pairs and candidates from"
        )
    if not reasons:
        return
    option = "--sample" if n >= sample_docs else "--sample-mb"
    field = "sample_docs" if n >= sample_docs else "sample_bytes"
    warnings.warn(
        f"plan: the sample is too small to predict from: {n:,} of {total:,} documents "
        f"({m.sample_bytes:,} bytes of text); {'; '.join(reasons)}. Its predictions may be "
        f"off several-fold; raise {advice(option, option, field)} for a larger sample.",
        NeardupWarning,
        stacklevel=3,
    )


def plan(
    inputs: Sequence[Path | str],
    *,
    threshold: float | None = None,
    recall: float = 0.95,
    precision: float = 0.5,
    sample_docs: int = 20_000,
    sample_bytes: int = SAMPLE_BYTES,
    seed: int = 42,
    config: DedupConfig | None = None,
    read: ReadSpec | None = None,
    write: OutputSpec | None = None,
    show_progress: bool = False,
) -> Plan:
    """Sample ``inputs``, measure them and recommend a dedup config for them.

    Parameters
    ----------
    inputs
        The files (or directories of .txt files) ``neardup dedup`` would read.
    threshold
        The Jaccard similarity of a near duplicate; None: ``config``'s (0.8 by default).
    recall
        The chance a pair exactly at the threshold must have of becoming a candidate (so,
        at least, of every pair at or above it): the recall promised.
    precision
        The share of candidates at or above the threshold wished for; the cheapest design
        reaching it is chosen when one does.
    sample_docs
        Documents sampled (uniformly, in one pass; all of them when the input has fewer).
    sample_bytes
        Bytes of text sampled at most (:mod:`neardup.plan.sample`): the planner holds the
        sample and measures it several times, so this bounds its memory and time.
    seed
        Seed of the sample and of the random pairs.
    config
        The sketch kind and (unless ``threshold`` is given) the threshold; its shingling,
        ``num_perm``, bands and rows are what the plan replaces.
    read
        How the inputs are read (fields, format, ...), as ``neardup dedup`` will read them.
    write
        How the run is to write its kept corpus: carried into the plan as it is.
    show_progress
        The sampling pass's progress on stderr (bytes of input read, as ``dedup`` shows it).

    Returns
    -------
    Plan
        The config, with the measurements and predictions.

    Raises
    ------
    ParameterError
        A target out of range, a sketch kind that is not banded over Jaccard slots, a
        candidate family other than banding, or a ``sample_bytes`` that holds one document of
        an input of more (no pair to measure).
    InputError
        An unreadable input or a bad record, as ``neardup dedup`` would raise.

    Warns
    -----
    NeardupWarning
        When the sample, drawn from a larger input, is too small to predict from: fewer than
        :data:`MIN_SAMPLE_DOCS` documents, or fewer than :data:`MIN_NEAR_PAIRS` pairs at or
        above the floor. The warning states the sample's size.

    Notes
    -----
    The recall is the S-curve 1 - (1 - s^r)^b at the threshold (MMDS §3.4.2, seed 001); the
    expected recall over the pairs estimated at or above it, and the precision, come from the
    sample's pairs scaled to the whole input. See ``docs/plan.md``.
    """
    config = config if config is not None else DedupConfig()
    read = read if read is not None else ReadSpec()
    threshold = config.lsh.threshold if threshold is None else threshold
    _check(threshold, recall, precision, sample_docs, sample_bytes)
    _check_kind(config)
    with Progress("sample", 0, enabled=show_progress) as bar:
        sample = sample_inputs(inputs, read, sample_docs, seed, sample_bytes, bar)
    crash_point("sampled")
    _check_sample(sample, sample_bytes)
    normalize = config.sketch.normalize
    normalized = normalize_bytes(sample.texts, normalize)
    tokens = Quantiles.of(Shingler(ShingleSpec(k=1), normalize).count_tokens(normalized))
    written = replace(normalize, tokenizer=None)  # characters are those of the text's words
    chars = Quantiles.of(
        Shingler(ShingleSpec(unit="char", k=1), written).count_tokens(
            normalized if written == normalize else normalize_bytes(sample.texts, written)
        )
    )
    words = vocabulary(normalized, normalize)
    shingle, reason = shingle_size(
        tokens, chars, words.effective, threshold, words_only=normalize.tokenizer is not None
    )
    shingled = replace(
        config,
        sketch=replace(config.sketch, shingle=replace(config.sketch.shingle, unit=shingle.unit,
                                                      k=shingle.k, stopwords=None)),
        lsh=replace(config.lsh, threshold=threshold),
    )  # fmt: skip
    sets = Shingler(shingled.sketch.shingle, normalize).shingle_sets(normalized)
    pairs = measure_pairs(sample.strings(), sample.num_docs, shingled, seed)
    rates = measure_rates(
        sample.texts, sample.read_seconds, shingled, pairs.verify_per_pair, sample.num_docs
    )
    measurements = Measurements(
        num_docs=sample.num_docs,
        num_bytes=sample.num_bytes,
        sample_docs=sample.size,
        sample_bytes=sample.texts.num_bytes,
        tokens=tokens,
        chars=chars,
        vocabulary=words,
        shingle=shingled.sketch.shingle,
        shingle_reason=reason,
        boilerplate_share=boilerplate_share(sets),
        pairs=pairs,
        rates=rates,
    )
    _warn_if_small(measurements, sample_docs)
    recommended = _recommend(
        shingled, read, measurements, sample, recall=recall, precision=precision
    )
    kept_as = write if write is not None else OutputSpec()
    return replace(recommended, output=kept_as, inputs=tuple(map(str, inputs)))


def _recommend(
    config: DedupConfig,
    read: ReadSpec,
    m: Measurements,
    sample: Sample,
    *,
    recall: float,
    precision: float,
) -> Plan:
    """The cheapest design for the targets, as a config, with its predictions."""
    distinct = m.num_docs * m.pairs.distinct_docs / max(sample.size, 1)
    maker = type(make_sketcher(config.sketch))

    def cost(design: Design, candidates: float) -> dict[str, float]:
        return m.rates.seconds(design, candidates, m.num_bytes, distinct)

    choice: Choice = choose_design(
        m.pairs.distribution,
        lambda s: maker.slot_agreement(s, config.sketch),
        threshold=config.lsh.threshold,
        recall=recall,
        precision=precision,
        cost=cost,
    )
    design = choice.design
    chosen = replace(
        config,
        sketch=replace(config.sketch, num_perm=design.num_perm),
        lsh=replace(
            config.lsh,
            num_bands=design.num_bands,
            num_rows=design.num_rows,
        ),
    )
    predictions = Predictions(
        chance_at_threshold=choice.chance_at_threshold,
        expected_recall=choice.expected_recall,
        precision=choice.precision,
        meets_recall=choice.meets_recall,
        meets_precision=choice.meets_precision,
        near_pairs=m.pairs.distribution.num_near,
        candidates=choice.candidates,
        seconds=choice.seconds,
        peak_memory=peak_memory(
            m.num_docs, m.num_bytes, choice.candidates, chosen, read.batch_bytes
        ),
    )
    return Plan(chosen, read, m, predictions, recall, precision)
