"""One lock around every call of a ``parallel=True`` kernel.

A parallel kernel already uses every core, so running two at once from two Python threads gains
nothing; and numba's built-in ``workqueue`` threading layer (the one left when neither OpenMP
nor TBB is available) aborts the process when two threads enter parallel code at once. The HTTP
service calls kernels from a thread pool, so every wrapper takes this lock.
"""

from __future__ import annotations

import threading

__all__ = ["parallel_section"]

parallel_section = threading.RLock()
