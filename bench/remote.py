"""``neardup dedup`` over S3 against the same shards on local disk, on one machine.

Starts moto's S3 server (``moto_server``, a separate process on the loopback), cuts one JSONL
file (e.g. the dense 1M corpus of ``bench/scale_corpus.py``) into ``--shards`` zstd shards,
uploads them, then runs, each as a whole process, in turn:

* ``local``: ``neardup dedup shard-*.jsonl.zst -o OUT -q`` on local files;
* ``s3``: ``neardup dedup 's3://bench/shard-*.jsonl.zst' -o s3://bench/out -q``: the shards
  fetched, the run, the outputs uploaded and committed.

Printed: median wall seconds over ``--repeat`` runs of each, MB/s of compressed input, the
ratio s3/local, and whether the outputs are byte-identical. The server is written in Python
(about 100 MB/s for one object here), so the ratio is an upper bound for a real object store.

Run: ``.venv/bin/python bench/remote.py d1000000.jsonl --shards 8``.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _start_server() -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("moto_server")), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    return server, f"http://127.0.0.1:{port}"


def _shards(path: Path, count: int, folder: Path) -> list[Path]:
    import zstandard

    lines = path.read_bytes().splitlines(keepends=True)
    size = -(-len(lines) // count)
    shards = []
    for number in range(count):
        shard = folder / f"shard-{number:03d}.jsonl.zst"
        data = b"".join(lines[number * size : (number + 1) * size])
        shard.write_bytes(zstandard.ZstdCompressor(level=3).compress(data))
        shards.append(shard)
    return shards


def _timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import s3fs

    server, endpoint = _start_server()
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
    }
    os.environ.update(env)
    neardup = str(Path(sys.executable).with_name("neardup"))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            shards = _shards(args.path, args.shards, folder)
            megabytes = sum(p.stat().st_size for p in shards) / 1e6
            fs = s3fs.S3FileSystem()
            fs.mkdir("bench")
            fs.put([str(p) for p in shards], [f"bench/{p.name}" for p in shards])
            times: dict[str, list[float]] = {"local": [], "s3": []}
            for _ in range(args.repeat):
                out = folder / "out"
                local = [neardup, "dedup", *map(str, shards), "-o", str(out), "-q", "--overwrite"]
                times["local"].append(_timed(local, env))
                remote = [neardup, "dedup", "s3://bench/shard-*.jsonl.zst", "-o", "s3://bench/out"]
                times["s3"].append(_timed([*remote, "-q", "--overwrite"], env))
            same = all(
                fs.cat(f"bench/out/{name}") == (folder / "out" / name).read_bytes()
                for name in ("clusters.jsonl", "pairs.jsonl", "kept.jsonl")
            )
    finally:
        server.terminate()
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"{args.shards} shards, {megabytes:.0f} MB compressed, {args.repeat} runs each")
    for name, seconds in medians.items():
        spread = f"{min(times[name]):.1f}-{max(times[name]):.1f}"
        print(f"  {name:6s} {seconds:6.1f} s ({spread})  {megabytes / seconds:6.1f} MB/s")
    print(f"  s3 / local: {medians['s3'] / medians['local']:.2f}x; outputs identical: {same}")


if __name__ == "__main__":
    main()
