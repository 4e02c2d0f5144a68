"""Progress on stderr: a bar with an ETA on a terminal, a log line every few seconds otherwise.

A job tells a :class:`Progress` how much of a known total is done (input bytes read, pairs
verified); piped or redirected stderr gets plain lines (``sketch: 41% of 332 MB, 4.2 s,
about 6.1 s left``) instead of carriage returns.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any, TextIO

__all__ = ["Progress"]

LOG_EVERY_S = 5.0


class Progress:
    """Progress of one stage toward ``total`` units.

    Parameters
    ----------
    label
        The stage's name, printed first.
    total
        Units of the whole stage (0 when unknown: no percentage, no ETA).
    unit
        ``"B"`` for bytes (scaled to kB, MB, ...), or a noun such as ``"pairs"``.
    enabled
        False makes every call a no-op.
    stream
        Where to write (stderr by default).
    """

    def __init__(
        self,
        label: str,
        total: int,
        *,
        unit: str = "B",
        enabled: bool = True,
        stream: TextIO | None = None,
    ) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self._start = time.monotonic()
        self._last_log = self._start
        self._done = 0
        self._bar: Any = None  # a terminal's bar, drawn from the first report on
        self._on_terminal = enabled and self.stream.isatty()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close(failed=exc_type is not None)

    def __call__(self, done: int, total: int | None = None) -> None:
        """Report ``done`` units so far (absolute); ``total``, when the stage learns it late."""
        if not self.enabled:
            return
        if total is not None and total != self.total:
            self.total = total
            if self._bar is not None:
                self._bar.total = total or None
        if self._on_terminal and self._bar is None:
            self._bar = self._new_bar()
        if self._bar is not None:
            self._bar.update(done - self._done)
            self._done = done
            return
        self._done = done
        now = time.monotonic()
        if now - self._last_log >= LOG_EVERY_S:
            self._last_log = now
            self._log(now)

    def _new_bar(self) -> Any:
        """The terminal's bar (a stage that reports nothing draws none)."""
        from tqdm import tqdm

        return tqdm(
            desc=self.label,
            total=self.total or None,
            unit=self.unit,
            unit_scale=self.unit == "B",
            file=self.stream,
            dynamic_ncols=True,
        )

    def close(self, *, failed: bool = False) -> None:
        """End the stage: close the bar, or log its last line."""
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.close()
        elif not self._on_terminal and not failed and time.monotonic() - self._start >= LOG_EVERY_S:
            self._log(time.monotonic())
        self.enabled = False

    def _log(self, now: float) -> None:
        elapsed = now - self._start
        line = f"{self.label}: {self._amount(self._done)}"
        if self.total:
            share = self._done / self.total
            line = f"{self.label}: {share:.0%} of {self._amount(self.total)}"
            if 0 < share < 1:
                line += f", {elapsed:.1f} s, about {elapsed * (1 - share) / share:.1f} s left"
            else:
                line += f", {elapsed:.1f} s"
        else:
            line += f", {elapsed:.1f} s"
        print(line, file=self.stream, flush=True)

    def _amount(self, value: int) -> str:
        if self.unit != "B":
            return f"{value:,} {self.unit}"
        for scale, name in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
            if value >= scale:
                return f"{value / scale:,.1f} {name}"
        return f"{value} B"
