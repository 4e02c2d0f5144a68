"""The ``neardup`` command, shared by the command-line tests: run in this process (the default,
fast) or as the installed program (start-up, exit codes, signals).

:func:`run` calls the command's own entry point, :func:`neardup.cli.main.main`, with the
arguments a user types, and gives back what the program would: the exit code and everything
written to stdout and stderr, decoded as a child's text output is. The work done is the same
code on the same files; what it leaves out is the interpreter's start and exit, which
:func:`run_process` (and the tests marked ``subprocess``) keep covering.
"""

from __future__ import annotations

import contextlib
import io
import locale
import os
import subprocess
import sys
import traceback
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

NEARDUP = Path(sys.executable).parent / "neardup"
"""The console script installed next to this Python."""

Result = subprocess.CompletedProcess
"""What :func:`run` and :func:`run_process` return: ``returncode``, ``stdout``, ``stderr``."""


def run_process(
    *args: str | Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the installed ``neardup *args`` as a program and capture its output (never raising on
    a non-zero exit). ``env`` is added to this process's environment."""
    if not NEARDUP.exists():
        pytest.skip(f"the neardup command is not installed next to {sys.executable}")
    return subprocess.run(
        [str(NEARDUP), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=None if env is None else {**os.environ, **env},
        timeout=timeout,
        check=False,
    )


@contextlib.contextmanager
def _environment(env: Mapping[str, str | None]) -> Iterator[None]:
    """``os.environ`` with ``env`` set (None: removed), restored afterwards."""
    saved = {name: os.environ.get(name) for name in env}
    try:
        for name, value in env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _program_warnings() -> Iterator[None]:
    """Python's default warning filters, as a program started without -W has them (the test
    run's own filters turn every warning into an error; the command prints them instead)."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        warnings.simplefilter("default")
        for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning):
            warnings.simplefilter("ignore", category)
        warnings.simplefilter("ignore", ResourceWarning)
        yield


class ServeListened(BaseException):
    """``neardup serve`` got as far as listening inside the test process (which it must not:
    nothing would stop it). A BaseException, so that no handler of the command catches it."""


def _no_listening(*args: object, **kwargs: object) -> None:
    raise ServeListened


def _text(stream: io.TextIOWrapper) -> str:
    """What a parent reading the child's pipe in text mode gets: the bytes decoded with the
    locale's encoding and universal newlines."""
    stream.flush()
    raw = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return io.TextIOWrapper(io.BytesIO(raw), encoding=locale.getpreferredencoding(False)).read()


def run(
    *args: str | Path, cwd: Path | None = None, env: Mapping[str, str | None] | None = None
) -> subprocess.CompletedProcess[str]:
    """``neardup *args`` in this process: its exit code, stdout and stderr (never raising on a
    non-zero exit).

    ``cwd`` is the working directory for the run; ``env`` sets variables (None removes one) for
    its length. An exception the command lets through is printed with its traceback and exits
    1, as the interpreter does. ``neardup serve`` may be run only to be refused: listening here
    fails the test (start a real server with tests/service for that).
    """
    from neardup.cli.main import main

    argv = [str(a) for a in args]
    encoding = locale.getpreferredencoding(False)
    stdout = io.TextIOWrapper(io.BytesIO(), encoding=encoding, write_through=True)
    stderr = io.TextIOWrapper(io.BytesIO(), encoding=encoding, write_through=True)
    here = os.getcwd()
    with contextlib.ExitStack() as stack:
        stack.enter_context(_environment(env or {}))
        stack.enter_context(_program_warnings())
        stack.enter_context(contextlib.redirect_stdout(stdout))
        stack.enter_context(contextlib.redirect_stderr(stderr))
        with contextlib.suppress(ImportError):
            import uvicorn

            patch = stack.enter_context(pytest.MonkeyPatch.context())
            patch.setattr(uvicorn.Server, "run", _no_listening)
        if cwd is not None:
            os.chdir(cwd)
            stack.callback(os.chdir, here)
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
            if not isinstance(exc.code, int | None):
                print(exc.code, file=sys.stderr)
        except Exception:  # what the interpreter does with an error the command lets through
            traceback.print_exc()
            code = 1
    return subprocess.CompletedProcess(argv, code, _text(stdout), _text(stderr))


@pytest.fixture(scope="module")
def installed() -> None:
    """Skip the module's tests when the ``neardup`` command is not installed."""
    if not NEARDUP.exists():
        pytest.skip(f"the neardup command is not installed next to {sys.executable}")
