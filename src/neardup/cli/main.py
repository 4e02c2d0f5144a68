"""Entry point of the ``neardup`` command: errors become one line and an exit code.

Exit codes: 0 success, 1 bad data or input (``InputError``, ``StoreError``) or an error of the
machine (a full disk, a path that cannot be written: ``OSError``), 2 bad usage or parameters
(``ParameterError``, unknown options), 130 interrupted (SIGINT), 143 terminated (SIGTERM).
Either signal ends the command the way an error does: what it was writing is removed.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import NoReturn

import click

from neardup._version import __version__
from neardup.cli.compare import compare_command
from neardup.cli.contamination import contamination_command
from neardup.cli.dedup import dedup_command
from neardup.cli.index import index_group
from neardup.cli.join import join_command
from neardup.cli.locations import allow_remote_locations
from neardup.cli.mirrors import mirrors_command
from neardup.cli.options import in_flags
from neardup.cli.plan import plan_command
from neardup.cli.report import report_command
from neardup.cli.serve import serve_command
from neardup.cli.substrings import substrings_command
from neardup.cli.warmup import warmup_command
from neardup.errors import NeardupError, ParameterError, offered_options

__all__ = ["cli", "main", "run"]


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="""\b
Examples:
  neardup plan corpus.jsonl.gz && neardup dedup corpus.jsonl.gz --config plan.toml -o out/
  neardup report out/
  neardup index create seen.ndx && neardup index add seen.ndx corpus.jsonl.gz
  neardup join embeddings.npy --metric cosine --threshold 0.9 -o pairs/
  neardup mirrors crawl-*.warc.gz -o mirrors/
  neardup dedup --help""",
)
@click.version_option(__version__, prog_name="neardup")
@click.option("--debug", is_flag=True, help="Show the full traceback of an error.")
def cli(debug: bool) -> None:
    """Find near-duplicate documents in large collections.

    neardup shingles each document, sketches it with MinHash, finds candidate pairs with LSH
    banding, verifies them and clusters the duplicates.
    """


cli.add_command(dedup_command)
cli.add_command(compare_command)
cli.add_command(contamination_command)
cli.add_command(index_group)
cli.add_command(join_command)
cli.add_command(mirrors_command)
cli.add_command(plan_command)
cli.add_command(report_command)
cli.add_command(serve_command)
cli.add_command(substrings_command)
cli.add_command(warmup_command)


def command_options(command: click.Command) -> frozenset[str]:
    """The long options (``--name``, ``--no-name``) a command accepts."""
    return frozenset(
        name
        for param in command.params
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
        if name.startswith("--")
    )


def leaf_commands(group: click.Group = cli) -> dict[str, click.Command]:
    """Every command users run, by its path after ``neardup`` (``"index add"``)."""
    found: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found.update({f"{name} {sub}": leaf for sub, leaf in leaf_commands(command).items()})
        else:
            found[name] = command
    return found


def _advise_with_own_options(command: click.Command) -> None:
    """Make ``command``'s errors advise only its own options (:func:`~neardup.errors.advice`)."""
    callback = command.callback
    assert callback is not None
    options = command_options(command)

    @functools.wraps(callback)
    def run_command(*args: object, **kwargs: object) -> object:
        with offered_options(options):
            try:
                return callback(*args, **kwargs)
            except ParameterError as exc:  # the rule in the command's words: --threshold ...
                raise type(exc)(in_flags(str(exc), command)) from exc

    command.callback = run_command


for _command in leaf_commands().values():
    _advise_with_own_options(_command)


allow_remote_locations(leaf_commands())


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: object = None,
    line: str | None = None,
) -> None:
    click.echo(f"warning: {message}", err=True)


class Terminated(BaseException):
    """SIGTERM arrived: unwind as an interrupt does (no handler of the command catches it)."""


SIGNAL_RETRY_S = 0.05
"""How soon a signal that arrived inside LLVM is delivered again."""


def _inside_llvm(frame: FrameType | None) -> bool:
    """Whether Python code called back from LLVM (llvmlite's ctypes callbacks) is running."""
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).startswith("llvmlite"):
            return True
        frame = frame.f_back
    return False


def _unwinding(raised: type[BaseException]) -> Callable[[int, FrameType | None], None]:
    """A signal handler raising ``raised``, except inside an LLVM callback.

    numba loads and compiles kernels through llvmlite, whose C++ calls back into Python: an
    exception raised in such a callback is swallowed there and the process then crashes
    (SIGSEGV instead of exit 130). There the signal is sent again a moment later, when the
    callback has returned.
    """

    def handle(signum: int, frame: FrameType | None) -> None:
        if _inside_llvm(frame):
            again = threading.Timer(SIGNAL_RETRY_S, os.kill, (os.getpid(), signum))
            again.daemon = True
            again.start()
            return
        raise raised

    return handle


