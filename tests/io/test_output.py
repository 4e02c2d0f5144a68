"""Clearing what killed runs leave behind, and never what a live run still writes."""

from __future__ import annotations

import fcntl
import itertools
import os
from pathlib import Path

import pytest

from neardup.io import output
from neardup.io.output import AtomicDirectory, remove_abandoned


def _free_pids() -> itertools.count[int]:
    pid_max = Path("/proc/sys/kernel/pid_max")
    top = int(pid_max.read_text()) if pid_max.exists() else 32768
    return itertools.count(top - 1, -1)


_PIDS = _free_pids()


def _dead_pid() -> int:
    """The id of no running process, as a finished run's id is (a new one at each call;
    counted down from the largest id the system hands out, where ids are least likely used)."""
    for pid in _PIDS:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:  # another user's live process
            continue
    raise AssertionError("every process id is in use")


def _leftover(parent: Path, name: str, pid: int) -> Path:
    """A hidden sibling as a run of process ``pid`` on this host leaves it."""
    path = parent / f".{name}.tmp-{output._HOST}-{pid}-abc123"
    path.mkdir()
    (path / "clusters.jsonl").write_text("half written\n")
    return path


def test_only_the_remains_of_gone_processes_are_removed(tmp_path: Path) -> None:
    gone = _leftover(tmp_path, "out", _dead_pid())
    alive = _leftover(tmp_path, "out", os.getpid())
    other_output = _leftover(tmp_path, "out2", _dead_pid())
    assert remove_abandoned(tmp_path / "out") == [gone]
    assert sorted(tmp_path.iterdir()) == sorted([alive, other_output])


def test_a_locked_directory_survives_even_when_its_process_looks_gone(tmp_path: Path) -> None:
    # a run in another PID namespace (a container sharing the volume) looks gone from here
    elsewhere = _leftover(tmp_path, "out", _dead_pid())
    fd = os.open(elsewhere, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert remove_abandoned(tmp_path / "out") == []
        assert elsewhere.exists()
    finally:
        os.close(fd)
    assert remove_abandoned(tmp_path / "out") == [elsewhere]


def test_output_names_are_not_patterns(tmp_path: Path) -> None:
    mine = _leftover(tmp_path, "out[1]", _dead_pid())
    lookalike = _leftover(tmp_path, "out1", _dead_pid())
    assert remove_abandoned(tmp_path / "out[1]") == [mine]
    assert lookalike.exists()


def test_a_running_job_holds_the_lock_on_its_directory(tmp_path: Path) -> None:
    with AtomicDirectory(tmp_path / "out", kind="dedup") as work:
        fd = os.open(work, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
    assert (tmp_path / "out").is_dir()
