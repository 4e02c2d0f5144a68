"""Replace one file atomically: a temporary file beside it, synced, then renamed over it.

A reader sees the old file or the new one, never half of one; an interrupted write leaves the
old file (and no temporary) behind. Whole output directories have their own protocol
(:mod:`neardup.io.output`); this is for single files: a report, a plan, a saved index.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

__all__ = ["replaced_file"]


@contextmanager
def replaced_file(path: Path | str) -> Iterator[BinaryIO]:
    r"""A binary file to write; on a clean exit it replaces ``path``, on an error it is removed.

    The file gets mode 0o644 (an ordinary file, not the temporary's 0o600).

    Raises
    ------
    OSError
        The file cannot be written (a missing directory, permissions, disk space), naming
        ``path``, not the temporary.

    Examples
    --------
    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "plan.toml"
    >>> with replaced_file(target) as f:
    ...     _ = f.write(b"threshold = 0.8\n")
    >>> target.read_text(), oct(target.stat().st_mode & 0o777)
    ('threshold = 0.8\n', '0o644')
    """
    path = Path(path)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fchmod(f.fileno(), 0o644)
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException as exc:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename == temporary:
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise
