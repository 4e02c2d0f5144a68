"""A finished run read back for its report: the summary, the clusters, the pairs, some texts.

A run directory (``neardup dedup -o OUTDIR``) holds ``summary.json``, ``clusters.jsonl`` and
usually ``pairs.jsonl``; :func:`load_run` reads them (the JSON Lines through Arrow, in columns,
never one Python object per document) and keeps what the report shows: the cluster sizes, the
biggest clusters with their members, and a seeded sample of the pairs in each similarity band.
:func:`read_texts` re-reads the run's inputs, in one streaming pass with the run's own reading
settings, for the texts of the sampled pairs and a few short documents. Fields that older runs
did not write (similarities, passages, the histogram) come back as ``None``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from neardup._types import Batch, F64Array, I64Array, U64Array
from neardup.errors import InputError, NeardupError, ParameterError
from neardup.explain import Passage
from neardup.io.readers import all_batches, open_sources
from neardup.io.records import Ids
from neardup.params import ConfigFile, DedupConfig, ReadSpec
from neardup.record import upgraded
from neardup.text.normalize import normalize_bytes
from neardup.text.shingle import Shingler

__all__ = [
    "Band",
    "Cluster",
    "Member",
    "Pair",
    "Run",
    "Texts",
    "check_sample_sizes",
    "load_run",
    "read_summary",
    "read_texts",
]

MAX_MEMBERS = 50
"""Members listed per cluster (the least similar to the representative first)."""

NUM_BANDS = 4
"""Equal similarity bands between the threshold and 1 that pairs are sampled from."""

_CLUSTER_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("cluster", pa.string()),
        ("keep", pa.bool_()),
        ("similarity", pa.float64()),
        ("min_similarity", pa.float64()),
    ]
)
_PAIR_SCHEMA = pa.schema(
    [
        ("a", pa.string()),
        ("b", pa.string()),
        ("similarity", pa.float64()),
        ("estimate", pa.float64()),
        ("identical", pa.bool_()),
        ("passages", pa.list_(pa.list_(pa.int64()))),
        ("jaccard", pa.float64()),  # what runs before the rename wrote for similarity
        ("exact", pa.bool_()),  # and for identical
    ]
)


@dataclass(frozen=True, slots=True)
class Member:
    """A document of a cluster and its similarity to the representative (None: not recorded)."""

    id: str
    similarity: float | None


@dataclass(frozen=True, slots=True)
class Cluster:
    """One of the biggest clusters.

    ``members`` lists at most :data:`MAX_MEMBERS` documents other than the representative, the
    least similar first; ``min_similarity`` is the cluster's least similarity of a member to
    its representative (None where the run did not record it).
    """

    label: str
    size: int
    representative: str
    members: tuple[Member, ...]
    min_similarity: float | None


@dataclass(frozen=True, slots=True)
class Pair:
    """A reported pair, its similarity, and its shared passages when the run recorded them."""

    a: str
    b: str
    similarity: float
    passages: tuple[Passage, ...] | None


@dataclass(frozen=True, slots=True)
class Band:
    """Pairs of similarity in ``[low, high)`` (the last band includes 1): a count and a sample."""

    low: float
    high: float
    num_pairs: int
    sample: tuple[Pair, ...]


@dataclass(frozen=True, slots=True)
class Run:
    """What the report shows of a run directory.

    Attributes
    ----------
    directory
        The run directory.
    summary
        ``summary.json`` as read.
    config
        The run's algorithm parameters (``summary["params"]``).
    read
        How the run read its inputs (``summary["params"]["read"]``; a summary written before
        that table held its keys at the top level of ``params``).
    cluster_sizes
        ``(sizes, counts)``: how many clusters of two or more documents have each size,
        sizes increasing; None when the run wrote no ``clusters.jsonl``.
    biggest
        The biggest clusters, largest first (ties: the cluster met first in the file).
    bands
        The pairs by similarity band, each with a seeded sample; None without ``pairs.jsonl``.
    exact_links
        Exact-duplicate links in ``pairs.jsonl`` (not sampled: their texts are identical).
    num_records
        Lines read from ``clusters.jsonl`` and ``pairs.jsonl``.
    """

    directory: Path
    summary: Mapping[str, Any]
    config: DedupConfig
    read: ReadSpec
    cluster_sizes: tuple[I64Array, I64Array] | None
    biggest: tuple[Cluster, ...]
    bands: tuple[Band, ...] | None
    exact_links: int
    num_records: int

    @property
    def threshold(self) -> float:
        """The run's similarity threshold."""
        return self.config.lsh.threshold


