"""The report in a real browser: Debian's Chromium, headless, driven by Playwright.

The page must load without a console error or a page error, fetch nothing but itself, draw
every chart (an SVG with a bounding box and paths) and show the marked passages; a full-page
screenshot is saved with the test's files (and, where ``/tmp/nd`` exists, as
``/tmp/nd/report.png`` for a person to look at).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
LOOK_HERE = Path("/tmp/nd")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason=f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    ),
]


def test_the_report_renders_in_chromium(licence_report: Path, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    requests: list[str] = []
    url = licence_report.resolve().as_uri()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(url, wait_until="load")
            charts = page.locator("svg.chart")
            assert charts.count() == 4
            for i in range(charts.count()):
                chart = charts.nth(i)
                box: Any = chart.bounding_box()
                assert box is not None
                assert box["width"] > 300
                assert box["height"] > 100
                assert chart.locator("path").count() > 3
            marks = page.locator("section#pairs mark")
            assert marks.count() > 10
            marks.first.scroll_into_view_if_needed()
            assert marks.first.is_visible()
            first: Any = marks.first.bounding_box()
            assert first["width"] > 0
            background = marks.first.evaluate("m => getComputedStyle(m).backgroundColor")
            assert background not in ("rgba(0, 0, 0, 0)", "transparent")
            shot = tmp_path / "report.png"
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert errors == []
    assert requests == [url]
    assert shot.stat().st_size > 50_000
    if LOOK_HERE.is_dir():
        shutil.copy(shot, LOOK_HERE / "report.png")
