"""``neardup compare A B``: two documents, exact similarities and the sketches' estimates."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from neardup.cli.options import apply_flags, given_options, html_extract_option, sketch_options
from neardup.errors import InputError, ParameterError
from neardup.kinds import ESTIMATED_KINDS, SKETCH_KINDS, estimated_kinds
from neardup.params import DedupConfig, HtmlExtract

if TYPE_CHECKING:
    from neardup.explain import Passage

__all__ = ["compare_command"]

CONTEXT = 120
"""Characters of unshared text kept around each shared passage when the texts are printed."""

NOT_FOR_COMPARE = frozenset(
    {
        "method",
        "sketch_kind",
        "bbits",
        "weighting",
        "idf_low",
        "idf_high",
        "family",
        "hamming",
        "hamming_blocks",
        "search",
        "psm_budget",
        "threshold",
        "bands",
        "rows",
        "max_bucket_size",
    }
)
"""The shared sketch options compare does not list: it estimates with the kinds --sketches
names (the b-bit sketch at every width, SimHash weighted by term frequency: two documents are no
corpus to learn IDF from; the canonical form gives no estimate), and searches for no candidates
(no family, threshold, bands, rows or buckets)."""

KIND_OPTIONS = {"preset": "supershingle", "simhash_bits": "simhash", "projection": "simhash"}
"""Options of one sketch kind that compare applies to that kind's estimate, and the kind."""

WITHOUT_SLOTS = frozenset(
    name for name, kind in SKETCH_KINDS.items() if "simhash_bits" in kind.options
)
"""Sketches compare estimates with that have no num_perm slots (a SimHash has bits)."""

HTML_SUFFIXES = (".html", ".htm", ".xhtml")


def _read(
    path: Path, url: str | None = None, extract: HtmlExtract = "text", option: str = "--url-a"
) -> str:
    """The text of a text file, an HTML page (.html, .htm) or a web archive's page.

    A web archive (.warc, .arc, optionally .gz) gives its first HTML page, or the page whose
    target URI is ``url`` (given by ``option``).
    """
    if path.is_file() and _is_archive(path):
        return _archive_page(path, url, extract)
    if url is not None:
        raise click.UsageError(f"{option} picks a page of a web archive; {path} is not one")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError("no such file; check the path", path=path) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a text file", path=path) from None
    if path.suffix.lower() in HTML_SUFFIXES:
        from neardup.text.html import html_text

        return html_text(data, extract=extract)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 ({exc.reason} at byte {exc.start})", path=path) from None


def _is_archive(path: Path) -> bool:
    from neardup.io.readers import is_web_archive

    return is_web_archive(path)


def _is_html(path: Path) -> bool:
    return path.suffix.lower() in HTML_SUFFIXES or _is_archive(path)


def _sketches(value: str) -> set[str]:
    """The kinds ``--sketches`` names (``all``: every one)."""
    names = {name.strip() for name in value.split(",") if name.strip()}
    try:
        if not names:
            raise ParameterError(
                f"nothing given; name sketches of {', '.join(ESTIMATED_KINDS)}, separated by "
                "commas, or all"
            )
        return set(estimated_kinds(names))
    except ParameterError as error:
        raise click.BadParameter(str(error), param_hint="'--sketches'") from None


