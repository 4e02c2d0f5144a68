"""Kernels called from many Python threads at once: safe on every numba threading layer."""

from __future__ import annotations

import os
import subprocess
import sys

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
