"""HTML to text and features: block separation, charsets, AltaVista features, main content, links.

Exact expectations come from small hand-written pages; real pages (the HTML payloads of the
shared web archives, read with warcio, and the Debian Sphinx docs in ``data/web``) are checked
against lxml's independent reading of the same page.
"""

from __future__ import annotations

import re
import tarfile
from collections import Counter
from pathlib import Path
from urllib.parse import urldefrag, urljoin

import lxml.html  # type: ignore[import-untyped]
import pytest

from neardup.errors import ParameterError
from neardup.text.html import PageContent, decode_html, html_text, parse_page
from tests.conftest import shared

ROOT = Path(__file__).resolve().parents[2]
SPHINX = ROOT / "data/web/debian-sphinx-docs.tar.xz"


# --- visible text ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("<p>a</p><p>b</p>", "a b"),
        ("<div>a</div><div>b</div>", "a b"),
        ("<h1>a</h1>b", "a b"),
        ("a<br>b", "a b"),
        ("<ul><li>a</li><li>b</li></ul>", "a b"),
        ("<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>", "a b c"),
        ("<b>a</b><i>b</i>", "ab"),  # inline elements do not split a word
        ("<p>  many \n\n\t spaces   here </p>", "many spaces here"),
    ],
)
def test_block_elements_separate_words(html: str, expected: str) -> None:
    assert html_text(html) == expected


def test_scripts_styles_comments_and_hidden_elements_are_dropped() -> None:
    page = (
        "<html><head><title>T</title><style>p { color: red }</style>"
        "<script>var secret = 1;</script></head><body>"
        "<p>shown</p><!-- a comment --><script type='text/javascript'>alert('x')</script>"
        "<noscript>enable js</noscript><p hidden>hidden words</p>"
        "<div style='display: none'>invisible</div><p>too</p></body></html>"
    )
    assert html_text(page) == "shown too"


def test_entities_are_decoded() -> None:
    text = html_text("<p>&amp; &lt;p&gt; &eacute;&#233;&#xE9; &#x263A; a&nbsp;b &copy;</p>")
    assert text.replace("\xa0", " ") == "& <p> ééé ☺ a b ©"


def test_empty_and_markup_only_pages_give_empty_text() -> None:
    assert html_text("") == ""
    assert html_text(b"") == ""
    assert html_text("<html><head><script>x()</script></head><body></body></html>") == ""


def test_unknown_extract_is_a_parameter_error() -> None:
    with pytest.raises(ParameterError, match="'text', 'main', 'altavista'"):
        html_text("<p>x</p>", extract="boilerpipe")  # type: ignore[arg-type]


# --- charsets --------------------------------------------------------------------------------

FRENCH = (
    "Le cœur déçu mais l’âme plutôt naïve, Louÿs rêva de crapaüter en canoë au delà des îles, "
    "près du mälström où brûlent les novæ. « Déjà ! » s’écria-t-il – un été à Noël."
)
JAPANESE = (
    "日本語の文章です。これは文字コードの判定を試すための少し長めの段落で、"
    "ひらがなとカタカナと漢字が混ざっています。東京都の天気は晴れのち曇りでしょう。"
)


def _page(body: str, head: str = "") -> str:
    return f"<html><head>{head}<title>t</title></head><body><p>{body}</p></body></html>"


@pytest.mark.parametrize("header", ["windows-1252", "cp1252", "iso-8859-1", "ISO-8859-1"])
def test_header_charset_decodes_cp1252(header: str) -> None:
    # WHATWG decodes an iso-8859-1 label as windows-1252, so the curly quotes survive.
    data = _page(FRENCH).encode("cp1252")
    assert html_text(data, charset=header) == FRENCH


@pytest.mark.parametrize(
    "head",
    [
        '<meta charset="windows-1252">',
        '<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">',
    ],
)
def test_meta_charset_is_used_without_a_header(head: str) -> None:
    assert html_text(_page(FRENCH, head).encode("cp1252")) == FRENCH


