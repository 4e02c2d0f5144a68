"""The installed ``neardup`` command, shared by the command-line tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

NEARDUP = Path(sys.executable).parent / "neardup"
"""The console script installed next to this Python."""


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``neardup *args`` and capture its output (never raising on a non-zero exit)."""
    return subprocess.run(
        [str(NEARDUP), *map(str, args)], capture_output=True, text=True, cwd=cwd, check=False
    )


@pytest.fixture(scope="module")
def installed() -> None:
    """Skip the module's tests when the ``neardup`` command is not installed."""
    if not NEARDUP.exists():
        pytest.skip(f"the neardup command is not installed next to {sys.executable}")
