"""The persistent index: bulk build against datasketch MinHashLSH on Redis, online adds, and
query latency at one million documents, in one process.

1. Bulk build of the RFC corpus (9,823 documents, 537 MB), from raw text, word 5-shingles,
   128 permutations, threshold 0.8: neardup ``LSHIndex`` on an SQLite file versus datasketch
   ``MinHash`` + ``MinHashLSH`` with its Redis storage on a real ``redis-server`` started here
   (loopback, no persistence), inserting through ``insertion_session``.
2. One million real short documents (distinct blank-line separated RFC paragraphs of at least
   8 words; exact repeats such as boilerplate are left out, as ``check`` would leave them out):
   bulk build, then online adds in transactions of 100 documents, then single-document queries
   (half stored paragraphs, half paragraphs with a word dropped), each timed from raw text to
   answer. Prints the index file size per document.

Run: ``.venv/bin/python bench/index.py`` (needs ``redis-server`` on PATH: ``apt-get install
redis-server``; ``pip install redis datasketch``).
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpora import load_rfcs, paragraphs  # noqa: E402
from neardup.index import LSHIndex  # noqa: E402

K = 5
NUM_PERM = 128
THRESHOLD = 0.8


def python_shingles(text: str) -> list[bytes]:
    words = text.lower().split()
    return list({" ".join(words[i : i + K]).encode() for i in range(len(words) - K + 1)})


def start_redis() -> tuple[subprocess.Popen[bytes], int]:
    server = shutil.which("redis-server")
    if server is None:
        sys.exit("redis-server not found: apt-get install redis-server")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    import redis

    client = redis.Redis(port=port)
    for _ in range(100):
        try:
            client.ping()
            return process, port
        except redis.ConnectionError:
            time.sleep(0.05)
    sys.exit("redis-server did not start")


def build_datasketch_redis(texts: list[str], port: int) -> float:
    from datasketch import MinHash, MinHashLSH

    start = time.perf_counter()
    lsh = MinHashLSH(
        threshold=THRESHOLD,
        num_perm=NUM_PERM,
        storage_config={
            "type": "redis",
            "basename": b"bench",
            "redis": {"host": "127.0.0.1", "port": port},
        },
    )
    with lsh.insertion_session(buffer_size=50_000) as session:
        for i, text in enumerate(texts):
            m = MinHash(num_perm=NUM_PERM, seed=42)
            m.update_batch(python_shingles(text))
            session.insert(f"doc{i}", m)
    return time.perf_counter() - start


def build_neardup(path: Path, ids: list[str], texts: list[str], batch: int) -> float:
    start = time.perf_counter()
    with LSHIndex.open(path) as index:
        for i in range(0, len(ids), batch):
            index.add(ids[i : i + batch], texts[i : i + batch])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=1_000_000, help="documents of the large index")
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument(
        "--work", type=Path, help="directory for the index files (default: a temp dir)"
    )
    parser.add_argument("--part", choices=["all", "rfc", "large"], default="all")
    args = parser.parse_args()

    _, rfcs = load_rfcs()
    megabytes = sum(len(t.encode()) for t in rfcs) / 1e6
    work = Path(tempfile.mkdtemp(prefix="neardup-bench-", dir=args.work))
    print(f"RFC corpus: {len(rfcs):,} documents, {megabytes:,.1f} MB; work dir {work}")

    LSHIndex.open(work / "warm.ndx").add(["w"], ["compile the kernels before timing " * 3])
    if args.part in ("all", "rfc"):
        bulk_rfc(rfcs, work, megabytes)
    if args.part in ("all", "large"):
        large(rfcs, work, args.docs, args.queries)
    shutil.rmtree(work)


def bulk_rfc(rfcs: list[str], work: Path, megabytes: float) -> None:
    """Bulk build of the RFC corpus: neardup on SQLite against datasketch on Redis."""
    neardup_s = build_neardup(work / "rfc.ndx", [f"rfc{i}" for i in range(len(rfcs))], rfcs, 2000)
    redis_process, port = start_redis()
    try:
        datasketch_s = build_datasketch_redis(rfcs, port)
    finally:
        redis_process.terminate()
        redis_process.wait()
    print("\n| bulk build, RFC corpus | seconds | MB/s | ratio |")
    print("|---|---:|---:|---:|")
    print(f"| neardup LSHIndex (SQLite) | {neardup_s:.2f} | {megabytes / neardup_s:.1f} | 1.0x |")
    print(
        f"| datasketch MinHashLSH (Redis) | {datasketch_s:.2f} | {megabytes / datasketch_s:.1f} "
        f"| {datasketch_s / neardup_s:.1f}x slower |"
    )


def large(rfcs: list[str], work: Path, num_docs: int, num_queries: int) -> None:
    """Build, online adds and query latency at ``num_docs`` distinct RFC paragraphs."""
    corpus = list(dict.fromkeys(paragraphs(rfcs)))  # distinct texts, first occurrence order
    print(f"\ndistinct paragraphs: {len(corpus):,}, using {num_docs:,} (+ online adds, queries)")
    base = corpus[:num_docs]
    extra = corpus[num_docs : num_docs + 20_000]
    path = work / "large.ndx"
    build_s = build_neardup(path, [f"p{i}" for i in range(len(base))], base, 20_000)
    with LSHIndex.open(path) as index:
        start = time.perf_counter()
        for i in range(0, len(extra), 100):
            index.add([f"x{i + j}" for j in range(len(extra[i : i + 100]))], extra[i : i + 100])
        online_s = time.perf_counter() - start
        rng = np.random.default_rng(1)
        picks = rng.choice(len(base), size=num_queries, replace=False)
        queries = []
        for n, p in enumerate(picks.tolist()):
            words = base[p].split()
            queries.append(base[p] if n % 2 == 0 else " ".join(words[:3] + words[4:]))
        latencies = []
        hits = 0
        for text in queries:
            start = time.perf_counter()
            found = index.query([text])
            latencies.append(time.perf_counter() - start)
            hits += bool(found[0])
        info = index.info()
    latencies_ms = np.array(latencies) * 1000
    print(f"\n| {info['documents']:,} documents | figure |")
    print("|---|---:|")
    print(f"| bulk build | {build_s:.1f} s ({len(base) / build_s:,.0f} docs/s) |")
    print(f"| online add, transactions of 100 | {len(extra) / online_s:,.0f} docs/s |")
    print(f"| query p50 (raw text to answer) | {statistics.median(latencies_ms):.3f} ms |")
    print(f"| query p99 | {np.percentile(latencies_ms, 99):.3f} ms |")
    print(f"| queries with a match | {hits / len(queries):.1%} |")
    print(
        f"| index file | {info['bytes'] / 2**20:,.0f} MiB, "
        f"{info['bytes_per_document']:,.0f} bytes/document |"
    )


if __name__ == "__main__":
    main()
