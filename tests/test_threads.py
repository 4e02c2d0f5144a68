"""Kernels called from many Python threads at once, and blocks of items run in threads."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator

import numba
import pytest

from neardup._parallel import in_blocks
from neardup._prefetch import prefetched

SCRIPT = """
import threading, neardup, neardup.index
texts = ["word%d " % i * 50 + "shared tail of the text " * 5 for i in range(200)]
index = neardup.index.LSHIndex(neardup.index.MemoryStore())
index.add([str(i) for i in range(200)], texts)
errors = []
def work(n):
    try:
        for _ in range(20):
            neardup.OPHSketcher().sketch(texts)
            index.query(texts[n::8])
    except Exception as exc:
        errors.append(exc)
threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
for t in threads: t.start()
for t in threads: t.join()
assert not errors, errors
print("done")
"""


@pytest.mark.subprocess
@pytest.mark.parametrize("layer", ["workqueue", "default"])
def test_concurrent_kernel_calls_finish_whatever_the_threading_layer(layer: str) -> None:
    # numba's workqueue layer aborts the process on concurrent parallel launches: neardup has
    # no parallel kernel, its blocks run in its own threads, so eight callers at once finish.
    env = {**os.environ, "NUMBA_THREADING_LAYER": layer}
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "done"


def test_callers_in_many_threads_run_their_blocks_at_once() -> None:
    # Each caller runs its blocks itself (helpers only help): two callers whose single blocks
    # wait for each other meet at the barrier instead of waiting on a shared pool.
    both_inside = threading.Barrier(2, timeout=10)
    threads = [
        threading.Thread(target=in_blocks, args=(lambda lo, hi: both_inside.wait(), 1))
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not both_inside.broken


def test_every_block_runs_once_and_an_error_of_a_block_is_raised() -> None:
    seen: list[tuple[int, int]] = []
    in_blocks(lambda lo, hi: seen.append((lo, hi)), 100_000, max_block=1000)
    assert sorted(i for lo, hi in seen for i in range(lo, hi)) == list(range(100_000))
    assert max(hi - lo for lo, hi in seen) <= 1000

    def fail_at_the_middle(lo: int, hi: int) -> None:
        if lo <= 50_000 < hi:
            raise ValueError("block of item 50000")

    with pytest.raises(ValueError, match="block of item 50000"):
        in_blocks(fail_at_the_middle, 100_000)


def test_an_interrupted_caller_stops_the_helpers_within_a_block() -> None:
    """Ctrl-C (here an error) in the calling thread ends a long call at once: the helpers
    finish the block each is running and take no other (a 100,000-text encoding was stopped
    28 s after Ctrl-C before, 0.5 s now)."""
    if numba.get_num_threads() < 2:
        pytest.skip("one thread: no helper to stop")
    ran: list[int] = []
    callers = threading.get_ident()

    def block(lo: int, hi: int) -> None:
        if threading.get_ident() == callers:
            raise KeyboardInterrupt
        ran.append(lo)
        threading.Event().wait(0.01)  # a block's work, the GIL released

    with pytest.raises(KeyboardInterrupt):
        in_blocks(block, 1000, max_block=1)
    assert len(ran) < 50


def test_prefetched_items_come_in_order_and_errors_where_they_happened() -> None:
    def items() -> Iterator[int]:
        yield from range(5)
        raise ValueError("the sixth item")

    got = []
    with pytest.raises(ValueError, match="the sixth item"):
        got.extend(prefetched(items()))
    assert got == [0, 1, 2, 3, 4]


def test_prefetched_stops_its_worker_when_the_caller_stops() -> None:
    made: list[int] = []

    def items() -> Iterator[int]:
        for i in range(1000):
            made.append(i)
            yield i

    before = threading.active_count()
    stream = prefetched(items())
    assert next(stream) == 0
    stream.close()
    assert threading.active_count() == before
    assert len(made) <= 3  # the item given, one waiting, one being made
