"""HTML to text and features: charset detection, visible text, main content, AltaVista features.

One call per page into resiliparse (lexbor's HTML parser and resiliparse's C++ text extractor,
chosen over selectolax and trafilatura by measured speed and quality, see ``docs/web.md`` and
``bench/extract.py``). Three extractions (:data:`~neardup.params.HtmlExtract`):

``"text"``
    All visible text: scripts, styles, comments, ``<noscript>``, form fields, image ``alt``
    texts and hidden elements (``hidden``, inline ``display: none``) dropped, entities decoded,
    whitespace collapsed to single spaces, block elements separating words
    (``<p>a</p><p>b</p>`` gives ``"a b"``, inline ``<b>a</b><i>b</i>`` gives ``"ab"``).
``"main"``
    The main content only: navigation, sidebars, headers, footers and similar boilerplate
    removed by resiliparse's heuristics.
``"altavista"``
    The feature set of Broder's AltaVista near-duplicate filter (seed 000: "discard most markup
    other than the URLs in HREFs and in IMGs"): the words of the visible text, with the URL of
    each ``<a href>`` and ``<img src>`` inserted as one word where its element stands. URLs are
    kept *as written* in the attribute, not resolved, so two copies of a page with the same
    relative links give the same features wherever they are published. (Case is folded later,
    by normalisation.)

:func:`parse_page` also returns the page's links and images as absolute URLs, for the link
graph and mirror detection. resiliparse is part of the ``web`` extra and imported on first use.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, get_args
from urllib.parse import urldefrag, urljoin

from neardup.errors import MissingExtraError, ParameterError
from neardup.params import HtmlExtract

if TYPE_CHECKING:
    from resiliparse.parse.html import HTMLTree

__all__ = ["PageContent", "decode_html", "html_text", "parse_page"]

_EXTRACTS: tuple[str, ...] = get_args(HtmlExtract)

# Byte-order marks beat every other charset declaration (WHATWG "decode").
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# Link schemes kept in PageContent.links/images; anything else (javascript:, mailto:, data:,
# tel:, about:, ...) is not a page of the web graph.
_WEB_SCHEMES = frozenset({"http", "https", "ftp"})
# Elements a browser does not show, beside what resiliparse drops (scripts, styles, forms, ...).
_HIDDEN = ["[hidden]", '[style*="display:none"]', '[style*="display: none"]']
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


@dataclass(frozen=True, slots=True)
class PageContent:
    """What :func:`parse_page` takes from one HTML page.

    Attributes
    ----------
    text
        The page's text, as :func:`html_text` gives it for the same ``extract``.
    links
        The absolute URLs of its ``<a href>`` elements, in document order, resolved against
        the page's URL and its ``<base href>``; fragments removed; ``javascript:``,
        ``mailto:``, ``data:`` (any scheme other than http, https and ftp) and fragment-only
        links dropped. Relative URLs stay relative when the page has neither URL nor base.
    images
        The ``<img src>`` URLs, by the same rules.
    """

    text: str
    links: tuple[str, ...]
    images: tuple[str, ...]


def _resiliparse() -> tuple[Any, Any, Any]:
    """``(encoding module, HTMLTree, extract_plain_text)``, or MissingExtraError."""
    try:
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse import encoding
        from resiliparse.parse.html import HTMLTree
    except ImportError as exc:  # pragma: no cover - the test extras install it
        raise MissingExtraError(
            "reading HTML needs resiliparse: pip install 'neardup[web]'"
        ) from exc
    return encoding, HTMLTree, extract_plain_text


def _check_extract(extract: str) -> None:
    if extract not in _EXTRACTS:
        raise ParameterError(
            f"html_extract must be one of {', '.join(map(repr, _EXTRACTS))}, got {extract!r}"
        )


def decode_html(data: bytes, charset: str | None = None) -> str:
    r"""Decode an HTML page's bytes to text, never failing on bad bytes.

    The encoding is, in this order: a byte-order mark; ``charset`` (say, from the HTTP
    ``Content-Type`` header) when it names a known encoding; the page's own
    ``<meta charset>`` or ``http-equiv`` declaration (in its first 1024 bytes); otherwise
    detected from the bytes (uchardet). Names are mapped as browsers map them (WHATWG: an
    ``iso-8859-1`` label decodes as windows-1252). Bytes that do not decode are replaced with
    U+FFFD after the fallbacks (UTF-8, then windows-1252) fail too.

    Parameters
    ----------
    data
        The page as received.
    charset
        The charset the server declared, or ``None``. An unknown name is ignored.

    Returns
    -------
    str
        The page as text, without a byte-order mark.

    Examples
    --------
    >>> decode_html("café".encode("cp1252"), "iso-8859-1")
    'café'
    >>> decode_html(b'<meta charset="utf-8"><p>caf\xc3\xa9')
    '<meta charset="utf-8"><p>café'
    """
    encoding, _, _ = _resiliparse()
    name: str | None = None
    for bom, bom_name in _BOMS:
        if data.startswith(bom):
            name = bom_name
            data = data[len(bom) :]
            break
    if name is None and charset:
        name = encoding.map_encoding_to_html5(charset.strip().strip("\"'"), fallback_utf8=False)
    if name is None:
        name = encoding.detect_encoding(data, from_html_meta=True)
    text: str = encoding.bytes_to_str(data, name, errors="replace")
    return text


def _parse(data: bytes | str, charset: str | None) -> HTMLTree:
    _, tree_class, _ = _resiliparse()
    text = data if isinstance(data, str) else decode_html(bytes(data), charset)
    tree: HTMLTree = tree_class.parse(text)
    return tree


def _extract(tree: HTMLTree, extract: str) -> str:
    _, _, extract_plain_text = _resiliparse()
    if extract == "altavista":
        _insert_urls(tree)
    text: str = extract_plain_text(
        tree,
        preserve_formatting=False,
        main_content=extract == "main",
        list_bullets=False,
        alt_texts=False,
        skip_elements=_HIDDEN,
    )
    return text.strip()


def _insert_urls(tree: HTMLTree) -> None:
    """Put each HREF and IMG URL, as written, as a word of its own where its element stands."""
    for element in _elements(tree, "a[href], img[src]"):
        url = (element.getattr("href" if element.tag == "a" else "src") or "").strip()
        node = tree.create_text_node(f" {url} ") if url else None
        if node is not None:
            element.before(node)


def _elements(tree: HTMLTree, selector: str) -> tuple[Any, ...]:
    """The elements of the document matching ``selector``, in document order.

    Taken as one slice: indexing resiliparse's node lists element by element, or iterating
    them, costs time in proportion to the list each time (quadratic over a page).
    """
    document = tree.document
    if document is None:
        return ()
    found = document.query_selector_all(selector)
    return tuple(found[:])


def html_text(
    data: bytes | str,
    *,
    charset: str | None = None,
    url: str | None = None,
    extract: HtmlExtract = "text",
) -> str:
    """The text of an HTML page: all visible text, the main content, or AltaVista's features.

    Parameters
    ----------
    data
        The page: bytes (decoded as :func:`decode_html` says) or already decoded text.
    charset
        The charset the server declared for ``data`` bytes (ignored for ``str``).
    url
        The page's URL. Not used by the text itself (AltaVista URLs stay as written); accepted
        so that callers can pass a record's fields alike to this and :func:`parse_page`.
    extract
        ``"text"``, ``"main"`` or ``"altavista"`` (see the module docstring).

    Returns
    -------
    str
        The text, whitespace collapsed to single spaces, without leading or trailing space.

    Raises
    ------
    ParameterError
        ``extract`` is not one of the three.
    MissingExtraError
        resiliparse is not installed.

    Examples
    --------
    >>> html_text("<p>a</p><p>b</p><script>x = 1</script>")
    'a b'
    >>> html_text('<p>see <a href="../x.html">this</a> <img src="i.png"></p>', extract="altavista")
    'see ../x.html this i.png'
    """
    _check_extract(extract)
    return _extract(_parse(data, charset), extract)


def parse_page(
    data: bytes | str,
    *,
    charset: str | None = None,
    url: str | None = None,
    extract: HtmlExtract = "text",
) -> PageContent:
    """The text of an HTML page (as :func:`html_text`) with its links and images.

    Parameters
    ----------
    data
        The page: bytes (decoded as :func:`decode_html` says) or already decoded text.
    charset
        The charset the server declared for ``data`` bytes (ignored for ``str``).
    url
        The page's URL, which relative links are resolved against (after ``<base href>``).
    extract
        ``"text"``, ``"main"`` or ``"altavista"``.

    Returns
    -------
    PageContent
        The text and the absolute link and image URLs, in document order.

    Examples
    --------
    >>> page = parse_page('<a href="b.html#s">B</a> <a href="mailto:x@y">m</a>',
    ...                   url="http://h.org/a/")
    >>> page.text, page.links
    ('B m', ('http://h.org/a/b.html',))
    """
    _check_extract(extract)
    tree = _parse(data, charset)
    base = url or ""
    for element in _elements(tree, "base[href]")[:1]:
        base = urljoin(base, (element.getattr("href") or "").strip())
    hrefs: list[str] = []
    srcs: list[str] = []
    for element in _elements(tree, "a[href], img[src]"):
        if element.tag == "a":
            hrefs.append(element.getattr("href") or "")
        else:
            srcs.append(element.getattr("src") or "")
    links, images = _absolute(hrefs, base), _absolute(srcs, base)
    return PageContent(text=_extract(tree, extract), links=links, images=images)


def _absolute(urls: list[str], base: str) -> tuple[str, ...]:
    """``urls`` resolved against ``base``, fragments removed, non-web and fragment-only dropped."""
    out: list[str] = []
    for raw in urls:
        value = raw.strip()
        if not value or value.startswith("#"):
            continue
        scheme = _SCHEME.match(value)
        if scheme is not None and scheme.group(1).lower() not in _WEB_SCHEMES:
            continue
        absolute = urldefrag(urljoin(base, value) if base else value).url
        if absolute:
            out.append(absolute)
    return tuple(out)
