"""Kernels run on several cores: serial kernels over blocks of items, in threads.

Every kernel over many items is serial over a range of them (``lo, hi``, its last two
arguments) and releases the GIL; :func:`in_blocks` runs one over consecutive blocks on
``numba.get_num_threads()`` threads. A serial kernel compiles in a fraction of the time a
``parallel=True`` one takes (numba's parfor passes cost 0.5-2.5 s a kernel on a cold cache) and
runs as fast, blocks being large. No numba threading layer is involved, so kernels may be called
from many threads at once (the HTTP service's pool; the batch job's reading thread, which parses
the next batch while the last one is sketched) whatever layer numba would have chosen.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numba

__all__ = ["MAX_BLOCK", "SCRATCH_BLOCK", "in_blocks"]

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
    raised here, after every started block has ended; one in the calling thread (an error, or
    Ctrl-C) stops the helpers after the block each is running.

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

    stopped: list[bool] = []  # the caller failed: the helpers take no further block

    def take_blocks() -> None:
        while not stopped and (b := next(taken)) < num_blocks:
            job[0](b * block, min(num_items, (b + 1) * block))

    helpers = [_HELPERS.submit(take_blocks) for _ in range(threads - 1)]
    try:
        take_blocks()
    except BaseException:
        stopped.append(True)  # Ctrl-C in a long call ends it within a block, not at its end
        raise
    finally:
        for helper in helpers:
            helper.cancel()  # one still queued behind other callers' blocks has nothing left
        for helper in helpers:
            if not helper.cancelled():
                helper.result()
        job.clear()
