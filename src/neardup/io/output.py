"""Atomic output: a job writes into a hidden sibling directory that is renamed into place.

An interrupted run (an exception, Ctrl-C, a crash) never leaves a half-written output at the
requested path: the directory appears whole, or not at all. The hidden sibling is named
``.NAME.tmp-HOST-PID-XXXX``; a run killed outright (SIGKILL, power loss) cannot remove it, so
the next run for the same output removes every such sibling whose process on this host is gone.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path
from types import TracebackType

from neardup.errors import InputError

__all__ = ["AtomicDirectory", "fsync_file", "remove_abandoned"]


class AtomicDirectory:
    """A directory built in a temporary sibling and renamed to ``path`` on success.

    Parameters
    ----------
    path
        Where the finished directory appears.
    overwrite
        Replace an existing directory at ``path``; without it an existing path is an error.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> with AtomicDirectory(root / "out") as tmp:
    ...     _ = (tmp / "a.txt").write_text("done")
    >>> sorted(p.name for p in (root / "out").iterdir())
    ['a.txt']
    """

    def __init__(self, path: Path | str, *, overwrite: bool = False) -> None:
        self.path = Path(path)
        self.overwrite = overwrite
        if self.path.exists() and not overwrite:
            raise InputError(
                "output directory already exists; choose another --output or pass --overwrite",
                path=self.path,
            )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(
                f"cannot create the output's parent directory: {exc.strerror}",
                path=self.path.parent,
            ) from None
        self._tmp: Path | None = None

    def _prefix(self, kind: str) -> str:
        return f".{self.path.name}.{kind}-{_HOST}-"

    def __enter__(self) -> Path:
        remove_abandoned(self.path)
        self._tmp = Path(
            tempfile.mkdtemp(prefix=f"{self._prefix('tmp')}{os.getpid()}-", dir=self.path.parent)
        )
        return self._tmp

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._tmp is not None
        if exc_type is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            return
        for child in self._tmp.iterdir():
            if child.is_file():
                fsync_file(child)
        os.chmod(self._tmp, 0o755)  # noqa: S103 - mkdtemp's 0o700 would hide the output
        if self.path.exists():
            if not self.overwrite:
                shutil.rmtree(self._tmp, ignore_errors=True)
                raise InputError("output directory appeared while the job ran", path=self.path)
            trash = Path(
                tempfile.mkdtemp(
                    prefix=f"{self._prefix('old')}{os.getpid()}-", dir=self.path.parent
                )
            )
            os.replace(self.path, trash / "old")
            os.replace(self._tmp, self.path)
            shutil.rmtree(trash, ignore_errors=True)
        else:
            os.replace(self._tmp, self.path)
        fsync_file(self.path.parent)


_HOST = socket.gethostname().replace("-", "_") or "host"


def remove_abandoned(path: Path) -> list[Path]:
    """Remove the hidden siblings of ``path`` left by runs of this host that no longer live.

    Returns what was removed. Siblings of a live process, or of another host (a shared file
    system), are left alone.
    """
    removed: list[Path] = []
    if not path.parent.is_dir():
        return removed
    for kind in ("tmp", "old"):
        prefix = f".{path.name}.{kind}-{_HOST}-"
        for sibling in path.parent.glob(f"{prefix}*"):
            pid = sibling.name[len(prefix) :].split("-", 1)[0]
            if pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(sibling, ignore_errors=True)
                removed.append(sibling)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def fsync_file(path: Path) -> None:
    """Flush ``path`` (a file or a directory) to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
