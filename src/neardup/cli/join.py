"""``neardup join``: all pairs of vectors, bit strings, item sets or strings within a threshold."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import click

from neardup.cli.options import html_extract_option, output_directory_options, quiet_option
from neardup.errors import ParameterError
from neardup.io.output import check_output
from neardup.kinds import METRICS
from neardup.params import JoinSpec

__all__ = ["SCOPES", "check_options", "join_command"]

FileKind = Literal["npy", "parquet", "archive", "records"]
"""What an input file is, as far as the options go: a ``.npy`` matrix, Parquet, a web archive,
or other records (JSON Lines, CSV, a directory of ``.txt`` files)."""

_FILE_WORDS = {
    "npy": "a .npy file (row i has id i)",
    "parquet": "Parquet input",
    "archive": "a web archive (ids: the pages' URLs)",
    "records": "JSON Lines, CSV or .txt input",
}

_LSH_METRICS = tuple(name for name, metric in METRICS.items() if metric.family is not None)
_VECTOR_METRICS = tuple(
    name for name, metric in METRICS.items() if metric.input in ("vectors", "counts", "bits")
)
_SET_METRICS = tuple(name for name, metric in METRICS.items() if metric.input == "sets")
_EXACT_CHOICE = tuple(  # metrics where --exact chooses between LSH and an exact filter
    name for name, metric in METRICS.items() if metric.has_exact_join and metric.family
)


@dataclass(frozen=True, slots=True)
class JoinRun:
    """What the options are checked against: the metric, the engine and the input."""

    metric: str
    engine: str
    exact: bool
    file: FileKind
    rows: bool
    """Item sets given as rows (``--entity-field``, ``--item-field``)."""

    @property
    def lsh(self) -> bool:
        """Whether candidates come from an LSH family (whose options then apply)."""
        return self.metric in _LSH_METRICS and not self.exact


@dataclass(frozen=True, slots=True, kw_only=True)
class Scope:
    """Where an option does something; ``None``: anywhere along that axis."""

    metrics: tuple[str, ...] | None = None
    engines: tuple[str, ...] | None = None
    lsh: bool = False
    files: tuple[FileKind, ...] | None = None
    rows: bool | None = None

    def refusal(self, option: str, run: JoinRun) -> str | None:  # noqa: PLR0911 - one per axis
        """Why ``option`` does nothing for ``run`` (one line), or ``None`` when it applies."""
        if self.metrics is not None and run.metric not in self.metrics:
            return (
                f"{option} applies to --metric {' or '.join(self.metrics)}, not to "
                f"{run.metric}; drop it"
            )
        if self.engines is not None and run.engine not in self.engines:
            return (
                f"{option} applies to --engine {' or '.join(self.engines)}, not to "
                f"{run.engine}; drop it"
            )
        if self.lsh and not run.lsh:
            how = "--exact filters" if run.exact else f"--metric {run.metric} filters"
            return (
                f"{option} applies to the LSH joins (--metric {', '.join(_LSH_METRICS)}); "
                f"{how} exactly, so drop it"
            )
        if self.files is not None and run.file not in self.files:
            allowed = " or ".join(_FILE_WORDS[kind] for kind in self.files)
            return f"{option} applies to {allowed}, not to {_FILE_WORDS[run.file]}; drop it"
        if self.rows is not None and run.rows != self.rows:
            if run.rows:
                return (
                    f"{option} does not apply to item rows (--entity-field, --item-field): "
                    "each entity is an item, its value the id; drop it"
                )
            return f"{option} applies to item rows (with --entity-field and --item-field)"
        return None


_TABLES: tuple[FileKind, ...] = ("parquet", "records")
SCOPES: dict[str, Scope] = {
    "id_field": Scope(files=_TABLES, rows=False),
    "vector_field": Scope(metrics=_VECTOR_METRICS, files=("parquet",)),
    "items_field": Scope(metrics=_SET_METRICS, files=_TABLES),
    "entity_field": Scope(metrics=_SET_METRICS, files=_TABLES),
    "item_field": Scope(metrics=_SET_METRICS, files=_TABLES),
    "rating_field": Scope(metrics=_SET_METRICS, files=_TABLES),
    "ratings": Scope(metrics=_SET_METRICS, files=_TABLES),
    "text_field": Scope(metrics=("edit",), files=_TABLES),
    "html_extract": Scope(files=("archive",)),
    "exact": Scope(metrics=_EXACT_CHOICE, engines=("local",)),
    "recall": Scope(lsh=True),
    "num_bands": Scope(lsh=True),
    "num_rows": Scope(lsh=True),
    "max_bucket_size": Scope(lsh=True),
    "seed": Scope(lsh=True),
    "family": Scope(metrics=tuple(name for name, m in METRICS.items() if m.families)),
    "bucket_width": Scope(metrics=("l2", "l1")),
    "max_value": Scope(metrics=("l1",)),
    "qgram": Scope(metrics=("edit",)),
    "memory_gb": Scope(engines=("local",), lsh=True),
    "spark_master": Scope(engines=("spark",)),
    "spark_conf": Scope(engines=("spark",)),
}
"""Where each option of ``join`` does something (by its parameter name): every option given
is checked against the run before any work, and one that would be ignored is refused."""

_FLAGS = {"num_bands": "--bands", "num_rows": "--rows"}
"""Parameters whose option has another name."""


def _file_kind(path: Path) -> FileKind:
    from neardup.io.compression import strip_compression  # the readers load numba: not at import
    from neardup.io.readers import is_web_archive

    if is_web_archive(path):
        return "archive"
    suffix, compression = strip_compression(path)
    if suffix == ".npy" and compression is None:
        return "npy"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    return "records"


def check_options(given: dict[str, Any], run: JoinRun) -> None:
    """Refuse (``click.UsageError``) the first option given that does nothing for ``run``."""
    for name, scope in SCOPES.items():
        value = given.get(name)
        if value is None or value == ():
            continue
        option = _FLAGS.get(name, "--" + name.replace("_", "-"))
        reason = scope.refusal(option, run)
        if reason is not None:
            raise click.UsageError(reason)


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
  neardup join baskets.jsonl --metric containment --threshold 0.8 -o out/
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
    help="A similarity for cosine, jaccard and containment (pairs at or above it); a distance "
    "for hamming, l1, l2 and edit (pairs at or below it).",
)
@output_directory_options("pairs.jsonl and summary.json")
@click.option(
    "--id-field",
    help="Field or column of the ids [default: the id field where the input has one, as "
    "dedup takes ids, else row numbers from 0; .npy: row numbers]. Pass '' for row numbers.",
)
@click.option("--vector-field", help="Parquet: the list column holding each vector.")
@click.option("--items-field", help="Item sets: the list field holding each record's items.")
@click.option("--entity-field", help="Item sets from rows: the column naming the entity (a set).")
@click.option("--item-field", help="Item sets from rows: the column naming the item.")
@click.option("--rating-field", help="Item sets from rows: the column of the rating.")
@click.option(
    "--ratings",
    help="With --rating-field: set:N keeps the items rated at least N; likes:HIGH:LOW makes "
    "an item rated at least HIGH a 'liked' element and one rated at most LOW a 'hated' one; "
    "bag counts an item as often as its whole-number rating (MMDS 3.1.3).",
)
@click.option("--text-field", help="edit: the field holding each string [default: text].")
@html_extract_option(
    "Web archives (.warc/.arc): what is taken of each page (jaccard and containment join the "
    "pages' word 5-shingle sets, edit their texts) [default: text].",
    default=None,
)
@click.option(
    "--exact",
    is_flag=True,
    default=None,
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
@click.option(
    "--max-bucket-size",
    type=int,
    help="LSH buckets larger than this pair each item with the ones before it only; a warning "
    "and summary.json's bucket_pairs_skipped count the pairs left out [default: 1000].",
)
@click.option(
    "--family",
    type=click.Choice(sorted({name for m in METRICS.values() for name in m.families})),
    help="l1: Cauchy projections into buckets (any range of counts) or seed 002's bit "
    "sampling of the unary code (counts in [0, C]; loses recall where a few counts are much "
    "larger than the rest) [default: cauchy].",
)
@click.option(
    "--bucket-width",
    type=float,
    help="l2, and l1 by cauchy: bucket width a [default: 4 times the threshold].",
)
@click.option(
    "--max-value",
    type=int,
    help="l1 by unary: coordinates lie in [0, C] [default: data max].",
)
@click.option("--qgram", type=int, help="edit: q-gram length of the filter [default: 2].")
@click.option("--seed", type=int, help="Seed of the family's random draws [default: 42].")
@click.option(
    "--memory-gb",
    type=float,
    help="Working memory for candidate chunks and close pairs, beyond which they are spilled "
    "to the output's work directory [default: 1/8 of the machine, at most 1]. Besides it the "
    "run holds the input's arrays and one band's sort (about 40 bytes per item).",
)
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
@quiet_option
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
    memory_gb: float | None,
    **flags: Any,
) -> None:
    """Find all pairs of INPUT's items within --threshold under --metric (a similarity join).

    INPUT: .npy (2-D: numbers for cosine and l2, read as float32; non-negative integers for l1;
    0/1 uint8 or bool bits for hamming; row i has id i), Parquet with --vector-field, item
    sets as JSONL, CSV or Parquet (--items-field, or --entity-field and --item-field rows), or
    strings (--text-field) for edit, or a web archive (.warc/.arc, .gz) for jaccard, containment
    and edit (ids: the pages' URLs). Writes pairs.jsonl ({"a", "b", "similarity"} or {"a",
    "b", "distance"}) and summary.json (the family, bands, rows, predicted recall, counts and
    times, and the candidates predicted before the work). Memory stays within --memory-gb
    however many candidates there are. An option that does nothing for the metric, the input
    or the engine chosen is refused.
    """
    from neardup.jobs.join import join_files
    from neardup.join.inputs import JoinSource

    given = {
        **flags,
        "id_field": id_field,
        "vector_field": vector_field,
        "items_field": items_field,
        "entity_field": entity_field,
        "item_field": item_field,
        "rating_field": rating_field,
        "ratings": ratings,
        "text_field": text_field,
        "html_extract": html_extract,
        "memory_gb": memory_gb,
        "spark_master": spark_master,
        "spark_conf": spark_conf,
    }
    run = JoinRun(
        metric=flags["metric"],
        engine=engine,
        exact=bool(flags.get("exact")),
        file=_file_kind(input_path),
        rows=entity_field is not None or item_field is not None,
    )
    check_options(given, run)
    if given.get("recall") is not None and None not in (flags["num_bands"], flags["num_rows"]):
        raise click.UsageError(
            "--recall chooses the bands and rows; with --bands and --rows both given it "
            "chooses nothing: drop one of them"
        )
    memory_bytes = None
    if memory_gb is not None:
        if not memory_gb > 0:
            raise ParameterError(f"--memory-gb must be above 0; got {memory_gb}.")
        memory_bytes = max(1, int(memory_gb * 2**30))
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
        html_extract=html_extract or "text",
    )
    if "://" not in str(output):
        check_output(output, "join", inputs=[input_path], overwrite=overwrite)
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
            session, input_path, str(output), spec, source, overwrite=overwrite,
            show_progress=not quiet,
        )  # fmt: skip
    else:
        summary = join_files(
            input_path,
            output,
            spec,
            source,
            overwrite=overwrite,
            memory_bytes=memory_bytes,
            show_progress=not quiet,
        )
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
    echo(f"  candidate pairs     : {counts['candidate_pairs']:,} measured")
    echo(f"  pairs within {summary['threshold']:<7g}: {counts['pairs']:,}")
    echo(f"  time                : {summary['timings_s']['total']:.2f} s")
    echo(f"  outputs in {output}/: " + ", ".join(summary["outputs"].values()))
