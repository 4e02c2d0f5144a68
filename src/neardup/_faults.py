"""Named points where a test stops the running process, as a crash, ``kill -9`` or Ctrl-C would.

``NEARDUP_CRASH_AT=NAME`` makes the process send itself SIGKILL when it reaches the point
``NAME``: the tests of ``--resume`` stop a real run exactly between two stages, which timing a
kill from outside cannot do. ``NAME:INT`` (or ``NAME:TERM``) sends SIGINT (SIGTERM) instead:
the tests of interrupted commands reach each command mid-work, whatever the machine's speed.
Unset (always, outside those tests), a point costs one lookup.

A Spark task cannot be reached that way (its Python worker outlives the test that sets the
variable): :func:`fail_task_once` fails the first task that reaches it while the job's
``neardup.test.failOnce`` property is set, and the tests show a retried task changes nothing.
"""

from __future__ import annotations

import os
import signal

__all__ = ["CRASH_VARIABLE", "FAIL_ONCE_PROPERTY", "crash_point", "fail_task_once"]

CRASH_VARIABLE = "NEARDUP_CRASH_AT"

_SIGNALS = {"KILL": signal.SIGKILL, "INT": signal.SIGINT, "TERM": signal.SIGTERM}


def crash_point(name: str) -> None:
    """Send this process the signal ``NEARDUP_CRASH_AT`` names for this point (SIGKILL)."""
    wanted = os.environ.get(CRASH_VARIABLE)
    if wanted is None:
        return
    point, _, signal_name = wanted.partition(":")
    if point == name:
        os.kill(os.getpid(), _SIGNALS[signal_name or "KILL"])


FAIL_ONCE_PROPERTY = "neardup.test.failOnce"
"""The Spark local property (``SparkContext.setLocalProperty``) naming :func:`fail_task_once`'s
marker file."""


def fail_task_once() -> None:
    """Fail this Spark task if it is the first to get here while ``FAIL_ONCE_PROPERTY`` is set.

    The property names a file that does not exist yet: the first task creates it and raises,
    so its retry, and every other task, goes on. Outside a Spark task, or unset, it does
    nothing.
    """
    from pyspark import TaskContext

    context = TaskContext.get()
    marker = context.getLocalProperty(FAIL_ONCE_PROPERTY) if context is not None else None
    if marker:
        try:
            with open(marker, "x"):
                pass
        except FileExistsError:
            return
        raise RuntimeError(f"neardup: injected task failure ({FAIL_ONCE_PROPERTY})")
