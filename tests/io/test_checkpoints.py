"""The work directory of a resumable run: checkpoints whole or absent, one run at a time,
another run's checkpoints never taken."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from neardup.errors import InputError, ParameterError
from neardup.io.checkpoints import WorkDirectory, input_identity

IDENTITY = {"config": {"lsh": {"threshold": 0.8}, "keep_by": ("year:max",)}, "inputs": []}


def _checkpoint_then_fail(output: Path) -> None:
    with WorkDirectory(output, IDENTITY, resume=False) as work:
        kept = work.scratch / "keys-0.u64"
        np.arange(5, dtype="<u8").tofile(kept)
        work.save("sketch", {"rows": 5}, [kept])
        raise RuntimeError


def _interrupted(output: Path) -> None:
    """A run that checkpointed a stage (its state and one working file), then failed."""
    with pytest.raises(RuntimeError):
        _checkpoint_then_fail(output)


def test_a_resumed_run_finds_the_state_and_files_of_the_interrupted_one(tmp_path: Path) -> None:
    _interrupted(tmp_path / "out")

    with WorkDirectory(tmp_path / "out", IDENTITY, resume=True) as work:
        assert work.load("find") is None
        assert work.load("sketch") == {"rows": 5}
        assert work.resumed_after == "sketch"
        assert np.fromfile(work.scratch / "keys-0.u64", dtype="<u8").tolist() == [0, 1, 2, 3, 4]
    assert not (tmp_path / ".out.work").exists()


def test_a_checkpoint_killed_while_written_is_not_taken(tmp_path: Path) -> None:
    _interrupted(tmp_path / "out")
    half = tmp_path / ".out.work" / "find.tmp"
    half.mkdir()
    (half / "state.pickle").write_bytes(b"\x80\x05half")

    with WorkDirectory(tmp_path / "out", IDENTITY, resume=True) as work:
        assert work.stages() == ["sketch"]
        assert work.load("find") is None
        assert not half.exists()


def test_a_run_without_resume_drops_what_it_finds(tmp_path: Path) -> None:
    _interrupted(tmp_path / "out")

    with WorkDirectory(tmp_path / "out", IDENTITY, resume=False) as work:
        assert work.stages() == []
        assert work.load("sketch") is None


def _dropped_then_fail(output: Path) -> None:
    """A run that checkpointed two stages, dropped the first, then failed."""
    with WorkDirectory(output, IDENTITY, resume=False) as work:
        kept = work.scratch / "keys-0.u64"
        np.arange(5, dtype="<u8").tofile(kept)
        work.save("sketch", {"rows": 5}, [kept])
        work.save("find", {"pairs": 2})
        work.drop("sketch")
        assert work.stages() == ["find"]
        raise RuntimeError


def test_a_dropped_checkpoint_leaves_at_once_and_its_files_by_the_end(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        _dropped_then_fail(tmp_path / "out")

    work_dir = tmp_path / ".out.work"
    assert sorted(p.name for p in work_dir.iterdir()) == ["find", "run.json"]
    with WorkDirectory(tmp_path / "out", IDENTITY, resume=True) as work:
        assert work.load("sketch") is None
        assert work.load("find") == {"pairs": 2}


def test_two_runs_never_share_a_work_directory(tmp_path: Path) -> None:
    with (
        WorkDirectory(tmp_path / "out", IDENTITY, resume=False),
        pytest.raises(InputError, match="another neardup run is writing this output"),
    ):
        WorkDirectory(tmp_path / "out", IDENTITY, resume=True).__enter__()
    with WorkDirectory(tmp_path / "out", IDENTITY, resume=True):  # the lock went with the run
        pass


def test_the_differences_from_the_checkpointed_run_are_named(tmp_path: Path) -> None:
    _interrupted(tmp_path / "out")
    other = {**IDENTITY, "config": {"lsh": {"threshold": 0.7}, "keep_by": ["year:max"]}}

    with pytest.raises(ParameterError, match=r"config\.lsh\.threshold was 0\.8, now 0\.7"):
        WorkDirectory(tmp_path / "out", other, resume=True).__enter__()
    # the refused run let go of the directory, and left the checkpoints as they were
    with WorkDirectory(tmp_path / "out", IDENTITY, resume=True) as work:
        assert work.stages() == ["sketch"]


def test_an_input_directory_is_known_by_its_files(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("one")
    before = input_identity([folder])
    (folder / "a.txt").write_text("one more")
    os.utime(folder, ns=(before[0][2], before[0][2]))  # the directory's own time unchanged

    assert input_identity([folder]) != before