@dataclass(frozen=True, slots=True)
class Texts:
    """Texts re-read from a run's inputs.

    Attributes
    ----------
    by_id
        The texts asked for, by id (those found).
    short_ids
        The first short documents (no shingle at all) in input order, at most as many as asked.
    num_short
        Short documents found in the whole pass.
    problem
        Why no text could be read (a missing input, an unreadable record), else None.
    num_docs
        Documents read in the pass (0 when none could be read).
    """

    by_id: Mapping[str, str]
    short_ids: tuple[str, ...]
    num_short: int
    problem: str | None = None
    num_docs: int = 0


def check_sample_sizes(num_clusters: int, pairs_per_band: int) -> None:
    """Refuse a negative number of clusters or pairs to show."""
    for name, value in (("num_clusters", num_clusters), ("pairs_per_band", pairs_per_band)):
        if value < 0:
            raise ParameterError(f"report.{name} must be an int >= 0; got {value}.")


def load_run(
    directory: Path | str,
    *,
    num_clusters: int = 10,
    pairs_per_band: int = 3,
    seed: int = 42,
    progress: Callable[[int, int], object] | None = None,
) -> Run:
    """Read a run directory: its summary, cluster sizes, biggest clusters and sampled pairs.

    Parameters
    ----------
    directory
        The output directory of ``neardup dedup``.
    num_clusters
        How many of the biggest clusters to keep.
    pairs_per_band
        Pairs sampled in each similarity band (:data:`NUM_BANDS` bands from the threshold to
        1, and one below the threshold when a run reported such pairs).
    seed
        The seed of the sample: the same seed, the same pairs.
    progress
        Told the bytes of the results files read so far and their size, after each file
        (each is read whole, in Arrow's threads).

    Raises
    ------
    InputError
        The directory holds no readable ``summary.json`` of a dedup run, or a results file
        that is not JSON Lines.
    ParameterError
        A negative ``num_clusters`` or ``pairs_per_band``.
    """
    check_sample_sizes(num_clusters, pairs_per_band)
    directory = Path(directory)
    summary = read_summary(directory / "summary.json")
    command = summary.get("command", "dedup")
    if command != "dedup":
        raise InputError(
            f"this is the output of neardup {command}; neardup report reads the output "
            "directories of neardup dedup, substrings and contamination",
            path=directory,
        )
    try:
        config, read, _ = ConfigFile.from_dict(summary["params"])
    except (KeyError, TypeError, ParameterError) as exc:
        raise InputError(
            f"summary.json holds no config this neardup can read ({exc}); make the report "
            "with the neardup version that ran the job",
            path=directory / "summary.json",
        ) from exc
    outputs = summary.get("outputs") or {}
    clusters_path = directory / outputs.get("clusters", "clusters.jsonl")
    pairs_path = directory / outputs["pairs"] if "pairs" in outputs else None
    total_bytes = _size(clusters_path) + (0 if pairs_path is None else _size(pairs_path))
    clusters = _read_lines(clusters_path, _CLUSTER_SCHEMA)
    if progress is not None:
        progress(_size(clusters_path), total_bytes)
    pairs = None if pairs_path is None else _read_lines(pairs_path, _PAIR_SCHEMA)
    if progress is not None:
        progress(total_bytes, total_bytes)
    bands: tuple[Band, ...] | None = None
    exact_links = 0
    if pairs is not None:
        bands, exact_links = _sample_pairs(pairs, config.lsh.threshold, pairs_per_band, seed)
    return Run(
        directory=directory,
        summary=summary,
        config=config,
        read=read,
        cluster_sizes=None if clusters is None else _size_distribution(clusters),
        biggest=() if clusters is None else _biggest_clusters(clusters, num_clusters),
        bands=bands,
        exact_links=exact_links,
        num_records=sum(table.num_rows for table in (clusters, pairs) if table is not None),
    )


