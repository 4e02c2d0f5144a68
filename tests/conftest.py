"""Shared fixtures: the bundled sample and the real corpora of ../shared/data (skip if absent)."""

from __future__ import annotations

import gzip
import json
import os
import re
import tarfile
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample" / "licenses.jsonl.gz"
SHARED_DATA = Path(os.environ.get("NEARDUP_SHARED_DATA", ROOT.parent / "shared" / "data"))

settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True)
settings.load_profile("ci")


def shared(path: str) -> Path:
    """A file under ../shared/data, or skip the test when it is absent."""
    full = SHARED_DATA / path
    if not full.exists():
        pytest.skip(f"real data not available: {full}")
    return full


@pytest.fixture(scope="session")
def licenses() -> list[dict[str, object]]:
    """The bundled sample: 2,310 ScanCode licence records."""
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def read_rfcs(numbers: set[int] | None = None, limit: int | None = None) -> dict[int, str]:
    """RFC texts by number from the shared tarball (all of them, the given numbers, or the first
    ``limit`` in archive order)."""
    archive = shared("rfc/rfc_txt.tar.xz")
    out: dict[int, str] = {}
    with tarfile.open(archive, "r:xz") as tar:
        for member in tar:
            match = re.search(r"/rfc(\d+)\.txt$", member.name)
            if not match or not member.isfile():
                continue
            number = int(match.group(1))
            if numbers is not None and number not in numbers:
                continue
            f = tar.extractfile(member)
            assert f is not None
            out[number] = f.read().decode("utf-8", "replace")
            if limit is not None and len(out) >= limit:
                break
            if numbers is not None and len(out) == len(numbers):
                break
    return out
