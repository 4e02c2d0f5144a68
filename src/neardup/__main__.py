"""``python -m neardup``: the ``neardup`` command (the same kernels cache as the script's)."""

from __future__ import annotations

from neardup.cli.main import run

if __name__ == "__main__":
    run()
