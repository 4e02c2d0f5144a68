"""The errors and warnings neardup raises.

Every error a user can meet derives from :class:`NeardupError`; the CLI and the
service catch only that. Each concrete error also derives from the built-in
exception it refines, so ``except ValueError`` keeps working::

    NeardupError                                   the CLI and the service catch only this
     ├─ ParameterError(NeardupError, ValueError)   names the field, what is allowed, what it got
     │   └─ IncompatibleError                      artefacts made with different specs or versions
     ├─ InputError(NeardupError, ValueError)       carries path and line/record; says what to do
     │   └─ IdExistsError                          an id is already in the index (add, check)
     ├─ StoreError(NeardupError)                   an index file that is damaged, locked, or foreign
     └─ MissingExtraError(NeardupError, ImportError)  an optional dependency is missing

    NeardupWarning(UserWarning)                    giant LSH buckets, skipped records, ...

Advice that names a command-line option is written with :func:`advice`, which gives it only
where the command running has that option (:func:`offered_options`, set by the CLI for each
command): a message never tells a user to pass an option their command lacks.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

__all__ = [
    "IdExistsError",
    "IncompatibleError",
    "InputError",
    "MissingExtraError",
    "NeardupError",
    "NeardupWarning",
    "ParameterError",
    "StoreError",
    "advice",
    "offered_options",
    "remedy",
]

_OFFERED: ContextVar[frozenset[str] | None] = ContextVar("neardup_offered_options", default=None)
"""The long options (``--text-field``) of the command running; ``None``: the library's caller."""


@contextmanager
def offered_options(options: Collection[str]) -> Iterator[None]:
    """While the block runs, :func:`advice` names only these options (``--name`` strings)."""
    token = _OFFERED.set(frozenset(options))
    try:
        yield
    finally:
        _OFFERED.reset(token)


def advice(option: str, text: str, otherwise: str = "") -> str:
    """``text`` (advice naming ``option``) if the command running has it, else ``otherwise``.

    Outside a command (the Python API) every option counts as offered.

    Examples
    --------
    >>> advice("--format", "name the format with --format", "rename the file")
    'name the format with --format'
    >>> with offered_options({"--output"}):
    ...     advice("--format", "name the format with --format", "rename the file")
    'rename the file'
    """
    offered = _OFFERED.get()
    return text if offered is None or option in offered else otherwise


def remedy(*fixes: str) -> str:
    """``"; A, or B"``: what to do, of ``fixes`` those not empty, to end a message; ``""`` if none.

    Examples
    --------
    >>> "bad record" + remedy("fix it", "", "skip it")
    'bad record; fix it, or skip it'
    >>> "bad record" + remedy("")
    'bad record'
    """
    chosen = [fix for fix in fixes if fix]
    return "; " + ", or ".join(chosen) if chosen else ""


class NeardupError(Exception):
    """Base class of every error neardup raises on purpose."""


class ParameterError(NeardupError, ValueError):
    """A parameter is outside its allowed values; the message names field, rule and value."""


class IncompatibleError(ParameterError):
    """Two artefacts were made with different specs or format versions and cannot be mixed."""


class InputError(NeardupError, ValueError):
    """An input file or record cannot be used.

    Parameters
    ----------
    message
        What is wrong and what to do about it.
    path
        The file concerned, if any.
    line
        The 1-based line (JSONL, CSV) or record number (Parquet) concerned, if any.
    """

    def __init__(
        self, message: str, *, path: Path | str | None = None, line: int | None = None
    ) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        self.reason = message
        where = ""
        if self.path is not None:
            where = self.path if line is None else f"{self.path}:{line}"
            where += ": "
        super().__init__(where + message)


class IdExistsError(InputError):
    """Document ids given to ``add`` or ``check`` are already in the index; nothing was added.

    Bad data, not bad usage (the CLI exits 1): the caller decides whether to replace the
    stored documents (``upsert``), keep them (``LSHIndex.add_new``) or use other ids.

    Parameters
    ----------
    message
        What is wrong and what to do about it.
    ids
        The ids concerned (all of them, or the first ones found).
    """

    def __init__(self, message: str, *, ids: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.ids = tuple(ids)


class StoreError(NeardupError):
    """An index file is missing, unreadable, foreign, damaged, locked, or of another version.

    The same for an :class:`~neardup.index.LSHIndex`'s SQLite file and a saved
    :class:`~neardup.hamming.HammingIndex`.
    """


class MissingExtraError(NeardupError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""


class NeardupWarning(UserWarning):
    """Something worth knowing that does not stop the job (giant buckets, skipped records)."""
