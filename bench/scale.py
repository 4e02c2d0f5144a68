"""The user's path at scale: the neardup command line beside the peers, as whole processes.

Every pipeline runs as its own process on the same JSONL file and writes what a user needs:
the cluster of every document and the deduplicated corpus. Measured per run: wall time and the
peak RSS of that process (``os.wait4``), medians over ``--repeat`` runs, ratios to neardup.
For every neardup run it also prints, from the run's ``summary.json``, the seconds of each
stage (``timings_s``) per document and per candidate pair, with the candidate and verified
pairs and the largest cluster.

Corpora (made once under ``--data``, deterministic, from ``../shared/data/rfc``; see
``bench/scale_corpus.py``): short documents (``--sizes``, 1M and 10M: 45 words, ~300 bytes,
20% planted near-copies of known kinds), dense documents (``--dense PRESET,...`` at
``--dense-sizes``: windows of 30-60 words from a bounded pool of RFC words, one in ten a copy
of a recent document with one word replaced; the presets of ``DENSE_PRESETS``,
``rfc-first-8m-words``, ``rfc-first-20m-words`` and ``rfc-first-80k-words``, give about 1, 4
and 50 near neighbours per document at 1M), and the whole RFC corpus (``--rfc``: 9,823 long
documents, 537 MB).

Pipelines (word 5-shingles of lower-cased text, 128 hashes, threshold 0.8):

* ``neardup``: ``neardup dedup FILE -o OUT -q`` (defaults: OPH, exact verification, spanning
  pairs), the command a user runs;
* ``gaoya``: JSON parsing in Python, gaoya's Rust tokeniser and MinHash (32-bit hashes, 16 bands
  of 8 rows) with ``par_bulk_insert_docs`` and ``par_bulk_query`` on all cores, union-find;
* ``rensa``: Python shingles, ``RMinHash`` and ``RMinHashLSH`` (16 bands), union-find;
* ``datasketch``: Python shingles, ``MinHash.update_batch`` and ``MinHashLSH``, union-find.

Each peer writes ``clusters.jsonl`` and ``kept.jsonl`` as neardup does (neardup also writes
``pairs.jsonl`` and ``summary.json``, and syncs its output to disk before renaming it into
place). The planted copies give a recall figure for every pipeline: the share of planted pairs
whose exact w5 Jaccard is at least 0.8 that end up in one cluster (the dense corpora's planted
pairs are their one-word-replaced copies and the documents they copy).

Run: ``.venv/bin/python bench/scale.py`` (1M with every peer, then 10M with neardup only) or
``--sizes 1M --peers gaoya --repeat 3``; ``--rfc`` adds the RFC corpus; ``--dense
rfc-first-20m-words --dense-sizes 1M,10M`` runs dense corpora instead of the short ones (give
``--sizes`` as well for both). Peers run on every corpus of a size in ``--peer-sizes`` (and on
the RFC corpus): ``--peers ''`` for neardup alone.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpora import RFC_ARCHIVE  # noqa: E402

THRESHOLD = 0.8
NUM_PERM = 128
K = 5
SIZES = {"100k": 100_000, "1M": 1_000_000, "10M": 10_000_000}


# ---------------------------------------------------------------- peers (run in a child)


def _records(path: Path) -> Iterator[tuple[str, str, bytes]]:
    with path.open("rb") as f:
        for line in f:
            record = json.loads(line)
            yield record["id"], record["text"], line


def _shingles(text: str) -> list[str]:
    words = text.lower().split()
    return list({" ".join(words[i : i + K]) for i in range(len(words) - K + 1)})


def _write(out: Path, ids: list[str], lines: list[bytes], pairs: Iterator[tuple[int, int]]) -> None:
    """Union-find over the pairs; clusters.jsonl and kept.jsonl (first of each cluster)."""
    parent = list(range(len(ids)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    out.mkdir(parents=True)
    with (out / "clusters.jsonl").open("w") as c, (out / "kept.jsonl").open("wb") as k:
        for doc, doc_id in enumerate(ids):
            root = find(doc)
            c.write(json.dumps({"id": doc_id, "cluster": ids[root], "keep": root == doc}) + "\n")
            if root == doc:
                k.write(lines[doc])


def peer_gaoya(path: Path, out: Path) -> None:
    from gaoya.minhash import MinHashStringIndex

    ids, texts, lines = map(list, zip(*_records(path), strict=True))
    index = MinHashStringIndex(
        hash_size=32,
        jaccard_threshold=THRESHOLD,
        num_bands=16,
        band_size=8,
        analyzer="word",
        lowercase=True,
        ngram_range=(K, K),
        id_container="smallvec",
    )
    keys = list(range(len(texts)))
    index.par_bulk_insert_docs(keys, texts)
    found = index.par_bulk_query(texts)
    _write(out, ids, lines, ((i, j) for i, near in enumerate(found) for j in near if j != i))


def peer_rensa(path: Path, out: Path) -> None:
    from rensa import RMinHash, RMinHashLSH

    lsh = RMinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM, num_bands=16)
    ids, lines, sketches = [], [], []
    for i, (doc_id, text, line) in enumerate(_records(path)):
        m = RMinHash(num_perm=NUM_PERM, seed=42)
        m.update(_shingles(text))
        lsh.insert(i, m)
        ids.append(doc_id)
        lines.append(line)
        sketches.append(m)
    pairs = ((i, j) for i, m in enumerate(sketches) for j in lsh.query(m) if j != i)
    _write(out, ids, lines, pairs)


def peer_datasketch(path: Path, out: Path) -> None:
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM)
    ids, lines, sketches = [], [], []
    for i, (doc_id, text, line) in enumerate(_records(path)):
        m = MinHash(num_perm=NUM_PERM, seed=42)
        m.update_batch([s.encode("utf-8") for s in _shingles(text)])
        lsh.insert(i, m)
        ids.append(doc_id)
        lines.append(line)
        sketches.append(m)
    pairs = ((i, j) for i, m in enumerate(sketches) for j in lsh.query(m) if j != i)
    _write(out, ids, lines, pairs)


PEERS: dict[str, Callable[[Path, Path], None]] = {
    "gaoya": peer_gaoya,
    "rensa": peer_rensa,
    "datasketch": peer_datasketch,
}


# ---------------------------------------------------------------- measuring


def run(command: list[str], timeout: float) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MB and exit code of ``command`` as a child process."""
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                child.kill()
                pid, status, usage = os.wait4(child.pid, 0)
                break
            time.sleep(0.01)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        child.returncode = code
        errors.seek(0)
        message = errors.read().decode(errors="replace").strip()[-400:]
    if code:
        print(f"    exit {code}: {message}", flush=True)
    return wall, usage.ru_maxrss / 1024, code


