"""``neardup index``: create, fill, query and maintain a persistent near-duplicate index."""

from __future__ import annotations

import itertools
import json
import signal
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from neardup.cli.options import (
    READ_OPTIONS,
    apply_file_flags,
    apply_flags,
    given_options,
    input_options,
    narrow_sketch_options,
    option_name,
    quiet_option,
    refuse_inapplicable,
    sketch_options,
)
from neardup.errors import (
    IdExistsError,
    InputError,
    NeardupError,
    NeardupWarning,
    ParameterError,
    StoreError,
)
from neardup.kinds import INDEX_KINDS
from neardup.params import DedupConfig

if TYPE_CHECKING:
    from neardup.index import LSHIndex, VectorIndex
    from neardup.index.lsh_index import QueryMeasure
    from neardup.io.source import Source

__all__ = ["index_group"]


@click.group(
    "index",
    epilog="""\b
Example:
  neardup index create seen.ndx --threshold 0.8
  neardup index create pages.ndx --method simhash --hamming 3 --search psm
  neardup index add seen.ndx crawl-2026-11.jsonl.gz
  neardup index query seen.ndx --text "some page text" -k 3
  neardup index info seen.ndx""",
)
def index_group() -> None:
    """A persistent near-duplicate index in one SQLite file (see docs/service.md)."""


def _any_index(path: Path) -> LSHIndex | VectorIndex:
    """The existing index at ``path``, of texts or of vectors (``index.files.open_index``)."""
    from neardup.index import open_index

    return open_index(path)


def _index(path: Path, *, create: bool = False, **specs: Any) -> LSHIndex:
    """The index at ``path`` (the index machinery is imported only when a command needs it).

    An existing index unless ``create``; a path that is not one is refused unchanged.
    """
    from neardup.index import LSHIndex

    return LSHIndex.open(path, create=create, **specs)


def _sources(inputs: tuple[Path, ...], flags: dict[str, Any]) -> list[Source]:
    from neardup.io.readers import open_sources
    from neardup.params import OutputSpec, ReadSpec

    read, _ = apply_file_flags(ReadSpec(), OutputSpec(), flags)
    return open_sources(inputs, read)


