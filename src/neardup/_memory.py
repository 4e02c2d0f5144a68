"""Memory a stage freed, given back to the operating system before the next stage allocates.

glibc keeps what a process frees in its heap for reuse, and after a stage that made and
dropped many large temporary arrays that memory still counts in the resident set: in the peak
that ``/usr/bin/time -v``, a container's limit or the OOM killer sees, while the next stage
allocates anew. ``malloc_trim`` hands the free pages back. Elsewhere (macOS, musl) there is no
such call, and nothing is done.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

__all__ = ["release_free_memory"]


def _malloc_trim() -> Callable[[int], int] | None:
    """The C library's ``malloc_trim`` (glibc's), or None where it has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the C library the interpreter runs on
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_TRIM = _malloc_trim()


def release_free_memory() -> None:
    """Return the heap's free pages to the operating system (where the C library can)."""
    if _TRIM is not None:
        _TRIM(0)