def neardup_command(source: Path, out: Path) -> list[str]:
    return [
        str(Path(sys.executable).parent / "neardup"),
        "dedup",
        str(source),
        "-o",
        str(out),
        "-q",
    ]


def peer_command(name: str, source: Path, out: Path) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "peer", name, str(source), str(out)]


def planted_near_pairs(corpus: Path, truth: Path) -> list[tuple[str, str]]:
    """The planted pairs whose exact w5 Jaccard (lower-cased words) is at least the threshold."""
    import numpy as np

    from neardup import CandidatePairs, Shingler, exact_jaccard

    pairs = []
    with truth.open() as f:
        next(f)
        pairs = [tuple(line.split("\t")[:2]) for line in f]
    wanted = {doc for pair in pairs for doc in pair}
    texts: dict[str, str] = {}
    with corpus.open("rb") as f:
        for line in f:
            record = json.loads(line)
            if record["id"] in wanted:
                texts[record["id"]] = record["text"]
    docs = sorted(wanted)
    number = {doc: i for i, doc in enumerate(docs)}
    sets = Shingler().shingle_sets([texts[doc] for doc in docs])
    first = np.array([number[a] for a, _ in pairs])
    second = np.array([number[b] for _, b in pairs])
    jaccard = exact_jaccard(sets, CandidatePairs(first=first, second=second))
    return [pair for pair, j in zip(pairs, jaccard.tolist(), strict=True) if j >= THRESHOLD]


