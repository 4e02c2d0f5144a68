"""``neardup mirrors``: mirror hosts, URL aliases and the contracted link graph of a crawl."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from neardup.cli.options import (
    given_options,
    html_extract_option,
    input_kinds,
    option_name,
    output_directory_options,
    quiet_option,
)
from neardup.errors import ParameterError

__all__ = ["mirrors_command"]


@click.command(
    "mirrors",
    epilog="""\b
Examples:
  neardup mirrors crawl-*.warc.gz -o mirrors/
  neardup mirrors pages.jsonl --url-field url --html-field html -o mirrors/
  neardup mirrors crawl.warc.gz --html-extract main --min-coverage 0.9 -o mirrors/""",
)
@click.argument(
    "inputs", metavar="INPUT...", nargs=-1, required=True, type=click.Path(path_type=Path)
)
@output_directory_options("hosts.jsonl, mirrors.jsonl, pages.jsonl, graph/, summary.json")
@click.option("--url-field", help="Tables (JSONL, Parquet, CSV): the field holding each URL.")
@click.option("--html-field", help="Tables: the field holding each page's HTML.")
@click.option("--text-field", help="Tables: the field holding each page's text (no links).")
@html_extract_option(
    "What is compared of each page: all its text, its main content, or seed 000's "
    "features (words plus HREF and IMG URLs)."
)
@click.option(
    "--threshold",
    type=float,
    default=0.8,
    show_default=True,
    help="Word 5-shingle Jaccard (each host's template left out) at which two pages are near "
    "duplicates (pages.jsonl).",
)
@click.option(
    "--copy-threshold",
    type=float,
    default=0.5,
    show_default=True,
    help="Jaccard (templates left out) at which a page has a copy on another host (the mirror "
    "check).",
)
@click.option(
    "--min-coverage",
    type=float,
    default=0.8,
    show_default=True,
    help="Share of a host's pages with a copy on the other host that makes it a mirror.",
)
@click.option(
    "--skip-bad-records", is_flag=True, help="Skip malformed records (counted) instead of stopping."
)
@click.option("--seed", type=int, default=42, show_default=True, help="Seed of the hashing.")
@quiet_option
def mirrors_command(
    inputs: tuple[Path, ...],
    output: Path,
    overwrite: bool,
    url_field: str | None,
    html_field: str | None,
    text_field: str | None,
    html_extract: Any,
    threshold: float,
    copy_threshold: float,
    min_coverage: float,
    skip_bad_records: bool,
    seed: int,
    quiet: bool,
) -> None:
    """Find mirror hosts in a crawl (WARC/ARC files, or tables of URL and HTML).

    Hosts are compared by URL shingles and confirmed by their pages' content: full, partial
    and stale mirrors are reported, hosts that only share a site template are not. Every page
    is linked to its representative with a reason (alias, mirror, exact, near), and the link
    graph is contracted by the mirror pages (seed 002).
    """
    from neardup.jobs.mirrors import mirrors_files
    from neardup.params import MirrorSpec

    if not 0 < threshold <= 1:
        raise ParameterError(f"--threshold must be in (0, 1]; got {threshold}.")
    _refuse_inapplicable(inputs, text_field)
    spec = MirrorSpec(copy_threshold=copy_threshold, min_coverage=min_coverage, seed=seed)
    summary = mirrors_files(
        inputs,
        output,
        spec=spec,
        threshold=threshold,
        url_field=url_field,
        html_field=html_field,
        text_field=text_field,
        extract=html_extract,
        skip_bad_records=skip_bad_records,
        overwrite=overwrite,
        show_progress=not quiet,
    )
    if quiet:
        return
    counts = summary["counts"]
    kinds = ", ".join(f"{n} {kind}" for kind, n in counts["mirror_kinds"].items())
    reasons = ", ".join(f"{n} {reason}" for reason, n in counts["pages_by_reason"].items())
    graph = counts["graph"]
    click.echo(f"neardup mirrors: {counts['items']:,} pages on {counts['hosts']:,} hosts")
    click.echo(f"  mirror host pairs   : {counts['mirror_pairs']:,} ({kinds})")
    click.echo(f"  pages represented   : {reasons}")
    if summary["alias_parameters"]:
        click.echo(f"  alias parameters    : {', '.join(summary['alias_parameters'])}")
    if summary["path_crumbs"]:
        click.echo(f"  path crumbs         : {', '.join(summary['path_crumbs'])}")
    click.echo(
        f"  link graph          : {graph['nodes_before']:,} -> {graph['nodes']:,} nodes, "
        f"{graph['edges_before']:,} -> {graph['edges']:,} links in {graph['rounds']} rounds"
    )
    click.echo(f"  outputs in {output}/")


def _refuse_inapplicable(inputs: tuple[Path, ...], text_field: str | None) -> None:
    """Refuse the table options for web archives, and --html-extract for text without HTML."""
    kinds = input_kinds(inputs)
    given = given_options()
    table_options = sorted(given & {"url_field", "html_field", "text_field"})
    if kinds == {"warc"} and table_options:
        raise click.UsageError(
            f"{option_name(table_options[0])} applies to tables (JSONL, Parquet, CSV), not to "
            "web archives; drop it"
        )
    if "html_extract" in given and text_field is not None and "warc" not in kinds:
        raise click.UsageError(
            "--html-extract applies to HTML (web archives, or --html-field), not to the texts "
            "of --text-field; drop it"
        )