def _batches(sources: list[Source], size: int) -> Iterator[list[tuple[str, str]]]:
    records = itertools.chain.from_iterable(s.records() for s in sources)
    while batch := list(itertools.islice(records, size)):
        yield batch


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _positive_int(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    """A click callback: refuse an integer below 1 (one line, exit 2) before any work."""
    if value is not None and value < 1:
        raise ParameterError(f"{max(param.opts, key=len)} must be an integer >= 1; got {value}.")
    return value


def _similarity(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A click callback: refuse a similarity outside [0, 1] (NaN included) before any work."""
    if value is not None and not 0.0 <= value <= 1.0:
        raise ParameterError(f"{max(param.opts, key=len)} must be a number in [0, 1]; got {value}.")
    return value


@contextmanager
def _interrupt_deferred() -> Iterator[None]:
    """Hold Ctrl-C back until the block ends, so a batch is committed and counted, or neither.

    Outside the main thread (where signal handlers cannot be set) the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt


@index_group.command(
    "create",
    epilog="\b\nExamples:\n  neardup index create seen.ndx --shingle word:5 --threshold 0.8"
    "\n  neardup index create seen.ndx --containment-sample 1",
)
@click.argument("path", type=click.Path(path_type=Path))
@sketch_options
@click.option(
    "--containment-sample",
    type=int,
    callback=_positive_int,
    metavar="M",
    help="Also keep each document's shingles whose fingerprint is 0 mod M, so that `index "
    "query --measure containment` finds the documents containing a text: exactly with 1 "
    "(every shingle kept: the index grows with the text), estimated from 1/M of them "
    "otherwise [default: none kept, no containment queries].",
)
def create_command(path: Path, containment_sample: int | None, **flags: Any) -> None:
    """Create an empty index at PATH with the given parameters (fixed for its life)."""
    config = apply_flags(DedupConfig(), flags)
    with _index(
        path,
        create=True,
        sketch=config.sketch,
        lsh=config.lsh,
        containment_sample=containment_sample,
    ) as index:
        click.echo(json.dumps(index.info(), indent=2))


narrow_sketch_options(create_command, INDEX_KINDS, ("bands", "hamming"))
# An index weighs a SimHash's shingles by their counts (tf): TF-IDF needs a corpus's document
# frequencies, which an index that grows by additions does not have.
create_command.params = [p for p in create_command.params if p.name != "weighting"]


@index_group.command(
    "add", epilog="\b\nExample:\n  neardup index add seen.ndx crawl.jsonl.gz --id-field url"
)
@click.argument("path", type=click.Path(path_type=Path))
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@input_options
@click.option("--upsert", is_flag=True, help="Replace documents whose id is already indexed.")
@click.option(
    "--skip-existing",
    is_flag=True,
    help="Keep documents whose id is already indexed and skip the new ones (counted); "
    "resumes an interrupted run.",
)
@click.option(
    "--batch-size",
    default=5000,
    show_default=True,
    callback=_positive_int,
    help="Documents per transaction (each batch is committed whole, or not at all).",
)
@quiet_option
def add_command(
    path: Path,
    inputs: tuple[Path, ...],
    upsert: bool,
    skip_existing: bool,
    batch_size: int,
    quiet: bool,
    **flags: Any,
) -> None:
    """Add the documents of INPUTS (read as `neardup dedup` reads them) to the index at PATH.

    An id already in the index stops the run (exit 1) unless --upsert replaces it or
    --skip-existing keeps it. Each batch is one transaction: a run that fails or is interrupted
    keeps the batches before, says how many documents they hold and how to resume.
    """
    from neardup._progress import Progress

    refuse_inapplicable(inputs)
    if upsert and skip_existing:
        raise ParameterError("give --upsert (replace) or --skip-existing (keep), not both.")
    added = skipped = 0
    with _index(path) as index:
        sources = _sources(inputs, flags)
        size = sum(source.size for source in sources)
        try:
            with Progress("add", size, enabled=not quiet) as bar:
                for batch in _batches(sources, batch_size):
                    ids, texts = [i for i, _ in batch], [t for _, t in batch]
                    with _interrupt_deferred():
                        if upsert:
                            index.upsert(ids, texts)
                            present = 0
                        elif skip_existing:
                            present = len(index.add_new(ids, texts))
                        else:
                            index.add(ids, texts)
                            present = 0
                        added += len(batch) - present
                        skipped += present
                    bar(sum(source.consumed for source in sources))
        except KeyboardInterrupt:
            click.echo(
                f"interrupted: {_resume(added, skipped, batch_size, upsert, None)}", err=True
            )
            raise SystemExit(130) from None
        except NeardupError as exc:
            exc.args = (f"{exc}; {_resume(added, skipped, batch_size, upsert, exc)}",)
            raise
        if quiet:
            return
        skipped_text = f", skipped {skipped:,} already in the index" if skip_existing else ""
        click.echo(
            f"added {_plural(added, 'document')}{skipped_text}; the index holds {len(index):,}"
        )


def _resume(
    added: int, skipped: int, batch_size: int, upsert: bool, error: NeardupError | None
) -> str:
    """What a stopped ``index add`` committed, and how to go on from there."""
    conflict = isinstance(error, IdExistsError)
    if added + skipped == 0:
        done = "nothing of this run was committed"
    else:
        done = (
            f"{_plural(added, 'document')} of this run {'was' if added == 1 else 'were'} "
            f"committed{f' and {skipped:,} skipped' if skipped else ''} "
            f"(in whole batches of {batch_size:,})"
        )
    fix = "fix the input, then " if isinstance(error, InputError) and not conflict else ""
    if upsert:
        how = f"{fix}run the same command again (--upsert rewrites the committed documents)"
    elif conflict:
        how = (
            "run the same command with --skip-existing to keep the indexed documents, or with "
            "--upsert to replace them"
        )
    else:
        how = f"{fix}run the same command with --skip-existing (committed documents are skipped)"
    return f"{done}; {'to resume, ' if added + skipped else ''}{how}"


@index_group.command(
    "query",
    epilog="""\b
Examples:
  neardup index query seen.ndx --text "the text to look up"
  neardup index query seen.ndx new.jsonl -k 5 > matches.jsonl""",
)
@click.argument("path", type=click.Path(path_type=Path))
@click.argument("inputs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--text", "texts", multiple=True, help="A text to look up (repeatable).")
@click.option(
    "-k",
    "--top-k",
    "k",
    type=int,
    callback=_positive_int,
    help="Return the K most similar matches.",
)
@click.option(
    "--threshold",
    type=float,
    callback=_similarity,
    help="Minimum estimated similarity, or containment with --measure containment [default: "
    "the index's]. Below the index's own, its LSH bands miss some pairs: a warning says how "
    "many (containment queries use no bands).",
)
@click.option(
    "--measure",
    type=click.Choice(["jaccard", "cosine", "containment"]),
    default=None,
    help="The index's own [default]: near-copies of the text by Jaccard (cosine for a SimHash "
    "index); containment: the documents containing it, by the share of its shingles they hold "
    "(an index created with --containment-sample).",
)
@input_options
def query_command(
    path: Path,
    inputs: tuple[Path, ...],
    texts: tuple[str, ...],
    k: int | None,
    threshold: float | None,
    measure: QueryMeasure | None,
    **flags: Any,
) -> None:
    """Look up near-copies of --text or of the documents in INPUTS.

    With --measure containment: the indexed documents that contain them. Prints one JSON line
    per query, best match first:
    {"query": ID, "matches": [{"id": ..., "similarity": ...}, ...]}
    A text without a token (empty) matches nothing.
    """
    from neardup.index import threshold_warning
    from neardup.io.results import record_line

    if bool(texts) == bool(inputs):
        raise click.UsageError("give either --text or INPUT files, not both or neither")
    if texts and (reading := sorted(given_options() & set(READ_OPTIONS))):
        option = option_name(reading[0])
        raise click.UsageError(f"{option} applies to INPUT files, not to --text; drop it")
    refuse_inapplicable(inputs)
    with _index(path) as index:
        if (
            measure != "containment"
            and threshold is not None
            and (warning := threshold_warning(index.header, threshold))
        ):
            warnings.warn(warning, NeardupWarning, stacklevel=1)
        batches: Iterator[list[tuple[str, str]]] = (
            iter([[(f"text:{i + 1}", t) for i, t in enumerate(texts)]])
            if texts
            else _batches(_sources(inputs, flags), 1000)
        )
        for batch in batches:
            found = index.query([t for _, t in batch], threshold=threshold, k=k, measure=measure)
            for (doc_id, _), matches in zip(batch, found, strict=True):
                line = {"query": doc_id, "matches": [m.to_dict() for m in matches]}
                click.echo(record_line(line), nl=False)


@index_group.command("delete", epilog="\b\nExample:\n  neardup index delete seen.ndx doc-17 doc-18")
@click.argument("path", type=click.Path(path_type=Path))
@click.argument("ids", nargs=-1, required=True)
def delete_command(path: Path, ids: tuple[str, ...]) -> None:
    """Delete documents by id from the index at PATH (of texts or of vectors)."""
    with _any_index(path) as index:
        deleted = index.delete(list(ids))
    missing = sorted(set(ids) - set(deleted))
    click.echo(
        f"deleted {len(deleted):,}"
        + (f"; not in the index: {', '.join(missing)}" if missing else "")
    )


@index_group.command("info", epilog="\b\nExample:\n  neardup index info seen.ndx")
@click.argument("path", type=click.Path(path_type=Path))
def info_command(path: Path) -> None:
    """Print the index's parameters, size and document count as JSON (texts or vectors)."""
    with _any_index(path) as index:
        click.echo(json.dumps(index.info(), indent=2))


@index_group.command("check", epilog="\b\nExample:\n  neardup index check seen.ndx")
@click.argument("path", type=click.Path(path_type=Path))
def check_command(path: Path) -> None:
    """Verify the index: SQLite integrity, and postings that match the documents exactly.

    Exit 0 and one line "ok: ..." when sound; exit 1 and one line naming the damage otherwise.
    """
    from neardup.index.sqlite import REPAIR_ADVICE

    with _any_index(path) as index:
        problems = index.verify_integrity()
        if problems:
            shown = "; ".join(" ".join(p.split()) for p in problems[:3])
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            raise StoreError(f"{path}: the index is damaged: {shown}{more}: {REPAIR_ADVICE}")
        click.echo(f"ok: {len(index):,} documents, postings consistent")