def recall(planted: Path, out: Path) -> float:
    """Share of the planted near pairs (a JSON list) that the pipeline put in one cluster."""
    pairs = json.loads(planted.read_text())
    cluster = {}
    with (out / "clusters.jsonl").open() as f:
        for line in f:
            record = json.loads(line)
            cluster[record["id"]] = record["cluster"]
    found = sum(cluster[copy] == cluster[source] for copy, source in pairs)
    return found / len(pairs) if pairs else 1.0


def in_child(*args: str) -> str:
    """Run a step of this script in its own process and return what it printed.

    The measuring process must stay small: a child's peak RSS as ``wait4`` reports it starts
    from the RSS of the process that forked it, so a parent that held gigabytes (of texts for
    the recall, or while generating a corpus) would inflate every figure.
    """
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def stage_report(summary: dict[str, Any], wall: float, peak: float) -> str:
    """Seconds of each stage of a neardup run, per document and per candidate pair.

    ``summary`` is the run's ``summary.json``; ``wall`` and ``peak`` the whole process's wall
    seconds and peak RSS in MB.
    """
    counts = summary["counts"]
    docs, candidates = counts["items"], counts["candidate_pairs"]
    biggest = summary.get("biggest_clusters") or [{"size": 0}]
    lines = [
        f"      {docs:,} documents, {candidates:,} candidate pairs "
        f"({candidates / max(docs, 1):.2f} per document), {counts['verified_pairs']:,} verified "
        f"({counts['verified_pairs'] / max(docs, 1):.3f} per document), "
        f"{counts.get('already_joined', 0):,} already joined, "
        f"{counts['exact_duplicates']:,} exact duplicates, {counts['clusters']:,} clusters, "
        f"largest {biggest[0]['size']:,}, largest bucket {counts['largest_bucket']:,}",
        f"      {'stage':<13}{'s':>8}{'us/doc':>10}{'ns/cand':>10}",
    ]
    stages = [(k, v) for k, v in summary["timings_s"].items() if k != "idf" or v]
    stages += [("compile_s", summary.get("compile_s", 0.0))]
    stages += [("process", wall)]
    for name, seconds in stages:
        per_doc = seconds / docs * 1e6 if docs else float("nan")
        per_pair = f"{seconds / candidates * 1e9:10,.0f}" if candidates else f"{'-':>10}"
        lines.append(f"      {name:<13}{seconds:8.2f}{per_doc:10.2f}{per_pair}")
    lines.append(
        f"      peak RSS {peak:,.0f} MB ({peak * 2**20 / max(docs, 1):,.0f} bytes/document)"
    )
    return "\n".join(lines)


def measure(
    label: str, command: Callable[[Path], list[str]], repeat: int, timeout: float
) -> tuple[list[float], list[float], Path | None, list[dict[str, Any]]]:
    """Run ``command`` ``repeat`` times; wall times, peaks, the last output, neardup summaries."""
    walls, peaks = [], []
    summaries: list[dict[str, Any]] = []
    kept: Path | None = None
    for _ in range(repeat):
        work = Path(tempfile.mkdtemp(prefix="scale-", dir=ROOT / "out"))
        out = work / "out"
        wall, peak, code = run(command(out), timeout)
        if code == 0:
            walls.append(wall)
            peaks.append(peak)
            if kept is not None:
                shutil.rmtree(kept.parent, ignore_errors=True)
            kept = out
        else:
            shutil.rmtree(work, ignore_errors=True)
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        failed = "" if code == 0 else " (failed)"
        print(f"    {label}: {wall:.1f} s, {peak:,.0f} MB{failed} (load average after: {load})")
        summary_path = out / "summary.json"
        if code == 0 and summary_path.exists():
            summary = json.loads(summary_path.read_text())
            summaries.append({**summary, "process_wall_s": wall, "peak_rss_mb": peak})
            print(stage_report(summary, wall, peak), flush=True)
    return walls, peaks, kept, summaries


