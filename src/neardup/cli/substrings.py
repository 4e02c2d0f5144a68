"""``neardup substrings``: exact repeated substrings of N or more tokens, removed (Lee et al.)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from neardup.cli.options import output_directory_options, quiet_option, record_options
from neardup.errors import ParameterError

__all__ = ["substrings_command"]


@click.command(
    "substrings",
    epilog="""\b
Examples:
  neardup substrings corpus.jsonl.zst -o clean/
  neardup substrings shards/*.parquet -o clean/ --min-tokens 30 --memory-gb 8
  neardup substrings train.jsonl --against test.jsonl -o clean/""",
)
@click.argument(
    "inputs", metavar="INPUT...", nargs=-1, required=True, type=click.Path(path_type=Path)
)
@click.option(
    "--min-tokens",
    type=int,
    default=50,
    show_default=True,
    help="Tokens a repeated substring needs at least (Lee et al. 2022 used 50). Tokens are "
    "the words of the text as written: split at whitespace, punctuation kept, CJK characters "
    "one by one.",
)
@click.option(
    "--against",
    "against",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Remove only the substrings that occur in this corpus (repeatable; never written) "
    "[default: those that occur earlier in INPUT itself].",
)
@output_directory_options("repeats.jsonl, the corpus without the repeats and summary.json")
@click.option(
    "--memory-gb",
    type=float,
    help="Memory for the suffix arrays: the corpus is cut into shards, two of which fit in it "
    "(about 32 bytes a token) [default: a quarter of the machine, at most 4].",
)
@record_options
@quiet_option
def substrings_command(
    inputs: tuple[Path, ...],
    min_tokens: int,
    against: tuple[Path, ...],
    output: Path,
    overwrite: bool,
    memory_gb: float | None,
    text_field: str,
    id_field: str | None,
    skip_bad_records: bool,
    quiet: bool,
) -> None:
    """Remove every substring of --min-tokens or more tokens seen earlier in the corpus.

    As Lee et al. (2022, "Deduplicating Training Data Makes Language Models Better") did
    with a suffix array: each repeated run of tokens stays at its first occurrence and is cut
    out of every later record's text field. repeats.jsonl lists what went, per record, as
    character offsets.
    """
    from neardup.io.output import check_output
    from neardup.jobs.substrings import substrings_files
    from neardup.params import ReadSpec

    if memory_gb is not None and not memory_gb * 2**30 >= 1024:
        raise ParameterError(
            f"--memory-gb must be at least {1024 / 2**30:.3g} (1 KiB); got {memory_gb}."
        )
    check_output(output, "substrings", inputs=[*inputs, *against], overwrite=overwrite)
    summary = substrings_files(
        inputs,
        output,
        min_tokens=min_tokens,
        against=against,
        read=ReadSpec(text_field=text_field, id_field=id_field, skip_bad_records=skip_bad_records),
        memory_bytes=None if memory_gb is None else int(memory_gb * 2**30),
        overwrite=overwrite,
        show_progress=not quiet,
    )
    if not quiet:
        _print_summary(summary, output)


def _print_summary(summary: dict[str, Any], output: Path) -> None:
    counts = summary["counts"]
    tokens = counts["tokens"]
    share = counts["tokens_removed"] / tokens if tokens else 0.0
    click.echo(
        f"neardup substrings: {counts['items']:,} documents, {tokens:,} tokens, "
        f"runs of {summary['params']['min_tokens']}+ tokens"
    )
    click.echo(
        f"  removed {counts['tokens_removed']:,} tokens ({share:.1%}) from "
        f"{counts['documents_changed']:,} documents; {counts['suffix_arrays']} suffix "
        f"array(s) over {counts['shards']} shard(s)"
    )
    click.echo(f"  outputs in {output}/: " + ", ".join(summary["outputs"].values()))
