"""An iterator whose next item is made in a worker thread while the caller uses the last one.

The batch job reads and parses the next batch of input (file reads and a parsing kernel, both
without the GIL) while the last batch is sketched: on two cores, that fills what would be idle
time of either.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterator
from typing import TypeVar

__all__ = ["prefetched"]

T = TypeVar("T")

_END = object()


def prefetched(items: Iterator[T]) -> Iterator[T]:
    """``items``, each made in a worker thread while the caller works on the one before.

    One item waits at most. An exception raised while making an item is raised here, in the
    caller, when that item is asked for. When the caller stops early (an exception of its own,
    or closing this generator), the worker stops after the item it is making.
    """
    ready: queue.Queue[object] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def work() -> None:
        try:
            for item in items:
                if stop.is_set():
                    return
                ready.put(item)
            ready.put(_END)
        except BaseException as exc:  # raised again in the caller
            ready.put(exc)

    worker = threading.Thread(target=work, name="neardup-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            item = ready.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        while worker.is_alive():  # let a worker blocked on a full queue finish
            with contextlib.suppress(queue.Empty):
                ready.get(timeout=0.01)
        worker.join()
