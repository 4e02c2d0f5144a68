"""``neardup join``: all pairs of vectors, bit strings, item sets or strings within a threshold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from neardup.cli.options import html_extract_option
from neardup.io.output import check_output_path
from neardup.kinds import METRICS
from neardup.params import JoinSpec

__all__ = ["join_command"]


@click.command(
    "join",
    epilog="""\b
Examples:
  neardup join embeddings.npy --metric cosine --threshold 0.9 -o out/
  neardup join codes.npy --metric hamming --threshold 3 -o out/
  neardup join vectors.parquet --metric l2 --threshold 2.5 --vector-field v --id-field id -o out/
  neardup join baskets.jsonl --metric jaccard --threshold 0.9 --exact -o out/
  neardup join ratings.csv --metric jaccard --threshold 0.5 --entity-field user \\
      --item-field movie --rating-field stars --ratings set:3 -o out/
  neardup join names.csv --metric edit --threshold 2 --text-field name -o out/""",
)
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option(
    "--metric",
    required=True,
    type=click.Choice(list(METRICS)),
    help="; ".join(f"{m.name}: {m.summary}" for m in METRICS.values()) + ".",
)
@click.option(
    "--threshold",
    required=True,
    type=float,
    help="A similarity for cosine and jaccard (pairs at or above it); a distance for hamming, "
    "l1, l2 and edit (pairs at or below it).",
)
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(path_type=Path),
    help="Output directory: pairs.jsonl and summary.json (must not exist; written atomically).",
)
@click.option("--overwrite", is_flag=True, help="Replace the output directory if it exists.")
@click.option("--id-field", help="Field or column of the ids [default: row numbers for .npy].")
@click.option("--vector-field", help="Parquet: the list column holding each vector.")
@click.option("--items-field", help="jaccard: the list field holding each record's items.")
@click.option("--entity-field", help="jaccard from rows: the column naming the entity (a set).")
@click.option("--item-field", help="jaccard from rows: the column naming the item.")
@click.option("--rating-field", help="jaccard from rows: the column of the rating.")
@click.option(
    "--ratings",
    help="With --rating-field: set:N keeps the items rated at least N; bag counts an item as "
    "often as its whole-number rating (MMDS 3.1.3).",
)
@click.option("--text-field", help="edit: the field holding each string [default: text].")
@html_extract_option(
    "Web archives (.warc/.arc): what is taken of each page (jaccard joins the pages' word "
    "5-shingle sets, edit their texts)."
)
@click.option(
    "--exact",
    is_flag=True,
    help="jaccard: the exact join by length, prefix, position and suffix filtering (MMDS "
    "3.9; no false negatives, fastest at high thresholds) instead of MinHash LSH.",
)
@click.option(
    "--recall",
    type=float,
    help="Chance that a pair at the threshold becomes a candidate, which the choice of bands "
    "and rows must reach [default: 0.95].",
)
@click.option("--bands", "num_bands", type=int, help="b: bands (OR) [default: chosen].")
@click.option("--rows", "num_rows", type=int, help="r: hashes per band (AND) [default: chosen].")
@click.option("--bucket-width", type=float, help="l2: bucket width a [default: from threshold].")
@click.option("--max-value", type=int, help="l1: coordinates lie in [0, C] [default: data max].")
@click.option("--qgram", type=int, help="edit: q-gram length of the filter [default: 2].")
@click.option("--seed", type=int, help="Seed of the family's random draws [default: 42].")
@click.option(
    "--engine",
    type=click.Choice(["local", "spark"]),
    default="local",
    show_default=True,
    help="Run on this machine, or on Apache Spark (cosine and jaccard; results equal the "
    "local engine's).",
)
@click.option("--spark-master", help="Spark master URL [default: local[*]].")
@click.option(
    "--spark-conf", multiple=True, metavar="KEY=VALUE", help="A Spark setting (repeatable)."
)
@click.option("-q", "--quiet", is_flag=True, help="No summary.")
def join_command(
    input_path: Path,
    output: Path,
    overwrite: bool,
    engine: str,
    spark_master: str | None,
    spark_conf: tuple[str, ...],
    quiet: bool,
    id_field: str | None,
    vector_field: str | None,
    items_field: str | None,
    entity_field: str | None,
    item_field: str | None,
    rating_field: str | None,
    ratings: str | None,
    text_field: str | None,
    html_extract: Any,
    **flags: Any,
) -> None:
    """Find all pairs of INPUT's items within --threshold under --metric (a similarity join).

    INPUT: .npy (2-D: numbers for cosine and l2, read as float32; integers in [0, C] for l1;
    0/1 uint8 or bool bits for hamming; row i has id i), Parquet with --vector-field, item
    sets as JSONL, CSV or Parquet (--items-field, or --entity-field and --item-field rows), or
    strings (--text-field) for edit, or a web archive (.warc/.arc, .gz) for jaccard and edit
    (ids: the pages' URLs). Writes pairs.jsonl ({"a", "b", "similarity"} or {"a",
    "b", "distance"}) and summary.json (the family, bands, rows, predicted recall, counts and
    times).
    """
    from neardup.engine.join import JoinSource, join_files

    spec = JoinSpec(**{name: value for name, value in flags.items() if value is not None})
    source = JoinSource(
        id_field=id_field,
        vector_field=vector_field,
        items_field=items_field,
        entity_field=entity_field,
        item_field=item_field,
        rating_field=rating_field,
        ratings=ratings,
        text_field=text_field,
        html_extract=html_extract,
    )
    if "://" not in str(output):
        check_output_path(output, [input_path], None)
    if engine == "spark":
        if not METRICS[spec.metric].spark:
            spark = [m.name for m in METRICS.values() if m.spark]
            raise click.UsageError(f"--engine spark joins {' and '.join(spark)} only")
        if spec.exact:
            raise click.UsageError("--exact runs on the local engine only")
        from neardup.engine.spark import spark_session
        from neardup.engine.spark_join import join_files_spark

        session = spark_session(spark_master, spark_conf)
        summary = join_files_spark(
            session, input_path, str(output), spec, source, overwrite=overwrite
        )
    else:
        summary = join_files(input_path, output, spec, source, overwrite=overwrite)
    if not quiet:
        _print_summary(summary, output)


def _print_summary(summary: dict[str, Any], output: Path) -> None:
    counts = summary["counts"]
    echo = click.echo
    echo(f"neardup join: {counts['items']:,} items, metric {summary['metric']}")
    family = summary.get("family")
    if summary.get("num_bands"):
        recall = summary.get("predicted_recall")
        shown = f", predicted recall {recall:.3f} at the threshold" if recall is not None else ""
        echo(
            f"  family              : {family}, {summary['num_bands']} bands of "
            f"{summary['num_rows']}{shown}"
        )
    elif family:
        echo(f"  family              : {family}")
    if "sensitivity" in summary:
        before, after = summary["sensitivity"]["family"], summary["sensitivity"]["amplified"]
        shown = ", ".join(f"{before[k]:.4g}" for k in ("d1", "d2", "p1", "p2"))
        amplified = ", ".join(f"{after[k]:.4g}" for k in ("d1", "d2", "p1", "p2"))
        echo(f"  (d1, d2, p1, p2)    : ({shown}) -> ({amplified}); d2: a median random pair")
    echo(f"  candidate pairs     : {counts['candidate_pairs']:,}")
    echo(f"  pairs within {summary['threshold']:<7g}: {counts['pairs']:,}")
    echo(f"  time                : {summary['times']['total']:.2f} s")
    echo(f"  outputs in {output}/: " + ", ".join(summary["outputs"].values()))
