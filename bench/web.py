"""Web archives: WARC -> text -> signatures against the peers' usual paths, and mirror hosts.

Data: crawls of real HTML (the Sphinx documentation of four Debian packages, published under
many host names and path layouts) written as per-record-gzipped WARC files by
``tests/web/sitegen.py``'s ``build_crawl``, in a temporary directory.

1. **Throughput** on one ``.warc.gz`` of ``--copies`` rounds of mirrors (12: about 1,100 HTML
   pages, 50 MB of HTML). Every path goes from the file to 128-slot MinHash-family signatures of
   word 5-shingles of the page text, in one process, single-threaded Python where the peer is:

   * neardup: ``WarcSource(path, ReadSpec(html_extract=...)).records()`` (FastWARC records,
     resiliparse text; a payload whose ``WARC-Payload-Digest`` was seen before reuses its
     text), then ``make_sketcher(SketchSpec(kind=...))`` on the texts (numba kernels); with
     ``text`` (all visible text) and ``main`` (resiliparse's main content) extraction, OPH and
     classic MinHash;
   * warcio ``ArchiveIterator`` + ``trafilatura.extract(html)`` (defaults) + datasketch
     (lower-cased whitespace words, 5-shingles as UTF-8, ``MinHash.bulk`` with 128
     permutations): the usual Python path;
   * warcio + resiliparse ``extract_plain_text`` + datasketch: the same extractor as neardup's
     ``text``, so that the extractor's cost and the sketcher's can be told apart;
   * datatrove's ``WarcReader`` (warcio, cchardet, libmagic) + ``Trafilatura`` extractor (its
     sandboxed subprocess, 1 s timeout, ``favour_precision``, ``deduplicate``) +
     ``MinhashDedupSignature`` (16 buckets x 8 hashes = 128, 5-grams, xxhash64; signatures
     written to disk and sorted), stages run one after the other on the lists of documents.
     Its English word tokenizer is NLTK's punkt, whose data cannot be downloaded here: a
     whitespace :class:`WordTokenizer` stands in (cheaper than punkt, so datatrove's time is a
     lower bound).

   Printed: pages, seconds of each stage, pages/s and MB/s of uncompressed HTML (the HTTP
   bodies of the HTML responses, as warcio reads them), mean characters of text per page, and
   the time relative to neardup's ``text`` + OPH path. Medians of ``--repeat`` runs (every
   path is warmed up once on a small crawl first: numba's compiled kernels are loaded,
   trafilatura's and datatrove's imports done). Then the whole CLI as a separate process,
   ``neardup dedup crawl.warc.gz -o out --overwrite``: wall time and peak RSS by
   ``/usr/bin/time -v``.
2. **Mirrors** on a crawl of ``--mirror-copies`` rounds (20: 104 hosts, about 1,700 pages):
   ``neardup.jobs.mirrors.mirrors_files`` timed (median of ``--repeat``), and the mirror pairs found
   scored against the crawl's truth (``Crawl.mirrors``: sorted host pair -> kind): precision,
   recall, kind accuracy, with the misses and false pairs by the roles of their hosts. Pairs of
   two partial or two stale copies of one set, or of two hosts of copied pages, are not in the
   truth (whether they are mirrors of each other depends on the draw) and count neither way:
   they are reported apart. Then
   ``neardup mirrors`` as a process (wall time, peak RSS).

Run: ``.venv/bin/python bench/web.py [--quick] [--output docs/web-bench.md]`` (full: about 5
minutes on 2 cores; quick: under 1).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.web.sitegen import Site, build_crawl, plan  # noqa: E402

from neardup import SketchSpec, make_sketcher  # noqa: E402
from neardup.io.warc import WarcSource  # noqa: E402
from neardup.params import ReadSpec  # noqa: E402

NUM_PERM = 128
K = 5
MB = 1e6

LINES: list[str] = []
"""Everything printed, for ``--output``."""


def say(line: str = "") -> None:
    print(line, flush=True)
    LINES.append(line)


def version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def environment() -> str:
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        found = re.search(r"model name\s*:\s*(.+)", cpuinfo.read_text())
        cpu = found.group(1).strip() if found else cpu
    packages = ", ".join(
        f"{name} {version(name)}"
        for name in (
            "neardup",
            "numba",
            "fastwarc",
            "resiliparse",
            "warcio",
            "trafilatura",
            "datasketch",
            "datatrove",
        )
    )
    return (
        f"date {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; {os.cpu_count()} cores "
        f"({cpu}), {platform.system()} {platform.release()}; Python "
        f"{platform.python_version()}; {packages}"
    )


def timed(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The median wall time of ``repeat`` runs, and the last run's result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


# the crawl ------------------------------------------------------------------------------------


def html_bodies(path: Path) -> list[bytes]:
    """The HTTP bodies of the HTML responses, as warcio reads them (independent of neardup)."""
    from warcio.archiveiterator import ArchiveIterator

    bodies = []
    with path.open("rb") as stream:
        for record in ArchiveIterator(stream):
            if record.rec_type != "response":
                continue
            kind = record.http_headers.get_header("Content-Type") or ""
            if kind.split(";")[0].strip().lower() in ("text/html", "application/xhtml+xml"):
                bodies.append(record.content_stream().read())
    return bodies


# the paths ------------------------------------------------------------------------------------


@dataclass
class Run:
    """One path's result on the crawl: pages with a signature, text size, seconds per stage."""

    pages: int
    chars: int
    stages: dict[str, float] = field(default_factory=dict)
    notes: str = ""


