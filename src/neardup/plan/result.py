"""What a plan holds: the sample's measurements, the chosen config and its predictions.

:class:`Plan` writes itself as the TOML file ``neardup dedup --config`` reads
(:mod:`neardup.plan.toml`), the measurements and predictions as comments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from neardup._version import __version__
from neardup.io.atomic import replaced_file
from neardup.io.output import PLAN_MARK, check_output
from neardup.params import ConfigFile, DedupConfig, OutputSpec, ReadSpec, ShingleSpec
from neardup.plan.design import Rates
from neardup.plan.measure import Pairs, Quantiles, Vocabulary
from neardup.plan.toml import toml_text

__all__ = ["Measurements", "Plan", "Predictions"]


@dataclass(frozen=True, slots=True)
class Measurements:
    """What was measured: of the whole input in the sampling pass, and of the sample.

    Attributes
    ----------
    num_docs, num_bytes
        Documents and UTF-8 bytes of text of the whole input.
    sample_docs, sample_bytes
        Of the sample.
    tokens, chars
        Words and characters per sampled document.
    vocabulary
        Distinct and effective words of the sample.
    shingle, shingle_reason
        The shingling chosen by MMDS's rule, and why.
    boilerplate_share
        Share of the sample's shingle occurrences that are boilerplate (shingles in at least
        1% of the sampled documents).
    pairs
        The sample's pairs, and the similarity distribution they give for the whole input.
    rates
        The measured costs of reading, normalising, sketching, banding and verifying.
    """

    num_docs: int
    num_bytes: int
    sample_docs: int
    sample_bytes: int
    tokens: Quantiles
    chars: Quantiles
    vocabulary: Vocabulary
    shingle: ShingleSpec
    shingle_reason: str
    boilerplate_share: float
    pairs: Pairs
    rates: Rates


@dataclass(frozen=True, slots=True)
class Predictions:
    """What the recommended config is expected to do on the whole input.

    Attributes
    ----------
    chance_at_threshold
        The S-curve at the threshold: the recall promised, for pairs exactly at the threshold
        and so at least for all pairs at or above it.
    expected_recall
        Over the estimated pairs at or above the threshold (NaN when the sample had none).
    precision
        Expected share of the candidates at or above the threshold (NaN: none expected).
    meets_recall, meets_precision
        Whether the targets were reached (a design for them exists).
    near_pairs
        Estimated pairs of distinct texts at or above the threshold.
    candidates
        Expected candidate pairs.
    seconds
        Predicted seconds per stage (read, normalize, sketch, candidates, verify) and total.
    peak_memory
        Predicted peak resident memory in bytes (:func:`neardup.plan.design.peak_memory`).
    """

    chance_at_threshold: float
    expected_recall: float
    precision: float
    meets_recall: bool
    meets_precision: bool
    near_pairs: float
    candidates: float
    seconds: dict[str, float]
    peak_memory: int


@dataclass(frozen=True, slots=True)
class Plan:
    """A recommended :class:`~neardup.params.DedupConfig`, what it rests on and what it predicts.

    Attributes
    ----------
    config
        The config to run ``neardup dedup`` with.
    read
        How the inputs were read for the sample, and are to be read by the run (the TOML's
        ``[read]`` table).
    output
        How the run is to write its kept corpus, as the config planned from said (the TOML's
        ``[output]`` table; the plan measures nothing of it).
    measurements
        What was measured (:class:`Measurements`).
    predictions
        What the config is expected to do (:class:`Predictions`).
    recall, precision
        The targets asked for.
    inputs
        The files sampled, as given (recorded in the TOML as every run records its inputs).
    neardup_version
        The neardup that made the plan.
    """

    config: DedupConfig
    read: ReadSpec
    measurements: Measurements
    predictions: Predictions
    recall: float
    precision: float
    output: OutputSpec = field(default_factory=OutputSpec)
    inputs: tuple[str, ...] = ()
    neardup_version: str = __version__

    def summary(self) -> str:
        """A few lines for people: the measurements, the recommendation, the predictions."""
        return "\n".join([*self._measured(), *self._predicted()])

    def _measured(self) -> list[str]:
        m = self.measurements
        pairs = m.pairs
        return [
            f"input        : {m.num_docs:,} documents, {m.num_bytes / 1e6:,.1f} MB of text; "
            f"sample {m.sample_docs:,} documents ({pairs.exact_copies:,} exact copies)",
            f"lengths      : words p50 {m.tokens.p50:,.0f}, p90 {m.tokens.p90:,.0f}; "
            f"characters p50 {m.chars.p50:,.0f}, p90 {m.chars.p90:,.0f}",
            f"vocabulary   : {m.vocabulary.distinct:,} distinct words, "
            f"{m.vocabulary.effective:,.0f} effective",
            f"shingles     : {m.shingle} ({m.shingle_reason})",
            f"boilerplate  : {m.boilerplate_share:.1%} of shingle occurrences",
            f"sample pairs : {pairs.near_pairs:,} at or above {pairs.floor:g}; background mean "
            f"Jaccard {pairs.background_mean:.3f} over {pairs.background_pairs:,} random pairs",
        ]

    def _predicted(self) -> list[str]:
        p, c = self.predictions, self.config
        t = c.lsh.threshold
        return [
            f"recommended  : {c.sketch.kind} num_perm={c.sketch.num_perm}, "
            f"bands={c.lsh.num_bands}, rows={c.lsh.num_rows}, threshold={t:g}",
            f"recall       : {p.chance_at_threshold:.3f} at s = {t:g} (target {self.recall:g}"
            f"{'' if p.meets_recall else ', NOT reachable'}); expected "
            f"{_maybe(p.expected_recall, '.3f')} over ~{p.near_pairs:,.0f} pairs at or above",
            f"precision    : {_maybe(p.precision, '.3f')} of candidates at or above {t:g} "
            f"(target {self.precision:g}"
            f"{'' if p.meets_precision else ', not reachable: the most precise design'})",
            f"predicted    : {p.candidates:,.0f} candidates, {p.seconds['total']:,.1f} s, "
            f"peak memory {p.peak_memory / 2**20:,.0f} MiB",
        ]

    def to_toml(self) -> str:
        """The config as TOML (``neardup dedup --config`` reads it), the rest as comments."""
        m, p = self.measurements, self.predictions
        seconds = ", ".join(f"{k} {v:.2f}" for k, v in p.seconds.items() if k != "total")
        rates = m.rates
        sketch = ", ".join(
            f"{k}: {1e-6 / v:,.1f} MB/s" if v > 0 else f"{k}: -"
            for k, v in rates.sketch_per_byte.items()
        )
        comments = [
            f"{PLAN_MARK.removeprefix('# ')} a dedup config chosen from a sample of the input.",
            "  neardup dedup INPUT... --config THIS_FILE -o OUT",
            f"Made by neardup {self.neardup_version} (plan) from: {', '.join(self.inputs) or '-'}",
            "",
            "Measured:",
            *(f"  {line}" for line in self._measured()),
            f"  rates: read {rates.read_seconds:.2f} s (whole input); sketch {sketch}; "
            f"verify {rates.verify_per_pair * 1e6:,.1f} us/pair; band "
            f"{rates.band_per_key * 1e9:,.1f} ns/key",
            "",
            "Predicted for the whole input:",
            *(f"  {line}" for line in self._predicted()),
            f"  seconds: {seconds}",
        ]
        return toml_text(ConfigFile(self.config, self.read, self.output).to_dict(), comments)

    def write(
        self, path: Path | str, *, overwrite: bool = False, inputs: Sequence[Path | str] = ()
    ) -> Path:
        """Write :meth:`to_toml` to ``path`` atomically (a temporary file, then a rename).

        ``path`` may not be one of ``inputs`` (the planned files), and replaces an existing
        file only with ``overwrite`` and only if it is an earlier plan (an InputError else).
        """
        path = Path(path)
        check_output(path, "plan", inputs=inputs, overwrite=overwrite)
        with replaced_file(path) as f:
            f.write(self.to_toml().encode("utf-8"))
        return path


def _maybe(value: float, spec: str) -> str:
    return "-" if math.isnan(value) else format(value, spec)
