"""``neardup serve``: the HTTP service over an index file."""

from __future__ import annotations

import math
import os
import socket
from pathlib import Path
from typing import Any

import click

from neardup.errors import InputError, MissingExtraError, ParameterError

__all__ = ["read_tokens", "serve_command"]

TOKENS_VARIABLE = "NEARDUP_TOKENS"
COMMENT = "a comment must be a line of its own, starting with #"


def _token_problem(token: str) -> str | None:
    """Why ``token`` (already stripped) is not a plain token, or None. Never echoes the token."""
    for char in token:
        if char.isspace():
            return f"not a plain token: it holds whitespace ({COMMENT})"
        if char == "#":
            return f"not a plain token: it holds '#' ({COMMENT})"
        if not "!" <= char <= "~":
            return f"not a plain token: it holds {char!r}; tokens are printable ASCII, no spaces"
    return None


def read_tokens(token_file: Path | None) -> frozenset[str]:
    """Bearer tokens from ``token_file`` and ``$NEARDUP_TOKENS``.

    The file holds one token per line; surrounding whitespace is stripped, blank lines and
    lines starting with ``#`` are skipped. The variable holds tokens separated by commas. A
    token is printable ASCII without spaces or ``#``: anything else is refused, with the file
    and line (the token itself is never shown).

    Raises
    ------
    InputError
        The file cannot be read, is not UTF-8, or holds something that is not a plain token.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tokens"
    >>> _ = path.write_text("# the crawlers" + chr(10) + "  s3cret-1  " + chr(10) + "s3cret-2")
    >>> sorted(read_tokens(path))
    ['s3cret-1', 's3cret-2']
    """
    tokens: set[str] = set()
    for number, item in enumerate(os.environ.get(TOKENS_VARIABLE, "").split(","), 1):
        token = item.strip()
        if token and (problem := _token_problem(token)):
            raise InputError(f"${TOKENS_VARIABLE}, token {number}: {problem}")
        if token:
            tokens.add(token)
    if token_file is not None:
        try:
            lines = token_file.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise InputError(
                f"cannot read the token file: {exc.strerror}", path=token_file
            ) from None
        except UnicodeDecodeError:
            raise InputError("the token file is not UTF-8 text", path=token_file) from None
        for number, line in enumerate(lines, 1):
            token = line.strip()
            if not token or token.startswith("#"):
                continue
            if problem := _token_problem(token):
                raise InputError(problem, path=token_file, line=number)
            tokens.add(token)
    return frozenset(tokens)


def _check_range(low: float, high: float, *, low_open: bool = False) -> Any:
    """A click callback refusing values outside the range, NaN and infinities (exit 2)."""

    def check(ctx: click.Context, param: click.Parameter, value: float) -> float:
        above = value > low if low_open else value >= low
        if math.isfinite(value) and above and value <= high:
            return value
        rule = f"{'>' if low_open else '>='} {low:g}"
        rule += "" if math.isinf(high) else f" and <= {high:g}"
        raise ParameterError(f"{max(param.opts, key=len)} must be {rule}; got {value}.")

    return check


LISTEN_BACKLOG = 2048
"""Connections the kernel queues before they are accepted (uvicorn's own default)."""


def _listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (port 0: any free one), or an error saying why not.

    It listens before the start-up line announces it: a client that connects as soon as it
    reads the line waits in the backlog until the server accepts, instead of being refused.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family=family)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(LISTEN_BACKLOG)
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        raise InputError(
            f"cannot listen on {host}:{port} ({reason}): choose another --host or --port"
        ) from None
    return sock


@click.command(
    "serve",
    epilog="""\b
Example:
  NEARDUP_TOKENS=s3cret neardup serve seen.ndx --port 8000
  curl -H 'Authorization: Bearer s3cret' -d '{"documents": [{"id": "a", "text": "..."}]}' \\
       -H 'Content-Type: application/json' localhost:8000/v1/documents""",
)
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=8000,
    show_default=True,
    callback=_check_range(0, 65535),
    help="Port to listen on (0: any free port, printed at start-up).",
)
@click.option(
    "--token-file",
    type=click.Path(path_type=Path),
    help="Bearer tokens, one per line; blank lines and lines starting with # are skipped "
    f"(also read from ${TOKENS_VARIABLE}, comma-separated).",
)
@click.option("--auth-reads", is_flag=True, help="Require a token for reads too.")
@click.option(
    "--no-auth",
    is_flag=True,
    help="Run with no authentication at all (trusted networks only); refused when tokens are "
    "given.",
)
@click.option(
    "--max-batch",
    default=1000,
    show_default=True,
    callback=_check_range(1, math.inf),
    help="Documents per request.",
)
@click.option(
    "--max-body-mb",
    default=16.0,
    show_default=True,
    callback=_check_range(0, math.inf, low_open=True),
    help="Request body limit in MB.",
)
def serve_command(
    path: Path,
    host: str,
    port: int,
    token_file: Path | None,
    auth_reads: bool,
    no_auth: bool,
    max_batch: int,
    max_body_mb: float,
) -> None:
    """Serve the index at PATH over HTTP (JSON API, API docs at /docs).

    Prints one line on stderr when it listens: the address, the index and whether
    authentication is on.
    """
    try:
        import uvicorn

        from neardup.service.app import ServiceSettings, create_app
    except ImportError as exc:
        raise MissingExtraError("neardup serve needs: pip install 'neardup[service]'") from exc
    from neardup.index import open_index

    tokens = read_tokens(token_file)
    if no_auth and tokens:
        raise ParameterError(
            f"--no-auth with tokens (from --token-file or ${TOKENS_VARIABLE}): give one or the "
            "other."
        )
    if no_auth and auth_reads:
        raise ParameterError("--no-auth with --auth-reads: give one or the other.")
    if not tokens and not no_auth:
        raise ParameterError(
            f"no tokens: give --token-file or ${TOKENS_VARIABLE}, or --no-auth on a trusted "
            "network."
        )
    settings = ServiceSettings(
        tokens=tokens,
        auth_reads=auth_reads,
        max_batch=max_batch,
        max_body_bytes=max(1, int(max_body_mb * 2**20)),
    )
    with open_index(path) as index:
        app = create_app(index, settings)
        sock = _listen(host, port)
        shown = f"[{host}]" if ":" in host else host
        auth = (
            "off (--no-auth)"
            if not tokens
            else "on: a bearer token for writes and reads"
            if auth_reads
            else "on: a bearer token for writes, reads open"
        )
        click.echo(
            f"neardup serve: listening on http://{shown}:{sock.getsockname()[1]} "
            f"(index {path}, {len(index):,} documents; auth {auth})",
            err=True,
        )
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        with sock:
            server.run(sockets=[sock])
