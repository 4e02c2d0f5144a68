"""Compiling once: the cache directory, compile time kept out of stage timings, the notice of
a cold cache, and ``neardup warmup``."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from neardup._kernels import CACHE_DIR, CACHE_PREFIX, kernel_source_hash
from neardup._kernels.compiling import (
    Stopwatch,
    compiling_notice,
    missing_from_cache,
    read_only,
)
from neardup._version import __version__
from neardup.cli.main import main
from neardup.engine import ahead
from neardup.pipeline import Timings, dedup
from neardup.summary import StageTimes


def _fresh_kernel():  # type: ignore[no-untyped-def]
    """A kernel numba has never compiled (not cached: a new function object each call)."""

    @njit
    def add_one(x):  # type: ignore[no-untyped-def]
        return x + 1

    return add_one


@pytest.mark.skipif("NUMBA_CACHE_DIR" in os.environ, reason="the user's cache directory is kept")
def test_the_cache_directory_is_named_for_the_version_and_the_kernel_sources() -> None:
    assert CACHE_DIR.name == f"{CACHE_PREFIX}{__version__}-{kernel_source_hash()}"
    import numba

    assert str(CACHE_DIR) == numba.config.CACHE_DIR


def test_the_kernel_source_hash_is_stable() -> None:
    assert kernel_source_hash() == kernel_source_hash()
    assert len(kernel_source_hash()) == 12


def test_read_only_is_a_view_without_a_copy() -> None:
    data = np.arange(4, dtype=np.uint8)
    view = read_only(data)
    assert not view.flags.writeable
    assert data.flags.writeable
    assert np.shares_memory(view, data)
    assert read_only(view) is view


def test_a_stage_leaves_compiling_out() -> None:
    timings = Timings()
    kernel = _fresh_kernel()
    with timings.stage("work"):
        kernel(1)
    assert timings.compile_seconds > 0.0
    assert timings.seconds["work"] < timings.compile_seconds
    times = timings.report(num_bytes=1_000_000)
    assert times.compile_seconds == round(timings.compile_seconds, 4)
    assert times.total == round(timings.seconds["work"], 4)


def test_the_stopwatch_counts_compiling_apart() -> None:
    watch = Stopwatch()
    with watch.running():
        _fresh_kernel()(2)
    assert watch.compile_seconds > 0.0


def test_the_cold_cache_notice_is_one_line_and_only_when_compiling() -> None:
    stream = io.StringIO()
    kernel = _fresh_kernel()
    kernel(1)
    with compiling_notice(7, stream):
        kernel(2)  # compiled already: nothing said
    assert stream.getvalue() == ""
    with compiling_notice(7, stream):
        _fresh_kernel()(1)
        _fresh_kernel()(1)
    assert stream.getvalue().splitlines() == [
        "compiling kernels once, about 7 s (later runs load them; `neardup warmup` compiles "
        "them ahead)"
    ]


def test_a_compiled_kernel_is_in_the_cache() -> None:
    from neardup._kernels.lsh import band_keys

    dedup(["a b c d e f g", "a b c d e f g h"])
    assert missing_from_cache([band_keys]) == []


def test_summary_json_reports_compiling_apart() -> None:
    times = StageTimes.measured({"sketch": 1.0}, 2_000_000, compile_seconds=3.0)
    assert times.throughput_mb_s == 2.0
    assert times.compile_seconds == 3.0
    summary = dedup(["a b c d e f g", "a b c d e f g h"]).summary.to_dict()
    assert "compile" not in summary["timings_s"]  # no stage, nor in the total
    assert summary["compile_s"] >= 0.0


@pytest.mark.slow
def test_warmup_compiles_the_default_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["warmup"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("warmup: 1/2 dedup")
    assert err[-1].startswith("warmup: done in")


READ_AND_KEPT = {
    "parse_lines", "line_starts", "default_ids", "simple_sizes", "simple_fill", "text_stats",
    "span_hashes", "oph_signatures", "kept_lines",
}  # fmt: skip
"""The kernels a run of the bundled sample compiles that the made-up later stages do not."""


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_made_up_later_stages_compile_what_a_run_needs_after_sketching(
    tmp_path: Path,
) -> None:
    code = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from numba.core import event
        from neardup.engine.ahead import compile_later_stages
        from neardup.jobs.dedup import dedup_files

        compile_later_stages(Path(sys.argv[1]))
        compiled, depth = set(), [0]

        class TopLevel(event.Listener):
            def on_start(self, ev):
                depth[0] += 1
                if depth[0] == 1:
                    compiled.add(ev.data["dispatcher"].py_func.__name__)

            def on_end(self, ev):
                depth[0] -= 1

        with event.install_listener("numba:compile", TopLevel()):
            dedup_files([sys.argv[2]], Path(sys.argv[1]) / "out")
        print(" ".join(sorted(compiled)))
        """
    )
    sample = Path(__file__).parents[1] / "data" / "sample" / "licenses.jsonl.gz"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), str(sample)],
        env=env, capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    compiled = set(run.stdout.split())
    assert "parse_lines" in compiled  # the cache was cold
    assert compiled <= READ_AND_KEPT, compiled - READ_AND_KEPT


def test_the_made_up_documents_give_every_later_stage_work(tmp_path: Path) -> None:
    found = ahead.compile_later_stages(tmp_path)
    labels = found.clusters.labels
    assert len(set(labels[:4].tolist())) == 1  # near copies: candidates, verified, clustered
    assert labels[5] == labels[4] != labels[0]  # exact copies
    assert len(set(labels[6:].tolist())) == len(labels) - 6  # the rest apart
    assert found.summary.counts.verified_pairs >= 3
    assert (tmp_path / "clusters.jsonl").exists()
    assert (tmp_path / "pairs.jsonl").exists()


def test_compiling_ahead_runs_a_second_process_only_on_a_cold_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[subprocess.Popen[bytes]] = []
    popen = subprocess.Popen

    def spy(*args: object, **kwargs: object) -> subprocess.Popen[bytes]:
        started.append(popen(*args, **kwargs))  # type: ignore[call-overload]
        return started[-1]

    monkeypatch.setattr(ahead.subprocess, "Popen", spy)
    monkeypatch.setattr(ahead, "_cache_is_cold", lambda: False)
    with ahead.compiling_ahead():
        pass
    assert started == []
    monkeypatch.setattr(ahead, "_cache_is_cold", lambda: True)
    with ahead.compiling_ahead(enabled=False):
        pass
    assert started == []
    with ahead.compiling_ahead():
        assert started[0].poll() is None  # compiling beside the block
    assert started[0].returncode is not None  # and stopped with it
