"""Named points where a test kills the running process, as a crash or ``kill -9`` would.

``NEARDUP_CRASH_AT=NAME`` makes the process send itself SIGKILL when it reaches the point
``NAME``: the tests of ``--resume`` stop a real run exactly between two stages, which timing a
kill from outside cannot do. Unset (always, outside those tests), a point costs one lookup.
"""

from __future__ import annotations

import os
import signal

__all__ = ["CRASH_VARIABLE", "crash_point"]

CRASH_VARIABLE = "NEARDUP_CRASH_AT"


def crash_point(name: str) -> None:
    """Kill this process outright if ``NEARDUP_CRASH_AT`` names this point."""
    if os.environ.get(CRASH_VARIABLE) == name:
        os.kill(os.getpid(), signal.SIGKILL)
