"""URLs in place of local paths on the command line (:mod:`neardup.io.remote`).

Each command names the parameters that may be URLs: its inputs, fetched before it runs, and
the output it writes, committed to its URL after it succeeds. The command sees local paths;
what it prints and its errors name the URLs.
"""

from __future__ import annotations

import contextlib
import functools
import io
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import click

from neardup.errors import NeardupError
from neardup.io.remote import Staging, staging, url_of

__all__ = ["LOCATIONS", "allow_remote_locations"]


LOCATIONS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "dedup": (("inputs",), "output"),
    "contamination": (("train", "against"), "output"),
    "substrings": (("inputs", "against"), "output"),
    "mirrors": (("inputs",), "output"),
    "plan": (("inputs",), "output"),
    "join": (("input_path",), "output"),
    "compare": (("a", "b"), None),
    "index add": (("inputs",), None),
    "index query": (("inputs",), None),
}
"""Each command's parameters that may be URLs (:mod:`neardup.io.remote`): its inputs, and
the output it writes."""


def _with_remote_locations(
    command: click.Command, inputs: Sequence[str], output: str | None
) -> None:
    """Let ``command``'s ``inputs`` and ``output`` be URLs: fetched, or written then committed.

    The command itself sees local paths; messages name the URLs. ``--engine spark`` reads
    and writes its own URLs.
    """
    callback = command.callback
    assert callback is not None

    @functools.wraps(callback)
    def run_command(**kwargs: Any) -> object:
        given = [(name, kwargs[name]) for name in inputs if kwargs.get(name) is not None]
        url = None
        if output is not None and kwargs.get(output) is not None:
            url = url_of(kwargs[output])
            if url is not None and url.startswith("file://"):
                kwargs[output], url = Path("/" + url[len("file://") :]), None
        remote = url is not None or any(
            url_of(v) is not None for _, value in given for v in _as_tuple(value)
        )
        if not remote or kwargs.get("engine") == "spark":
            return callback(**kwargs)
        if kwargs.get("resume"):
            raise click.UsageError(
                "--resume needs local inputs and a local output (a URL's copy is fetched "
                "again by each run): copy them here, or drop --resume"
            )
        with staging() as stage, contextlib.redirect_stdout(_Unstaged(sys.stdout, stage)):
            try:
                for name, value in given:
                    fetched = stage.fetch(_as_tuple(value))
                    kwargs[name] = tuple(fetched) if isinstance(value, tuple) else fetched[0]
                if url is not None and output is not None:
                    kwargs[output] = stage.output(url, bool(kwargs.get("overwrite")))
                result = callback(**kwargs)
                if output is not None and kwargs.get(output) is not None:
                    stage.unstage_files(Path(kwargs[output]))
                if url is not None and output is not None:
                    stage.publish(kwargs[output], url)
                return result
            except (NeardupError, OSError) as exc:
                stage.unstage_error(exc)
                raise

    command.callback = run_command


def _as_tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, tuple) else (value,)


def allow_remote_locations(commands: Mapping[str, click.Command]) -> None:
    """Let the parameters :data:`LOCATIONS` names be URLs, in ``commands`` (by path)."""
    for name, (inputs, output) in LOCATIONS.items():
        _with_remote_locations(commands[name], inputs, output)


class _Unstaged(io.TextIOBase):
    """A text stream that writes URLs for staged paths into ``stream``."""

    def __init__(self, stream: TextIO, stage: Staging) -> None:
        self._stream = stream
        self._stage = stage

    def write(self, text: str) -> int:
        self._stream.write(self._stage.unstage(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()
