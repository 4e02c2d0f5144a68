"""The Spark engine's files: inputs read into a DataFrame, outputs written as the local engine's.

Inputs are JSONL (plain or gzip; Hadoop's ``TextInputFormat`` gives each line's byte offset),
Parquet, or web archives (WARC/ARC, one task per file), numbered as the local readers number
them. Outputs are ``clusters.jsonl`` and
``pairs.jsonl`` (lines made by :mod:`neardup.io.results`' line functions, in the local engine's
order), ``kept.parquet`` and ``summary.json``. On a local path the text outputs are joined into
single files, byte-identical to the local engine's, and the directory is written atomically
(:class:`~neardup.io.output.AtomicDirectory`, as the local engine writes); on a Hadoop path
(``hdfs://``, ``s3a://``, ...) each output is a directory of part files that Spark commits.
pyspark is imported lazily.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from neardup.errors import InputError, ParameterError
from neardup.io.output import AtomicDirectory, OutputKind
from neardup.io.results import (
    cluster_line,
    exact_pair_line,
    near_pair_line,
    utf8_json,
    write_json,
)
from neardup.io.source import json_type
from neardup.params import DedupConfig, HtmlExtract, ReadSpec

__all__ = [
    "SparkOutput",
    "cluster_lines",
    "comparable_column",
    "keep_columns",
    "pair_lines",
    "read_inputs",
    "spark_output",
    "write_results",
]


def read_inputs(spark: Any, inputs: Sequence[str], config: DedupConfig, read: ReadSpec) -> Any:
    """JSONL (plain or gzip), Parquet or WARC/ARC files: rows ``(input, offset, id, text, order)``.

    ``order`` is ``(input index, byte offset / row index / record number)``, so documents are
    numbered as the local engine numbers them. Every JSONL or Parquet record needs an id
    (``read.id_field``); a web archive's pages are named by their URIs, as locally. With
    ``config.keep_by``, field ``i``'s values are column ``keep{i}`` (:func:`keep_columns`).
    """
    from pyspark.sql import functions as F  # noqa: N812

    if all(_is_archive(p) for p in inputs) or read.input_format == "warc":
        if config.keep_by:
            raise InputError(
                "web archives have no fields to keep by; drop --keep-by, or give JSONL or "
                "Parquet inputs"
            )
        return _read_archives(spark, inputs, read).withColumn("order", F.struct("input", "offset"))
    if read.id_field == "":
        raise ParameterError("the Spark engine needs an id field (--id-field), not FILE:LINE ids.")
    if read.html_field is not None:  # read the HTML as the text, then extract it
        frame = read_inputs(
            spark, inputs, config, replace(read, text_field=read.html_field, html_field=None)
        )
        return frame.withColumn("text", _html_text_column(read.html_extract)("text"))
    id_field = read.id_field or "id"
    kinds = {Path(p).name.split(".", 1)[-1] for p in inputs}
    if kinds <= {"parquet"}:
        frames = [
            spark.read.parquet(p).select(
                F.lit(i).alias("input"),
                F.col("_metadata.row_index").alias("offset"),
                F.col(id_field).cast("string").alias("id"),
                F.col(read.text_field).alias("text"),
                *_parquet_keep_columns(spark, p, config),
            )
            for i, p in enumerate(inputs)
        ]
    elif kinds <= {"jsonl", "jsonl.gz", "json", "json.gz"}:
        frames = [_read_jsonl(spark, i, p, config, read) for i, p in enumerate(inputs)]
    else:
        raise InputError(
            "the Spark engine reads JSONL (.jsonl, .jsonl.gz), Parquet or WARC/ARC inputs, all of "
            f"one format; got {', '.join(sorted(kinds))}."
        )
    frame = frames[0]
    for other in frames[1:]:
        frame = frame.unionByName(other)
    return _one_type_each(frame, inputs, config).withColumn("order", F.struct("input", "offset"))


def keep_columns(config: DedupConfig) -> list[str]:
    """The columns of :func:`read_inputs` holding the ``keep_by`` fields' values, in order."""
    return [f"keep{i}" for i in range(len(config.keep_by))]