@contextlib.contextmanager
def _signals_unwind() -> Iterator[None]:
    """While the block runs, SIGINT raises ``KeyboardInterrupt``, SIGTERM :class:`Terminated`.

    In the main thread only (where Python runs signal handlers), and never inside an LLVM
    callback (:func:`_unwinding`). A SIGINT ignored from the start (a command started in the
    background of a shell) stays ignored.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raising = {signal.SIGINT: KeyboardInterrupt, signal.SIGTERM: Terminated}
    previous = {signum: signal.getsignal(signum) for signum in raising}
    if previous[signal.SIGINT] == signal.SIG_IGN:  # started in the background: leave it so
        del raising[signal.SIGINT]
    for signum, raised in raising.items():
        signal.signal(signum, _unwinding(raised))
    try:
        yield
    finally:
        for signum in raising:
            before = previous[signum]
            signal.signal(signum, signal.SIG_DFL if before is None else before)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    warnings.showwarning = _show_warning
    try:
        with _signals_unwind():
            cli.main(args=args, prog_name="neardup", standalone_mode=False)
    except Terminated:
        click.echo("terminated", err=True)
        return 143
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except (click.Abort, KeyboardInterrupt):
        click.echo("interrupted", err=True)
        return 130
    except (click.ClickException, NeardupError, OSError) as exc:
        if "--debug" in args and not isinstance(exc, click.ClickException):
            traceback.print_exc()
        message, code = _one_line(exc)
        click.echo(f"error: {message}", err=True)
        return code
    return 0


def _one_line(exc: click.ClickException | NeardupError | OSError) -> tuple[str, int]:
    """The message and exit code of an error that ends a command."""
    if isinstance(exc, click.UsageError):  # and where the options are explained
        where = f"; see {exc.ctx.command_path} --help" if exc.ctx is not None else ""
        return _usage_message(exc).rstrip(".") + where, exc.exit_code
    if isinstance(exc, click.ClickException):
        return exc.format_message(), exc.exit_code
    if isinstance(exc, OSError):  # the machine's doing: a full disk, a read-only or vanished path
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}", 1
    return str(exc), 2 if isinstance(exc, ParameterError) else 1


def _usage_message(exc: click.UsageError) -> str:
    """A usage error's message, a bad value's starting with its option as every rule's does."""
    if not isinstance(exc, click.BadParameter) or isinstance(exc, click.MissingParameter):
        return exc.format_message()
    hint = exc.param_hint
    if isinstance(exc.param, click.Option):  # its long name, as the rules spell it (-k: --top-k)
        hint = max(exc.param.opts, key=len)
    elif hint is None and exc.param is not None:
        hint = exc.param.get_error_hint(exc.ctx) if exc.ctx is not None else exc.param.name
    if hint is None:
        return exc.format_message()
    spelled = (hint if isinstance(hint, str) else " / ".join(hint)).replace("'", "")
    return f"{spelled}: {exc.message}"


def run() -> NoReturn:
    """The ``neardup`` command: :func:`main`, then exit at once.

    The interpreter's teardown (freeing the modules numba loaded) would add about 0.15 s to
    every command; the command's own work is done and its files closed by then. A run that
    started Spark exits the ordinary way, so that Spark's exit handlers stop its JVM.
    """
    _skip_numba_blas_check()
    code = main()
    if "pyspark" in sys.modules:
        sys.exit(code)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _skip_numba_blas_check() -> None:
    """Load numba's array functions without its BLAS check, which imports SciPy's linalg.

    numba makes the check when the first kernel is loaded, to offer ``np.dot`` and
    ``np.linalg`` inside kernels; importing ``scipy.linalg`` for it costs the command about
    0.18 s. No neardup kernel calls them, so the command's process goes without (the kernels
    it loads from the cache or compiles are the same). SciPy itself is not touched: the
    module is hidden only while numba looks, and imports as usual afterwards. The Python API
    leaves numba as it is.
    """
    hidden = "scipy.linalg.cython_blas"
    if hidden in sys.modules or "numba.np.arraymath" in sys.modules:
        return
    sys.modules[hidden] = None  # type: ignore[assignment]  # import fails: numba skips BLAS
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        del sys.modules[hidden]


if __name__ == "__main__":
    run()
