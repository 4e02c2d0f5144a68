"""``neardup dedup``: the batch job over files, with a short human summary at the end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from neardup.cli.options import (
    SKETCH_OPTIONS,
    apply_file_flags,
    apply_flags,
    embedding_options,
    given_options,
    input_options,
    option_name,
    output_directory_options,
    profile_option,
    quiet_option,
    refuse_inapplicable,
    sketch_options,
)
from neardup.io.output import check_output
from neardup.params import ConfigFile, DedupConfig, load_config
from neardup.summary import Summary

__all__ = ["dedup_command"]


@click.command(
    "dedup",
    epilog="""\b
Examples:
  neardup dedup corpus.jsonl.gz -o out/
  neardup dedup shards/*.parquet -o out/ --text-field content --id-field url
  neardup dedup docs/ -o out/ --shingle char:9 --threshold 0.7 --keep longest
  neardup dedup crawl.jsonl -o out/ --keep-by quality:max --keep-by crawl_date:max
  neardup dedup shards/*.jsonl.zst -o out/ --annotate --compress zstd
  neardup dedup corpus.jsonl -o out/ --config dedup.toml --quiet
  neardup dedup new-crawl.jsonl -o out/ --against seen.ndx --add-to-index
  neardup dedup big/*.jsonl.zst -o out/ --resume
  neardup dedup crawl.jsonl.zst -o out/ --unit line --min-doc-chars 200
  neardup dedup corpus.parquet -o out/ --unit sentences:3 --threshold 0.9""",
)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@output_directory_options(
    "clusters.jsonl, pairs.jsonl, the kept corpus and summary.json (with --unit: the kept "
    "corpus, removed.jsonl and summary.json)"
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    help="TOML file of parameters; flags given here override it.",
)
@input_options
@sketch_options
@embedding_options
@click.option(
    "--verify",
    type=click.Choice(["exact", "signature", "none"]),
    help="How candidates are confirmed [default: exact].",
)
@click.option(
    "--measure",
    type=click.Choice(["jaccard", "containment"]),
    help="What makes a near duplicate at --threshold: the sketch's own similarity (Jaccard; "
    "cosine for SimHash), or containment, the share of the shorter document's shingles "
    "found in the longer (a document inside another; exact, local engine) [default: the "
    "sketch's].",
)
@click.option(
    "--keep",
    type=click.Choice(["first", "longest"]),
    help="Which document represents a cluster [default: first; longest, the container, "
    "with --measure containment].",
)
@click.option(
    "--keep-by",
    multiple=True,
    metavar="FIELD[:max|min]",
    help="Keep the document of each cluster with the largest (max, the default) or smallest "
    "(min) value of this field: a number, a date or a string (compared by code point); "
    "repeat it for tie-breakers, input order breaks the rest; a record without the field "
    "comes last. Replaces --keep. JSONL, CSV and Parquet inputs.",
)
@click.option(
    "--annotate",
    is_flag=False,
    flag_value="neardup",
    metavar="[FIELD]",
    help="Write every input record instead of the kept ones, with FIELD (default neardup) "
    "added: {cluster, keep, similarity} as clusters.jsonl gives them (Parquet: a struct "
    "column; CSV: FIELD.cluster, FIELD.keep, FIELD.similarity); annotated.jsonl|csv|parquet.",
)
@click.option(
    "--cluster",
    type=click.Choice(["components", "center"]),
    help="components: every chain of verified pairs is one cluster (single link); center: "
    "every member is verified against its cluster's representative at the threshold, so "
    "clusters do not chain [default: components]. clusters.jsonl gives each document's "
    "similarity to its representative and the cluster's minimum either way.",
)
@click.option(
    "--pairs",
    type=click.Choice(["spanning", "all", "none"]),
    help="Near-duplicate pairs written to pairs.jsonl: spanning (those that join two "
    "clusters: enough to explain every cluster, at most one per duplicate), all (every "
    "verified pair; grows quadratically in near-identical groups) or none [default: spanning].",
)
@click.option(
    "--explain",
    is_flag=True,
    default=None,
    help="Give each near pair of pairs.jsonl its shared passages ([a_start, a_end, b_start, "
    "b_end, shingles] character offsets into the texts); reads the inputs once more.",
)
@click.option(
    "--host-templates",
    is_flag=True,
    default=None,
    help="Web inputs (ids that are http(s) URLs, as in WARC files): leave each host's "
    "template (shingles on half or more of its pages: navigation, footers, a mirror's "
    "banner) out of its pages before comparing them, learned from the first 64 pages of each "
    "host in a first pass; the kept corpus keeps the pages whole. See docs/web.md.",
)
@click.option(
    "--batch-mb", type=float, help="Input read per batch, in MB [default: 32]. Local engine."
)
@click.option(
    "--memory-gb",
    type=float,
    help="Working memory for verification chunks [default: 1/8 of the machine, "
    "at most 1]. Besides it the run holds about 60 bytes per document. Local engine.",
)
@click.option(
    "--compress",
    type=click.Choice(["none", "gzip", "zstd"]),
    help="Compression of the kept corpus [default: none]. Local engine (Spark writes "
    "kept.parquet).",
)
@click.option(
    "--against",
    type=click.Path(path_type=Path),
    help="An index (neardup index create): also drop documents with a near-copy in it; "
    "the index's parameters are used.",
)
@click.option("--add-to-index", is_flag=True, help="With --against: add the kept documents to it.")
@click.option(
    "--resume",
    is_flag=True,
    help="Continue an interrupted run (killed, crashed or stopped) of the same inputs and "
    "parameters from the stages it finished, kept in .OUTPUT.work beside the output; the "
    "outputs are those of an uninterrupted run. Local engine. See docs/dedup.md.",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "spark"]),
    default="local",
    show_default=True,
    help="Run on this machine, or on Apache Spark (JSONL or Parquet inputs with an id field; "
    "results equal the local engine's). See docs/scale.md.",
)
@click.option("--spark-master", help="Spark master URL [default: local[*]].")
@click.option(
    "--spark-conf", multiple=True, metavar="KEY=VALUE", help="A Spark setting (repeatable)."
)
@click.option(
    "--unit",
    metavar="line|paragraph|sentences:K",
    help="Remove repeated passages instead of whole documents: cut each document into lines, "
    "paragraphs (at blank lines) or runs of K sentences, and remove every copy of a unit but "
    "the first (removed.jsonl says where, with the id of the kept copy). See docs/passages.md.",
)
@click.option(
    "--min-unit-chars",
    type=int,
    help="With --unit: units with fewer characters (whitespace left out) are never removed "
    "[default: 0].",
)
@click.option(
    "--min-doc-chars",
    type=int,
    help="With --unit: leave out documents left with fewer characters (whitespace left out); "
    "listed in dropped.jsonl [default: 0, none].",
)
@click.option(
    "--keep-digits",
    is_flag=True,
    help="With --unit: match digits as they are (by default every digit reads as 0, so page "
    "numbers and dates do not tell units apart).",
)
@profile_option
@quiet_option
def dedup_command(
    inputs: tuple[Path, ...],
    output: Path,
    overwrite: bool,
    config_path: Path | None,
    against: Path | None,
    add_to_index: bool,
    resume: bool,
    engine: str,
    spark_master: str | None,
    spark_conf: tuple[str, ...],
    unit: str | None,
    min_unit_chars: int | None,
    min_doc_chars: int | None,
    keep_digits: bool,
    quiet: bool,
    **flags: Any,
) -> None:
    """Deduplicate INPUTS (JSONL[.gz|.zst], Parquet, CSV, or directories of .txt files).

    Writes into OUTPUT: clusters.jsonl (one line per document: id, cluster, keep),
    pairs.jsonl (duplicate pairs with their similarity: the summary's measure), kept.jsonl /
    kept.csv / kept.parquet (the deduplicated corpus, records unchanged; with --annotate,
    annotated.jsonl / .csv / .parquet: every record, a field added) and summary.json
    (every parameter, count and timing).
    """
    from neardup.index import LSHIndex
    from neardup.jobs.dedup import dedup_files

    refuse_inapplicable(inputs)
    flags["keep_by"] = flags["keep_by"] or None  # none given: the config's
    loaded = load_config(config_path) if config_path else ConfigFile()
    base = loaded.config
    read, write = apply_file_flags(loaded.read, loaded.write, flags)
    unit_options = {
        "--min-unit-chars": min_unit_chars,
        "--min-doc-chars": min_doc_chars,
        "--keep-digits": keep_digits or None,
    }
    _refuse_combinations(
        engine=engine, against=against, add_to_index=add_to_index, resume=resume, unit=unit,
        unit_options=[name for name, value in unit_options.items() if value is not None],
    )  # fmt: skip
    if engine == "spark":
        _refuse_local_options(flags)
    if against is not None:
        _refuse_sketch_options(flags)
    if "://" not in str(output):
        check_output(output, "dedup", inputs=inputs, index=against, overwrite=overwrite)
    if unit is not None:
        from neardup.jobs.dedup_units import dedup_units_files
        from neardup.params import UnitSpec

        spec = UnitSpec.parse(
            unit,
            min_chars=min_unit_chars or 0,
            min_doc_chars=min_doc_chars or 0,
            fold_digits=not keep_digits,
        )
        record = dedup_units_files(
            inputs, output, apply_flags(base, flags), spec, read=read, write=write,
            overwrite=overwrite, show_progress=not quiet,
        )  # fmt: skip
        if not quiet:
            _print_units_summary(record, output)
        return
    if engine == "spark":
        from neardup.engine.spark import check_runs, dedup_files_spark, spark_session

        config = apply_flags(base, flags)
        check_runs(config, write)  # before a JVM starts
        session = spark_session(spark_master, spark_conf)
        summary = dedup_files_spark(
            session, [str(p) for p in inputs], str(output), config, read=read, write=write,
            overwrite=overwrite, show_progress=not quiet,
        )  # fmt: skip
        if not quiet:
            _print_summary(summary, output)
        return
    if against is None:
        config = apply_flags(base, flags)
        result = dedup_files(
            inputs, output, config, read=read, write=write, overwrite=overwrite,
            show_progress=not quiet, resume=resume,
        )  # fmt: skip
    else:
        with LSHIndex.open(against, create=False) as index:
            base = DedupConfig.from_dict(
                {
                    **base.to_dict(),
                    "sketch": index.sketch_spec.to_dict(),
                    "lsh": index.lsh_spec.to_dict(),
                }
            )
            config = apply_flags(base, flags)
            result = dedup_files(
                inputs,
                output,
                config,
                read=read,
                write=write,
                overwrite=overwrite,
                show_progress=not quiet,
                against=index,
                add_to_index=add_to_index,
                resume=resume,
            )
    if not quiet:
        _print_summary(result.summary, output)


def _refuse_combinations(
    *,
    engine: str,
    against: Path | None,
    add_to_index: bool,
    resume: bool,
    unit: str | None,
    unit_options: list[str],
) -> None:
    """Refuse options that do not go together, before any work."""
    if add_to_index and against is None:
        raise click.UsageError("--add-to-index needs --against INDEX")
    if resume and engine == "spark":
        raise click.UsageError(
            "--resume works with the local engine: Spark runs a failed task again itself, and "
            "a job whose driver died starts again; drop --resume"
        )
    if unit is not None and (engine == "spark" or against is not None or resume):
        raise click.UsageError(
            "--unit works with the local engine only, without --against or --resume"
        )
    if unit is None and unit_options:
        raise click.UsageError(f"{', '.join(unit_options)} apply with --unit only")
    if unit is not None and "pairs" in given_options():
        raise click.UsageError("--unit writes removed.jsonl, not pairs.jsonl: drop --pairs")
    if engine == "spark" and against is not None:
        raise click.UsageError("--against works with the local engine only")


_LOCAL_OPTIONS = {
    "batch_mb": "--batch-mb sizes the local engine's batches; Spark cuts its inputs into "
    "partitions itself (spark.sql.files.maxPartitionBytes, with --spark-conf): drop it",
    "memory_gb": "--memory-gb bounds the local engine's verification; Spark's memory is its "
    "own (spark.executor.memory, spark.driver.memory, with --spark-conf): drop it",
    "compress": "--compress compresses the local engine's kept corpus; the Spark engine "
    "writes kept.parquet, compressed by Parquet: drop it",
}
"""The options the Spark engine does not read, with why and what to do instead."""


def _refuse_local_options(flags: dict[str, Any]) -> None:
    """Refuse, with ``--engine spark``, an option of the local engine given on the command line.

    The Spark engine reads its inputs by their extensions (JSONL, Parquet; ``--format warc``
    for web archives under other names), so another ``--format`` does nothing there either.
    """
    given = given_options()
    for name, message in _LOCAL_OPTIONS.items():
        if name in given:
            raise click.UsageError(message)
    chosen = flags.get("input_format")
    if "input_format" in given and chosen not in ("auto", "warc"):
        raise click.UsageError(
            f"--format {chosen} applies to the local engine; the Spark engine reads JSONL and "
            "Parquet by their extensions (--format warc: web archives): drop it"
        )


def _refuse_sketch_options(flags: dict[str, Any]) -> None:
    """Refuse, with ``--against``, an option that sets the sketch: the index's is used.

    The run's signatures must be the index's to be looked up in it: an option of another
    value would stop the run after sketching, and one of the same value does nothing.
    """
    given = given_options()
    named = sorted(given & SKETCH_OPTIONS)
    if "method" in given and flags.get("method") in ("minhash", "simhash"):
        named.insert(0, "method")
    if not named:
        return
    option = option_name(named[0])
    if named[0] == "strip_punctuation" and not flags["strip_punctuation"]:
        option = "--keep-punctuation"
    raise click.UsageError(
        f"{option} sets the sketch; with --against the index's is used (the signatures must "
        f"be its own to be looked up in it): drop {option}"
    )


def _print_units_summary(record: dict[str, Any], output: Path) -> None:
    counts = record["counts"]
    unit = record["params"]["unit"]
    label = f"sentences:{unit['num_sentences']}" if unit["kind"] == "sentences" else unit["kind"]
    echo = click.echo
    echo("")
    echo(f"neardup dedup --unit {label}: {counts['items']:,} documents, {counts['units']:,} units")
    if counts["bad_records_skipped"]:
        echo(f"  skipped bad records : {counts['bad_records_skipped']:,}")
    echo(
        f"  repeated units      : {counts['units_removed']:,} removed "
        f"({counts['exact_duplicates']:,} exact copies, {counts['verified_pairs']:,} near pairs "
        f"verified)"
    )
    echo(
        f"  documents changed   : {counts['documents_changed']:,} "
        f"({counts['chars_removed']:,} characters removed)"
    )
    if counts["removed"]:
        echo(f"  documents dropped   : {counts['removed']:,} (left too short)")
    echo(f"  time                : {record['timings_s']['total']:.2f} s")
    echo(f"  outputs in {output}/: " + ", ".join(record["outputs"].values()))


def _print_summary(summary: Summary, output: Path) -> None:
    counts = summary.counts
    echo = click.echo
    echo("")
    echo(f"neardup dedup: {counts.items:,} documents, {counts.bytes / 1e6:,.1f} MB")
    if counts.bad_records_skipped:
        echo(f"  skipped bad records : {counts.bad_records_skipped:,}")
    if counts.empty_documents:
        echo(f"  empty documents     : {counts.empty_documents:,} (no word: matched with none)")
    echo(f"  exact duplicates    : {counts.exact_duplicates:,}")
    echo(
        f"  near-duplicate pairs: {counts.verified_pairs:,} verified "
        f"({summary.verify}) of {counts.candidate_pairs:,} candidates "
        f"({summary.scheme_label})"
    )
    if counts.already_joined:
        echo(
            f"  already joined      : {counts.already_joined:,} candidates, not measured "
            "(--pairs all measures them)"
        )
    if counts.size_rejected:
        echo(
            f"  rejected by size    : {counts.size_rejected:,} candidates, not measured "
            "(set sizes too unequal for the threshold)"
        )
    echo(
        f"  clusters            : {counts.clusters:,} holding "
        f"{counts.documents_in_clusters:,} documents"
    )
    echo(f"  removed / kept      : {counts.removed:,} / {counts.kept:,}")
    if counts.against_index is not None:
        echo(f"  near-copies in index: {counts.against_index:,} removed")
    if counts.giant_buckets:
        echo(
            f"  giant LSH buckets   : {counts.giant_buckets:,} "
            f"(largest {counts.largest_bucket:,}), paired linearly"
        )
    if summary.biggest_clusters:
        biggest = ", ".join(f"{c.cluster} ({c.size})" for c in summary.biggest_clusters)
        echo(f"  biggest clusters    : {biggest}")
    times = summary.times
    compiling = (
        f" (and {times.compile_seconds:.1f} s compiling kernels, once)"
        if times.compile_seconds >= 0.05
        else ""
    )
    echo(f"  time                : {times.total:.2f} s, {times.throughput_mb_s} MB/s{compiling}")
    echo(f"  outputs in {output}/: " + ", ".join((summary.outputs or {}).values()))
