"""Calls of ``parallel=True`` kernels from several Python threads, on every threading layer.

numba's built-in ``workqueue`` threading layer (the one left when neither OpenMP nor TBB is
available) aborts the process when two threads enter parallel code at once; OpenMP and TBB
run each caller's kernel with its own team of threads. Every wrapper of a parallel kernel
enters :data:`parallel_section`, which serialises the calls on ``workqueue`` only: the HTTP
service calls kernels from a thread pool, and the batch job reads the next batch (a parallel
parsing kernel) while the last one is sketched.
"""

from __future__ import annotations

import threading
from types import TracebackType

__all__ = ["parallel_section"]


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