def neardup_path(path: Path, extract: str, kind: str) -> Run:
    start = time.perf_counter()
    source = WarcSource(path, ReadSpec(html_extract=extract))  # type: ignore[arg-type]
    texts = [text for _, text in source.records()]
    read = time.perf_counter() - start
    start = time.perf_counter()
    signatures = make_sketcher(SketchSpec(kind=kind, num_perm=NUM_PERM)).sketch(texts)
    sketch = time.perf_counter() - start
    assert signatures.values.shape == (len(texts), NUM_PERM)
    return Run(
        len(texts),
        sum(map(len, texts)),
        {"read + extract": read, "sketch": sketch},
        f"{source.stats.duplicate_payloads} payloads reused by digest",
    )


def warcio_read(path: Path) -> list[str]:
    """HTML responses decoded by their declared charset (UTF-8 when none), as peers do."""
    from warcio.archiveiterator import ArchiveIterator

    htmls = []
    with path.open("rb") as stream:
        for record in ArchiveIterator(stream):
            if record.rec_type != "response":
                continue
            kind = (record.http_headers.get_header("Content-Type") or "").lower()
            if "html" not in kind:
                continue
            found = re.search(r"charset=([\w-]+)", kind)
            body = record.content_stream().read()
            try:
                htmls.append(body.decode(found.group(1) if found else "utf-8", "replace"))
            except LookupError:
                htmls.append(body.decode("utf-8", "replace"))
    return htmls


def datasketch_signatures(texts: list[str]) -> list[Any]:
    """datasketch MinHash (128 permutations, shared) of each text's lower-cased word 5-shingles."""
    from datasketch import MinHash

    sets = []
    for text in texts:
        words = text.lower().split()
        sets.append(list({" ".join(words[i : i + K]).encode() for i in range(len(words) - K + 1)}))
    return list(MinHash.bulk(sets, num_perm=NUM_PERM))


def warcio_path(path: Path, extractor: str) -> Run:
    start = time.perf_counter()
    htmls = warcio_read(path)
    read = time.perf_counter() - start
    start = time.perf_counter()
    if extractor == "trafilatura":
        import trafilatura

        extracted = [trafilatura.extract(html) for html in htmls]
        texts = [text for text in extracted if text]
    else:
        from resiliparse.extract.html2text import extract_plain_text

        texts = [extract_plain_text(html) for html in htmls]
    extract = time.perf_counter() - start
    start = time.perf_counter()
    signatures = datasketch_signatures(texts)
    sketch = time.perf_counter() - start
    assert len(signatures) == len(texts)
    dropped = len(htmls) - len(texts)
    return Run(
        len(texts),
        sum(map(len, texts)),
        {"read": read, "extract": extract, "sketch": sketch},
        f"{dropped} pages without text" if dropped else "",
    )


