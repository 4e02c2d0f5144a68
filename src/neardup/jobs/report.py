"""The report of a finished run: one self-contained HTML page (``neardup report OUTDIR``).

It sits after the run: it reads the run's directory (:mod:`neardup.report.data`), re-reads the
texts of a sample of pairs from the run's inputs, draws the charts with matplotlib
(:mod:`neardup.report.charts`, the ``report`` extra) and writes the page
(:mod:`neardup.report.page`) atomically. Runs that cut parts out of documents (``dedup
--unit``, ``substrings``, ``contamination``) get a page of their own
(:mod:`neardup.report.removals`). Like every command's run, the report's own is recorded: a
:class:`~neardup.record.RunRecord` in the page
(:func:`~neardup.report.page.with_run_record`). What each section shows: ``docs/report.md``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from neardup._faults import crash_point
from neardup._progress import Progress
from neardup.io.atomic import replaced_file
from neardup.io.output import check_output, output_kind
from neardup.record import RunRecord, stage_timings
from neardup.report.data import (
    Run,
    Texts,
    check_sample_sizes,
    load_run,
    read_summary,
    read_texts,
)
from neardup.report.page import render_page, with_run_record
from neardup.report.removals import is_removal_run, render_removals

__all__ = ["write_report"]

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
    show_progress: bool = False,
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
    show_progress
        Report progress on stderr (a bar on a terminal, log lines otherwise): the bytes of
        the run's files loaded (``load``) and of its inputs read again (``read``).

    Notes
    -----
    The page holds the report's own run record (``command: "report"``, the run directory as
    its input, the options as ``params``, what was read as ``counts`` and ``timings_s``),
    valid under ``neardup/summary.schema.json``; the timings are the only bytes in which two
    reports of the same run and seed, written to the same file name, differ.

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
    started = time.perf_counter()
    check_sample_sizes(num_clusters, pairs_per_band)
    directory = Path(run_dir)
    seconds: dict[str, float] = {}
    counts: dict[str, int] = {"items": 0}
    with _stage(seconds, "load"):
        summary = read_summary(directory / "summary.json")
    if is_removal_run(summary):
        path = _checked(directory, summary, output, overwrite)
        with _stage(seconds, "render"), Progress("load", 0, enabled=show_progress) as bar:
            page, counts["run_records"] = render_removals(directory, summary, bar)
    else:
        with _stage(seconds, "load"), Progress("load", 0, enabled=show_progress) as bar:
            run = load_run(
                directory,
                num_clusters=num_clusters,
                pairs_per_band=pairs_per_band,
                seed=seed,
                progress=bar,
            )
        path = _checked(directory, summary, output, overwrite)
        crash_point("run-loaded")
        texts = None
        if with_texts:
            with _stage(seconds, "texts"), Progress("read", 0, enabled=show_progress) as bar:
                texts = _sample_texts(run, bar)
        with _stage(seconds, "render"):
            page = render_page(run, texts)
        counts.update(_dedup_counts(run, texts))
    record = RunRecord(
        command="report",
        inputs=(str(run_dir),),
        outputs={"report": path.name},
        params={
            "num_clusters": num_clusters,
            "pairs_per_band": pairs_per_band,
            "seed": seed,
            "with_texts": with_texts,
        },
        counts=counts,
        timings_s=stage_timings(seconds, time.perf_counter() - started),
    )
    page = with_run_record(page, record.to_dict())
    with replaced_file(path) as f:
        f.write(page.encode("utf-8", "backslashreplace"))
    return path


@contextmanager
def _stage(seconds: dict[str, float], name: str) -> Iterator[None]:
    """Add the block's wall seconds to ``seconds[name]``."""
    start = time.perf_counter()
    try:
        yield
    finally:
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start


def _checked(
    directory: Path, summary: dict[str, Any], output: Path | str | None, overwrite: bool
) -> Path:
    """The report's path, refused before any work if it would replace what it must not."""
    path = Path(output) if output is not None else directory / "report.html"
    run_files = [p for p in directory.iterdir() if output_kind(p) != "report"]
    inputs: list[Path | str] = [*run_files, *map(str, summary.get("inputs") or ())]
    check_output(path, "report", inputs=inputs, overwrite=overwrite)
    return path


def _sample_texts(run: Run, progress: Progress) -> Texts:
    """The texts of the sampled pairs and the first short documents, read from the inputs."""
    wanted = sorted({doc for band in run.bands or () for p in band.sample for doc in (p.a, p.b)})
    return read_texts(run, wanted, NUM_SHORT_IDS, progress)


def _dedup_counts(run: Run, texts: Texts | None) -> dict[str, int]:
    """What the report of a dedup run read and showed, as its run record counts it.

    ``items``: the documents read again from the run's inputs (none without texts);
    ``run_records``: the lines of ``clusters.jsonl`` and ``pairs.jsonl``.
    """
    return {
        "items": 0 if texts is None else texts.num_docs,
        "run_records": run.num_records,
        "clusters_shown": len(run.biggest),
        "pairs_shown": sum(len(band.sample) for band in run.bands or ()),
        "texts_found": 0 if texts is None else len(texts.by_id),
    }
