"""``neardup dedup``: the batch job over files, with a short human summary at the end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from neardup.engine.local import dedup_files
from neardup.params import DedupConfig, ShingleSpec
from neardup.sketch import SKETCHERS

__all__ = ["dedup_command"]


@click.command(
    "dedup",
    epilog="""\b
Examples:
  neardup dedup corpus.jsonl.gz -o out/
  neardup dedup shards/*.parquet -o out/ --text-field content --id-field url
  neardup dedup docs/ -o out/ --shingle char:9 --threshold 0.7 --keep longest
  neardup dedup corpus.jsonl -o out/ --config dedup.toml --quiet""",
)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(path_type=Path),
    help="Output directory (must not exist; written atomically).",
)
@click.option("--overwrite", is_flag=True, help="Replace the output directory if it exists.")
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    help="TOML file of parameters; flags given here override it.",
)
@click.option(
    "--format",
    "input_format",
    type=click.Choice(["auto", "jsonl", "parquet", "csv", "txt"]),
    help="Input format [default: from the extension].",
)
@click.option("--text-field", help="Field or column holding the text [default: text].")
@click.option(
    "--id-field",
    help="Field or column holding the id [default: id; without it FILE:LINE]. "
    "Pass '' to always use FILE:LINE.",
)
@click.option("--shingle", help="Shingles as UNIT:K, e.g. word:5 or char:9 [default: word:5].")
@click.option(
    "--strip-punctuation/--keep-punctuation",
    default=None,
    help="Treat punctuation as whitespace [default: keep].",
)
@click.option(
    "--sketch",
    "sketch_kind",
    type=click.Choice(sorted(SKETCHERS)),
    help="oph: one-permutation hashing (fast); minhash: k permutations [default: oph].",
)
@click.option("--num-perm", type=int, help="Signature slots [default: 128].")
@click.option("--seed", type=int, help="Seed of every random choice [default: 42].")
@click.option(
    "--threshold", type=float, help="Jaccard similarity of a near duplicate [default: 0.8]."
)
@click.option(
    "--bands", type=int, help="LSH bands (with --rows) instead of choosing from the threshold."
)
@click.option("--rows", type=int, help="LSH rows per band (with --bands).")
@click.option(
    "--max-bucket-size",
    type=int,
    help="LSH buckets larger than this are paired linearly [default: 1000].",
)
@click.option(
    "--verify",
    type=click.Choice(["exact", "signature", "none"]),
    help="How candidates are confirmed [default: exact].",
)
@click.option(
    "--keep",
    type=click.Choice(["first", "longest"]),
    help="Which document represents a cluster [default: first].",
)
@click.option("--batch-mb", type=float, help="Text read per batch, in MB [default: 32].")
@click.option(
    "--compress",
    type=click.Choice(["none", "gzip", "zstd"]),
    help="Compression of the kept corpus [default: none].",
)
@click.option(
    "--skip-bad-records",
    is_flag=True,
    default=None,
    help="Skip malformed records (counted in the summary) instead of stopping.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary.")
def dedup_command(
    inputs: tuple[Path, ...],
    output: Path,
    overwrite: bool,
    config_path: Path | None,
    quiet: bool,
    **flags: Any,
) -> None:
    """Deduplicate INPUTS (JSONL[.gz|.zst], Parquet, CSV, or directories of .txt files).

    Writes into OUTPUT: clusters.jsonl (one line per document: id, cluster, keep),
    pairs.jsonl (duplicate pairs with exact and estimated Jaccard), kept.jsonl / kept.csv /
    kept.parquet (the deduplicated corpus, records unchanged) and summary.json (every
    parameter, count and timing).
    """
    base = DedupConfig.from_toml(config_path) if config_path else DedupConfig()
    config = _apply_flags(base, flags)
    result = dedup_files(inputs, output, config, overwrite=overwrite, show_progress=not quiet)
    if not quiet:
        _print_summary(result.summary, output)


def _apply_flags(base: DedupConfig, flags: dict[str, Any]) -> DedupConfig:
    """``base`` with every flag that was given on the command line applied on top."""
    data = base.to_dict()
    sketch, lsh, normalize = data["sketch"], data["lsh"], data["sketch"]["normalize"]
    if flags["shingle"] is not None:
        sketch["shingle"] = ShingleSpec.parse(flags["shingle"]).to_dict()
    if flags["strip_punctuation"] is not None:
        normalize["strip_punctuation"] = flags["strip_punctuation"]
    for flag, section, key in [
        ("sketch_kind", sketch, "kind"),
        ("num_perm", sketch, "num_perm"),
        ("seed", sketch, "seed"),
        ("threshold", lsh, "threshold"),
        ("bands", lsh, "num_bands"),
        ("rows", lsh, "num_rows"),
        ("max_bucket_size", lsh, "max_bucket_size"),
        ("verify", data, "verify"),
        ("keep", data, "keep"),
        ("compress", data, "compress"),
        ("input_format", data, "input_format"),
        ("text_field", data, "text_field"),
        ("skip_bad_records", data, "skip_bad_records"),
    ]:
        if flags[flag] is not None:
            section[key] = flags[flag]
    if flags["num_perm"] is not None:
        lsh["num_perm"] = flags["num_perm"]
    if flags["id_field"] is not None:
        data["id_field"] = flags["id_field"] or None
    if flags["batch_mb"] is not None:
        data["batch_bytes"] = max(1, int(flags["batch_mb"] * 2**20))
    return DedupConfig.from_dict(data)


def _print_summary(summary: dict[str, Any], output: Path) -> None:
    counts = summary["counts"]
    lsh = summary["lsh"]
    echo = click.echo
    echo("")
    echo(f"neardup dedup: {counts['documents']:,} documents, {counts['bytes'] / 1e6:,.1f} MB")
    if counts.get("bad_records_skipped"):
        echo(f"  skipped bad records : {counts['bad_records_skipped']:,}")
    echo(f"  exact duplicates    : {counts['exact_duplicates']:,}")
    echo(
        f"  near-duplicate pairs: {counts['verified_pairs']:,} verified "
        f"({summary['verify']}) of {counts['candidate_pairs']:,} candidates "
        f"(b={lsh['num_bands']}, r={lsh['num_rows']})"
    )
    echo(
        f"  clusters            : {counts['clusters']:,} holding "
        f"{counts['documents_in_clusters']:,} documents"
    )
    echo(f"  removed / kept      : {counts['removed']:,} / {counts['kept']:,}")
    if counts["giant_buckets"]:
        echo(
            f"  giant LSH buckets   : {counts['giant_buckets']:,} "
            f"(largest {counts['largest_bucket']:,}), paired linearly"
        )
    if summary["biggest_clusters"]:
        biggest = ", ".join(f"{c['cluster']} ({c['size']})" for c in summary["biggest_clusters"])
        echo(f"  biggest clusters    : {biggest}")
    echo(f"  time                : {summary['total_s']:.2f} s, {summary['throughput_mb_s']} MB/s")
    echo(f"  outputs in {output}/: " + ", ".join(summary["outputs"].values()))
