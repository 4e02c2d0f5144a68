"""Host templates: learned from a host's pages, left out of each page, as ``dedup`` uses them."""

from __future__ import annotations

import numpy as np
import pytest

import neardup
from neardup import DedupConfig, Shingler
from neardup.io.records import RecordBatch
from neardup.params import NormalizeSpec
from neardup.templates import HostTemplates
from neardup.text.normalize import normalize_bytes
from neardup.verify import jaccard_of_sets

CHROME = "Home Docs Blog About. Contact us today for more information and help"
BANNER = "This is a mirror of docs.example, kindly hosted by mirror.example for you."
CONTENT = {
    "a": "Release notes for version one point two: fixed a bug.",
    "b": "The API reference describes every function in the package here.",
    "c": "Installing the package needs a recent Python and pip on your machine.",
    "search": "Search",
}


def _pages() -> dict[str, str]:
    pages = {f"https://docs.example/{k}.html": f"{CHROME} {v} {CHROME}" for k, v in CONTENT.items()}
    pages.update(
        {f"https://mirror.example/{k}.html": f"{BANNER} {v} {CHROME}" for k, v in CONTENT.items()}
    )
    pages["corpus.jsonl:3"] = f"{CHROME} not a web page {CHROME}"
    pages["https://mirror.example/only-chrome.html"] = f"{BANNER} {CHROME}"
    return pages


def _stripped(templates: HostTemplates, pages: dict[str, str]) -> list[str]:
    normalized = normalize_bytes(
        RecordBatch.of(list(pages), list(pages.values())).texts, NormalizeSpec()
    )
    out = templates.strip(list(pages), normalized)
    return [
        bytes(out.data[a:b]).decode()
        for a, b in zip(out.offsets[:-1], out.offsets[1:], strict=True)
    ]


def test_a_page_keeps_the_words_its_hosts_template_does_not_cover() -> None:
    """Each host's chrome (and the mirror's banner) goes; the words of the page stay, runs
    joined by a space; a record of no host, and a page of chrome alone, stay whole."""
    pages = _pages()
    templates = HostTemplates.learn(
        [RecordBatch.of(list(pages), list(pages.values()))], NormalizeSpec()
    )
    assert templates.sampled == {"docs.example": 4, "mirror.example": 5}
    assert set(templates.sizes) == {"docs.example", "mirror.example"}
    stripped = dict(zip(pages, _stripped(templates, pages), strict=True))
    for name, words in CONTENT.items():
        assert stripped[f"https://docs.example/{name}.html"] == words
        assert stripped[f"https://mirror.example/{name}.html"] == words
    assert stripped["corpus.jsonl:3"] == f"{CHROME} not a web page {CHROME}"
    assert stripped["https://mirror.example/only-chrome.html"] == f"{BANNER} {CHROME}"


def test_a_page_crawled_under_several_urls_counts_once() -> None:
    """Two distinct texts on a host make no template, however many URLs serve them."""
    pages = {f"https://a.example/?session={i}": f"{CHROME} one page" for i in range(5)}
    pages["https://a.example/other"] = f"{CHROME} another page"
    templates = HostTemplates.learn(
        [RecordBatch.of(list(pages), list(pages.values()))], NormalizeSpec()
    )
    assert templates.sampled == {"a.example": 2}
    assert templates.sizes == {}
    assert _stripped(templates, pages) == list(pages.values())


def test_pieces_of_a_batch_strip_as_the_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    pages = _pages()
    batch = RecordBatch.of(list(pages), list(pages.values()))
    whole = HostTemplates.learn([batch], NormalizeSpec())
    expected = _stripped(whole, pages)
    monkeypatch.setattr("neardup.templates.PIECE_BYTES", 100)
    pieces = HostTemplates.learn([batch], NormalizeSpec())
    np.testing.assert_array_equal(pieces.keys, whole.keys)
    assert _stripped(pieces, pages) == expected


def test_what_is_learned_does_not_depend_on_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the shingles held, the hosts sampled so far are settled: at the same page however
    the pages are batched; a host settled is sampled no further, one with fewer than three
    pages is sampled afresh."""
    monkeypatch.setattr("neardup.templates.LEARN_SHINGLES", 60)
    pages = _pages()
    pages.update({f"https://late.example/{i}": f"{CHROME} page {i} of late" for i in range(4)})
    whole = HostTemplates.learn(
        [RecordBatch.of(list(pages), list(pages.values()))], NormalizeSpec()
    )
    one_by_one = HostTemplates.learn(
        [RecordBatch.of([i], [t]) for i, t in pages.items()], NormalizeSpec()
    )
    np.testing.assert_array_equal(one_by_one.keys, whole.keys)
    assert (one_by_one.sampled, one_by_one.sizes) == (whole.sampled, whole.sizes)
    assert whole.sampled["docs.example"] == 3  # settled before its fourth page
    assert set(whole.sizes) == {"docs.example", "mirror.example", "late.example"}


def test_dedup_compares_pages_without_their_hosts_templates() -> None:
    """A mirrored short page joins its original only without the templates, and verification
    measures the stripped texts (the Jaccard of their word 5-shingles)."""
    pages = _pages()
    texts, ids = list(pages.values()), list(pages)
    plain = neardup.dedup(texts, ids, DedupConfig(pairs="all"))
    result = neardup.dedup(texts, ids, DedupConfig(pairs="all", host_templates=True))
    search = ids.index("https://docs.example/search.html")
    copy = ids.index("https://mirror.example/search.html")
    assert plain.clusters.labels[copy] != plain.clusters.labels[search]
    assert result.clusters.labels[copy] == result.clusters.labels[search]
    for name in ("a", "b", "c"):
        a, b = (
            ids.index(f"https://docs.example/{name}.html"),
            ids.index(f"https://mirror.example/{name}.html"),
        )
        assert result.clusters.labels[a] == result.clusters.labels[b]
    assert result.summary.host_templates is not None
    assert result.summary.host_templates["hosts_with_template"] == 2
    stripped = HostTemplates.learn([RecordBatch.of(ids, texts)], NormalizeSpec())
    sets = Shingler().shingle_sets(_stripped(stripped, pages))
    for a, b, value in zip(
        result.pairs.first, result.pairs.second, result.pairs.jaccard, strict=True
    ):
        assert value == pytest.approx(jaccard_of_sets(sets.set_of(int(a)), sets.set_of(int(b))))


def test_records_without_url_ids_have_no_host_to_learn_from() -> None:
    with pytest.raises(neardup.ParameterError, match="no record here has one"):
        neardup.dedup(["a b c d e f", "a b c d e g"], config=DedupConfig(host_templates=True))
