"""numba kernels, and where their compiled machine code is kept.

Importing any kernel module runs this first, so the cache directory is chosen before numba
compiles (or loads) anything: every ``@njit(cache=True)`` decorator reads it when it runs.

The directory is named for neardup's version and a hash of every kernel's source
(``kernels-0.1.0-1a2b3c4d5e6f``): a change to any kernel, in any file, gives a new directory,
so a kernel calling one in another file never loads code compiled against its old version
(numba's own check looks at the caller's file alone). It lies in the installed package
(``neardup/_kernels/__pycache__``) when that can be written, else in the user's cache
(``$XDG_CACHE_HOME/neardup``, by default ``~/.cache/neardup``); however neardup is started
(the ``neardup`` script, ``python -m neardup``, ``make``, the library), it is the same one.
A ``NUMBA_CACHE_DIR`` set by the user is respected as it is (it is then theirs to clear).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba

from neardup._version import __version__

__all__ = ["CACHE_DIR", "CACHE_PREFIX", "kernel_source_hash"]

CACHE_PREFIX = "kernels-"
"""The name of every cache directory neardup chooses begins so (stale ones are pruned)."""

_HERE = Path(__file__).resolve().parent


def kernel_source_hash() -> str:
    """12 hex digits of SHA-256 over every kernel module's name and source."""
    digest = hashlib.sha256()
    for path in sorted(_HERE.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _writable(directory: Path) -> bool:
    """Whether ``directory`` exists or can be made, and files can be written in it."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK | os.X_OK)


def _user_cache() -> Path:
    """``$XDG_CACHE_HOME/neardup``, or ``~/.cache/neardup``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "neardup"


def _choose_cache_dir() -> Path:
    """The cache directory of this version of the kernels (see the module docstring)."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return Path(given).resolve()
    name = f"{CACHE_PREFIX}{__version__}-{kernel_source_hash()}"
    for base in (_HERE / "__pycache__", _user_cache()):
        if _writable(base):
            return base / name
    return _user_cache() / name  # numba warns once, and compiles without caching


CACHE_DIR = _choose_cache_dir()
"""Where numba keeps the compiled kernels."""

if not os.environ.get("NUMBA_CACHE_DIR"):
    # numba reads its options as module attributes, set from the environment at import
    numba.config.CACHE_DIR = str(CACHE_DIR)  # type: ignore[attr-defined]