def _parquet_keep_columns(spark: Any, path: str, config: DedupConfig) -> list[Any]:
    """Each ``keep_by`` column of a Parquet file as a number and a string column."""
    from pyspark.sql import functions as F  # noqa: N812

    schema = spark.read.parquet(path).schema
    columns = []
    for i, (name, _) in enumerate(config.keep_fields):
        if name not in schema.names:
            raise InputError(
                f"{path}: no column {name!r} to keep by (columns: {', '.join(schema.names)})"
            )
        value, is_string = comparable_column(F.col(name), schema[name].dataType, name, path)
        number, string = F.lit(None).cast("double"), F.lit(None).cast("string")
        columns += [
            (number if is_string else value).alias(f"keep{i}_number"),
            (value if is_string else string).alias(f"keep{i}_string"),
        ]
    return columns


def comparable_column(column: Any, kind: Any, name: str, where: str) -> tuple[Any, bool]:
    """A Spark column of type ``kind`` as ``keep_by`` compares it, and whether it is strings.

    Numbers as doubles (NaN as null), dates as days and times as microseconds since the epoch,
    as :func:`neardup.keep.comparable` orders them; strings as they are. ``where`` names the
    column in the error for any other type.
    """
    from pyspark.sql import functions as F  # noqa: N812
    from pyspark.sql import types as T  # noqa: N812

    if isinstance(kind, T.StringType):
        return column, True
    if isinstance(kind, T.DateType):
        return F.unix_date(column).cast("double"), False
    if isinstance(kind, T.TimestampType | T.TimestampNTZType):
        return F.unix_micros(column).cast("double"), False
    if isinstance(kind, T.NumericType | T.NullType):
        number = column.cast("double")
        return F.when(F.isnan(number), None).otherwise(number), False
    raise InputError(
        f"{where}: --keep-by field {name!r} is {kind.simpleString()}; keep by a field of "
        "numbers, dates or strings"
    )


def _one_type_each(frame: Any, inputs: Sequence[str], config: DedupConfig) -> Any:
    """``frame`` with one ``keep{i}`` column per ``keep_by`` field: its numbers or its strings.

    A field holding both is an error naming a record of each.
    """
    from pyspark.sql import functions as F  # noqa: N812

    if not config.keep_by:
        return frame
    names = keep_columns(config)
    counts = frame.agg(
        *(F.count(f"{n}_{kind}").alias(f"{n}_{kind}") for n in names for kind in _KINDS)
    ).first()
    for (field, _), column in zip(config.keep_fields, names, strict=True):
        if counts[f"{column}_number"] and counts[f"{column}_string"]:
            where = {
                kind: frame.where(F.col(f"{column}_{kind}").isNotNull())
                .select("input", "offset")
                .orderBy("input", "offset")
                .first()
                for kind in _KINDS
            }
            raise InputError(
                f"--keep-by field {field!r} holds numbers ({inputs[where['number'][0]]} at "
                f"{where['number'][1]}) and strings ({inputs[where['string'][0]]} at "
                f"{where['string'][1]}); keep by a field of one type in every record"
            )
        kind = "string" if counts[f"{column}_string"] else "number"
        frame = frame.withColumn(column, F.col(f"{column}_{kind}"))
    return frame.drop(*(f"{n}_{kind}" for n in names for kind in _KINDS))


_KINDS = ("number", "string")


def _html_text_column(extract: HtmlExtract) -> Any:
    """A Spark function turning an HTML column into page text, as the local reader does."""
    from pyspark.sql import functions as F  # noqa: N812

    def text_of(html: str | None) -> str | None:
        from neardup.text.html import html_text

        return None if html is None else html_text(html, extract=extract)

    return F.udf(text_of, "string")


def _is_archive(path: str) -> bool:
    from neardup.io.readers import is_web_archive

    return is_web_archive(Path(path.removeprefix("file:")))