def read_summary(path: Path) -> dict[str, Any]:
    """``summary.json``, or an InputError saying the directory is not a run's."""
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(
            "no summary.json here: give the output directory of a neardup dedup, substrings or "
            "contamination run",
            path=path,
        ) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the run's summary: {exc}", path=path) from exc
    if not isinstance(summary, dict):
        raise InputError("not the summary of a neardup dedup run", path=path)
    return upgraded(summary)


def _size(path: Path) -> int:
    """Bytes of a results file (0 when there is none)."""
    return path.stat().st_size if path.is_file() else 0


def _read_lines(path: Path, schema: pa.Schema) -> pa.Table | None:
    """A results file as columns (fields it lacks are null); None when there is no such file."""
    if not path.is_file():
        return None
    if path.stat().st_size == 0:
        return schema.empty_table()
    options = pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    try:
        return pa_json.read_json(path, parse_options=options)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"not a results file of neardup dedup: {exc}", path=path) from exc


def _floats(column: pa.ChunkedArray) -> F64Array:
    """A float column as NumPy, null as NaN."""
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)


def _optional(value: float | None) -> float | None:
    """None for a missing or NaN similarity."""
    return None if value is None or np.isnan(value) else float(value)


def _size_distribution(clusters: pa.Table) -> tuple[I64Array, I64Array]:
    """How many clusters of two or more documents have each size."""
    counted = pc.value_counts(clusters.column("cluster")).field("counts").to_numpy()
    sizes, counts = np.unique(counted[counted > 1], return_counts=True)
    return sizes.astype(np.int64), counts.astype(np.int64)


def _biggest_clusters(clusters: pa.Table, num: int) -> tuple[Cluster, ...]:
    """The ``num`` largest clusters of two or more documents, largest first."""
    counted = pc.value_counts(clusters.column("cluster"))  # in order of first appearance
    sizes = counted.field("counts").to_numpy()
    order = np.argsort(-sizes, kind="stable")[:num]
    order = order[sizes[order] > 1]
    if order.shape[0] == 0:
        return ()
    labels = counted.field("values").take(pa.array(order)).to_pylist()
    chosen = clusters.filter(pc.is_in(clusters.column("cluster"), value_set=pa.array(labels)))
    rows: dict[str, list[dict[str, Any]]] = {label: [] for label in labels}
    for row in chosen.to_pylist():
        rows[row["cluster"]].append(row)
    return tuple(_cluster(label, rows[label]) for label in labels)


def _cluster(label: str, rows: list[dict[str, Any]]) -> Cluster:
    """A cluster from its ``clusters.jsonl`` rows, in file order.

    The representative is the kept member (or, where an index dropped it, the first member
    as similar as can be).
    """
    similarity = [_optional(row["similarity"]) for row in rows]
    kept = [i for i, row in enumerate(rows) if row["keep"]]
    best = max(range(len(rows)), key=lambda i: (similarity[i] or 0.0, -i))
    chosen = kept[0] if kept else best
    members = sorted(
        (Member(row["id"], similarity[i]) for i, row in enumerate(rows) if i != chosen),
        key=lambda m: (m.similarity is None, m.similarity or 0.0),
    )
    return Cluster(
        label=label,
        size=len(rows),
        representative=rows[chosen]["id"],
        members=tuple(members[:MAX_MEMBERS]),
        min_similarity=_optional(rows[chosen]["min_similarity"]),
    )