def test_header_charset_wins_over_meta() -> None:
    data = _page(FRENCH, '<meta charset="utf-8">').encode("cp1252")
    assert html_text(data, charset="windows-1252") == FRENCH


def test_unknown_header_charset_is_ignored() -> None:
    data = _page(FRENCH, '<meta charset="windows-1252">').encode("cp1252")
    assert html_text(data, charset="no-such-charset") == FRENCH


@pytest.mark.parametrize("head", ["", '<meta charset="shift_jis">'])
@pytest.mark.parametrize("header", [None, "Shift_JIS"])
def test_shift_jis(head: str, header: str | None) -> None:
    data = _page(JAPANESE, head).encode("shift_jis")
    assert html_text(data, charset=header) == JAPANESE


def test_undeclared_charsets_are_detected() -> None:
    assert html_text(_page(FRENCH * 3).encode("cp1252")) == FRENCH * 3
    assert html_text(_page(FRENCH).encode("utf-8")) == FRENCH


def test_byte_order_marks_win() -> None:
    page = _page(FRENCH, '<meta charset="windows-1252">')
    assert html_text(b"\xef\xbb\xbf" + page.encode("utf-8"), charset="cp1252") == FRENCH
    assert decode_html(b"\xff\xfe" + page.encode("utf-16-le")) == page


def test_bad_bytes_never_raise() -> None:
    data = _page("ok").encode() + bytes(range(128, 256)) + b"<p>end</p>"
    for charset in (None, "utf-8", "shift_jis", "utf-16"):
        text = html_text(data, charset=charset)
        assert isinstance(text, str)
    assert html_text(data, charset="utf-8").startswith("ok")


def test_str_input_is_taken_as_decoded() -> None:
    assert html_text(_page(FRENCH, '<meta charset="shift_jis">'), charset="ascii") == FRENCH


# --- AltaVista features ----------------------------------------------------------------------


def test_altavista_puts_href_and_img_urls_where_their_elements_stand() -> None:
    page = (
        '<p>one two <a href="../docs/x.html#s">three</a> four <IMG SRC="/i/logo.png" alt="L">'
        '<span>five</span></p><p><a name="anchor">six</a> <a href="a?b=1&amp;c=2">seven</a></p>'
        '<script>var u = "<a href=\\"no.html\\">";</script>'
    )
    assert html_text(page, extract="altavista") == (
        "one two ../docs/x.html#s three four /i/logo.png five six a?b=1&c=2 seven"
    )
    assert html_text(page) == "one two three four five six seven"


def test_altavista_urls_stay_as_written_so_relative_copies_match() -> None:
    page = '<p>see <a href="intro.html">the intro</a> and <img src="_static/logo.png"></p>'
    here = html_text(page, url="http://a.example.org/docs/", extract="altavista")
    there = html_text(page, url="https://mirror.example.net/x/", extract="altavista")
    assert here == there == "see intro.html the intro and _static/logo.png"
    changed = page.replace("intro.html", "start.html")
    assert html_text(changed, extract="altavista") != here
    assert html_text(changed) == html_text(page)  # the plain text cannot tell them apart


# --- main content ----------------------------------------------------------------------------

ARTICLE = (
    "The committee met on Tuesday to discuss the budget for the coming year. After a long "
    "debate the members agreed to raise the library's funding by ten percent and to extend "
    "its opening hours on weekends. The chair thanked everyone for their patience."
)


def test_main_drops_navigation_sidebar_and_footer() -> None:
    page = (
        "<html><body><header><nav><ul><li><a href='/'>Home</a></li><li><a href='/n'>News</a>"
        "</li><li><a href='/c'>Contact</a></li></ul></nav></header>"
        "<div class='sidebar'><h3>Quick search</h3><form><input name='q'></form></div>"
        f"<main><article><h1>Budget approved</h1><p>{ARTICLE}</p></article></main>"
        "<footer><p>© 2024 Example Town. All rights reserved.</p></footer></body></html>"
    )
    main = html_text(page, extract="main")
    assert ARTICLE in main
    assert "Budget approved" in main
    for boilerplate in ("Home", "Contact", "Quick search", "©", "rights reserved"):
        assert boilerplate not in main
        assert boilerplate in html_text(page) or boilerplate == "Quick search"


