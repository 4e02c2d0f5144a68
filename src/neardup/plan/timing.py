"""Timing the sample's work so that it scales: wall seconds, less numba's one-off compiling.

A plan times reading, normalising, sketching, banding and verifying on its sample and scales
each time to the whole input. The first call of a kernel compiles it (seconds, on a cold
cache) or loads it from the cache; the run the plan predicts pays neither again (the plan
leaves the cache filled), so neither may be scaled up as a per-byte cost. The measurements warm
every kernel on a tiny input before they time it (:mod:`neardup.plan.measure`); what compiling
still happens inside a timed block (a reader's first batch, in the sampling pass) is taken out
here, from numba's own compile events.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from numba.core import event

__all__ = ["Stopwatch"]


class Stopwatch:
    """Seconds spent in :meth:`running` blocks, without the seconds numba spent compiling there.

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
        with event.install_timer("numba:compile", compiling.append):
            yield
        elapsed = time.perf_counter() - start
        self.compile_seconds += sum(compiling)
        self.seconds += max(elapsed - sum(compiling), 0.0)
