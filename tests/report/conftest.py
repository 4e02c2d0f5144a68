"""A real dedup run of the bundled licences, and its report, shared by the report tests."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from neardup.jobs.dedup import dedup_files
from neardup.jobs.report import write_report
from neardup.params import DedupConfig
from tests.conftest import SAMPLE

RUN_RECORD = re.compile(rb'\n<script type="application/json" id="neardup-run">([^<]*)</script>')
"""The report's own run record in its page (one line, no ``<`` inside: the JSON escapes it)."""


def run_record(page: Path) -> tuple[dict[str, Any], bytes]:
    """The run record a report page holds, and the page's bytes without that element.

    Two reports of one run and seed may differ in the record's timings only: a test compares
    the rest of the page byte for byte, and the records without ``timings_s``.
    """
    data = page.read_bytes()
    found = RUN_RECORD.search(data)
    assert found is not None, "the page holds no run record"
    assert len(RUN_RECORD.findall(data)) == 1
    return json.loads(found[1]), data[: found.start()] + data[found.end() :]


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
