"""Inputs and outputs at URLs, against a real S3-compatible server (moto's) on the loopback.

The server runs as its own process; the command runs as a process too, configured only by the
environment (``AWS_ENDPOINT_URL`` and keys) as boto3 users configure it.
"""

from __future__ import annotations

import gzip
import http.client
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SAMPLE

pytestmark = pytest.mark.subprocess

NEARDUP = Path(sys.executable).parent / "neardup"
SECRET = "do-not-print-this-secret-key"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _environment(endpoint: str) -> dict[str, str]:
    return {
        **os.environ,
        "AWS_ACCESS_KEY_ID": "neardup-test",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
    }


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """moto's S3 server on a loopback port: its endpoint URL."""
    binary = Path(sys.executable).parent / "moto_server"
    if not binary.exists():
        pytest.skip("moto[server] is not installed")
    port = _free_port()
    process = subprocess.Popen(
        [str(binary), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                pytest.fail("moto_server did not start")
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}"
    process.terminate()
    process.wait(10)


@pytest.fixture
def s3(server: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """An s3fs file system on the server, with a fresh bucket ``corpus`` per test."""
    s3fs = pytest.importorskip("s3fs")
    for name, value in _environment(server).items():
        if name.startswith("AWS_"):
            monkeypatch.setenv(name, value)
    fs = s3fs.S3FileSystem(skip_instance_cache=True)
    if fs.exists("corpus"):
        fs.rm("corpus", recursive=True)
    fs.mkdir("corpus")
    return fs


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The bundled licences as two zstd-compressed JSONL shards."""
    import zstandard

    folder = tmp_path_factory.mktemp("shards")
    lines = gzip.decompress(SAMPLE.read_bytes()).splitlines(keepends=True)
    half = len(lines) // 2
    paths = []
    for number, part in enumerate((lines[:half], lines[half:])):
        path = folder / f"shard-{number}.jsonl.zst"
        path.write_bytes(zstandard.ZstdCompressor().compress(b"".join(part)))
        paths.append(path)
    return paths


def _run(endpoint: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(NEARDUP), *args],
        capture_output=True,
        text=True,
        env=_environment(endpoint),
        check=False,
    )
    assert SECRET not in done.stdout + done.stderr
    if check:
        assert done.returncode == 0, done.stderr
    return done


def _upload(fs: Any, shards: list[Path]) -> None:
    for path in shards:
        fs.put_file(str(path), f"corpus/{path.name}")


def test_a_dedup_of_shards_on_s3_writes_back_what_a_local_run_writes(
    s3: Any, server: str, shards: list[Path], tmp_path: Path
) -> None:
    _upload(s3, shards)
    _run(server, "dedup", *map(str, shards), "-o", str(tmp_path / "local"), "-q")
    done = _run(server, "dedup", "s3://corpus/shard-*.jsonl.zst", "-o", "s3://corpus/out")
    assert "outputs in s3://corpus/out/" in done.stdout
    assert "neardup-remote" not in done.stdout
    names = ["clusters.jsonl", "kept.jsonl", "pairs.jsonl", "summary.json"]
    assert sorted(p.rsplit("/", 1)[-1] for p in s3.find("corpus/out")) == names
    for name in names[:3]:
        assert s3.cat(f"corpus/out/{name}") == (tmp_path / "local" / name).read_bytes()
    summary = json.loads(s3.cat("corpus/out/summary.json"))
    assert summary["inputs"] == [f"s3://corpus/{p.name}" for p in shards]
    assert not [p for p in s3.ls("corpus") if ".neardup-" in p]  # the upload prefix is gone

    one = ("dedup", "s3://corpus/shard-0.jsonl.zst", "-o", "s3://corpus/out")
    refused = _run(server, *one, check=False)
    assert refused.returncode == 1
    assert "s3://corpus/out: the output exists; give --overwrite" in refused.stderr
    _run(server, *one, "--overwrite", "-q")
    summary = json.loads(s3.cat("corpus/out/summary.json"))
    assert summary["inputs"] == ["s3://corpus/shard-0.jsonl.zst"]


def test_a_truncated_object_and_a_missing_one_are_named_by_url(
    s3: Any, server: str, shards: list[Path]
) -> None:
    s3.pipe("corpus/cut.jsonl.zst", shards[0].read_bytes()[:5000])
    done = _run(server, "dedup", "s3://corpus/cut.jsonl.zst", "-o", "s3://corpus/out", check=False)
    assert done.returncode == 1
    assert done.stderr.startswith("error: s3://corpus/cut.jsonl.zst: ")
    assert "truncated" in done.stderr
    for url, says in [
        ("s3://corpus/none-*.jsonl", "no such object (or nothing matches)"),
        ("s3://corpus/none.jsonl", "no such object"),
    ]:
        done = _run(server, "dedup", url, "-o", "s3://corpus/out", check=False)
        assert done.returncode == 1
        assert f"error: {url}: {says}" in done.stderr
    done = _run(server, "dedup", str(shards[0]), "-o", "s3://no-bucket/out", check=False)
    assert "s3://no-bucket/out: no bucket (or container) 'no-bucket'" in done.stderr
    assert not s3.find("corpus/out")


class _FailingProxy(http.server.BaseHTTPRequestHandler):
    """Forwards requests to the S3 server, but refuses every upload of a ``kept.jsonl``."""

    target: tuple[str, int]
    protocol_version = "HTTP/1.1"  # answers "Expect: 100-continue", as uploads ask

    def _forward(self) -> None:
        length = self.headers.get("Content-Length") if self.command != "HEAD" else None
        body = self.rfile.read(int(length or 0))
        if self.command in ("PUT", "POST") and "kept.jsonl" in self.path:
            message = b"<Error><Code>AccessDenied</Code><Message>refused</Message></Error>"
            self.send_response(403)
            self.send_header("Connection", "close")
            self.close_connection = True
            self.send_header("Content-Length", str(len(message)))
            self.end_headers()
            self.wfile.write(message)
            return
        connection = http.client.HTTPConnection(*self.target, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "expect"}
        connection.request(self.command, self.path, body, headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        self.send_response(response.status)
        self.send_header("Connection", "close")
        self.close_connection = True
        skipped = ("transfer-encoding", "connection", *(("content-length",) if data else ()))
        for name, value in response.getheaders():
            if name.lower() not in skipped:
                self.send_header(name, value)
        if data:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _forward  # noqa: N815 (http.server's names)

    def log_message(self, *args: Any) -> None:
        """Quiet."""


def test_a_failing_upload_leaves_nothing_at_the_output(
    s3: Any, server: str, shards: list[Path]
) -> None:
    _upload(s3, shards)
    host, port = server.removeprefix("http://").split(":")
    handler = type("Handler", (_FailingProxy,), {"target": (host, int(port))})
    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        endpoint = f"http://127.0.0.1:{proxy.server_address[1]}"
        one = ("dedup", "s3://corpus/shard-0.jsonl.zst", "-o", "s3://corpus/out")
        done = _run(endpoint, *one, check=False)
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert done.returncode == 1
    assert "s3://corpus/out: uploading the output failed" in done.stderr
    assert not s3.exists("corpus/out")
    assert not [p for p in s3.ls("corpus") if ".neardup-" in p]


def test_a_killed_upload_leaves_nothing_or_everything(
    s3: Any, server: str, shards: list[Path]
) -> None:
    _upload(s3, shards)
    process = subprocess.Popen(
        [str(NEARDUP), "dedup", "s3://corpus/shard-*.jsonl.zst", "-o", "s3://corpus/out", "-q"],
        env=_environment(server),
    )
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        s3.invalidate_cache()
        if [p for p in s3.ls("corpus") if ".neardup-" in p]:  # uploading now
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.02)
    process.wait(60)
    s3.invalidate_cache()
    written = sorted(p.rsplit("/", 1)[-1] for p in s3.find("corpus/out"))
    assert written in ([], ["clusters.jsonl", "kept.jsonl", "pairs.jsonl", "summary.json"])


def test_a_saved_dataset_folder_on_s3_is_one_input(
    s3: Any, server: str, tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    datasets = pytest.importorskip("datasets")
    datasets.disable_progress_bars()
    rows = [{"id": r["id"], "text": r["text"]} for r in licenses[:500]]
    datasets.Dataset.from_list(rows).save_to_disk(tmp_path / "saved")
    for path in (tmp_path / "saved").iterdir():
        s3.put_file(str(path), f"corpus/saved/{path.name}")
    local = _run(server, "dedup", str(tmp_path / "saved"), "-o", str(tmp_path / "a"), "-q")
    assert local.returncode == 0
    _run(server, "dedup", "s3://corpus/saved/", "-o", f"file://{tmp_path / 'b'}", "-q")
    for name in ("clusters.jsonl", "kept.arrow"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    shutil.rmtree(tmp_path / "saved")


def test_an_http_input_and_a_plan_written_to_s3(s3: Any, server: str, tmp_path: Path) -> None:
    shutil.copy(SAMPLE, tmp_path / "licenses.jsonl.gz")
    port = _free_port()
    web = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        url = f"http://127.0.0.1:{port}/licenses.jsonl.gz"
        _run(server, "dedup", url, "-o", str(tmp_path / "out"), "-q")
        _run(server, "plan", url, "--sample", "300", "-o", "s3://corpus/plan.toml", "-q")
    finally:
        web.terminate()
        web.wait(10)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["inputs"] == [url]
    plan = s3.cat("corpus/plan.toml").decode()
    assert f"(plan) from: {url}\n" in plan  # the URL, not where it was fetched to
