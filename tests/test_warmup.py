"""Compiling once: the cache directory, compile time kept out of stage timings, the notice of
a cold cache, and ``neardup warmup``."""

from __future__ import annotations

import io
import os

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
    assert list(summary)[list(summary).index("total_s") + 1] == "compile_s"


@pytest.mark.slow
def test_warmup_compiles_the_default_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["warmup"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("warmup: 1/2 dedup")
    assert err[-1].startswith("warmup: done in")
