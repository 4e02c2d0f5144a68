"""The Spark session of a run, and what a run owes it: its errors, its memory, its progress."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from neardup._progress import Progress
from neardup.errors import InputError, MissingExtraError, ParameterError


def require_pyspark() -> None:
    """Refuse to start without pyspark, saying how to install it."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise MissingExtraError(
            "the Spark engine needs pyspark: pip install 'neardup[spark]'"
        ) from None


def spark_session(master: str | None = None, conf: Sequence[str] = ()) -> Any:
    """A SparkSession for neardup: ``master`` (default ``local[*]``) and ``key=value`` settings.

    Python workers run this interpreter unless ``PYSPARK_PYTHON`` says otherwise.
    """
    require_pyspark()
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("neardup").master(master or "local[*]")
    builder = builder.config("spark.ui.showConsoleProgress", "false")
    for item in conf:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ParameterError(f"--spark-conf takes KEY=VALUE; got {item!r}.")
        builder = builder.config(key.strip(), value.strip())
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


@contextmanager
def errors_of_tasks() -> Iterator[None]:
    """Raise a task's :class:`InputError` (which reaches the driver wrapped by Spark) as such."""
    try:
        yield
    except Exception as exc:
        marker = "neardup.errors.InputError: "
        if marker not in str(exc):
            raise
        raise InputError(str(exc).split(marker, 1)[1].splitlines()[0]) from None


@contextmanager
def released_when_done(spark: Any) -> Iterator[None]:
    """Unpersist every RDD (checkpoints, cached frames) that the block persisted.

    A run caches its documents and checkpoints its stages in the executors' memory; once its
    outputs are written nothing needs them, and a session that runs many jobs (a notebook, a
    service, a test suite) would otherwise hold them until the driver's garbage collector
    happens to release them, and run out of memory first. The release blocks until the blocks
    are gone: the next run in the same session (in local mode, the same JVM heap) must not start
    while the last one's blocks are still being dropped.
    """
    context = spark.sparkContext
    before = set(context._jsc.getPersistentRDDs().keys())
    try:
        yield
    finally:
        from py4j.protocol import Py4JError

        with suppress(Py4JError):  # a JVM that died took what it held with it
            for key, rdd in context._jsc.getPersistentRDDs().items():
                if key not in before:
                    rdd.unpersist(True)


POLL_S = 0.5
"""How often :class:`StageJobs` reads Spark's status tracker."""


class StageJobs:
    """Names a run's Spark jobs by stage, and shows their progress when asked.

    Each stage's jobs run in the job group ``neardup:<stage>``, so Spark's UI and REST API
    attribute time and shuffle bytes to the stages (``bench/spark.py`` reads them). With
    ``show_progress``, a thread reads the status tracker every :data:`POLL_S` seconds and
    shows the tasks the current stage's jobs have done (``spark verify: 412 tasks, 9.3 s``),
    as every local stage shows its bytes or pairs (:class:`~neardup._progress.Progress`). No
    share or ETA: a stage's jobs are planned as it goes, so their total is not known ahead.
    Every stage is read at least once, however short; the jobs an earlier run of the session
    left in a group are not counted. The display is all the thread does: should the status
    tracker fail (the JVM or the context went first), it stops, and the run's own error is
    the one raised.
    """

    def __init__(self, spark: Any, *, show_progress: bool = False) -> None:
        self._context = spark.sparkContext
        self._stages: list[tuple[str, frozenset[int]]] = []
        """Each stage entered, with the jobs its group held already (an earlier run's)."""
        self._stopped = threading.Event()
        self._watcher: threading.Thread | None = None
        if show_progress:
            self._watcher = threading.Thread(
                target=self._watch, name="neardup-progress", daemon=True
            )
            self._watcher.start()

    def __enter__(self) -> StageJobs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def enter(self, stage: str) -> None:
        """Run the jobs from now on in ``stage``'s group."""
        group = f"neardup:{stage}"
        self._context.setJobGroup(group, stage)
        if self._watcher is not None:
            earlier = self._context.statusTracker().getJobIdsForGroup(group)
            self._stages.append((stage, frozenset(earlier)))

    def close(self) -> None:
        """Stop showing progress (the last stage read once more)."""
        self._stopped.set()
        if self._watcher is not None:
            self._watcher.join(timeout=10 * POLL_S)

    def _watch(self) -> None:
        """Show each stage's tasks, a display per stage, until closed."""
        tracker = self._context.statusTracker()
        shown, progress = 0, None  # the stages whose display is over; the open one
        try:
            while True:
                stopped = self._stopped.wait(POLL_S)
                entered = len(self._stages)
                while shown < entered:
                    stage, earlier = self._stages[shown]
                    if progress is None:
                        progress = Progress(f"spark {stage}", 0, unit="tasks")
                    progress(_tasks_done(tracker, f"neardup:{stage}", earlier))
                    if shown + 1 == entered and not stopped:
                        break  # the current stage: read again at the next poll
                    progress.close()
                    progress, shown = None, shown + 1
                if stopped:
                    return
        except Exception:  # a display only: the run raises its own error
            if progress is not None:
                progress.close(failed=True)


def _tasks_done(tracker: Any, group: str, earlier: frozenset[int]) -> int:
    """The tasks completed so far by the stages of ``group``'s jobs, but ``earlier``'s."""
    done = 0
    for job_id in tracker.getJobIdsForGroup(group):
        job = tracker.getJobInfo(job_id) if job_id not in earlier else None
        for stage_id in job.stageIds if job is not None else ():
            stage = tracker.getStageInfo(stage_id)
            done += stage.numCompletedTasks if stage is not None else 0
    return done