def _sample_pairs(
    pairs: pa.Table, threshold: float, per_band: int, seed: int
) -> tuple[tuple[Band, ...], int]:
    """The non-exact pairs by similarity band, each band with a seeded sample; exact links."""
    identical = pc.coalesce(pairs.column("identical"), pairs.column("exact"))
    exact = identical.to_numpy(zero_copy_only=False).astype(bool)
    similarity = _floats(pc.coalesce(pairs.column("similarity"), pairs.column("jaccard")))
    similarity = np.where(np.isnan(similarity), _floats(pairs.column("estimate")), similarity)
    edges = np.linspace(threshold, 1.0, NUM_BANDS + 1)
    if np.any(similarity[~exact] < threshold):  # reported without verification
        edges = np.r_[0.0, edges]
    band = np.clip(np.searchsorted(edges, similarity, side="right") - 1, 0, edges.shape[0] - 2)
    rng = np.random.default_rng(seed)
    bands: list[Band] = []
    for index in range(edges.shape[0] - 1):
        members = np.flatnonzero((band == index) & ~exact)
        chosen = np.sort(rng.choice(members, size=min(per_band, members.shape[0]), replace=False))
        rows = pairs.take(pa.array(chosen, type=pa.int64())).to_pylist()
        sample = tuple(
            Pair(
                a=row["a"],
                b=row["b"],
                similarity=float(similarity[i]),
                passages=None
                if row["passages"] is None
                else tuple(Passage(*spans) for spans in row["passages"]),
            )
            for i, row in zip(chosen.tolist(), rows, strict=True)
        )
        bands.append(Band(float(edges[index]), float(edges[index + 1]), members.shape[0], sample))
    return tuple(bands), int(exact.sum())


def read_texts(
    run: Run,
    ids: Sequence[str],
    num_short: int = 20,
    progress: Callable[[int, int], object] | None = None,
) -> Texts:
    """Re-read the run's inputs for the texts of ``ids`` and the first short documents.

    One streaming pass over the inputs, read as the run read them (:attr:`Run.read`: the text
    and id fields, format, HTML extraction, encoding and bad-record rule); only the texts asked for
    are kept. Ids are matched through their 128-bit hashes (:meth:`Ids.hashes`), so no id is
    decoded unless it may be one asked for.

    Parameters
    ----------
    run
        The run (:func:`load_run`).
    ids
        The documents whose texts are wanted.
    num_short
        Short documents (no shingle at all, as the run's shingling counts them) to name.
    progress
        Told the bytes of input read so far and the inputs' size, batch by batch (as the
        run's reading stage is).

    Returns
    -------
    Texts
        With ``problem`` set (and nothing read) when an input is missing or cannot be read.
    """
    inputs = run.summary.get("inputs") or []
    missing = [path for path in inputs if not Path(path).exists()]
    if not inputs or missing:
        named = ", ".join(missing) if missing else "(the summary names no input)"
        return Texts({}, (), 0, f"the run's inputs could not be found: {named}")
    config = run.config
    wanted = set(ids)
    wanted_hashes = _id_hashes(sorted(wanted))
    shingler = Shingler(config.sketch.shingle, config.sketch.normalize)
    found: dict[str, str] = {}
    short: list[str] = []
    total_short = num_docs = 0
    try:
        sources = open_sources(inputs, run.read)
        total_bytes = sum(source.size for source in sources)
        for batch in all_batches(sources, run.read.batch_bytes):
            maybe = np.flatnonzero(np.isin(batch.ids.hashes()[:, 0], wanted_hashes))
            for doc in maybe.tolist():
                if batch.ids[doc] in wanted:
                    found[batch.ids[doc]] = _text(batch.texts, doc)
            normalized = normalize_bytes(batch.texts, config.sketch.normalize)
            is_short = np.flatnonzero(shingler.shingle_sets(normalized).sizes() == 0)
            total_short += is_short.shape[0]
            short.extend(batch.ids[d] for d in is_short[: num_short - len(short)].tolist())
            num_docs += batch.num_docs
            if progress is not None:
                progress(batch.position, total_bytes)
    except (NeardupError, OSError) as exc:
        return Texts({}, (), 0, f"the run's inputs could not be read: {exc}")
    return Texts(found, tuple(short), total_short, num_docs=num_docs)


def _id_hashes(ids: Sequence[str]) -> U64Array:
    """The first 64 bits of each id's 128-bit hash, as the readers' ids hash them."""
    return Ids.of(ids).hashes()[:, 0]


def _text(texts: Batch, doc: int) -> str:
    """Document ``doc`` of a batch as a Python string."""
    start, stop = int(texts.offsets[doc]), int(texts.offsets[doc + 1])
    return bytes(texts.data[start:stop]).decode("utf-8", "surrogatepass")
