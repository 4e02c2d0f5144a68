"""Inputs and outputs at fsspec URLs: ``s3://``, ``gs://``, ``az://``, ``hf://``, ``http(s)://``.

The local engine reads local files (memory-mapped, read more than once, copied file to file
into the kept corpus), so remote inputs are first fetched into a staging folder, several
objects at a time, each in large blocks. An output at a URL is written to the staging folder,
then uploaded under a hidden prefix beside its place (``.NAME.neardup-RANDOM``) and committed
by copying into place, ``summary.json`` last; a run that fails, or is killed, before the
commit leaves nothing at the output URL.

Credentials and endpoints come from where each file system looks for them (for S3, as boto3
and the AWS command line read them: ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_ENDPOINT_URL``, ``~/.aws/config``); neardup names only URLs, never a secret.
"""

from __future__ import annotations

import contextlib
import functools
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from neardup.errors import InputError, remedy
from neardup.io.atomic import replaced_file

__all__ = ["PARALLEL_TRANSFERS", "Staging", "staging", "url_of"]

PARALLEL_TRANSFERS = 8
"""Objects fetched or uploaded at once."""

BLOCK_BYTES = 16 << 20
"""Bytes per read of a remote object (fsspec's default, 5 MiB, makes many small requests)."""

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]+):/+")
_PACKAGES = {
    "s3": "s3fs",
    "s3a": "s3fs",
    "gs": "gcsfs",
    "gcs": "gcsfs",
    "az": "adlfs",
    "abfs": "adlfs",
    "hf": "huggingface_hub",
    "http": "aiohttp",
    "https": "aiohttp",
}
"""The package that gives fsspec each scheme."""


def url_of(location: Path | str) -> str | None:
    """``location`` as a URL (``scheme://...``), or None for a local path.

    A URL that went through :mod:`pathlib` (as the command line's path arguments do) lost a
    slash: ``s3:/bucket/key`` is ``s3://bucket/key``.

    >>> url_of(Path("s3://bucket/shard-*.jsonl.zst")), url_of("corpus.jsonl")
    ('s3://bucket/shard-*.jsonl.zst', None)
    """
    text = str(location)
    match = _SCHEME.match(text)
    if match is None:
        return None
    return f"{match.group(1).lower()}://{text[match.end() :]}"


def has_magic(path: str) -> bool:
    """Whether ``path`` is a glob (``*``, ``?`` or ``[``)."""
    return any(char in path for char in "*?[")


def _without_scheme(path: str) -> str:
    """A file system's path without a scheme (HTTP's paths are whole URLs)."""
    return path.split("://", 1)[-1]


def _scheme(url: str) -> str:
    return url.split("://", 1)[0]


def file_system(url: str) -> tuple[Any, str]:
    """The fsspec file system of ``url`` and the path within it."""
    try:
        import fsspec
    except ImportError:
        raise InputError(
            "reading URLs needs fsspec" + remedy("pip install 'neardup[remote]'"), path=url
        ) from None
    try:
        return fsspec.core.url_to_fs(url)  # type: ignore[no-any-return]
    except (ImportError, ValueError) as exc:
        package = _PACKAGES.get(_scheme(url), "the fsspec package for it")
        raise InputError(
            f"cannot open this URL ({exc})" + remedy(f"pip install {package}"), path=url
        ) from None


