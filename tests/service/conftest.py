"""A real ``neardup serve`` process on a free loopback port, and an HTTP client for it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

NEARDUP = Path(sys.executable).parent / "neardup"
TOKEN = "test-token-1"


@dataclass
class Server:
    url: str
    index_path: Path
    process: subprocess.Popen[bytes]
    log: Path

    def client(self, token: str | None = TOKEN) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(index_path: Path, *extra: str, tokens: str | None = TOKEN) -> Server:
    """``neardup serve`` on a free port (the index is created if missing), once it answers.

    ``tokens`` is ``$NEARDUP_TOKENS`` (None: unset).
    """
    if not index_path.exists():
        subprocess.run(
            [str(NEARDUP), "index", "create", str(index_path)], check=True, capture_output=True
        )
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
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("server did not start within 60 s")


def _serve(folder: Path) -> Iterator[Server]:
    if not NEARDUP.exists():
        pytest.skip("the neardup command is not installed")
    running = start_server(folder / "service.ndx", "--max-batch", "50", "--max-body-mb", "1")
    yield running
    running.stop()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """A fresh server with an empty index, for one test."""
    yield from _serve(tmp_path)


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the tests of a module that leave the index as they found it."""
    yield from _serve(tmp_path_factory.mktemp("shared"))
