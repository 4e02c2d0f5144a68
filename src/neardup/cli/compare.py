"""``neardup compare A B``: two documents, exact similarities and every sketch's estimate."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from neardup.cli.options import apply_flags, html_extract_option, sketch_options
from neardup.errors import InputError, ParameterError
from neardup.params import DedupConfig, HtmlExtract

if TYPE_CHECKING:
    from neardup.explain import Passage

__all__ = ["compare_command"]

CONTEXT = 120
"""Characters of unshared text kept around each shared passage when the texts are printed."""


def _read(path: Path, url: str | None = None, extract: HtmlExtract = "text") -> str:
    """The text of a text file, an HTML page (.html, .htm) or a web archive's page.

    A web archive (.warc, .arc, optionally .gz) gives its first HTML page, or the page whose
    target URI is ``url``.
    """
    from neardup.io.readers import is_web_archive

    if path.is_file() and is_web_archive(path):
        return _archive_page(path, url, extract)
    if url is not None:
        raise ParameterError(f"--url-a/--url-b pick a page of a web archive; {path} is not one")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError("no such file; check the path", path=path) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a text file", path=path) from None
    if path.suffix.lower() in (".html", ".htm", ".xhtml"):
        from neardup.text.html import html_text

        return html_text(data, extract=extract)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 ({exc.reason} at byte {exc.start})", path=path) from None


def _archive_page(path: Path, url: str | None, extract: HtmlExtract) -> str:
    from neardup.io.warc import archive_texts

    for item in archive_texts(path, extract):
        if isinstance(item, InputError):
            raise item
        record, text = item
        if url is None or record.url == url:
            return text
    which = "HTML page" if url is None else f"HTML page with the target URI {url!r}"
    raise InputError(f"the web archive has no {which}", path=path)


@click.command(
    "compare",
    epilog="""\b
Examples:
  neardup compare rfc2616.txt rfc7230.txt
  neardup compare a.txt b.txt --shingle char:9 --json
  neardup compare licence-a.txt licence-b.txt --explain
  neardup compare page.html mirror.html --html-extract main
  neardup compare old.warc.gz new.warc.gz --url-a http://example.org/ --url-b https://example.org/""",
)
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@sketch_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@html_extract_option(
    "What is taken of HTML pages (.html, .htm, web archives): all visible text, the main "
    "content, or seed 000's AltaVista features (words plus HREF and IMG URLs)."
)
@click.option("--url-a", help="The page of A (a web archive) to compare [default: its first].")
@click.option("--url-b", help="The page of B (a web archive) to compare [default: its first].")
@click.option(
    "--explain",
    is_flag=True,
    help="Also show the shared passages (maximal runs of shared shingles) in both texts.",
)
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour the shared passages (auto: when the output is a terminal).",
)
def compare_command(
    a: Path,
    b: Path,
    as_json: bool,
    html_extract: HtmlExtract,
    url_a: str | None,
    url_b: str | None,
    explain: bool,
    color: str,
    **flags: Any,
) -> None:
    """Compare two documents: exact Jaccard, containment both ways, cosine, sketch estimates.

    A and B are text files, HTML pages (.html, .htm) or web archives (.warc, .arc, .gz: the
    first HTML page, or the one --url-a/--url-b names).
    """
    spec = apply_flags(DedupConfig(), flags).sketch
    from neardup.compare import compare
    from neardup.explain import shared_passages

    text_a, text_b = _read(a, url_a, html_extract), _read(b, url_b, html_extract)
    result = compare(text_a, text_b, spec)
    passages = shared_passages(text_a, text_b, spec) if explain else []
    if as_json:
        record = {"a": str(a), "b": str(b), "shingle": str(spec.shingle), **asdict(result)}
        if explain:
            record["passages"] = [
                [p.a_start, p.a_end, p.b_start, p.b_end, p.num_shingles] for p in passages
            ]
        click.echo(json.dumps(record))
        return
    click.echo(f"A: {a} ({result.num_shingles[0]:,} distinct {spec.shingle} shingles)")
    click.echo(f"B: {b} ({result.num_shingles[1]:,} distinct {spec.shingle} shingles)")
    rows = [
        ("exact Jaccard", result.jaccard),
        ("containment of A in B", result.containment_a_in_b),
        ("containment of B in A", result.containment_b_in_a),
        ("cosine of shingle counts", result.cosine),
        ("weighted Jaccard of counts", result.weighted_jaccard),
    ] + [(f"estimate: {name}", value) for name, value in result.estimates.items()]
    for name, value in rows:
        click.echo(f"  {name:<32} {value:.4f}")
    click.echo(
        f"  {'supershingles shared (' + spec.preset + ')':<32} "
        f"{result.shared_features} of {result.num_features}"
    )
    bits = f"SimHash Hamming distance ({spec.simhash_bits} bits)"
    click.echo(f"  {bits:<32} {result.simhash_distance}")
    if explain:
        _print_passages(text_a, text_b, passages, color)


def _print_passages(text_a: str, text_b: str, passages: list[Passage], color: str) -> None:
    """The shared passages' offsets, then both texts with them marked (long gaps elided)."""
    from neardup.explain import highlight

    colored = color == "always" or (color == "auto" and sys.stdout.isatty())
    click.echo(f"\nshared passages: {len(passages)}")
    for p in passages:
        click.echo(
            f"  A[{p.a_start}:{p.a_end}] = B[{p.b_start}:{p.b_end}] ({p.num_shingles} shingles)"
        )
    for name, text, spans in (
        ("A", text_a, [(p.a_start, p.a_end) for p in passages]),
        ("B", text_b, [(p.b_start, p.b_end) for p in passages]),
    ):
        click.echo(f"\n--- {name} ---")
        click.echo(highlight(text, spans, color=colored, context=CONTEXT), color=colored)