def _refuse_idle_options(
    a: Path, b: Path, as_json: bool, explain: bool, sketches: set[str]
) -> None:
    """Refuse, naming it, an option given where it does nothing."""
    given = given_options()
    for name, kind in KIND_OPTIONS.items():
        if name in given and kind not in sketches:
            option = "--" + name.replace("_", "-")
            raise click.UsageError(
                f"{option} sets the {kind} sketch, which --sketches does not name: add "
                f"--sketches {','.join(sorted(sketches | {kind}))} (or all), or drop {option}"
            )
    if "num_perm" in given and sketches <= WITHOUT_SLOTS:
        raise click.UsageError(
            f"--num-perm sets the slots of the MinHash-family sketches; --sketches "
            f"{','.join(sorted(sketches))} has none (SimHash's bits are --simhash-bits): add one "
            "(e.g. --sketches oph,simhash), or drop --num-perm"
        )
    if "color" in given and (as_json or not explain):
        why = "not JSON: drop it" if as_json else "add --explain or drop it"
        raise click.UsageError(f"--color colours the passages --explain prints, {why}")
    if "html_extract" in given and not (_is_html(a) or _is_html(b)):
        raise click.UsageError(
            "--html-extract applies to HTML pages (.html, .htm, .xhtml) and web archives; "
            "neither A nor B is one: drop it"
        )


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
  neardup compare rfc2616.txt rfc7230.txt --sketches all
  neardup compare a.txt b.txt --shingle char:9 --json
  neardup compare licence-a.txt licence-b.txt --explain
  neardup compare page.html mirror.html --html-extract main
  neardup compare old.warc.gz new.warc.gz --url-a http://example.org/ --url-b https://example.org/""",
)
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@sketch_options
@click.option(
    "--sketches",
    "sketches",
    default="oph",
    show_default=True,
    help=f"The sketches to estimate with, separated by commas: {', '.join(ESTIMATED_KINDS)}; "
    "or all. Only these are made (a first run compiles only their kernels).",
)
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
    sketches: str,
    **flags: Any,
) -> None:
    """Compare two documents: exact Jaccard, containment both ways, cosine, sketch estimates.

    A and B are text files, HTML pages (.html, .htm) or web archives (.warc, .arc, .gz: the
    first HTML page, or the one --url-a/--url-b names). Texts without a shingle (empty, or
    fewer tokens than a shingle needs) match nothing, as in dedup: every estimate is 0.
    """
    kinds = _sketches(sketches)
    _refuse_idle_options(a, b, as_json, explain, kinds)
    kind_options = {name: flags.pop(name) for name in KIND_OPTIONS}
    spec = apply_flags(DedupConfig(), flags).sketch
    from neardup.compare import compare
    from neardup.explain import shared_passages

    text_a = _read(a, url_a, html_extract, "--url-a")
    text_b = _read(b, url_b, html_extract, "--url-b")
    bits = kind_options["simhash_bits"]
    result = compare(
        text_a,
        text_b,
        spec,
        sketches=kinds,
        preset=kind_options["preset"],
        simhash_bits=None if bits is None else int(bits),
        projection=kind_options["projection"],
    )
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
    for name, count in zip("AB", result.num_shingles, strict=True):
        if count == 0:
            click.echo(
                f"  no shingles in {name} (fewer tokens than one {spec.shingle} shingle): as "
                "in dedup, it is similar to nothing; every estimate is 0"
            )
    if result.exact_copy:
        click.echo(
            "  A and B are exact copies (the same normalised words): dedup groups them as "
            "exact duplicates"
        )
    rows = [
        ("exact Jaccard", result.jaccard),
        ("containment of A in B", result.containment_a_in_b),
        ("containment of B in A", result.containment_b_in_a),
        ("cosine of shingle counts", result.cosine),
        ("weighted Jaccard of counts", result.weighted_jaccard),
    ] + [(f"estimate: {name}", value) for name, value in result.estimates.items()]
    for name, value in rows:
        click.echo(f"  {name:<32} {value:.4f}")
    none = "" if result.has_shingles else " (no shingles)"
    if result.preset is not None:
        click.echo(
            f"  {'supershingles shared (' + result.preset + ')':<32} "
            f"{result.shared_features} of {result.num_features}{none}"
        )
    if result.simhash_bits is not None:
        label = f"SimHash Hamming distance ({result.simhash_bits} bits)"
        distance = result.simhash_distance
        shown = "- (no shingles: no match)" if distance is None else distance
        click.echo(f"  {label:<32} {shown}")
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


HELP_IN_COMPARE = {
    "preset": "Feature-filter parameters of the supershingle estimate and of the supershingles "
    "shared, with --sketches supershingle [default: altavista].",
    "simhash_bits": "Bits of the SimHash fingerprints whose distance is shown, with --sketches "
    "simhash [default: 64].",
    "projection": "Hyperplanes of the SimHash, with --sketches simhash: Gaussian (Charikar; "
    "distance tracks the angle) or hash signs (Manku et al.) [default: gaussian].",
}
"""Help of the shared options whose text names options compare lacks (--sketch, --method)."""

compare_command.params[:] = [p for p in compare_command.params if p.name not in NOT_FOR_COMPARE]
for _param in compare_command.params:
    if isinstance(_param, click.Option) and _param.name in HELP_IN_COMPARE:
        _param.help = HELP_IN_COMPARE[_param.name]
