"""The report of a finished run: one self-contained HTML page (``neardup report OUTDIR``).

It sits after the run: it reads the run's directory (:mod:`neardup.report.data`), re-reads the
texts of a sample of pairs from the run's inputs, draws the charts with matplotlib
(:mod:`neardup.report.charts`, the ``report`` extra) and writes the page
(:mod:`neardup.report.page`) atomically. Runs that cut parts out of documents (``dedup
--unit``, ``substrings``, ``contamination``) get a page of their own
(:mod:`neardup.report.removals`). What each section shows: ``docs/report.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neardup._faults import crash_point
from neardup.io.atomic import replaced_file
from neardup.io.output import check_output, output_kind
from neardup.report.data import (
    Run,
    Texts,
    check_sample_sizes,
    load_run,
    read_summary,
    read_texts,
)
from neardup.report.page import render_page
from neardup.report.removals import is_removal_run, render_removals

__all__ = ["Run", "Texts", "load_run", "read_texts", "write_report"]

NUM_SHORT_IDS = 20
"""Short documents named in the report (the first in input order)."""


def write_report(
    run_dir: Path | str,
    output: Path | str | None = None,
    *,
    num_clusters: int = 10,
    pairs_per_band: int = 3,
    seed: int = 42,
    with_texts: bool = True,
    overwrite: bool = False,
) -> Path:
    """Write the HTML report of the run in ``run_dir``; return its path.

    Parameters
    ----------
    run_dir
        The output directory of ``neardup dedup`` (``summary.json``, ``clusters.jsonl``, ...),
        or of ``neardup substrings`` or ``neardup contamination`` (their page shows what was
        found most and the documents that lost most; the options below do not apply).
    output
        The HTML file to write (default ``run_dir/report.html``); replaced atomically.
    num_clusters
        The biggest clusters listed with their members.
    pairs_per_band
        Pairs shown per similarity band, texts side by side.
    seed
        The seed of the pairs' sample: the same run and seed give the same bytes.
    with_texts
        Re-read the run's inputs for the pairs' texts and the short documents' ids (one
        streaming pass); ``False`` shows ids only. Inputs that are gone are said so on the
        page, not raised.
    overwrite
        Replace an existing ``output``, which must be an earlier report.

    Raises
    ------
    InputError
        ``run_dir`` is not a dedup run's directory (no readable ``summary.json``), or
        ``output`` is a file of the run or one of its inputs, or exists and is no report to
        replace (checked before any work; see :func:`~neardup.io.output.check_output`).
    ParameterError
        A negative ``num_clusters`` or ``pairs_per_band``.
    MissingExtraError
        matplotlib is not installed (``pip install 'neardup[report]'``).
    """
    check_sample_sizes(num_clusters, pairs_per_band)
    directory = Path(run_dir)
    summary = read_summary(directory / "summary.json")
    if is_removal_run(summary):
        path = _checked(directory, summary, output, overwrite)
        page = render_removals(directory, summary)
    else:
        run = load_run(
            directory, num_clusters=num_clusters, pairs_per_band=pairs_per_band, seed=seed
        )
        path = _checked(directory, summary, output, overwrite)
        crash_point("run-loaded")
        page = _dedup_page(run, with_texts)
    with replaced_file(path) as f:
        f.write(page.encode("utf-8", "backslashreplace"))
    return path


def _checked(
    directory: Path, summary: dict[str, Any], output: Path | str | None, overwrite: bool
) -> Path:
    """The report's path, refused before any work if it would replace what it must not."""
    path = Path(output) if output is not None else directory / "report.html"
    run_files = [p for p in directory.iterdir() if output_kind(p) != "report"]
    inputs: list[Path | str] = [*run_files, *map(str, summary.get("inputs") or ())]
    check_output(path, "report", inputs=inputs, overwrite=overwrite)
    return path


def _dedup_page(run: Run, with_texts: bool) -> str:
    """The page of a whole-document dedup run, its sampled pairs' texts read when asked."""
    texts = None
    if with_texts:
        wanted = sorted(
            {doc for band in run.bands or () for p in band.sample for doc in (p.a, p.b)}
        )
        texts = read_texts(run, wanted, NUM_SHORT_IDS)
    return render_page(run, texts)
