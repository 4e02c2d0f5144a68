"""Kernels called from many Python threads at once: safe on every numba threading layer."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from neardup._prefetch import prefetched

SCRIPT = """
import threading, numba, neardup
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
print(numba.threading_layer())
"""


@pytest.mark.subprocess
def test_concurrent_kernel_calls_do_not_abort_the_workqueue_layer() -> None:
    # The workqueue layer aborts the process on concurrent parallel launches; neardup serializes
    # them, so this must finish cleanly.
    env = {**os.environ, "NUMBA_THREADING_LAYER": "workqueue"}
    result = subprocess.run(
        [sys.executable, "-c", "import neardup.index\n" + SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "workqueue"


def test_parallel_kernels_run_at_once_where_the_layer_allows_it() -> None:
    # After a parallel kernel has run, the section serialises callers only on workqueue: two
    # threads inside it at once meet at the barrier (a lock would keep them apart forever).
    import numba

    import neardup
    from neardup._parallel import parallel_section

    neardup.OPHSketcher().sketch(["a parallel kernel starts the threading layer"])
    if numba.threading_layer() == "workqueue":
        pytest.skip("the workqueue layer serialises parallel kernels")
    both_inside = threading.Barrier(2, timeout=10)

    def enter() -> None:
        with parallel_section:
            both_inside.wait()

    threads = [threading.Thread(target=enter) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not both_inside.broken


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