class Staging:
    """A local folder standing in for remote inputs and outputs during one command.

    :meth:`fetch` gives local copies of inputs, :meth:`output` a local place for an output
    that :meth:`publish` commits to its URL; :meth:`unstage` writes URLs back into text (error
    messages, ``summary.json``) where the staged paths appear.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._urls: dict[str, str] = {}  # staged path prefix -> URL prefix

    def unstage(self, text: str) -> str:
        """``text`` with every staged path written as its URL."""
        for local, url in sorted(self._urls.items(), key=lambda item: -len(item[0])):
            text = text.replace(local, url)
        return text

    def unstage_error(self, exc: BaseException) -> None:
        """Write URLs for staged paths into ``exc``'s message (and an OSError's file name)."""
        exc.args = tuple(self.unstage(a) if isinstance(a, str) else a for a in exc.args)
        if isinstance(exc, OSError) and isinstance(exc.filename, str):
            exc.filename = self.unstage(exc.filename)

    def fetch(self, locations: Sequence[Path | str]) -> list[Path]:
        """Local paths for ``locations``: paths as they are, URLs (globs too) fetched here.

        A URL naming a prefix (a folder) fetches every object under it, as a local folder
        would be read (a folder of ``.txt`` files, a ``save_to_disk`` folder).
        """
        paths: list[Path] = []
        transfers: list[tuple[Any, str, Path]] = []
        for location in locations:
            text = url_of(location)
            if text is None:
                paths.append(Path(location))
                continue
            if _scheme(text) == "file":
                paths.append(Path("/" + text[len("file://") :]))
                continue
            fs, path = file_system(text)
            scheme = _scheme(text)
            base = self.root / "in" / scheme
            self._urls[f"{base}/"] = f"{scheme}://"
            found = self._objects(fs, path, text)
            transfers += [(fs, name, base / _without_scheme(name)) for name in found]
            if has_magic(path):
                paths += [base / _without_scheme(name) for name in found]
            else:  # an object, or a prefix read as a local folder would be
                paths.append(base / _without_scheme(path).rstrip("/"))
        self._transfer([functools.partial(_get, *job) for job in transfers], "fetching the inputs")
        return paths

    @staticmethod
    def _objects(fs: Any, path: str, url: str) -> list[str]:
        """The objects ``path`` names: a glob's matches, a prefix's contents, or itself."""
        try:
            if has_magic(path):
                found = sorted(p for p in fs.glob(path) if fs.isfile(p))
            elif fs.isdir(path):
                found = sorted(fs.find(path))
            elif fs.exists(path):
                found = [path]
            else:
                found = []
        except OSError as exc:
            raise InputError(f"cannot list ({exc})", path=url) from None
        if not found:
            raise InputError("no such object (or nothing matches); check the URL", path=url)
        return found

    def _transfer(self, jobs: Sequence[Callable[[], None]], doing: str) -> None:
        """Run ``jobs`` (transfers), :data:`PARALLEL_TRANSFERS` at a time."""
        if not jobs:
            return
        with ThreadPoolExecutor(min(PARALLEL_TRANSFERS, len(jobs))) as pool:
            for job in [pool.submit(job) for job in jobs]:
                try:
                    job.result()
                except OSError as exc:
                    raise OSError(f"{doing} failed: {self.unstage(str(exc))}; try again") from None

    def output(self, url: str, overwrite: bool) -> Path:
        """A local path for the output at ``url``; refused when ``url`` exists.

        Unless ``overwrite``: then the old output is replaced at the commit.
        """
        fs, path = file_system(url)
        top = path.split("/", 1)[0]
        if "/" in path.strip("/") and not fs.exists(top):
            raise InputError(
                f"no bucket (or container) {top!r} to write into" + remedy("create it first"),
                path=url,
            )
        if fs.exists(path) and not overwrite:
            raise InputError(
                "the output exists" + remedy("give --overwrite to replace it, or a new URL"),
                path=url,
            )
        local = self.root / "out" / (path.rstrip("/").rsplit("/", 1)[-1] or "output")
        local.parent.mkdir(parents=True, exist_ok=True)
        self._urls[str(local)] = url.rstrip("/")
        return local

    def unstage_files(self, output: Path) -> None:
        """Write URLs for staged paths into the records of a run in ``output``.

        ``output`` is a folder or a file; its ``.json`` and ``.toml`` files (``summary.json``, a
        plan) are each replaced whole.
        """
        for file in _files(output):
            if file.suffix in (".json", ".toml") and file.stat().st_size < 64 << 20:
                text = file.read_text(encoding="utf-8")
                if self.unstage(text) != text:
                    with replaced_file(file) as out:
                        out.write(self.unstage(text).encode("utf-8"))

    def publish(self, local: Path, url: str) -> None:
        """Commit the output written at ``local`` to ``url``: uploaded beside it, then copied.

        The upload goes under a hidden prefix; only once every file is there are they copied
        into place (``summary.json`` last) and the prefix removed. A failure before the copies
        leaves nothing at ``url``; a failure during them removes what was copied.
        """
        fs, path = file_system(url)
        path = path.rstrip("/")
        parent, _, name = path.rpartition("/")
        hidden = f"{parent}/.{name}.neardup-{uuid.uuid4().hex[:12]}"
        files = _files(local)
        names = [p.relative_to(local).as_posix() for p in files] if local.is_dir() else [""]
        try:
            self._transfer(
                [
                    functools.partial(fs.put_file, str(f), f"{hidden}/{n}".rstrip("/"))
                    for f, n in zip(files, names, strict=True)
                ],
                f"{url}: uploading the output",
            )
            if fs.exists(path):  # --overwrite: the old output goes only now
                fs.rm(path, recursive=True)
            last = sorted(names, key=lambda n: (n == "summary.json", n))
            try:
                for n in last:
                    fs.copy(f"{hidden}/{n}".rstrip("/"), f"{path}/{n}".rstrip("/"))
            except BaseException:
                with contextlib.suppress(OSError):
                    fs.rm(path, recursive=True)
                raise
        finally:
            with contextlib.suppress(OSError):
                fs.rm(hidden, recursive=True)


def _files(output: Path) -> list[Path]:
    """The files of an output: a folder's, in order, or the file itself."""
    if output.is_dir():
        return sorted(p for p in output.rglob("*") if p.is_file())
    return [output] if output.is_file() else []


def _get(fs: Any, remote: str, local: Path) -> None:
    """Fetch one object, in blocks of :data:`BLOCK_BYTES`."""
    local.parent.mkdir(parents=True, exist_ok=True)
    with fs.open(remote, "rb", block_size=BLOCK_BYTES) as source, open(local, "wb") as target:
        shutil.copyfileobj(source, target, BLOCK_BYTES)
        expected, got = source.size, target.tell()
    if expected is not None and got != expected:  # a connection cut short: not an input
        raise OSError(f"{remote}: got {got:,} of its {expected:,} bytes")


@contextlib.contextmanager
def staging() -> Iterator[Staging]:
    """A :class:`Staging` in a new temporary folder (``TMPDIR``), removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="neardup-remote-"))
    try:
        yield Staging(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
