"""``neardup plan``: sample the input, recommend a dedup config, write it as TOML."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import click

from neardup.cli.options import (
    apply_file_flags,
    apply_flags,
    input_options,
    quiet_option,
    refuse_inapplicable,
)
from neardup.errors import ParameterError
from neardup.params import ConfigFile, load_config

__all__ = ["plan_command"]


@click.command(
    "plan",
    epilog="""\b
Examples:
  neardup plan corpus.jsonl.gz && neardup dedup corpus.jsonl.gz --config plan.toml -o out/
  neardup plan shards/*.parquet --text-field content --threshold 0.7 --recall 0.99
  neardup plan docs/ --sample 5000 --output docs-plan.toml
  neardup plan corpus.jsonl --config minhash.toml --threshold 0.9""",
)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--threshold",
    type=float,
    help="Jaccard similarity of a near duplicate [default: the --config's, else 0.8].",
)
@click.option(
    "--recall",
    type=float,
    default=0.95,
    show_default=True,
    help="Chance a pair exactly at the threshold becomes a candidate (so, at least, every "
    "pair above it): the recall promised.",
)
@click.option(
    "--precision",
    type=float,
    default=0.5,
    show_default=True,
    help="Share of candidates at or above the threshold wished for (when some design reaches it).",
)
@click.option(
    "--sample",
    "sample_docs",
    type=int,
    default=20_000,
    show_default=True,
    help="Documents sampled uniformly (in one pass that also counts the whole input).",
)
@click.option(
    "--sample-mb",
    type=float,
    default=None,
    help="MiB of text sampled at most  [default: 64]; the planner holds about nine bytes per "
    "byte of sample.",
)
@click.option("--seed", type=int, default=42, show_default=True, help="Seed of the sample.")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=Path("plan.toml"),
    show_default=True,
    help="The TOML config to write (atomically); never an input.",
)
@click.option("--overwrite", is_flag=True, help="Replace OUTPUT if it is an earlier plan.")
@quiet_option
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="TOML of the settings to keep (sketch kind, normalisation, verification, reading, "
    "and the threshold unless --threshold is given); the plan replaces its shingles, "
    "num_perm, bands and rows.",
)
@input_options
def plan_command(
    inputs: tuple[Path, ...],
    threshold: float | None,
    recall: float,
    precision: float,
    sample_docs: int,
    sample_mb: float | None,
    seed: int,
    output: Path,
    overwrite: bool,
    quiet: bool,
    config_path: Path | None,
    **flags: Any,
) -> None:
    """Recommend a dedup config for INPUTS from a sample of them.

    Measures document lengths, vocabulary, boilerplate and the similarities of pairs, picks
    the shingles by MMDS's rule and the cheapest num_perm, bands and rows whose S-curve
    reaches --recall at --threshold, predicts candidates, time and memory for the whole input,
    and writes OUTPUT for `neardup dedup --config OUTPUT` (measurements and predictions as
    comments). See docs/plan.md.
    """
    from neardup.io.output import check_output
    from neardup.jobs.plan import SAMPLE_BYTES, plan

    refuse_inapplicable(inputs)
    read = [*inputs, *filter(None, [config_path])]
    check_output(output, "plan", inputs=read, overwrite=overwrite)
    if not output.parent.is_dir():
        raise click.BadParameter(
            f"no directory {str(output.parent)!r} to write {output.name!r} in; create it first",
            param_hint="--output",
        )
    if sample_mb is not None and not sample_mb > 0:
        raise ParameterError(f"--sample-mb must be above 0; got {sample_mb}.")
    loaded = load_config(config_path) if config_path else ConfigFile()
    config = apply_flags(loaded.config, flags)
    reading, writing = apply_file_flags(loaded.read, loaded.write, flags)
    result = plan(
        inputs,
        threshold=threshold,
        recall=recall,
        precision=precision,
        sample_docs=sample_docs,
        sample_bytes=SAMPLE_BYTES if sample_mb is None else max(1, int(sample_mb * 2**20)),
        seed=seed,
        config=config,
        read=reading,
        write=writing,
        show_progress=not quiet,
    )
    path = result.write(output, overwrite=overwrite, inputs=read)
    if quiet:
        return
    click.echo(result.summary())
    run = shlex.join(["neardup", "dedup", *map(str, inputs), "--config", str(path)])
    click.echo(f"wrote {path}; run: {run} -o OUT")
