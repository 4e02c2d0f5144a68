"""``neardup warmup``: compile the kernels once, ahead of the first real run.

numba compiles each kernel on its first call and keeps the machine code in a cache directory
(:mod:`neardup._kernels`); a first run on a cold cache spends its first seconds compiling.
This command runs the default dedup path (JSONL, plain and gzipped, with ids and without; the
outputs written) on a few made-up records in a temporary directory, so every later run loads
the kernels instead; ``--all`` adds every sketch kind, character and stop-word shingles, Rabin
fingerprints and ``neardup compare``. Cache directories of other kernel versions beside this
one are removed. Nothing is written outside the cache and a temporary directory.
"""

from __future__ import annotations

import gzip
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import click

__all__ = ["warmup_command"]

_BASE = (
    "the quick brown fox jumps over the lazy dog while the cat sleeps on a warm mat by the "
    "door and nobody notices the noise outside"
)
_RECORDS = [
    _BASE,
    _BASE + " today",
    _BASE,  # an exact copy
    "Ça résume l'École: a text that normalisation rewrites, \u00c9T\u00c9 and stra\u00dfe",
    "\u00c9COLE \u00c0 PARIS: rewritten by the kernels' table (no character Python maps)",
    'a line with "quotes", a tab\t and an escape \u00e9 in it, long enough for a shingle',
    "",
    "short",
]


def _write_corpus(directory: Path) -> list[Path]:
    """The same records as plain and gzipped JSONL, with ids and without."""
    with_ids = "".join(
        json.dumps({"id": f"doc-{i}", "text": text}) + "\n" for i, text in enumerate(_RECORDS)
    )
    without_ids = "".join(json.dumps({"text": text}) + "\n" for text in _RECORDS)
    plain = directory / "records.jsonl"
    plain.write_text(with_ids, encoding="utf-8")
    packed = directory / "records.jsonl.gz"
    packed.write_bytes(gzip.compress(without_ids.encode("utf-8")))
    return [packed, plain]


def _steps(directory: Path, everything: bool) -> list[tuple[str, Callable[[], object]]]:
    """What to run, by name: the default dedup path, then (``everything``) the rest."""
    from neardup.jobs.dedup import dedup_files
    from neardup.params import DedupConfig, ShingleSpec, SketchSpec

    inputs = _write_corpus(directory)
    runs = iter(range(1_000_000))

    def dedup(path: Path, config: DedupConfig) -> Callable[[], object]:
        return lambda: dedup_files([path], directory / f"out-{next(runs)}", config)

    steps = [(f"dedup {p.name}", dedup(p, DedupConfig(pairs="all"))) for p in inputs]
    if not everything:
        return steps
    from neardup.compare import compare
    from neardup.kinds import SKETCH_KINDS

    plain = inputs[1]
    for kind in SKETCH_KINDS:
        if kind != "oph":
            config = DedupConfig(sketch=SketchSpec().with_kind(kind))
            steps.append((f"dedup --sketch {kind}", dedup(plain, config)))
    for shingle in (
        ShingleSpec(unit="char", k=5),
        ShingleSpec(unit="stopword", k=3, stopwords="english"),
        ShingleSpec(fingerprint="rabin"),
    ):
        config = DedupConfig(sketch=SketchSpec(shingle=shingle))
        steps.append(
            (f"dedup --shingle {shingle.unit} {shingle.fingerprint}", dedup(plain, config))
        )
    steps.append(("compare --sketches all", lambda: compare(_BASE, _BASE + " x", sketches={"all"})))
    return steps


@click.command(
    "warmup",
    epilog="""\b
Examples:
  neardup warmup          # after installing: the first dedup starts at full speed
  neardup warmup --all    # every sketch kind, shingling and compare too""",
)
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="Compile every kernel a command may use (each sketch kind, character and stop-word "
    "shingles, Rabin fingerprints, compare), not only the default dedup path's.",
)
def warmup_command(everything: bool) -> None:
    """Compile neardup's kernels once, so that the first run does not.

    The machine code is kept in a cache (in the installed package, or under ~/.cache/neardup
    when that cannot be written; NUMBA_CACHE_DIR if you set it) that every later run loads
    from. Run it once after installing or upgrading.
    """
    from neardup._kernels import CACHE_DIR
    from neardup._kernels.compiling import Stopwatch, prune_stale_caches

    watch = Stopwatch()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="neardup-warmup-") as temporary:
        steps = _steps(Path(temporary), everything)
        for number, (name, step) in enumerate(steps, start=1):
            click.echo(f"warmup: {number}/{len(steps)} {name}", err=True)
            with watch.running():
                step()
    prune_stale_caches()
    click.echo(
        f"warmup: done in {time.perf_counter() - started:.1f} s "
        f"({watch.compile_seconds:.1f} s compiling); kernels cached in {CACHE_DIR}",
        err=True,
    )