def datatrove_available() -> str | None:
    """None when datatrove and what its WARC path needs import; else why not."""
    try:
        import cchardet  # noqa: F401
        import magic  # noqa: F401
        import xxhash
        from datatrove.pipeline.dedup.minhash import MinhashDedupSignature  # noqa: F401
        from datatrove.pipeline.extractors import Trafilatura  # noqa: F401
        from datatrove.pipeline.readers import WarcReader  # noqa: F401
    except ImportError as error:
        return (
            f"datatrove skipped: {error} (pip install datatrove faust-cchardet python-magic "
            "tokenizers 'xxhash<4')"
        )
    try:
        xxhash.xxh64_intdigest("x")
    except TypeError:
        return (
            "datatrove skipped: it hashes str with xxhash, which xxhash >= 4 refuses "
            "(pip install 'xxhash<4')"
        )
    return None


def datatrove_path(path: Path, scratch: Path) -> Run:
    from datatrove.pipeline.dedup.minhash import MinhashConfig, MinhashDedupSignature
    from datatrove.pipeline.extractors import Trafilatura
    from datatrove.pipeline.readers import WarcReader
    from datatrove.utils.word_tokenizers import WordTokenizer
    from loguru import logger

    logger.remove()

    class Whitespace(WordTokenizer):
        def word_tokenize(self, text: str) -> list[str]:
            return text.split()

        def sent_tokenize(self, text: str) -> list[str]:
            return [text]

        def span_tokenize(self, text: str) -> list[tuple[int, int]]:
            return [(0, len(text))]

    signatures = scratch / "datatrove-signatures"
    shutil.rmtree(signatures, ignore_errors=True)
    start = time.perf_counter()
    reader = WarcReader(str(path.parent), glob_pattern=path.name)
    documents = list(reader.run(None, 0, 1))
    read = time.perf_counter() - start
    start = time.perf_counter()
    extracted = list(Trafilatura(timeout=1).run(iter(documents), 0, 1))
    extract = time.perf_counter() - start
    start = time.perf_counter()
    config = MinhashConfig(n_grams=K, num_buckets=16, hashes_per_bucket=8)
    MinhashDedupSignature(str(signatures), config=config, language=Whitespace()).run(
        iter(extracted), 0, 1
    )
    sketch = time.perf_counter() - start
    dropped = len(documents) - len(extracted)
    return Run(
        len(extracted),
        sum(len(d.text) for d in extracted),
        {"read": read, "extract": extract, "sketch": sketch},
        f"{dropped} pages dropped (no text or timeout)" if dropped else "",
    )


# 1. throughput --------------------------------------------------------------------------------


def throughput_section(work: Path, args: argparse.Namespace) -> None:
    start = time.perf_counter()
    crawl = build_crawl(work / "crawl", copies=args.copies, num_files=1)
    path = crawl.files[0]
    small = build_crawl(work / "warmup", copies=1, num_files=1).files[0]
    bodies = html_bodies(path)
    html_bytes = sum(map(len, bodies))
    say(
        f"\n## 1. WARC -> text -> 128-slot signatures\n\nCrawl: {path.name}, "
        f"{path.stat().st_size / MB:.1f} MB gzipped, {len(bodies):,} HTML responses, "
        f"{html_bytes / MB:.1f} MB of HTML ({args.copies} rounds of mirrors, "
        f"{len(crawl.hosts)} hosts; built in {time.perf_counter() - start:.1f} s). "
        f"Median of {args.repeat} runs.\n"
    )

    scratch = work / "scratch"
    scratch.mkdir()
    paths: list[tuple[str, Callable[[Path], Run]]] = [
        ("neardup, text + OPH", lambda p: neardup_path(p, "text", "oph")),
        ("neardup, text + MinHash", lambda p: neardup_path(p, "text", "minhash")),
        ("neardup, main + OPH", lambda p: neardup_path(p, "main", "oph")),
        ("warcio + resiliparse + datasketch", lambda p: warcio_path(p, "resiliparse")),
        ("warcio + trafilatura + datasketch", lambda p: warcio_path(p, "trafilatura")),
    ]
    skipped = datatrove_available()
    if skipped is None:
        paths.append(
            (
                "datatrove WarcReader + Trafilatura + MinhashDedupSignature",
                lambda p: datatrove_path(p, scratch),
            )
        )
    else:
        say(f"- {skipped}")

    rows = []
    for name, run in paths:
        run(small)  # warm-up: kernels loaded, imports done
        stage_times: dict[str, list[float]] = {}
        totals, result = [], None
        for _ in range(args.repeat):
            begin = time.perf_counter()
            result = run(path)
            totals.append(time.perf_counter() - begin)
            for stage, seconds in result.stages.items():
                stage_times.setdefault(stage, []).append(seconds)
        assert result is not None
        stages = {s: statistics.median(t) for s, t in stage_times.items()}
        rows.append((name, statistics.median(totals), stages, result))
        print(f"  {name}: {statistics.median(totals):.2f} s", flush=True)

    base = rows[0][1]
    say(
        "| path | pages | stages s (median) | total s | pages/s | MB/s of HTML "
        "| chars/page | time vs neardup | notes |"
    )
    say("|---|---:|---|---:|---:|---:|---:|---:|---|")
    for name, total, stages, result in rows:
        parts = ", ".join(f"{s} {t:.2f}" for s, t in stages.items())
        say(
            f"| {name} | {result.pages:,} | {parts} | {total:.2f} | {result.pages / total:,.0f} "
            f"| {html_bytes / MB / total:.1f} | {result.chars / max(result.pages, 1):,.0f} "
            f"| {total / base:.1f}x | {result.notes} |"
        )
    cli_dedup(path, work, args, html_bytes, len(bodies))