def _sizes(text: str, option: str) -> list[str]:
    sizes = [s for s in text.split(",") if s]
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        sys.exit(f"{option}: unknown size {unknown[0]!r} (one of {', '.join(SIZES)})")
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes",
        default=None,
        help="short corpora, comma-separated: 100k, 1M, 10M (default 1M,10M; none with --dense)",
    )
    parser.add_argument(
        "--dense",
        default="",
        help="dense corpora, comma-separated presets (DENSE_PRESETS of bench/scale_corpus.py)",
    )
    parser.add_argument("--dense-sizes", default="1M", help="sizes of the dense corpora")
    parser.add_argument("--peers", default="gaoya,rensa,datasketch")
    parser.add_argument("--peer-sizes", default="1M", help="sizes the peers run at")
    parser.add_argument("--rfc", action="store_true", help="also the whole RFC corpus")
    parser.add_argument("--repeat", type=int, default=3, help="neardup runs (median)")
    parser.add_argument("--peer-repeat", type=int, default=1, help="runs per peer (median)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per run")
    parser.add_argument("--data", type=Path, default=ROOT / "out" / "bench")
    parser.add_argument(
        "--no-recall", dest="recall", action="store_false", help="skip the recall column"
    )
    args = parser.parse_args()
    if not RFC_ARCHIVE.exists():
        sys.exit(f"RFC corpus not found at {RFC_ARCHIVE}")
    presets = [p for p in args.dense.split(",") if p]
    if presets:  # numpy stays out of this process: see in_child
        known = json.loads(in_child("dense-presets"))
        for preset in presets:
            if preset not in known:
                sys.exit(f"--dense: unknown preset {preset!r} (one of {', '.join(known)})")
    sizes = _sizes(args.sizes if args.sizes is not None else "" if presets else "1M,10M", "--sizes")
    dense_sizes = _sizes(args.dense_sizes, "--dense-sizes") if presets else []
    args.data.mkdir(parents=True, exist_ok=True)
    # (label, size or None, documents, path, truth)
    corpora: list[tuple[str, str | None, int, Path, Path | None]] = []
    for short in sizes:
        path = args.data / f"short-{short}.jsonl"
        if not path.exists():
            print(f"generating {path} ...", flush=True)
            in_child("corpus", str(path), str(SIZES[short]))
        truth = path.with_name(path.name + ".truth.tsv")
        corpora.append((short, short, SIZES[short], path, truth))
    for preset in presets:
        for dense in dense_sizes:
            path = args.data / f"dense-{preset}-{dense}.jsonl"
            if not path.exists():
                print(f"generating {path} ...", flush=True)
                in_child("dense-corpus", str(path), str(SIZES[dense]), preset)
            truth = path.with_name(path.name + ".truth.tsv")
            corpora.append((f"dense {preset} {dense}", dense, SIZES[dense], path, truth))
    if args.rfc:
        path = args.data / "rfc.jsonl"
        if not path.exists():
            in_child("corpus", str(path), "rfc")
        corpora.append(("RFC", None, 9823, path, None))
    if corpora:  # compile (or load) neardup's kernels once, outside the timed runs
        # and its modules' bytecode, as an installed package has it (pip compiles it): a
        # source checkout run with PYTHONDONTWRITEBYTECODE would compile them in every run
        compileall.compile_dir(ROOT / "src" / "neardup", quiet=1)
        warm = Path(tempfile.mkdtemp(prefix="scale-", dir=ROOT / "out"))
        run(neardup_command(corpora[0][3], warm / "out"), args.timeout)
        shutil.rmtree(warm, ignore_errors=True)
    peers = [p for p in args.peers.split(",") if p]
    peer_sizes = set(args.peer_sizes.split(","))
    rows = []
    stage_rows = []
    for label, size, docs, path, truth in corpora:
        mb = path.stat().st_size / 1e6
        print(f"{label}: {path.name}, {mb:,.0f} MB", flush=True)
        planted = None
        if truth is not None and args.recall:
            planted = args.data / f"{path.name}.planted.json"
            if not planted.exists():
                in_child("planted", str(path), str(truth), str(planted))
        results = []
        runners: list[tuple[str, Callable[[Path], list[str]], int]] = [
            ("neardup", lambda out, p=path: neardup_command(p, out), args.repeat)
        ]
        if size is None or size in peer_sizes:
            runners.extend(
                (name, lambda out, n=name, p=path: peer_command(n, p, out), args.peer_repeat)
                for name in peers
            )
        for name, command, repeat in runners:
            walls, peaks, out, summaries = measure(name, command, repeat, args.timeout)
            found = (
                float(in_child("recall", str(planted), str(out)))
                if planted is not None and out is not None
                else None
            )
            if out is not None:
                shutil.rmtree(out.parent, ignore_errors=True)
            results.append((name, walls, peaks, found))
            if summaries:  # the run of median wall time
                ordered = sorted(summaries, key=lambda s: s["process_wall_s"])
                stage_rows.append((label, ordered[(len(ordered) - 1) // 2]))
        base = statistics.median(results[0][1]) if results[0][1] else float("nan")
        for name, walls, peaks, found in results:
            rows.append((label, docs, name, walls, peaks, found, base))
    print()
    print(
        "| corpus | pipeline | wall s (median, min-max) | peak RSS MB | bytes/doc "
        "| time vs neardup | recall of planted copies |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for label, docs, name, walls, peaks, found, base in rows:
        if not walls:
            print(f"| {label} | {name} | failed | | | | |")
            continue
        wall = statistics.median(walls)
        per_doc = statistics.median(peaks) * 2**20 / docs
        print(
            f"| {label} | {name} | {wall:.1f} ({min(walls):.1f}-{max(walls):.1f}) "
            f"| {statistics.median(peaks):,.0f} | {per_doc:,.0f} | {wall / base:.2f}x "
            f"| {'' if found is None else f'{found:.4f}'} |"
        )
    if stage_rows:
        print()
        print("neardup, the run of median wall time: seconds per stage (us per document, ns per")
        print("candidate pair)")
        print()
        print(
            "| corpus | documents | candidates | verified | largest cluster "
            "| read_sketch | exact | candidates | verify | cluster | write | process | peak MB |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for label, summary in stage_rows:
            counts = summary["counts"]
            docs, candidates = counts["items"], counts["candidate_pairs"]
            biggest = (summary.get("biggest_clusters") or [{"size": 0}])[0]["size"]
            timings = dict(summary["timings_s"])
            timings["process"] = summary["process_wall_s"]
            cells = []
            for stage in ("read_sketch", "exact", "candidates", "verify", "cluster", "write"):
                seconds = timings.get(stage, 0.0)
                per_pair = f"{seconds / candidates * 1e9:,.0f}" if candidates else "-"
                cells.append(f"{seconds:.2f} ({seconds / docs * 1e6:.2f}, {per_pair})")
            process = timings["process"]
            cells.append(f"{process:.2f} ({process / docs * 1e6:.2f})")
            print(
                f"| {label} | {docs:,} | {candidates:,} | {counts['verified_pairs']:,} "
                f"| {biggest:,} | {' | '.join(cells)} | {summary['peak_rss_mb']:,.0f} |"
            )


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "peer":
        PEERS[sys.argv[2]](Path(sys.argv[3]), Path(sys.argv[4]))
    elif len(sys.argv) == 5 and sys.argv[1] == "planted":
        near = planted_near_pairs(Path(sys.argv[2]), Path(sys.argv[3]))
        Path(sys.argv[4]).write_text(json.dumps(near))
    elif len(sys.argv) == 4 and sys.argv[1] == "recall":
        print(recall(Path(sys.argv[2]), Path(sys.argv[3])))
    elif len(sys.argv) == 2 and sys.argv[1] == "dense-presets":
        from bench.scale_corpus import DENSE_PRESETS

        print(json.dumps(list(DENSE_PRESETS)))
    elif len(sys.argv) == 5 and sys.argv[1] == "dense-corpus":
        from bench.scale_corpus import DENSE_PRESETS, write_dense_corpus

        write_dense_corpus(
            Path(sys.argv[2]), int(sys.argv[3]), pool_words=DENSE_PRESETS[sys.argv[4]]
        )
    elif len(sys.argv) == 4 and sys.argv[1] == "corpus":
        from bench.scale_corpus import write_rfc_jsonl, write_short_corpus

        if sys.argv[3] == "rfc":
            write_rfc_jsonl(Path(sys.argv[2]))
        else:
            write_short_corpus(Path(sys.argv[2]), int(sys.argv[3]))
    else:
        main()
