"""``neardup compare A B``: two documents, exact similarities and every sketch's estimate."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from neardup.cli.options import apply_flags, sketch_options
from neardup.errors import InputError
from neardup.params import DedupConfig

__all__ = ["compare_command"]


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise InputError("no such file; check the path", path=path) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a text file", path=path) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 ({exc.reason} at byte {exc.start})", path=path) from None


@click.command(
    "compare",
    epilog="""\b
Examples:
  neardup compare rfc2616.txt rfc7230.txt
  neardup compare a.txt b.txt --shingle char:9 --json""",
)
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@sketch_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
def compare_command(a: Path, b: Path, as_json: bool, **flags: Any) -> None:
    """Compare two text files: exact Jaccard, containment both ways, cosine, sketch estimates."""
    spec = apply_flags(DedupConfig(), flags).sketch
    from neardup.compare import compare

    result = compare(_read(a), _read(b), spec)
    if as_json:
        click.echo(
            json.dumps({"a": str(a), "b": str(b), "shingle": str(spec.shingle), **asdict(result)})
        )
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