def time_process(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of ``command``, by ``/usr/bin/time -v``."""
    start = time.perf_counter()
    done = subprocess.run(
        ["/usr/bin/time", "-v", *command], capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    return wall, int(found.group(1)) / 1024 if found else float("nan")


def cli_dedup(
    path: Path, work: Path, args: argparse.Namespace, html_bytes: int, pages: int
) -> None:
    cli = str(Path(sys.executable).parent / "neardup")
    out = work / "dedup-out"
    times, peaks = [], []
    for _ in range(args.repeat):
        wall, peak = time_process([cli, "dedup", str(path), "-o", str(out), "--overwrite", "-q"])
        times.append(wall)
        peaks.append(peak)
    summary = json.loads((out / "summary.json").read_text())
    counts = summary["counts"]
    wall = statistics.median(times)
    say(
        f"\nThe CLI as a process: `neardup dedup {path.name} -o out --overwrite` (median of "
        f"{args.repeat}; process start, imports and writing the outputs included)\n"
    )
    say(
        "| wall s | pages/s | MB/s of HTML | peak RSS MiB | documents | exact duplicates "
        "| near pairs | removed | non-HTML skipped | payloads reused |"
    )
    say("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    say(
        f"| {wall:.2f} | {pages / wall:,.0f} | {html_bytes / MB / wall:.1f} | {max(peaks):,.0f} "
        f"| {counts['items']:,} | {counts['exact_duplicates']:,} "
        f"| {counts['verified_pairs']:,} | {counts['removed']:,} "
        f"| {counts.get('non_html_skipped', 0):,} | {counts.get('duplicate_payloads', 0):,} |"
    )


# 2. mirrors -----------------------------------------------------------------------------------


def roles_of(pair: tuple[str, str], sites: dict[str, Site]) -> str:
    a, b = sites[pair[0]], sites[pair[1]]
    same = "same set" if a.docs == b.docs else "other sets"
    first, second = sorted((a.role, b.role))
    return f"{first}-{second} ({same})"


def mirrors_section(work: Path, args: argparse.Namespace) -> None:
    from neardup.jobs.mirrors import mirrors_files

    start = time.perf_counter()
    crawl = build_crawl(work / "mirror-crawl", copies=args.mirror_copies)
    sites = {site.host: site for site in plan(args.mirror_copies)}
    size = sum(f.stat().st_size for f in crawl.files)
    say(
        f"\n## 2. Mirror hosts\n\nCrawl: {len(crawl.files)} WARC files, {size / MB:.1f} MB "
        f"gzipped, {len(crawl.pages):,} HTML pages on {len(crawl.hosts)} hosts "
        f"({args.mirror_copies} rounds of mirrors; built in "
        f"{time.perf_counter() - start:.1f} s); {len(crawl.mirrors):,} mirror pairs in the "
        f"truth ({dict(Counter(crawl.mirrors.values()))}).\n"
    )
    out = work / "mirrors-out"
    small = build_crawl(work / "mirror-warmup", copies=1)
    mirrors_files(small.files, work / "mirrors-warmup", overwrite=True)
    seconds, summary = timed(lambda: mirrors_files(crawl.files, out, overwrite=True), args.repeat)
    found = {}
    for line in (out / "mirrors.jsonl").read_text().splitlines():
        record = json.loads(line)
        found[(min(record["a"], record["b"]), max(record["a"], record["b"]))] = record["kind"]

    def undecided(pair: tuple[str, str]) -> bool:
        a, b = sites[pair[0]], sites[pair[1]]
        if a.role == b.role == "copied":  # two hosts of copied pages may share most of them
            return True
        return a.docs == b.docs and a.role == b.role and a.role in ("partial", "stale")

    truth = crawl.mirrors
    apart = {p: k for p, k in found.items() if p not in truth and undecided(p)}
    scored = {p: k for p, k in found.items() if p not in apart}
    hits = [p for p in scored if p in truth]
    false = [p for p in scored if p not in truth]
    missed = [p for p in truth if p not in found]
    right_kind = sum(found[p] == truth[p] for p in hits)
    precision = len(hits) / len(scored) if scored else 1.0
    recall = len(hits) / len(truth) if truth else 1.0
    pages = summary["counts"]["items"]
    timings = {k: v for k, v in summary["timings_s"].items() if k != "total"}
    say(
        "| hosts | pages | wall s (median) | pages/s | pairs found | precision | recall "
        "| kind accuracy | stages s (last run) |"
    )
    say("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    say(
        f"| {summary['counts']['hosts']} | {pages:,} | {seconds:.2f} | {pages / seconds:,.0f} "
        f"| {len(found):,} | {precision:.4f} | {recall:.4f} "
        f"| {right_kind / len(hits) if hits else 1.0:.4f} "
        f"| {', '.join(f'{k} {v:.2f}' for k, v in timings.items())} |"
    )
    confusion = Counter((truth[p], found[p]) for p in hits)
    say(
        "\nKinds (truth -> found): "
        + ", ".join(f"{t} -> {f}: {n}" for (t, f), n in sorted(confusion.items()))
    )
    say(f"Missed pairs by roles: {dict(Counter(roles_of(p, sites) for p in missed)) or 'none'}")
    say(
        "False pairs by roles: "
        f"{dict(Counter(roles_of(p, sites) + ' ' + found[p] for p in false)) or 'none'}"
    )
    undecided_total = sum(
        1
        for i, a in enumerate(sites)
        for b in list(sites)[i + 1 :]
        if undecided((min(a, b), max(a, b)))
    )
    say(
        f"Not scored: {len(apart)} of the {undecided_total} pairs of two partial, two stale or "
        f"two copied-page hosts reported, as {dict(Counter(apart.values()))}"
    )
    say(
        f"Graph: {summary['counts']['graph']}; pages by reason: "
        f"{summary['counts']['pages_by_reason']}"
    )

    cli = str(Path(sys.executable).parent / "neardup")
    wall, peak = time_process(
        [cli, "mirrors", *map(str, crawl.files), "-o", str(work / "cli-mirrors"), "--overwrite"]
    )
    say(
        f"\n`neardup mirrors` as a process on the same crawl: {wall:.2f} s wall, peak RSS "
        f"{peak:,.0f} MiB"
    )


# main -----------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small crawls, one run each")
    parser.add_argument("--copies", type=int, help="mirror rounds of the throughput crawl [12]")
    parser.add_argument("--mirror-copies", type=int, help="mirror rounds of the mirror crawl [20]")
    parser.add_argument("--repeat", type=int, help="runs per measurement [3; quick 1]")
    parser.add_argument("--output", type=Path, help="also write the printed report here")
    parser.add_argument("--skip-throughput", action="store_true", help="mirrors only")
    parser.add_argument("--skip-mirrors", action="store_true", help="throughput only")
    args = parser.parse_args()
    args.copies = args.copies or (2 if args.quick else 12)
    args.mirror_copies = args.mirror_copies or (4 if args.quick else 20)
    args.repeat = args.repeat or (1 if args.quick else 3)

    say(f"# bench/web.py\n\n{environment()}")
    say(f"load average at the start: {os.getloadavg()[0]:.2f} (a shared machine)")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        if not args.skip_throughput:
            throughput_section(work, args)
        if not args.skip_mirrors:
            mirrors_section(work, args)
    say(
        f"\ntotal {time.perf_counter() - start:.0f} s; load average (1, 5, 15 min) at the end: "
        + ", ".join(f"{x:.2f}" for x in os.getloadavg())
    )
    if args.output:
        args.output.write_text("\n".join(LINES) + "\n")


if __name__ == "__main__":
    main()
