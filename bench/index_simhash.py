"""SimHash in the persistent index: block-permuted tables against PSM, run as users run them.

Data as ``bench/hamming.py`` (seed 004's setting on RFC text): the collection is the distinct
paragraphs (10+ words) of the RFCs that obsolete no other, the queries are the paragraphs of the
new revisions that are not exact copies of a stored one. Fingerprints: neardup's 64-bit SimHash
(TF word 5-shingles, Gaussian hyperplanes) at seed 004's ``h = 3``. (Seed 004's own words,
stemmed without stop words, collapse many short technical paragraphs onto a few fingerprints
without its TF-IDF weights, which an index cannot learn batch by batch: queries then return
thousands of matches each.) ``--pad N`` adds ``N``
paragraphs of random dictionary words, which no query is near, to show the growth (seed 004's
Figure 7).

For each search (``tables``, and PSM at each ``--budgets`` value) one ``neardup index`` file is
built and queried by the command line, each a separate process timed whole (wall seconds and
peak resident memory from ``/usr/bin/time``):

- ``neardup index create`` then ``neardup index add`` of the collection;
- ``neardup index query`` of the queries (``--queries``, a seeded sample), ``--repeat`` times:
  the median queries per second, sketching and process start included.

Recall is PSM's pairs over the tables' pairs (the tables are exact: the tests check them
against brute force). Bytes per fingerprint: the index file over the documents.

Run: ``.venv/bin/python bench/index_simhash.py [--queries 20000] [--budgets 8 16 32]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.hamming import revisions  # noqa: E402

NEARDUP = Path(sys.executable).parent / "neardup"
SETTING = ["--method", "simhash", "--hamming", "3"]
"""SimHash's defaults (TF word 5-shingles, Gaussian hyperplanes, 64 bits) at seed 004's h."""


def timed(args: list[str], stdout: Path | None = None) -> tuple[float, float]:
    """Run a command under ``/usr/bin/time``; its wall seconds and peak resident memory (MB).

    ``/usr/bin/time`` forks the command, not this process: a child forked from a process
    holding the corpus would count the corpus in its peak.
    """
    with tempfile.NamedTemporaryFile("r") as report, open(stdout or os.devnull, "w") as out:
        timing = ["/usr/bin/time", "-o", report.name, "-f", "%e %M"]
        done = subprocess.run(
            [*timing, *args], check=False, stdout=out, stderr=subprocess.PIPE, text=True
        )
        if done.returncode != 0:
            sys.exit(f"{' '.join(args)} failed: {done.stderr}")
        wall, kilobytes = report.read().split()[-2:]
    return float(wall), float(kilobytes) / 1024


def write_jsonl(path: Path, texts: list[str], prefix: str) -> None:
    with path.open("w") as file:
        for i, text in enumerate(texts):
            file.write(json.dumps({"id": f"{prefix}{i}", "text": text}) + "\n")


def padding(count: int, seed: int) -> list[str]:
    """``count`` paragraphs of 10-40 random words of the stored vocabulary's shape."""
    rng = random.Random(seed)
    words = [f"w{rng.getrandbits(40):x}" for _ in range(200_000)]
    return [" ".join(rng.choices(words, k=rng.randint(10, 40))) for _ in range(count)]


def pairs_of(path: Path) -> set[tuple[str, str]]:
    found = set()
    with path.open() as file:
        for line in file:
            record = json.loads(line)
            found.update((record["query"], m["id"]) for m in record["matches"])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--budgets", type=int, nargs="+", default=[8, 16, 32])
    parser.add_argument("--pad", type=int, default=0, help="random paragraphs added")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--min-words", type=int, default=10)
    args = parser.parse_args()

    stored, asked = revisions(args.min_words)
    stored += padding(args.pad, seed=1)
    asked = random.Random(0).sample(asked, min(args.queries, len(asked)))
    work = Path(tempfile.mkdtemp(prefix="index-simhash-"))
    collection, queries = work / "stored.jsonl", work / "queries.jsonl"
    write_jsonl(collection, stored, "s")
    write_jsonl(queries, asked, "q")
    print(f"{len(stored):,} stored paragraphs ({args.pad:,} random), {len(asked):,} queries")
    print(
        "\n| search | add s | add peak MB | file bytes / fingerprint | query q/s (median) "
        "| query peak MB | pairs | recall vs tables |\n|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    truth: set[tuple[str, str]] = set()
    for search, budget in [("tables", None), *(("psm", b) for b in args.budgets)]:
        index = work / f"{search}-{budget}.ndx"
        extra = ["--search", search] + (["--psm-budget", str(budget)] if budget else [])
        subprocess.run([str(NEARDUP), "index", "create", str(index), *SETTING, *extra],
                       check=True, stdout=subprocess.DEVNULL)  # fmt: skip
        add = [str(NEARDUP), "index", "add", str(index), str(collection), "-q"]
        add_s, add_mb = timed([*add, "--batch-size", "100000"])
        answers = work / f"{search}-{budget}.jsonl"
        query = [str(NEARDUP), "index", "query", str(index), str(queries)]
        runs = [timed(query, answers) for _ in range(args.repeat)]
        found = pairs_of(answers)
        if search == "tables":
            truth = found
        recall = len(found & truth) / max(len(truth), 1)
        name = "tables" if search == "tables" else f"psm, budget {budget}"
        print(
            f"| {name} | {add_s:.1f} | {add_mb:,.0f} | {index.stat().st_size / len(stored):.1f} "
            f"| {len(asked) / statistics.median(r[0] for r in runs):,.0f} "
            f"| {max(r[1] for r in runs):,.0f} | {len(found):,} | {recall:.3f} |",
            flush=True,
        )
        index.unlink()
        for suffix in ("-wal", "-shm"):
            Path(f"{index}{suffix}").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
