"""The HTTP service for the tests: the application in this process (most tests), or a real
``neardup serve`` process on a free loopback port (the tests marked ``service``: the start-up
line, sockets, streamed bodies, concurrent clients).

In this process the requests go through the same ASGI application (``create_app``, with the
body limit in front of it) that ``neardup serve`` hands to uvicorn, over an index opened as the
command opens it; what only a socket shows is left to the real server's tests.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import anyio.from_thread
import httpx
import pytest

from tests.integration.conftest import run

NEARDUP = Path(sys.executable).parent / "neardup"
TOKEN = "test-token-1"
MAX_BATCH = 50
MAX_BODY_MB = 1.0
"""The limits every test service runs with (``--max-batch 50 --max-body-mb 1``)."""


class Service(Protocol):
    """What the tests use of a service: a client, and the index file it serves."""

    index_path: Path

    def client(self, token: str | None = TOKEN) -> httpx.Client: ...


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


@dataclass
class Server:
    """A real ``neardup serve`` process."""

    url: str
    index_path: Path
    process: subprocess.Popen[bytes]
    log: Path

    def client(self, token: str | None = TOKEN) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=_headers(token), timeout=30)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


class _Here(httpx.BaseTransport):
    """httpx's ASGI transport under a synchronous client: the application runs on an event loop
    in a thread of its own, as under a server, and gets each path as a server gives it (decoded
    once, the raw bytes beside it). Bodies are sent whole (streaming is tried on a real server);
    an error the application lets through is a 500, as under a server."""

    def __init__(self, app: Any) -> None:
        self._asgi = httpx.ASGITransport(app, raise_app_exceptions=False)
        self._loop = anyio.from_thread.start_blocking_portal()
        self._portal = self._loop.__enter__()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        whole = httpx.Request(
            request.method, request.url, headers=request.headers, content=request.read()
        )

        async def send() -> tuple[int, httpx.Headers, bytes]:
            response = await self._asgi.handle_async_request(whole)
            return response.status_code, response.headers, await response.aread()

        status, headers, content = self._portal.call(send)
        return httpx.Response(status, headers=headers, content=content, request=request)

    def close(self) -> None:
        self._loop.__exit__(None, None, None)


@dataclass
class App:
    """The service's ASGI application in this process, over an open index."""

    index_path: Path
    app: Any

    def client(self, token: str | None = TOKEN) -> httpx.Client:
        return httpx.Client(
            transport=_Here(self.app), base_url="http://testserver", headers=_headers(token)
        )


def _create(index_path: Path) -> None:
    """``neardup index create`` where no index is (as the tests' servers start)."""
    if not index_path.exists():
        created = run("index", "create", index_path)
        assert created.returncode == 0, created.stderr


@contextmanager
def serve_here(
    index_path: Path,
    *,
    tokens: frozenset[str] = frozenset({TOKEN}),
    auth_reads: bool = False,
    max_batch: int = MAX_BATCH,
    max_body_mb: float = MAX_BODY_MB,
) -> Iterator[App]:
    """The application over ``index_path`` (an LSH index created if missing), opened as
    ``neardup serve`` opens it, with the settings its flags give (``--auth-reads``,
    ``--max-batch``, ``--max-body-mb``)."""
    from neardup.index import open_index
    from neardup.service.app import ServiceSettings, create_app

    _create(index_path)
    settings = ServiceSettings(
        tokens=tokens,
        auth_reads=auth_reads,
        max_batch=max_batch,
        max_body_bytes=max(1, int(max_body_mb * 2**20)),
    )
    with open_index(index_path) as index:
        yield App(index_path, create_app(index, settings))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(index_path: Path, *extra: str, tokens: str | None = TOKEN) -> Server:
    """``neardup serve`` on a free port (the index is created if missing), once it answers.

    ``tokens`` is ``$NEARDUP_TOKENS`` (None: unset).
    """
    if not NEARDUP.exists():
        pytest.skip("the neardup command is not installed")
    _create(index_path)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "NEARDUP_TOKENS"}
    if tokens is not None:
        env["NEARDUP_TOKENS"] = tokens
    log = index_path.with_suffix(".log")
    with log.open("wb") as err:
        process = subprocess.Popen(
            [str(NEARDUP), "serve", str(index_path), "--port", str(port), *extra],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited: {log.read_text()}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return Server(url, index_path, process, log)
        except httpx.TransportError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("server did not start within 60 s")


def _serve(folder: Path) -> Iterator[Server]:
    running = start_server(
        folder / "service.ndx", "--max-batch", str(MAX_BATCH), "--max-body-mb", str(MAX_BODY_MB)
    )
    yield running
    running.stop()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[App]:
    """A fresh service with an empty index, in this process, for one test."""
    with serve_here(tmp_path / "service.ndx") as app:
        yield app


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """One service in this process for the tests of a module that leave the index as they
    found it."""
    with serve_here(tmp_path_factory.mktemp("shared") / "service.ndx") as app:
        yield app


@pytest.fixture
def real_server(tmp_path: Path) -> Iterator[Server]:
    """A fresh ``neardup serve`` process with an empty index, for one test."""
    yield from _serve(tmp_path)


@pytest.fixture(scope="session")
def shared_real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One ``neardup serve`` process for the tests that need a socket and leave the index as
    they found it."""
    yield from _serve(tmp_path_factory.mktemp("shared-real"))