def _read_archives(spark: Any, inputs: Sequence[str], read: ReadSpec) -> Any:
    """Web archives, one task per file: each HTML page as ``(input, record number, id, text)``.

    Each file is read with :func:`~neardup.io.warc.archive_texts` as the local reader reads it;
    ids are made unique over all files afterwards as :class:`~neardup.io.warc.WarcSource`
    makes them (a URI seen before becomes ``URI@DATE``, then ``URI@DATE#N``). A revisit is
    resolved from its own file only (locally, from any earlier file of the run too).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F  # noqa: N812

    extract, skip = read.html_extract, read.skip_bad_records

    def pages_of(item: tuple[int, str]) -> Iterator[tuple[int, int, str, str, str]]:
        from neardup.io.warc import archive_texts

        index, path = item
        for page in archive_texts(Path(path.removeprefix("file:")), extract):
            if isinstance(page, InputError):
                if skip:
                    continue
                raise page
            record, text = page
            yield index, record.number, record.url, record.date, text

    tasks = spark.sparkContext.parallelize(list(enumerate(inputs)), max(1, len(inputs)))
    pages = tasks.flatMap(pages_of).toDF(
        "input long, offset long, url string, date string, text string"
    )
    order = ("input", "offset")
    seen = F.row_number().over(Window.partitionBy("url").orderBy(*order))
    pages = pages.withColumn(
        "base", F.when(seen == 1, F.col("url")).otherwise(F.concat_ws("@", "url", "date"))
    )
    repeat = F.row_number().over(Window.partitionBy("base").orderBy(*order))
    doc_id = F.when(repeat == 1, F.col("base")).otherwise(
        F.concat(F.col("base"), F.lit("#"), repeat.cast("string"))
    )
    return pages.select("input", "offset", doc_id.alias("id"), "text")


def _read_jsonl(spark: Any, index: int, path: str, config: DedupConfig, read: ReadSpec) -> Any:
    """Lines with their byte offsets (Hadoop's TextInputFormat), parsed as the local reader does.

    Each ``keep_by`` field comes as a number and a string column (:func:`_one_type_each`).
    """
    text_field, id_field = read.text_field, read.id_field or "id"
    skip = read.skip_bad_records
    keep_fields = [name for name, _ in config.keep_fields]

    def parse(pair: tuple[int, str]) -> list[tuple[Any, ...]]:
        offset, line = pair
        if not line.strip():
            return []
        where = f"{path} at byte {offset}"
        try:
            record = json.loads(line)
            text, doc_id = record[text_field], record[id_field]
            if not isinstance(text, str) or doc_id is None:
                raise TypeError(f"{text_field!r} must be a string and {id_field!r} present")
        except (ValueError, KeyError, TypeError) as exc:
            if skip:
                return []
            raise InputError(f"{where}: bad record ({exc}); or pass --skip-bad-records") from exc
        values: list[Any] = []
        for name in keep_fields:
            value = record.get(name)
            if isinstance(value, bool) or not isinstance(value, int | float | str | None):
                raise InputError(
                    f"{where}: --keep-by field {name!r} is {json_type(value)}; keep by a field "
                    "of numbers or strings"
                )
            number = float(value) if isinstance(value, int | float) else None
            number = None if number is not None and math.isnan(number) else number
            values += [number, value if isinstance(value, str) else None]
        return [(index, offset, str(doc_id), text, *values)]

    lines = spark.sparkContext.newAPIHadoopFile(
        path,
        "org.apache.hadoop.mapreduce.lib.input.TextInputFormat",
        "org.apache.hadoop.io.LongWritable",
        "org.apache.hadoop.io.Text",
    )
    schema = "input long, offset long, id string, text string" + "".join(
        f", {column}_number double, {column}_string string" for column in keep_columns(config)
    )
    return lines.flatMap(parse).toDF(schema)


def cluster_lines(
    doc_id: Any, cluster_id: Any, keep: Any, similarity: Any, min_similarity: Any
) -> Any:
    """The column of ``clusters.jsonl`` lines (without their newline) of these columns."""
    from pyspark.sql import functions as F  # noqa: N812

    line = F.udf(lambda *fields: cluster_line(*fields)[:-1], "string")
    return line(doc_id, cluster_id, keep, similarity, min_similarity)


def pair_lines(a: Any, b: Any, estimate: Any, jaccard: Any, exact: Any) -> Any:
    """The column of ``pairs.jsonl`` lines (without their newline) of these columns."""
    from pyspark.sql import functions as F  # noqa: N812

    exact_line = F.udf(lambda *fields: exact_pair_line(*fields)[:-1], "string")
    near_line = F.udf(lambda *fields: near_pair_line(*fields)[:-1], "string")
    return F.when(exact, exact_line(a, b)).otherwise(near_line(a, b, estimate, jaccard))


class SparkOutput:
    """The directory a Spark run writes into (:func:`spark_output`).

    Parameters
    ----------
    spark
        The SparkSession that writes.
    root
        Where Spark writes (a Hadoop path, or ``file:`` and a local directory).
    directory
        The local directory, for a local output; None for a Hadoop path.
    """

    def __init__(self, spark: Any, root: str, directory: Path | None = None) -> None:
        self.spark = spark
        self.root = root
        self.directory = directory

    def write_lines(self, name: str, frame: Any) -> None:
        """Write ``frame``'s ``line`` column as text ``name``, one file when local."""
        frame.select("line").write.mode("overwrite").text(f"{self.root}/{name}")
        if self.directory is not None:
            _join_parts(self.directory / name)

    def write_parquet(self, name: str, frame: Any) -> None:
        """Write ``frame`` as the Parquet dataset ``name``."""
        frame.write.mode("overwrite").parquet(f"{self.root}/{name}")

    def write_json(self, name: str, data: Mapping[str, Any]) -> None:
        """Write ``data`` as indented JSON ``name`` (a one-part directory on a Hadoop path)."""
        if self.directory is not None:
            write_json(self.directory / name, dict(data))
            return
        text = utf8_json(json.dumps(data, indent=2, ensure_ascii=False))
        self.spark.sparkContext.parallelize([text], 1).saveAsTextFile(f"{self.root}/{name}")


@contextmanager
def spark_output(
    spark: Any,
    output: str,
    *,
    kind: OutputKind,
    overwrite: bool = False,
    inputs: Sequence[str] = (),
) -> Iterator[SparkOutput]:
    """Where ``spark`` writes the outputs of a run into ``output``.

    A local path (no scheme, or ``file:``) is written atomically as the local engine writes
    (:class:`~neardup.io.output.AtomicDirectory`: a hidden sibling renamed into place when the
    block ends without an exception, refused when it exists unless ``overwrite``); on a
    Hadoop path each output is committed by Spark itself (its ``_SUCCESS`` marker).
    """
    if "://" in output and not output.startswith("file:"):
        yield SparkOutput(spark, output.rstrip("/"))
        return
    target = Path(output.removeprefix("file:"))
    with AtomicDirectory(target, kind=kind, overwrite=overwrite, inputs=inputs) as directory:
        local = directory.resolve()
        yield SparkOutput(spark, f"file:{local}", local)


def write_results(
    out: SparkOutput, clusters: Any, pairs: Any | None, kept: Any, annotate: str | None = None
) -> dict[str, str]:
    """Write clusters, pairs (unless None) and the kept corpus; the files, by role.

    ``clusters`` and ``pairs`` have the ``line`` column of :func:`cluster_lines` and
    :func:`pair_lines` beside the document keys (``doc``; ``a_doc``, ``b_doc`` and ``exact``):
    their lines are written in the local engine's order. ``kept`` is written as its ``id``
    and ``text``, by ``doc``; with ``annotate``, every document's, as ``annotated.parquet``
    with that column too.
    """
    written = {"clusters": "clusters.jsonl"}
    out.write_lines(written["clusters"], clusters.orderBy("doc"))
    if pairs is not None:
        written["pairs"] = "pairs.jsonl"
        out.write_lines(written["pairs"], pairs.orderBy(*_pair_order()))
    if annotate is None:
        written["kept"] = "kept.parquet"
        out.write_parquet(written["kept"], kept.orderBy("doc").select("id", "text"))
    else:
        written["annotated"] = "annotated.parquet"
        out.write_parquet(written["annotated"], kept.orderBy("doc").select("id", "text", annotate))
    return written


def _pair_order() -> list[Any]:
    """The local ``pairs.jsonl`` order: exact pairs by their second document, then near pairs."""
    from pyspark.sql import functions as F  # noqa: N812

    exact = F.col("exact")
    return [F.when(exact, 0).otherwise(1), F.when(exact, F.col("b_doc")).otherwise(F.col("a_doc")),
            "b_doc"]  # fmt: skip


def _join_parts(directory: Path) -> None:
    """Replace a directory of Spark part files by one file of their contents, in part order."""
    joined = directory.with_name(directory.name + ".joined")
    with joined.open("wb") as out:
        for part in sorted(directory.glob("part-*")):
            with part.open("rb") as f:
                shutil.copyfileobj(f, out)
    shutil.rmtree(directory)
    joined.rename(directory)
