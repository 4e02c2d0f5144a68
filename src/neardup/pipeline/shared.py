"""What the stages share: where texts are read back from, how progress is told, timings."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from neardup._kernels.compiling import Stopwatch
from neardup._memory import release_free_memory
from neardup._types import Batch, I64Array
from neardup.io.records import RecordBatch
from neardup.summary import (
    StageTimes,
)

ProgressCallback = Callable[[int], object]
"""Told an absolute amount of work done (input bytes, or pairs verified)."""


@dataclass
class Timings:
    """Seconds spent per stage, in the order the stages ran, and numba's compiling apart.

    A stage's seconds leave out the seconds numba spent compiling kernels in it (a first run
    on a cold cache: :class:`~neardup._kernels.compiling.Stopwatch`); those add up in
    ``compile_seconds``, so a first run's stages take what a later run's take.
    """

    seconds: dict[str, float] = field(default_factory=dict)
    compile_seconds: float = 0.0

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the enclosed block as stage ``name``."""
        watch = Stopwatch()
        try:
            with watch.running():
                yield
        finally:
            release_free_memory()  # what the stage dropped is not held through the next
            self.seconds[name] = self.seconds.get(name, 0.0) + watch.seconds
            self.compile_seconds += watch.compile_seconds

    def report(self, num_bytes: int) -> StageTimes:
        """Seconds per stage, the total, the throughput over ``num_bytes`` of text, compiling."""
        return StageTimes.measured(self.seconds, num_bytes, compile_seconds=self.compile_seconds)


class TextStore(Protocol):
    """Where verification finds the normalised texts of the documents it needs.

    :class:`~neardup.io.arena.TextArena` keeps a copy in a file;
    :class:`~neardup.io.jsonl.JSONLineTexts` reads plain JSONL lines again;
    :class:`StringTexts` normalises the caller's strings again (:func:`dedup`).
    """

    def append(self, records: RecordBatch, normalized: Batch) -> None:
        """Take note of a batch (its records and their normalised texts)."""

    def finish(self) -> None:
        """End appending."""

    def sizes(self) -> I64Array:
        """About how many bytes each document's text has."""

    def take(self, docs: I64Array) -> Batch:
        """The normalised texts of ``docs``, in that order."""
