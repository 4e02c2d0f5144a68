"""A real dedup run of the bundled licences, and its report, shared by the report tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from neardup.engine.local import dedup_files
from neardup.params import DedupConfig
from neardup.report import write_report
from tests.conftest import SAMPLE


@pytest.fixture(scope="session")
def licence_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output directory of ``neardup dedup`` on the bundled licences (--keep longest)."""
    out = tmp_path_factory.mktemp("run") / "licences"
    dedup_files([SAMPLE], out, DedupConfig(keep="longest"))
    return out


@pytest.fixture(scope="session")
def licence_report(licence_run: Path) -> Path:
    """The report of :func:`licence_run`, at its default place."""
    return write_report(licence_run)
