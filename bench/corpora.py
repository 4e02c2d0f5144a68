"""Real corpora for the benchmarks, read from ../shared/data."""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RFC_ARCHIVE = ROOT.parent / "shared/data/rfc/rfc_txt.tar.xz"


def load_rfcs(archive: Path = RFC_ARCHIVE, limit: int | None = None) -> tuple[list[str], list[str]]:
    """``(ids, texts)`` of the RFCs in the archive, in archive order (the first ``limit``)."""
    ids, texts = [], []
    with tarfile.open(archive, "r:xz") as tar:
        for member in tar:
            match = re.search(r"/rfc(\d+)\.txt$", member.name)
            if not match or not member.isfile():
                continue
            f = tar.extractfile(member)
            assert f is not None
            ids.append(f"rfc{match.group(1)}")
            texts.append(f.read().decode("utf-8", "replace"))
            if limit is not None and len(ids) >= limit:
                break
    return ids, texts


def paragraphs(texts: list[str], *, min_words: int = 8) -> list[str]:
    """Blank-line separated paragraphs of at least ``min_words`` words: short real documents."""
    return [
        block
        for text in texts
        for block in re.split(r"\n\s*\n", text)
        if len(block.split()) >= min_words
    ]


def line_windows(texts: list[str], *, lines: int = 4, min_words: int = 12) -> list[str]:
    """Every window of ``lines`` consecutive non-blank lines with ``min_words`` words or more."""
    out = []
    for text in texts:
        rows = [row for row in text.splitlines() if row.strip()]
        for start in range(len(rows) - lines + 1):
            window = "\n".join(rows[start : start + lines])
            if len(window.split()) >= min_words:
                out.append(window)
    return out
