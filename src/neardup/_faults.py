"""Named points where a test stops the running process, as a crash, ``kill -9`` or Ctrl-C would.

``NEARDUP_CRASH_AT=NAME`` makes the process send itself SIGKILL when it reaches the point
``NAME``: the tests of ``--resume`` stop a real run exactly between two stages, which timing a
kill from outside cannot do. ``NAME:INT`` (or ``NAME:TERM``) sends SIGINT (SIGTERM) instead:
the tests of interrupted commands reach each command mid-work, whatever the machine's speed.
Unset (always, outside those tests), a point costs one lookup.
"""

from __future__ import annotations

import os
import signal

__all__ = ["CRASH_VARIABLE", "crash_point"]

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
