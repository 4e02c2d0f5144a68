"""``neardup serve``: the HTTP service over an index file."""

from __future__ import annotations

import os
from pathlib import Path

import click

from neardup.cli.options import existing_index
from neardup.errors import InputError, MissingExtraError

__all__ = ["serve_command"]

TOKENS_VARIABLE = "NEARDUP_TOKENS"


def read_tokens(token_file: Path | None) -> frozenset[str]:
    """Tokens from ``token_file`` (one per line, # comments) and ``$NEARDUP_TOKENS`` (commas)."""
    tokens = {t.strip() for t in os.environ.get(TOKENS_VARIABLE, "").split(",") if t.strip()}
    if token_file is not None:
        try:
            lines = token_file.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise InputError(
                f"cannot read the token file: {exc.strerror}", path=token_file
            ) from None
        tokens |= {line.strip() for line in lines if line.strip() and not line.startswith("#")}
    return frozenset(tokens)


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
@click.option("--port", default=8000, show_default=True, help="Port to listen on.")
@click.option(
    "--token-file",
    type=click.Path(path_type=Path),
    help=f"Bearer tokens, one per line (also read from ${TOKENS_VARIABLE}, comma-separated).",
)
@click.option("--auth-reads", is_flag=True, help="Require a token for reads too.")
@click.option(
    "--no-auth", is_flag=True, help="Accept writes without a token (trusted networks only)."
)
@click.option("--max-batch", default=1000, show_default=True, help="Documents per request.")
@click.option("--max-body-mb", default=16.0, show_default=True, help="Request body limit in MB.")
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
    """Serve the index at PATH over HTTP (JSON API, OpenAPI docs at /docs)."""
    try:
        import uvicorn

        from neardup.service.app import ServiceSettings, create_app
    except ImportError as exc:
        raise MissingExtraError("neardup serve needs: pip install 'neardup[service]'") from exc
    from neardup.index import LSHIndex

    tokens = read_tokens(token_file)
    if not tokens and not no_auth:
        raise click.UsageError(
            f"no tokens: give --token-file or ${TOKENS_VARIABLE}, or --no-auth on a trusted network"
        )
    settings = ServiceSettings(
        tokens=tokens,
        auth_reads=auth_reads,
        max_batch=max_batch,
        max_body_bytes=int(max_body_mb * 2**20),
    )
    with LSHIndex.open(existing_index(path)) as index:
        uvicorn.run(create_app(index, settings), host=host, port=port, log_level="warning")
