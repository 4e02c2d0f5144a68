"""``neardup report OUTDIR``: the HTML report of a finished dedup run."""

from __future__ import annotations

from pathlib import Path

import click

from neardup.cli.options import given_options, option_name, quiet_option

__all__ = ["report_command"]


@click.command(
    "report",
    epilog="""\b
Examples:
  neardup dedup corpus.jsonl.gz -o out/ && neardup report out/
  neardup report out/ --output out.html --clusters 20 --pairs-per-band 5
  neardup report out/ --no-texts
  neardup substrings corpus.jsonl -o clean/ && neardup report clean/""",
)
@click.argument("outdir", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The HTML file to write  [default: OUTDIR/report.html]; never a file of the run or "
    "one of its inputs.",
)
@click.option("--overwrite", is_flag=True, help="Replace the HTML file if it is an earlier report.")
@quiet_option
@click.option(
    "--clusters",
    "num_clusters",
    type=int,
    default=10,
    show_default=True,
    help="The biggest clusters listed with their members.",
)
@click.option(
    "--pairs-per-band",
    type=int,
    default=3,
    show_default=True,
    help="Pairs shown per similarity band, texts side by side with shared passages marked.",
)
@click.option(
    "--seed", type=int, default=42, show_default=True, help="Seed of the sample of pairs."
)
@click.option(
    "--no-texts",
    is_flag=True,
    help="Do not re-read the run's inputs: pairs and short documents by id only.",
)
def report_command(
    outdir: Path,
    output: Path | None,
    overwrite: bool,
    quiet: bool,
    num_clusters: int,
    pairs_per_band: int,
    seed: int,
    no_texts: bool,
) -> None:
    """Write one self-contained HTML page about the dedup run in OUTDIR.

    Parameters and counts, stage timings, the histogram of pair similarities, the banding
    S-curve, cluster sizes, the biggest clusters, sample pairs with their shared passages
    highlighted, giant buckets and short documents. The texts are read again from the run's
    inputs (as the run read them); if they are gone, the page says so. Prints the path written,
    and progress on stderr while it loads the run's files and reads its inputs.

    The runs of dedup --unit, substrings and contamination get a page of their own: counts,
    timings, the most repeated units or contaminated items, the documents that lost most.
    """
    from neardup.jobs.report import write_report

    _refuse_dedup_page_options(outdir, num_clusters, pairs_per_band)
    path = write_report(
        outdir,
        output,
        num_clusters=num_clusters,
        pairs_per_band=pairs_per_band,
        seed=seed,
        with_texts=not no_texts,
        overwrite=overwrite,
        show_progress=not quiet,
    )
    if not quiet:
        click.echo(str(path))


def _refuse_dedup_page_options(outdir: Path, num_clusters: int, pairs_per_band: int) -> None:
    """Refuse the options of a dedup run's page for the run of another page.

    The runs of ``dedup --unit``, ``substrings`` and ``contamination`` list no clusters or
    pairs, and their page is made of the output directory alone (no input read again), so
    ``--clusters``, ``--pairs-per-band``, ``--seed`` and ``--no-texts`` do nothing there. A
    value no page takes (a negative count) is refused first, as for any run.
    """
    given = sorted(given_options() & {"num_clusters", "pairs_per_band", "seed", "no_texts"})
    if not given:
        return
    from neardup.report.data import check_sample_sizes, read_summary
    from neardup.report.removals import is_removal_run

    check_sample_sizes(num_clusters, pairs_per_band)
    summary = read_summary(outdir / "summary.json")
    if is_removal_run(summary):
        option = option_name(given[0])
        what = "dedup --unit" if summary.get("command") == "dedup" else summary.get("command")
        raise click.UsageError(
            f"{option} applies to the page of a dedup run's clusters and pairs; {outdir} holds "
            f"a {what} run, whose page has neither (and reads no input again): drop {option}"
        )
