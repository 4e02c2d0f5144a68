"""``neardup contamination``: training documents that share word N-grams with evaluation sets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from neardup.cli.options import output_directory_options, quiet_option, record_options

__all__ = ["contamination_command"]


@click.command(
    "contamination",
    epilog="""\b
Examples:
  neardup contamination train-*.jsonl.gz --against mmlu.jsonl --against gsm8k.jsonl -o decon/
  neardup contamination train.parquet --against test.jsonl --ngram 8 --min-share 0.5 -o decon/""",
)
@click.argument(
    "train", metavar="TRAIN...", nargs=-1, required=True, type=click.Path(path_type=Path)
)
@click.option(
    "--against",
    "against",
    multiple=True,
    required=True,
    type=click.Path(path_type=Path),
    help="An evaluation set (JSONL, Parquet, CSV, .txt); repeat for several benchmarks.",
)
@click.option(
    "--ngram",
    type=int,
    default=13,
    show_default=True,
    help="Words per N-gram (GPT-3 used 13), after NFKC and case folding as dedup normalises.",
)
@click.option(
    "--min-share",
    type=float,
    help="Flag an item only when at least this share of its distinct N-grams occur in a "
    "training document [default: one shared N-gram is enough].",
)
@output_directory_options("contaminated.jsonl, the kept training corpus and summary.json")
@record_options
@quiet_option
def contamination_command(
    train: tuple[Path, ...],
    against: tuple[Path, ...],
    ngram: int,
    min_share: float | None,
    output: Path,
    overwrite: bool,
    text_field: str,
    id_field: str | None,
    skip_bad_records: bool,
    quiet: bool,
) -> None:
    """Find training documents that contain benchmark items (decontamination).

    Every training document sharing a word N-gram with an evaluation item (or --min-share of
    the item's N-grams) is listed in contaminated.jsonl with the character spans it shares,
    and left out of the kept corpus. The evaluation sets are held in memory; the training
    corpus streams.
    """
    from neardup.jobs.contamination import contamination_files
    from neardup.params import ReadSpec

    summary = contamination_files(
        train,
        against,
        output,
        ngram=ngram,
        min_share=min_share,
        read=ReadSpec(text_field=text_field, id_field=id_field, skip_bad_records=skip_bad_records),
        overwrite=overwrite,
        show_progress=not quiet,
    )
    if not quiet:
        _print_summary(summary, output)


def _print_summary(summary: dict[str, Any], output: Path) -> None:
    counts = summary["counts"]
    click.echo(
        f"neardup contamination: {counts['items']:,} training documents, "
        f"{counts['eval_items']:,} evaluation items, {summary['params']['ngram']}-grams"
    )
    for table in summary["benchmarks"]:
        click.echo(
            f"  {table['input']}: {table['contaminated_items']:,} of {table['items']:,} items "
            f"contaminated ({table['too_short']:,} too short to match)"
        )
    click.echo(
        f"  removed {counts['removed']:,} training documents, kept {counts['kept']:,}; "
        f"outputs in {output}/"
    )
