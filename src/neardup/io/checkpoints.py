"""A run's working files and finished stages, kept beside its output so a killed run can resume.

A run works in ``.NAME.work``, beside its output ``NAME``: ``scratch/`` holds what its stages
write as they go (lookup keys, the text arena, spilled pairs), and each long stage, once
finished, leaves a checkpoint: a directory of its state (pickled) and of the working files a
later stage still needs (hard links, so nothing is copied). A checkpoint is written under a
temporary name, synced, then renamed: it exists whole or not at all, whenever the run is
killed. ``run.json`` says which run the checkpoints belong to (neardup's version, the
parameters, each input's size and modification time); resuming a different run is refused,
naming what differs. The directory is removed when the run succeeds; a run that fails or is
killed leaves it for ``--resume``, and a run that does not resume starts it afresh. A run
holds a lock on it while it lives: two runs never share it.

The states are pickles that only this directory's own run wrote and reads back, after its
``run.json`` matched (same neardup version); the directory is the user's, like the output.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from neardup._version import __version__
from neardup.errors import InputError, ParameterError
from neardup.io.atomic import replaced_file
from neardup.io.output import fsync_file, lock_directory

__all__ = ["WorkDirectory", "input_identity"]

RUN_FILE = "run.json"
STATE_FILE = "state.pickle"


def input_identity(paths: Iterable[Path]) -> list[list[Any]]:
    """Each input as ``[path, bytes, modification time in ns]``; a directory, its files too.

    What tells a resumed run that its inputs are those its checkpoints were made of.
    """
    identity: list[list[Any]] = []
    for path in paths:
        stat = path.stat()
        identity.append([str(path.resolve()), stat.st_size, stat.st_mtime_ns])
        if path.is_dir():
            for file in sorted(p for p in path.rglob("*") if p.is_file()):
                inner = file.stat()
                identity.append([str(file.resolve()), inner.st_size, inner.st_mtime_ns])
    return identity


class WorkDirectory:
    """The work directory of the run writing ``output``: scratch space and checkpoints.

    Parameters
    ----------
    output
        The run's output; the directory is ``.NAME.work`` beside it.
    identity
        What makes the run the same run: its parameters and inputs (JSON values); neardup's
        version is added.
    resume
        Keep the checkpoints an earlier run of the same identity left, and continue from
        them; without it (or when there are none) the run starts from nothing.
    upgrade
        Turns the identity an earlier version recorded into today's layout before the two are
        compared (a parameter that moved is then no difference).
    """

    def __init__(
        self,
        output: Path,
        identity: Mapping[str, Any],
        *,
        resume: bool,
        upgrade: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self.path = output.parent / f".{output.name}.work"
        self.scratch = self.path / "scratch"
        self.identity = json.loads(json.dumps({"neardup_version": __version__, **identity}))
        """As ``run.json`` holds it (tuples are lists there)."""
        self.resume = resume
        self._upgrade = upgrade
        self.resumed_after: str | None = None
        """The last stage a resumed run found finished (None: it started from nothing)."""
        self._lock: int | None = None
        self._deleting: list[threading.Thread] = []
        """Threads deleting dropped checkpoints (:meth:`drop`)."""

    def __enter__(self) -> WorkDirectory:
        self.path.mkdir(parents=True, exist_ok=True)
        try:
            self._lock = lock_directory(self.path)
        except BlockingIOError:
            raise InputError(
                "another neardup run is writing this output and works in this directory; wait "
                "for it, or choose another --output",
                path=self.path,
            ) from None
        try:
            if self.resume and (self.path / RUN_FILE).is_file():
                self._check_same_run()
            else:
                self._start_afresh()
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch.mkdir()
            for leftover in self.path.glob("*.tmp"):  # a checkpoint killed while written
                shutil.rmtree(leftover, ignore_errors=True)
        except BaseException:
            self._unlock()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            for deleting in self._deleting:
                deleting.join()
            shutil.rmtree(self.scratch, ignore_errors=True)
            if exc_type is None or not self.stages():
                shutil.rmtree(self.path, ignore_errors=True)
        finally:
            self._unlock()

    def _unlock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def _start_afresh(self) -> None:
        for child in self.path.iterdir():
            if child.is_dir():
                shutil.rmtree(child)
            else:
                child.unlink()
        with replaced_file(self.path / RUN_FILE) as f:
            f.write(json.dumps(self.identity, indent=1).encode())

    def _check_same_run(self) -> None:
        try:
            earlier = json.loads((self.path / RUN_FILE).read_bytes())
        except (OSError, ValueError) as exc:
            raise InputError(
                f"cannot read the checkpoints' {RUN_FILE} ({exc}); run without --resume to "
                "start again",
                path=self.path,
            ) from None
        if self._upgrade is not None:
            earlier = self._upgrade(earlier)
        differences = _differences(earlier, self.identity)
        if differences:
            shown = "; ".join(differences[:3]) + ("; ..." if len(differences) > 3 else "")
            raise ParameterError(
                f"cannot resume {self.path}: it holds the stages of another run ({shown}); "
                "run with the same inputs and parameters, or without --resume to start again"
            )

    def stages(self) -> list[str]:
        """The stages whose checkpoints are here."""
        return sorted(p.name for p in self.path.iterdir() if (p / STATE_FILE).is_file())

    def load(self, stage: str) -> Any:
        """The state ``stage`` saved, its kept files linked back into scratch; None if none.

        Only a resumed run finds checkpoints (a fresh one has removed them).
        """
        directory = self.path / stage
        if not (directory / STATE_FILE).is_file():
            return None
        for file in directory.iterdir():
            if file.name != STATE_FILE:
                _link(file, self.scratch / file.name)
        with (directory / STATE_FILE).open("rb") as f:
            state = pickle.load(f)  # noqa: S301 - written by this run's own version, see above
        self.resumed_after = stage
        return state

    def save(self, stage: str, state: object, files: Iterable[Path] = ()) -> None:
        """Checkpoint ``stage``: its ``state`` pickled and ``files`` (in scratch) linked.

        Everything is on the disk when this returns (a crash of the machine keeps it too).
        """
        building = self.path / f"{stage}.tmp"
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir()
        for file in files:
            fsync_file(file)
            _link(file, building / file.name)
        with (building / STATE_FILE).open("wb") as f:
            pickle.dump(state, f, protocol=5)  # arrays written from their own buffers
            f.flush()
            os.fsync(f.fileno())
        fsync_file(building)
        os.replace(building, self.path / stage)
        fsync_file(self.path)

    def drop(self, stage: str) -> None:
        """Remove ``stage``'s checkpoint (a later one made it useless).

        It leaves the checkpoints at once (moved into scratch, which a later run empties
        whatever happens); its files are deleted by a thread while the run goes on, and the
        run waits for that only as it ends. Freeing gigabytes of lookup keys takes the file
        system seconds (dense 10M: 2.9 s), time the writing can use.
        """
        directory = self.path / stage
        if not directory.is_dir():
            return
        dropped = self.scratch / f"dropped-{stage}"
        os.replace(directory, dropped)
        deleting = threading.Thread(
            target=shutil.rmtree, args=(dropped,), kwargs={"ignore_errors": True}, daemon=True
        )
        deleting.start()
        self._deleting.append(deleting)


def _link(source: Path, target: Path) -> None:
    """``target`` names ``source``'s bytes: a hard link, or a copy where links fail."""
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _differences(earlier: Mapping[str, Any], now: Mapping[str, Any], prefix: str = "") -> list[str]:
    """What differs between two identities, each as ``NAME was X, now Y``."""
    found: list[str] = []
    for key in sorted(set(earlier) | set(now)):
        before, after = earlier.get(key), now.get(key)
        if before == after:
            continue
        name = f"{prefix}{key}"
        if isinstance(before, dict) and isinstance(after, dict):
            found.extend(_differences(before, after, f"{name}."))
        elif key == "inputs" and isinstance(before, list) and isinstance(after, list):
            found.extend(_input_differences(before, after))
        else:
            found.append(f"{name} was {before!r}, now {after!r}")
    return found


def _input_differences(earlier: list[list[Any]], now: list[list[Any]]) -> list[str]:
    """Inputs added, removed or changed (size or modification time) since the checkpoints."""
    before = {path: rest for path, *rest in earlier}
    after = {path: rest for path, *rest in now}
    found = [f"input {p} is new" for p in after if p not in before]
    found += [f"input {p} is no longer given" for p in before if p not in after]
    found += [
        f"input {p} changed since (size or modification time)"
        for p in after
        if p in before and before[p] != after[p]
    ]
    if not found:
        found.append("the inputs are given in another order")
    return found
