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

    def client(self, token: str | None = TOKEN) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(index_path: Path, *extra: str) -> Server:
    if not index_path.exists():
        subprocess.run(
            [str(NEARDUP), "index", "create", str(index_path)], check=True, capture_output=True
        )
    port = _free_port()
    env = {**os.environ, "NEARDUP_TOKENS": TOKEN}
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
            raise RuntimeError(
                f"server exited: {process.stderr.read().decode() if process.stderr else ''}"
            )
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return Server(url, index_path, process)
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("server did not start within 60 s")


def _serve(folder: Path) -> Iterator[Server]:
    if not NEARDUP.exists():
        pytest.skip("the neardup command is not installed")
    running = start_server(folder / "service.ndx", "--max-batch", "50", "--max-body-mb", "1")
    yield running
    running.process.terminate()
    running.process.wait(timeout=30)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """A fresh server with an empty index, for one test."""
    yield from _serve(tmp_path)


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the tests of a module that leave the index as they found it."""
    yield from _serve(tmp_path_factory.mktemp("shared"))
