"""Kernels run on several cores: serial kernels over blocks in threads, and parallel sections.

Most kernels are serial over a range of items (``lo, hi``) and release the GIL;
:func:`in_blocks` runs one over consecutive blocks on ``numba.get_num_threads()`` threads. A
serial kernel compiles in a fraction of the time a ``parallel=True`` one takes (numba's parfor
passes cost 0.5-2.5 s a kernel on a cold cache), and runs as fast, blocks being large.

numba's built-in ``workqueue`` threading layer (the one left when neither OpenMP nor TBB is
available) aborts the process when two threads enter parallel code at once; OpenMP and TBB
run each caller's kernel with its own team of threads. Every wrapper of a parallel kernel
enters :data:`parallel_section`, which serialises the calls on ``workqueue`` only: the HTTP
service calls kernels from a thread pool, and the batch job reads the next batch (a parallel
parsing kernel) while the last one is sketched.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType

import numba

__all__ = ["MAX_BLOCK", "SCRATCH_BLOCK", "in_blocks", "parallel_section"]

_HELPERS = ThreadPoolExecutor(
    max(1, numba.config.NUMBA_NUM_THREADS - 1),  # type: ignore[attr-defined]
    thread_name_prefix="neardup-block",
)
"""The threads that help callers of :func:`in_blocks` (started on first use, then kept)."""

MAX_BLOCK = 4096
"""Most items a thread takes at a time (few enough that a slow item delays little)."""

SCRATCH_BLOCK = 256
"""Most documents a thread takes at a time where each block sizes scratch room for its longest
(sketching, shingle sets): one long document then inflates only a small block's room."""

BLOCKS_PER_THREAD = 8
"""Blocks per thread at least, when items are few: threads that finish early take more."""


def in_blocks(
    run: Callable[[int, int], object], num_items: int, max_block: int = MAX_BLOCK
) -> None:
    """``run(lo, hi)`` over consecutive blocks ``[lo, hi)`` of ``range(num_items)``, in threads.

    The calling thread takes blocks in turn with up to ``numba.get_num_threads() - 1`` helper
    threads (a shared pool), each block taken once; ``run`` must release the GIL (a ``nogil``
    kernel) for the threads to overlap, and blocks must not depend on each other. The caller
    always makes progress itself, so calls from many threads at once (the service's pool, the
    batch job's reading thread) never wait on each other's blocks. An exception of any block is
    raised here, after every started block has ended.

    Examples
    --------
    >>> seen = []
    >>> in_blocks(lambda lo, hi: seen.append((lo, hi)), 10_000)
    >>> spans = sorted(seen)  # every item once, in blocks of at most MAX_BLOCK
    >>> spans[0][0], spans[-1][1], all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    (0, 10000, True)
    """
    threads = numba.get_num_threads()
    block = min(max_block, max(1, -(-num_items // (threads * BLOCKS_PER_THREAD))))
    num_blocks = -(-num_items // block) if num_items > 0 else 0
    threads = min(threads, num_blocks)
    if threads <= 1:
        if num_items > 0:
            run(0, num_items)
        return
    taken = itertools.count()  # next() on a count is atomic under the GIL
    job = [run]  # emptied at the end: a cancelled helper still queued holds no array

    def take_blocks() -> None:
        while (b := next(taken)) < num_blocks:
            job[0](b * block, min(num_items, (b + 1) * block))

    helpers = [_HELPERS.submit(take_blocks) for _ in range(threads - 1)]
    try:
        take_blocks()
    finally:
        for helper in helpers:
            helper.cancel()  # one still queued behind other callers' blocks has nothing left
        for helper in helpers:
            if not helper.cancelled():
                helper.result()
        job.clear()


class _ParallelSection:
    """A lock around parallel kernel calls, taken while the threading layer may need it.

    The layer is known once a parallel kernel has run (numba starts it then); until that, and
    from then on under ``workqueue``, calls take the lock.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._serialize: bool | None = None
        self._held = threading.local()

    def __enter__(self) -> None:
        held = self._serialize is not False
        if held:
            self._lock.acquire()
        self._held.stack = [*getattr(self._held, "stack", []), held]

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        *self._held.stack, held = self._held.stack
        if not held:
            return
        if self._serialize is None:
            self._serialize = _layer_needs_a_lock()
        self._lock.release()


def _layer_needs_a_lock() -> bool | None:
    """Whether numba's threading layer cannot run two parallel kernels at once (None: unknown).

    Unknown until the layer has started, with the first parallel kernel.
    """
    import numba

    try:
        return bool(numba.threading_layer() == "workqueue")  # type: ignore[attr-defined]
    except ValueError:  # no parallel kernel has run yet
        return None


parallel_section = _ParallelSection()
"""Kernels called from many Python threads at once: safe on every numba threading layer."""
