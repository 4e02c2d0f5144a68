"""Atomic output: a job writes into a hidden sibling directory that is renamed into place.

An interrupted run (an exception, Ctrl-C, a crash) never leaves a half-written output at the
requested path: the directory appears whole, or not at all. The hidden sibling is named
``.NAME.tmp-HOST-PID-XXXX``; a run killed outright (SIGKILL, power loss) cannot remove it, so
the next run for the same output removes every such sibling whose process on this host is gone.
A run holds a lock (``flock``) on its sibling while it lives: a process of another PID namespace
on the same host (containers sharing a volume) looks gone, but its lock still protects it.
"""

from __future__ import annotations

import fcntl
import glob
import os
import shutil
import socket
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from neardup.errors import InputError

__all__ = [
    "AtomicDirectory",
    "check_output_path",
    "fsync_file",
    "remove_abandoned",
    "start_writeback",
]


class AtomicDirectory:
    """A directory built in a temporary sibling and renamed to ``path`` on success.

    Parameters
    ----------
    path
        Where the finished directory appears.
    overwrite
        Replace an existing directory at ``path`` (an earlier output, or an empty directory);
        without it an existing path is an error.
    inputs
        The run's inputs, which the output must not be, hold or lie inside (see
        :func:`check_output_path`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> with AtomicDirectory(root / "out") as tmp:
    ...     _ = (tmp / "a.txt").write_text("done")
    >>> sorted(p.name for p in (root / "out").iterdir())
    ['a.txt']
    """

    def __init__(
        self, path: Path | str, *, overwrite: bool = False, inputs: Sequence[Path | str] = ()
    ) -> None:
        self.path = Path(path)
        self.overwrite = overwrite
        check_output_path(self.path, inputs)
        if self.path.exists() and not overwrite:
            raise InputError(
                "output directory already exists; choose another --output or pass --overwrite",
                path=self.path,
            )
        if self.path.exists():
            _check_replaceable(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(
                f"cannot create the output's parent directory: {exc.strerror}",
                path=self.path.parent,
            ) from None
        self._tmp: Path | None = None
        self._lock: int | None = None

    def __enter__(self) -> Path:
        remove_abandoned(self.path)
        prefix = _sibling_prefix(self.path, "tmp", os.getpid())
        try:
            self._tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=self.path.parent))
        except OSError as exc:
            raise InputError(
                f"cannot write in the output's directory: {exc.strerror}; choose another --output",
                path=self.path.parent,
            ) from None
        self._lock = _lock(self._tmp)
        return self._tmp

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._tmp is not None
        try:
            self._finish(self._tmp, failed=exc_type is not None)
        finally:
            if self._lock is not None:
                os.close(self._lock)

    def _finish(self, tmp: Path, *, failed: bool) -> None:
        if failed:
            shutil.rmtree(tmp, ignore_errors=True)
            return
        for child in tmp.iterdir():
            if child.is_file():
                fsync_file(child)
        os.chmod(tmp, 0o755)  # noqa: S103 - mkdtemp's 0o700 would hide the output
        if self.path.exists():
            if not self.overwrite:
                shutil.rmtree(tmp, ignore_errors=True)
                raise InputError("output directory appeared while the job ran", path=self.path)
            trash = Path(
                tempfile.mkdtemp(
                    prefix=_sibling_prefix(self.path, "old", os.getpid()), dir=self.path.parent
                )
            )
            os.replace(self.path, trash / "old")
            os.replace(tmp, self.path)
            shutil.rmtree(trash, ignore_errors=True)
        else:
            os.replace(tmp, self.path)
        fsync_file(self.path.parent)


def check_output_path(
    output: Path, inputs: Sequence[Path | str] = (), index: Path | str | None = None
) -> None:
    """Refuse an output that would replace or hold what the user did not ask to replace.

    The output may not be the current directory or one that holds it, nor be, hold or lie
    inside an input or the index: writing it could delete them, or read its own output as
    input next time.
    """
    target = output.resolve()
    here = Path.cwd().resolve()
    if here == target or here.is_relative_to(target):
        raise InputError(
            "the output cannot be the current directory or hold it; choose a new directory "
            "for --output",
            path=output,
        )
    named = [("input", raw) for raw in inputs] + ([("index", index)] if index else [])
    for what, raw in named:
        kept = Path(raw).resolve()
        if kept == target or kept.is_relative_to(target) or target.is_relative_to(kept):
            how = "is" if kept == target else "holds" if kept.is_relative_to(target) else "is in"
            raise InputError(
                f"the output {how} the {what} {raw}; choose a directory apart from the inputs "
                "and the index for --output",
                path=output,
            )


def _check_replaceable(path: Path) -> None:
    """Refuse to replace anything but an empty directory or an earlier neardup output."""
    if not path.is_dir():
        raise InputError(
            "exists and is not a directory; --overwrite replaces only an earlier output",
            path=path,
        )
    summary = path / "summary.json"
    if any(path.iterdir()) and not (
        summary.is_file() and b'"neardup_version"' in summary.read_bytes()
    ):
        raise InputError(
            "is not an earlier neardup output (it has no summary.json of neardup); "
            "--overwrite replaces only those: remove it yourself or choose another --output",
            path=path,
        )


_HOST = socket.gethostname().replace("-", "_") or "host"


def _sibling_prefix(path: Path, kind: str, pid: int | None = None) -> str:
    """``.NAME.KIND-HOST-`` and, with ``pid``, ``PID-``: how this host's siblings start."""
    return f".{path.name}.{kind}-{_HOST}-" + ("" if pid is None else f"{pid}-")


def _lock(directory: Path) -> int | None:
    """A descriptor of ``directory`` holding its exclusive lock (released on close).

    None on a file system without locks (the PID alone tells then); :class:`BlockingIOError`
    when another open descriptor holds the lock.
    """
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise
    except OSError:
        os.close(fd)
        return None
    return fd


def remove_abandoned(path: Path) -> list[Path]:
    """Remove the hidden siblings of ``path`` left by runs of this host that no longer live.

    Returns what was removed. Siblings of a live process (or locked by one), or of another
    host (a shared file system), are left alone.
    """
    removed: list[Path] = []
    if not path.parent.is_dir():
        return removed
    for kind in ("tmp", "old"):
        prefix = _sibling_prefix(path, kind)
        for sibling in path.parent.glob(f"{glob.escape(prefix)}*"):
            pid = sibling.name[len(prefix) :].split("-", 1)[0]
            if pid.isdigit() and not _alive(int(pid)) and _remove_unlocked(sibling):
                removed.append(sibling)
    return removed


def _remove_unlocked(directory: Path) -> bool:
    """Remove ``directory`` unless a live process holds its lock; whether it was removed."""
    try:
        fd = _lock(directory)
    except OSError:  # locked by a live run, or gone already
        return False
    try:
        shutil.rmtree(directory, ignore_errors=True)
    finally:
        if fd is not None:
            os.close(fd)
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def start_writeback(fd: int, offset: int, length: int) -> None:
    """Start writing ``fd``'s bytes ``offset:offset + length`` to the disk, without waiting.

    A file written this way, piece by piece, is on the disk soon after its last piece, so the
    fsync that commits the output waits for little (a 0.5 GB kept corpus: 0.13 s less). On
    Linux, advising that the range is not needed again starts the writeback of its dirty
    pages; elsewhere this does nothing.
    """
    if hasattr(os, "posix_fadvise") and length > 0:
        os.posix_fadvise(fd, offset, length, os.POSIX_FADV_DONTNEED)


def fsync_file(path: Path) -> None:
    """Flush ``path`` (a file or a directory) to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
