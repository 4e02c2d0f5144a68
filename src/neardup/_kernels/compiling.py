"""Compiling the kernels once: numba's compile seconds kept out of timings, a cold cache seen.

No kernel here: the bookkeeping around them. The first call of a kernel compiles it (seconds,
on a cold cache) or loads it from the cache (:mod:`neardup._kernels` chooses the directory);
a run's stage timings leave the compiling out, measured from numba's own compile events
(:class:`Stopwatch`), and report it on its own. :func:`missing_from_cache` tells, without
compiling, which kernels a run would have to compile, so a command can say so first.

Each kernel is compiled for the types of its arguments, read-only arrays being a type of
their own: the wrappers pass every text buffer through :func:`read_only`, so a kernel compiles
once whether its bytes came from a file (read-only) or were written by normalisation.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO, TypeVar

import numpy as np
from numba.core import event
from numpy.typing import NDArray

from neardup._kernels import CACHE_DIR, CACHE_PREFIX

__all__ = [
    "Stopwatch",
    "compiling_notice",
    "missing_from_cache",
    "prune_stale_caches",
    "read_only",
]

_T = TypeVar("_T", bound=np.generic)


class Stopwatch:
    """Seconds spent in :meth:`running` blocks, without the seconds numba spent compiling there.

    numba's compile events are process-wide (compiling holds numba's global lock, so they
    never overlap): compiling done in another thread while a block runs (a reader's
    prefetching thread) counts as the block's compiling too.

    Attributes
    ----------
    seconds
        Wall seconds of the blocks, less compiling.
    compile_seconds
        Seconds numba spent compiling kernels within the blocks (left out of ``seconds``).

    Examples
    --------
    >>> watch = Stopwatch()
    >>> with watch.running():
    ...     total = sum(range(1000))
    >>> watch.seconds >= 0.0, watch.compile_seconds
    (True, 0.0)
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        self.compile_seconds = 0.0

    @contextmanager
    def running(self) -> Iterator[None]:
        """Time the block, adding its seconds (less compiling) to :attr:`seconds`."""
        compiling: list[float] = []
        start = time.perf_counter()
        try:
            with event.install_timer("numba:compile", compiling.append):
                yield
        finally:
            elapsed = time.perf_counter() - start
            self.compile_seconds += sum(compiling)
            self.seconds += max(elapsed - sum(compiling), 0.0)


class _Notice(event.Listener):
    """Writes one line when numba first starts compiling, then nothing more."""

    def __init__(self, message: str, stream: TextIO) -> None:
        self.message = message
        self.stream = stream
        self.said = False
        self._lock = threading.Lock()

    def on_start(self, ev: Any) -> None:
        with self._lock:
            if self.said:
                return
            self.said = True
        print(self.message, file=self.stream, flush=True)

    def on_end(self, ev: Any) -> None:
        """Nothing at the end of a compile."""


@contextmanager
def compiling_notice(
    seconds: float, stream: TextIO | None = None, *, enabled: bool = True
) -> Iterator[None]:
    """Say in one line, the first time a kernel compiles in the block, that kernels compile.

    A cache already filled (by an earlier run, or ``neardup warmup``) loads every kernel and
    nothing is said; the check costs nothing until numba compiles. ``seconds``: about how long
    the compiling takes (measured on two cores).
    """
    if not enabled:
        yield
        return
    message = (
        f"compiling kernels once, about {seconds:.0f} s "
        "(later runs load them; `neardup warmup` compiles them ahead)"
    )
    with event.install_listener("numba:compile", _Notice(message, stream or sys.stderr)):
        yield


def read_only(array: NDArray[_T]) -> NDArray[_T]:
    """``array`` as a read-only view (itself when it is one already): no copy, O(1).

    Examples
    --------
    >>> data = np.zeros(3, dtype=np.uint8)
    >>> read_only(data).flags.writeable, data.flags.writeable
    (False, True)
    """
    if not array.flags.writeable:
        return array
    view = array.view()
    view.flags.writeable = False
    return view


def missing_from_cache(kernels: Iterable[Any]) -> list[str]:
    """The names of the kernels (numba dispatchers) with nothing in the cache yet.

    A cheap look (one ``stat`` each) at their cache index files, compiling nothing. A kernel
    whose cache cannot be found counts as cached.
    """
    missing = []
    for kernel in kernels:
        try:
            index = kernel._cache._cache_file._index_path
        except AttributeError:
            continue
        if not os.path.exists(index):
            missing.append(kernel.py_func.__qualname__)
    return missing


def prune_stale_caches() -> list[Path]:
    """Remove the cache directories of other kernel versions beside this one; those removed.

    Only directories neardup chose and named (:data:`~neardup._kernels.CACHE_PREFIX`), and
    only when the cache is neardup's own choice (not a ``NUMBA_CACHE_DIR`` of the user's).
    """
    if os.environ.get("NUMBA_CACHE_DIR") or not CACHE_DIR.name.startswith(CACHE_PREFIX):
        return []
    removed = []
    for other in CACHE_DIR.parent.glob(f"{CACHE_PREFIX}*"):
        if other != CACHE_DIR and other.is_dir():
            shutil.rmtree(other, ignore_errors=True)
            removed.append(other)
    return removed
