"""HTML extraction side by side: speed and quality of resiliparse, selectolax and trafilatura.

Pages: the HTML payloads of the web archives in ``../shared/data/web_archives`` (read with
warcio, each with its HTTP charset) and the Sphinx pages of four Debian documentation packages
(``data/web/debian-sphinx-docs.tar.xz``). Speed: pages/s and MB/s of HTML, the median of
``--runs`` runs, bytes in (decoding included) to text out. Quality of main-content extraction,
on the Sphinx pages, whose body Sphinx marks (``<div role="main">``, read with lxml here, apart
from every extractor): how many pages still hold boilerplate ("Quick search", "Created using
Sphinx", "©", "Navigation"), and the recall and precision of the body's words.

    python bench/extract.py [--runs 5] [--json results.json]
"""

from __future__ import annotations

import argparse
import glob
import json
import re
import statistics
import sys
import tarfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHIVES = ROOT.parent / "shared/data/web_archives"
SPHINX = ROOT / "data/web/debian-sphinx-docs.tar.xz"
BOILERPLATE = ("Quick search", "Created using Sphinx", "©", "Navigation")

Page = tuple[str, bytes, str | None]  # name, bytes, charset


def archive_pages() -> list[Page]:
    """HTML responses and resources of every readable archive (broken ones are skipped)."""
    from warcio.archiveiterator import ArchiveIterator

    pages: list[Page] = []
    files = sorted(glob.glob(str(ARCHIVES / "**/*.*arc*"), recursive=True))
    for name in files:
        try:
            with open(name, "rb") as f:
                for record in ArchiveIterator(f, arc2warc=True):
                    if record.rec_type not in ("response", "resource"):
                        continue
                    headers = record.http_headers or record.rec_headers
                    kind = headers.get_header("Content-Type") or ""
                    if "html" not in kind:
                        continue
                    body = record.content_stream().read()
                    match = re.search(r"charset=([\w-]+)", kind)
                    if body:
                        url = record.rec_headers.get_header("WARC-Target-URI")
                        pages.append((url, body, match.group(1) if match else None))
        except Exception:  # the deliberately broken files
            continue
    return pages


def sphinx_pages() -> list[Page]:
    """The Debian Sphinx pages (UTF-8, no charset given: found in the page)."""
    pages: list[Page] = []
    with tarfile.open(SPHINX, "r:xz") as tar:
        for member in tar:
            if member.isfile() and member.name.endswith(".html"):
                f = tar.extractfile(member)
                assert f is not None
                pages.append((member.name, f.read(), None))
    return pages


def sphinx_body(data: bytes) -> str | None:
    """The text of the page's ``role="main"`` element, by lxml (the truth for recall)."""
    import lxml.html  # type: ignore[import-untyped]

    tree = lxml.html.fromstring(data)
    for bad in tree.xpath('//*[@role="main"]//*[self::script or self::style]'):
        bad.drop_tree()
    for anchor in tree.xpath('//*[@role="main"]//a[@class="headerlink"]'):
        anchor.drop_tree()
    main = tree.xpath('//*[@role="main"]')
    return " ".join(main[0].text_content().split()) if main else None


def extractors() -> dict[str, tuple[Callable[[bytes, str | None], str], bool]]:
    """name -> (bytes and charset to text, whether it extracts main content)."""
    import trafilatura
    from selectolax.lexbor import LexborHTMLParser

    from neardup.text.html import decode_html, html_text

    def selectolax_text(data: bytes, charset: str | None) -> str:
        tree = LexborHTMLParser(decode_html(data, charset))
        for node in tree.css("script, style, noscript"):
            node.decompose()
        body = tree.body
        return " ".join(body.text(separator=" ").split()) if body is not None else ""

    def trafilatura_main(data: bytes, charset: str | None) -> str:
        return trafilatura.extract(decode_html(data, charset)) or ""

    def trafilatura_fast(data: bytes, charset: str | None) -> str:
        return trafilatura.extract(decode_html(data, charset), fast=True) or ""

    def trafilatura_raw(data: bytes, charset: str | None) -> str:
        return trafilatura.extract(data) or ""  # trafilatura's own decoding

    return {
        "resiliparse text (neardup text)": (lambda d, c: html_text(d, charset=c), False),
        "resiliparse main (neardup main)": (
            lambda d, c: html_text(d, charset=c, extract="main"),
            True,
        ),
        "resiliparse altavista": (lambda d, c: html_text(d, charset=c, extract="altavista"), False),
        "selectolax (lexbor) text": (selectolax_text, False),
        "trafilatura main": (trafilatura_main, True),
        "trafilatura main, fast": (trafilatura_fast, True),
        "trafilatura main, own decoding": (trafilatura_raw, True),
    }


def timed(extract: Callable[[bytes, str | None], str], pages: list[Page], runs: int) -> float:
    """The median seconds of ``runs`` passes over ``pages``."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for _, data, charset in pages:
            extract(data, charset)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def words(text: str) -> Counter[str]:
    return Counter(re.findall(r"\w+", text.lower()))


def quality(extract: Callable[[bytes, str | None], str], pages: list[Page]) -> dict[str, float]:
    """Boilerplate left, and body-word recall / precision (multiset), over the Sphinx pages."""
    left = 0
    hits = truth_total = out_total = 0
    for _, data, charset in pages:
        body = sphinx_body(data)
        text = extract(data, charset)
        left += any(marker in text for marker in BOILERPLATE)
        if body is None:
            continue
        truth, got = words(body), words(text)
        hits += sum((truth & got).values())
        truth_total += sum(truth.values())
        out_total += sum(got.values())
    return {
        "pages_with_boilerplate": left,
        "body_word_recall": hits / max(1, truth_total),
        "body_word_precision": hits / max(1, out_total),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    sets = {"web archives": archive_pages(), "Debian Sphinx docs": sphinx_pages()}
    results: dict[str, object] = {}
    for set_name, pages in sets.items():
        size = sum(len(data) for _, data, _ in pages)
        print(f"\n{set_name}: {len(pages)} pages, {size / 1e6:.2f} MB (median of {args.runs})")
        print(f"{'extractor':34} {'pages/s':>9} {'MB/s':>7}  quality (Sphinx main content)")
        for name, (extract, is_main) in extractors().items():
            seconds = timed(extract, pages, args.runs)
            row: dict[str, object] = {
                "pages_per_s": len(pages) / seconds,
                "mb_per_s": size / 1e6 / seconds,
            }
            note = ""
            if set_name == "Debian Sphinx docs":
                q = quality(extract, pages)
                row.update(q)
                note = (
                    f"boilerplate on {q['pages_with_boilerplate']}/{len(pages)} pages, "
                    f"body recall {q['body_word_recall']:.3f}, "
                    f"precision {q['body_word_precision']:.3f}" + (" (main)" if is_main else "")
                )
            print(f"{name:34} {row['pages_per_s']:9.0f} {row['mb_per_s']:7.1f}  {note}")
            results[f"{set_name} / {name}"] = row
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
