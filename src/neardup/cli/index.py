"""``neardup index``: create, fill, query and maintain a persistent near-duplicate index."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from neardup.cli.options import apply_flags, existing_index, input_options, sketch_options
from neardup.errors import InputError
from neardup.params import DedupConfig

if TYPE_CHECKING:
    from neardup.index import LSHIndex
    from neardup.io.source import Source

__all__ = ["index_group"]


@click.group(
    "index",
    epilog="""\b
Example:
  neardup index create seen.ndx --threshold 0.8
  neardup index add seen.ndx crawl-2026-11.jsonl.gz
  neardup index query seen.ndx --text "some page text" --top-k 3
  neardup index info seen.ndx""",
)
def index_group() -> None:
    """A persistent near-duplicate index in one SQLite file (see docs/service.md)."""


def _index(path: Path, **specs: Any) -> LSHIndex:
    """The index at ``path`` (the index machinery is imported only when a command needs it)."""
    from neardup.index import LSHIndex

    return LSHIndex.open(path, **specs)


def _sources(inputs: tuple[Path, ...], flags: dict[str, Any]) -> list[Source]:
    from neardup.io.readers import ReadOptions, open_sources

    config = apply_flags(DedupConfig(), flags)
    options = ReadOptions(config.text_field, config.id_field, config.skip_bad_records)
    return open_sources(inputs, options, config.input_format)


def _batches(sources: list[Source], size: int) -> Iterator[list[tuple[str, str]]]:
    records = itertools.chain.from_iterable(s.records() for s in sources)
    while batch := list(itertools.islice(records, size)):
        yield batch


@index_group.command(
    "create",
    epilog="\b\nExample:\n  neardup index create seen.ndx --shingle word:5 --threshold 0.8",
)
@click.argument("path", type=click.Path(path_type=Path))
@sketch_options
def create_command(path: Path, **flags: Any) -> None:
    """Create an empty index at PATH with the given parameters (fixed for its life)."""
    if path.exists():
        raise InputError("already exists; choose another path", path=path)
    config = apply_flags(DedupConfig(), flags)
    with _index(path, sketch=config.sketch, lsh=config.lsh) as index:
        click.echo(json.dumps(index.info(), indent=2))


@index_group.command(
    "add", epilog="\b\nExample:\n  neardup index add seen.ndx crawl.jsonl.gz --id-field url"
)
@click.argument("path", type=click.Path(path_type=Path))
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@input_options
@click.option("--upsert", is_flag=True, help="Replace documents whose id is already indexed.")
@click.option("--batch-size", default=5000, show_default=True, help="Documents per transaction.")
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
def add_command(
    path: Path,
    inputs: tuple[Path, ...],
    upsert: bool,
    batch_size: int,
    quiet: bool,
    **flags: Any,
) -> None:
    """Add the documents of INPUTS (read as `neardup dedup` reads them) to the index at PATH."""
    from neardup._progress import Progress

    total = 0
    with _index(existing_index(path)) as index:
        sources = _sources(inputs, flags)
        size = sum(source.size for source in sources)
        with Progress("add", size, enabled=not quiet) as bar:
            for batch in _batches(sources, batch_size):
                ids, texts = [i for i, _ in batch], [t for _, t in batch]
                (index.upsert if upsert else index.add)(ids, texts)
                total += len(batch)
                bar(sum(source.consumed for source in sources))
        click.echo(f"added {total:,} documents; the index holds {len(index):,}")


@index_group.command(
    "query",
    epilog="""\b
Examples:
  neardup index query seen.ndx --text "the text to look up"
  neardup index query seen.ndx new.jsonl --top-k 5 > matches.jsonl""",
)
@click.argument("path", type=click.Path(path_type=Path))
@click.argument("inputs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--text", "texts", multiple=True, help="A text to look up (repeatable).")
@click.option("--top-k", type=int, help="Return the K most similar candidates.")
@click.option(
    "--threshold", type=float, help="Minimum estimated similarity [default: the index's]."
)
@input_options
def query_command(
    path: Path,
    inputs: tuple[Path, ...],
    texts: tuple[str, ...],
    top_k: int | None,
    threshold: float | None,
    **flags: Any,
) -> None:
    """Look up near-copies of --text or of the documents in INPUTS.

    Prints one JSON line per query, best match first:
    {"query": ID, "matches": [{"id": ..., "similarity": ...}, ...]}
    """
    if bool(texts) == bool(inputs):
        raise click.UsageError("give either --text or INPUT files, not both or neither")
    with _index(existing_index(path)) as index:
        batches: Iterator[list[tuple[str, str]]] = (
            iter([[(f"text:{i + 1}", t) for i, t in enumerate(texts)]])
            if texts
            else _batches(_sources(inputs, flags), 1000)
        )
        for batch in batches:
            found = index.query([t for _, t in batch], threshold=threshold, top_k=top_k)
            for (doc_id, _), matches in zip(batch, found, strict=True):
                line = {
                    "query": doc_id,
                    "matches": [{"id": m.id, "similarity": m.similarity} for m in matches],
                }
                click.echo(json.dumps(line, ensure_ascii=False))


@index_group.command("delete", epilog="\b\nExample:\n  neardup index delete seen.ndx doc-17 doc-18")
@click.argument("path", type=click.Path(path_type=Path))
@click.argument("ids", nargs=-1, required=True)
def delete_command(path: Path, ids: tuple[str, ...]) -> None:
    """Delete documents by id from the index at PATH."""
    with _index(existing_index(path)) as index:
        deleted = index.delete(list(ids))
    missing = sorted(set(ids) - set(deleted))
    click.echo(
        f"deleted {len(deleted):,}"
        + (f"; not in the index: {', '.join(missing)}" if missing else "")
    )


@index_group.command("info", epilog="\b\nExample:\n  neardup index info seen.ndx")
@click.argument("path", type=click.Path(path_type=Path))
def info_command(path: Path) -> None:
    """Print the index's parameters, size and document count as JSON."""
    with _index(existing_index(path)) as index:
        click.echo(json.dumps(index.info(), indent=2))


@index_group.command("check", epilog="\b\nExample:\n  neardup index check seen.ndx")
@click.argument("path", type=click.Path(path_type=Path))
def check_command(path: Path) -> None:
    """Verify the index: SQLite integrity, and postings that match the documents exactly."""
    with _index(existing_index(path)) as index:
        problems = index.verify_integrity()
        if problems:
            for problem in problems:
                click.echo(f"problem: {problem}", err=True)
            raise SystemExit(1)
        click.echo(f"ok: {len(index):,} documents, postings consistent")