def _sphinx_pages() -> list[tuple[str, bytes]]:
    with tarfile.open(SPHINX, "r:xz") as tar:
        return [
            (m.name, tar.extractfile(m).read())  # type: ignore[union-attr]
            for m in tar
            if m.isfile() and re.search(r"/(?!genindex|search|py-modindex)[^/]+\.html$", m.name)
        ]


def _words(text: str) -> Counter[str]:
    return Counter(re.findall(r"\w+", text.lower()))


def _sphinx_body(data: bytes) -> str:
    """The text of Sphinx's ``role="main"`` element, by lxml, without the heading anchors."""
    tree = lxml.html.fromstring(data)
    for drop in tree.xpath(
        '//*[@role="main"]//*[self::script or self::style or @class="headerlink"]'
    ):
        drop.drop_tree()
    return str(tree.xpath('//*[@role="main"]')[0].text_content())


def test_main_keeps_sphinx_bodies_and_drops_their_chrome() -> None:
    """Real pages: Sphinx marks the body, so what main content should keep is known."""
    pages = _sphinx_pages()
    assert len(pages) > 40
    kept = total = 0
    for name, data in pages:
        main = html_text(data, extract="main")
        text = html_text(data)
        for chrome in ("Quick search", "Created using Sphinx", "©", "Navigation"):
            assert chrome not in main, (name, chrome)
        # The search box is display: none until JavaScript shows it, so the text lacks it too.
        assert "Quick search" not in text
        assert "Created using Sphinx" in text
        assert "©" in text
        assert "Navigation" in text
        body = _words(_sphinx_body(data))
        kept += sum((body & _words(main)).values())
        total += sum(body.values())
        assert sum((_words(main) - body).values()) <= 0.02 * sum(_words(main).values()) + 3, name
    assert kept / total > 0.9  # measured 0.94: code blocks' line numbers and captions go


# --- links -----------------------------------------------------------------------------------


def test_links_resolved_filtered_and_in_order() -> None:
    page = (
        '<p><a href="b.html#part">b</a> <a href="#top">top</a> <a href="javascript:void(0)">'
        'js</a> <a href="mailto:x@example.org">mail</a> <a href="../up/">up</a> '
        '<a href="//cdn.example.net/lib">cdn</a> <a href=" https://other.org/x?q=1#f ">o</a> '
        '<a href="data:text/html,hi">d</a> <a href="TEL:123">t</a> <a>no href</a> '
        '<img src="i.png"> <img src="data:image/png;base64,AAAA"> <a href="">empty</a></p>'
    )
    result = parse_page(page, url="http://h.example.org/docs/a/page.html")
    assert result.links == (
        "http://h.example.org/docs/a/b.html",
        "http://h.example.org/docs/up/",
        "http://cdn.example.net/lib",
        "https://other.org/x?q=1",
    )
    assert result.images == ("http://h.example.org/docs/a/i.png",)
    assert result.text == html_text(page)


def test_base_href_wins_over_the_page_url() -> None:
    page = (
        '<html><head><base href="/root/sub/"></head><body><a href="x.html">x</a>'
        '<img src="../pic.gif"></body></html>'
    )
    result = parse_page(page, url="https://h.example.org/elsewhere/page")
    assert result.links == ("https://h.example.org/root/sub/x.html",)
    assert result.images == ("https://h.example.org/root/pic.gif",)


def test_without_url_or_base_relative_links_stay_relative() -> None:
    result = parse_page('<a href="x.html#f">x</a><a href="http://a.org/">a</a>')
    assert result == PageContent(text="xa", links=("x.html", "http://a.org/"), images=())


def test_parse_page_text_follows_extract() -> None:
    page = f'<nav><a href="/">Home</a></nav><article><p>{ARTICLE}</p></article>'
    assert parse_page(page, extract="main").text == html_text(page, extract="main")
    altavista = parse_page(page, url="http://x.org/", extract="altavista")
    assert altavista.text == f"/ Home {ARTICLE}"
    assert altavista.links == ("http://x.org/",)


# --- real pages from the web archives --------------------------------------------------------


def _archive_pages() -> list[tuple[str, bytes, str | None]]:
    from warcio.archiveiterator import ArchiveIterator

    files = [
        "web_archives/pywb_sample_archive/iana.warc.gz",
        "web_archives/commoncrawl_whirlwind/whirlwind.warc.gz",
        "web_archives/ukwa_webarchive_test_suite/small-arcs-and-warcs/IAH-urls-wget.warc.gz",
        "web_archives/ukwa_webarchive_test_suite/wikipedia-sopa-blackout-2012/"
        "wikipedia-post-blackout/main-page.warc.gz",
    ]
    pages = []
    for name in files:
        with shared(name).open("rb") as f:
            for record in ArchiveIterator(f):
                if record.rec_type != "response" or record.http_headers is None:
                    continue
                kind = record.http_headers.get_header("Content-Type") or ""
                body = record.content_stream().read()
                if "html" in kind and body:
                    charset = re.search(r"charset=([\w-]+)", kind)
                    url = record.rec_headers.get_header("WARC-Target-URI")
                    pages.append((url, body, charset.group(1) if charset else None))
    return pages


def _lxml_reading(url: str, data: bytes, charset: str | None) -> tuple[str, list[str]]:
    """lxml's body text (scripts, styles dropped) and absolute a[href] web links of the page."""
    tree = lxml.html.fromstring(data.decode(charset or "utf-8", "replace"))
    for drop in tree.xpath("//script | //style | //noscript | //template | //select | //textarea"):
        drop.drop_tree()
    base = url
    for href in tree.xpath("//base/@href")[:1]:
        base = urljoin(url, href.strip())
    links = []
    for raw in tree.xpath("//a/@href"):
        href = raw.strip()
        absolute = urldefrag(urljoin(base, href)).url
        if href and not href.startswith("#") and re.match(r"(?i)(https?|ftp)://", absolute):
            links.append(absolute)
    body = tree.find("body")
    return " ".join((body if body is not None else tree).itertext()), links


def test_real_pages_agree_with_lxml() -> None:
    pages = _archive_pages()
    assert len(pages) >= 25
    for url, data, charset in pages:
        page = parse_page(data, charset=charset, url=url)
        text, links = _lxml_reading(url, data, charset)
        ours, theirs = set(_words(page.text)), set(_words(text))
        assert len(ours & theirs) >= 0.9 * len(ours | theirs), url
        assert "<script" not in page.text, url
        assert "function(" not in page.text.replace(" ", ""), url
        assert page.links == tuple(links), url
        assert all(re.match(r"https?://|ftp://", link) for link in page.links), url


def test_real_altavista_features_are_the_text_plus_the_urls() -> None:
    seen = 0
    for url, data, charset in _archive_pages()[:20]:
        plain = html_text(data, charset=charset).split()
        features = html_text(data, charset=charset, url=url, extract="altavista").split()
        tree = lxml.html.fromstring(data.decode(charset or "utf-8", "replace"))
        body = tree.body if tree.find("body") is not None else tree
        found = body.xpath(
            ".//a[not(ancestor::noscript)]/@href | .//img[not(ancestor::noscript)]/@src"
        )
        urls = [u.strip() for u in found if u.strip()]
        seen += len(urls)
        # Removing the URLs, in order, from the features leaves the plain text (a URL inside
        # a word, as in "l'<a>Academia</a>", splits it: compare without spaces).
        rest = features.copy()
        for written in urls:
            for word in written.split():
                rest.remove(word)
        assert "".join(rest) == "".join(plain), url
        assert len(rest) - len(plain) <= 0.1 * len(plain), url
    assert seen > 300
