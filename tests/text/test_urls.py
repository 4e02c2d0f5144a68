"""URL normalisation, hosts, tokens and URL shingles (seed 002, "Shingling URLs")."""

from __future__ import annotations

from urllib.parse import urlsplit

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup.text.urls import (
    normalize_url,
    positional_bigrams,
    url_host,
    url_shingles,
    url_tokens,
)
from tests.conftest import shared

ALIASES = [
    # scheme and host case
    ("HTTP://WWW.Example.ORG/a", "http://www.example.org/a"),
    # default ports dropped, others kept
    ("http://example.org:80/a", "http://example.org/a"),
    ("https://example.org:443/a", "https://example.org/a"),
    ("http://example.org:443/a", "http://example.org:443/a"),
    ("https://example.org:8443/a", "https://example.org:8443/a"),
    # empty path and trailing slashes
    ("http://example.org", "http://example.org/"),
    ("http://example.org/a/", "http://example.org/a"),
    ("http://example.org/a/b//", "http://example.org/a/b"),
    # directory pages
    ("http://example.org/index.html", "http://example.org/"),
    ("http://example.org/a/Index.HTM", "http://example.org/a"),
    ("http://example.org/a/default.aspx?x=1", "http://example.org/a?x=1"),
    ("http://example.org/a/index.html.bak", "http://example.org/a/index.html.bak"),
    ("http://example.org/myindex.html", "http://example.org/myindex.html"),
    # percent-encoding: unreserved decoded, reserved kept (hex upper), raw characters encoded
    ("http://example.org/%7Euser", "http://example.org/~user"),
    ("http://example.org/%7euser", "http://example.org/~user"),
    ("http://example.org/%41%62c", "http://example.org/Abc"),
    ("http://example.org/a%2fb", "http://example.org/a%2Fb"),
    ("http://example.org/a%2Fb", "http://example.org/a%2Fb"),
    ("http://example.org/caf%c3%a9", "http://example.org/caf%C3%A9"),
    ("http://example.org/café", "http://example.org/caf%C3%A9"),
    ("http://example.org/a b", "http://example.org/a%20b"),
    ("http://example.org/100%", "http://example.org/100%"),
    # dot segments (RFC 3986 §5.2.4)
    ("http://example.org/a/b/c/./../../g", "http://example.org/a/g"),
    ("http://example.org/../a", "http://example.org/a"),
    ("http://example.org/a/%2E%2E/b", "http://example.org/b"),
    # query: sorted by name, stable for repeats, empty pieces and empty query dropped
    ("http://example.org/p?b=2&a=1", "http://example.org/p?a=1&b=2"),
    ("http://example.org/p?b=2&a=9&b=1", "http://example.org/p?a=9&b=2&b=1"),
    ("http://example.org/p?&&a=1&", "http://example.org/p?a=1"),
    ("http://example.org/p?", "http://example.org/p"),
    ("http://example.org/p?q=%7e%2f", "http://example.org/p?q=~%2F"),
    # fragment
    ("http://example.org/p#section-2", "http://example.org/p"),
    ("http://example.org/#top", "http://example.org/"),
    # host details
    ("http://Example.ORG./a", "http://example.org/a"),
    ("http://bücher.example/", "http://xn--bcher-kva.example/"),
    ("http://User:Pw@Example.org:80/", "http://User:Pw@example.org/"),
    ("http://[2001:DB8::1]:80/a", "http://[2001:db8::1]/a"),
    # whitespace around
    ("  http://example.org/a \n", "http://example.org/a"),
    # references and other schemes
    ("a/b/../c/index.html?b=1&a=2#x", "a/c?a=2&b=1"),
    ("/a/./b/", "/a/b"),
    ("//Example.org/a/", "//example.org/a"),
    ("MAILTO:Someone@Example.org#x", "mailto:Someone@Example.org"),
    # cannot be parsed: returned stripped
    (" http://[::1/a ", "http://[::1/a"),
    ("http://example.org:99999/a", "http://example.org:99999/a"),
]


@pytest.mark.parametrize(("url", "expected"), ALIASES)
def test_normalize_url_on_a_table_of_aliases(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


def test_http_and_https_stay_different_urls() -> None:
    assert normalize_url("http://example.org/a") != normalize_url("https://example.org/a")
    assert url_tokens("http://example.org/a/b") == url_tokens("https://www.other.net/a/b")


def test_case_of_the_path_is_kept() -> None:
    assert normalize_url("http://example.org/A") != normalize_url("http://example.org/a")


def test_drop_params_is_case_insensitive_and_takes_prefixes() -> None:
    url = "http://example.org/p?id=7&SID=abc&utm_source=x&UTM_Medium=y&utmost=1"
    assert normalize_url(url, drop_params={"sid", "utm_*"}) == "http://example.org/p?id=7&utmost=1"
    # path parameters of those names go too (";jsessionid=..." cookie crumbs)
    crumb = "http://example.org/shop;jsessionid=A1B2/item;v=2?x=1"
    assert (
        normalize_url(crumb, drop_params={"JSESSIONID"}) == "http://example.org/shop/item;v=2?x=1"
    )
    # an encoded name is compared decoded
    assert normalize_url("http://example.org/p?s%69d=1", drop_params={"sid"}) == (
        "http://example.org/p"
    )


URL_PARTS = st.sampled_from(["a", "B", ".", "..", "", "index.html", "%7e", "%2f", "é", "x y"])
QUERY_PARTS = st.sampled_from(["a=1", "b=2", "A=3", "a=0", "", "c", "q=%7E%2f"])


@st.composite
def urls(draw: st.DrawFn) -> str:
    """Absolute URLs with the pieces normalisation cares about."""
    scheme = draw(st.sampled_from(["http", "HTTPS", "Http"]))
    host = draw(st.sampled_from(["example.org", "WWW.Example.Org", "example.org.", "bücher.de"]))
    port = draw(st.sampled_from(["", ":80", ":443", ":8080"]))
    path = "/".join(draw(st.lists(URL_PARTS, max_size=6)))
    query = "&".join(draw(st.lists(QUERY_PARTS, max_size=4)))
    fragment = draw(st.sampled_from(["", "#", "#frag"]))
    return f"{scheme}://{host}{port}/{path}" + (f"?{query}" if query else "") + fragment


@given(url=urls())
def test_normalize_url_is_idempotent_and_keeps_scheme_host_and_query_set(url: str) -> None:
    normal = normalize_url(url)
    assert normalize_url(normal) == normal
    parts, original = urlsplit(normal), urlsplit(url)
    assert parts.scheme == original.scheme.lower()
    assert parts.path.startswith("/")
    assert not parts.fragment
    # the query holds the same parameters, sorted by name
    pieces = [p for p in original.query.split("&") if p]
    normal_pieces = parts.query.split("&") if parts.query else []
    assert len(normal_pieces) == len(pieces)
    names = [p.split("=", 1)[0] for p in normal_pieces]
    assert names == sorted(names)


HOSTS = [
    ("http://WWW.Example.org/a", "www.example.org"),
    ("https://example.org:443/", "example.org"),
    ("http://example.org:8080/x", "example.org:8080"),
    ("https://example.org:80/", "example.org:80"),
    ("http://user:pw@Example.org/", "example.org"),
    ("http://bücher.example/", "xn--bcher-kva.example"),
    ("/relative/path", ""),
    ("http://[::1/", ""),
]


@pytest.mark.parametrize(("url", "expected"), HOSTS)
def test_url_host(url: str, expected: str) -> None:
    assert url_host(url) == expected


def test_seed_002_positional_bigrams() -> None:
    """Seed 002, "Shingling URLs (2)": the worked example, verbatim."""
    tokens = url_tokens("/cellblock16/inmates/dilbert/personal/foo.htm")
    assert tokens == ["cellblock", "inmates", "dilbert", "personal", "foo"]
    assert positional_bigrams(tokens) == [
        ("cellblock", "inmates", 0),
        ("inmates", "dilbert", 1),
        ("dilbert", "personal", 2),
        ("personal", "foo", 3),
    ]


def test_url_tokens_split_at_punctuation_and_digits_and_drop_stop_words() -> None:
    assert url_tokens("http://www6.infoseek.com/Home/Main.HTML") == []
    assert url_tokens("http://x.org/cgi-bin/Search2Go.php?Query=Mirror_Sites&p=12") == [
        "search",
        "go",
        "query",
        "mirror",
        "sites",
        "p",
    ]
    assert url_tokens("http://x.org/%7Ealice/caf%C3%A9.html") == ["alice", "café"]
    assert url_tokens("http://x.org/a/index.html#frag") == ["a"]
    assert positional_bigrams(["only"]) == []
    assert positional_bigrams([]) == []


_MASK = (1 << 64) - 1


def _fmix(x: int) -> int:
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & _MASK
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & _MASK
    return x ^ (x >> 33)


def _token_hash(token: str) -> int:
    """The documented token hash, in plain Python integers."""
    data = token.encode()
    h = 0
    for byte in data:
        h = (h * 0x100000001B3 + byte + 1) & _MASK
    return _fmix(h ^ ((len(data) * 0x9E3779B97F4A7C15) & _MASK))


def _reference_shingles(urls: list[str]) -> list[int]:
    out = set()
    for url in urls:
        tokens = url_tokens(url)
        bigrams = positional_bigrams(tokens)
        if len(tokens) == 1:
            bigrams = [(tokens[0], "", 0)]
        for a, b, i in bigrams:
            ha = _token_hash(a)
            hb = _token_hash(b) if b else 0
            mixed = ((ha * 0x9E3779B97F4A7C15) & _MASK) ^ ((hb * 0xD6E8FEB86659FD93) & _MASK)
            out.add(_fmix(mixed ^ (i + 1)))
    return sorted(out)


@given(paths=st.lists(st.lists(URL_PARTS | st.sampled_from(["q7z", "ααα"]), max_size=5)))
def test_url_shingles_equal_the_documented_hash(paths: list[list[str]]) -> None:
    urls = ["http://h.org/" + "/".join(parts) for parts in paths]
    got = url_shingles(urls)
    assert got.dtype == np.uint64
    assert got.tolist() == _reference_shingles(urls)


def test_url_shingles_ignore_scheme_and_host_and_are_stable() -> None:
    paths = ["/docs/python/library/os.html", "/docs/python/index.html", "/about", "/"]
    a = url_shingles(["http://www.python.org" + p for p in paths])
    b = url_shingles(["https://mirror.example.ac.uk:8080" + p for p in paths])
    assert a.tolist() == b.tolist()
    assert a.tolist() == sorted(set(a.tolist()))
    # docs/python, python/library, library/os, and the one-token "/about"
    assert a.size == 4
    # frozen values: the hash must never change between runs, versions or machines
    assert url_shingles(["/cellblock16/inmates/dilbert/personal/foo.htm"]).tolist() == [
        791796009134718434,
        10996143961910586623,
        12226138866326767883,
        16916462312610736037,
    ]
    assert url_shingles(["/a/b"]).tolist() == [3283765719838708674]
    assert url_shingles([]).size == 0
    assert url_shingles(["/", "/index.html"]).size == 0


def _surt(url: str) -> str:
    """The SURT key pywb's canonicaliser writes in a CDX file, from a normalised URL."""
    parts = urlsplit(url)
    host = (parts.hostname or "").removeprefix("www.")
    key = ",".join(reversed(host.split("."))) + ")" + parts.path
    if parts.query:
        key += "?" + parts.query
    return key.lower()


def test_normalize_url_agrees_with_the_cdx_keys_of_real_crawls() -> None:
    """pywb's SURT keys (an independent canonicaliser) group the crawl's URLs as ours do."""
    folder = shared("web_archives/pywb_sample_archive")
    rows = []
    for cdx in sorted(folder.glob("*.cdx")):
        for line in cdx.read_text().splitlines()[1:]:
            fields = line.split(" ")
            rows.append((fields[0], fields[2]))
    assert len(rows) > 150
    for key, url in rows:
        assert _surt(normalize_url(url)) == key, url
    # http and https variants of the iana.org pages: different URLs, the same tokens and host
    iana = {url for key, url in rows if key.startswith("org,iana)")}
    https = sorted(url for url in iana if url.startswith("https://"))
    assert len(https) >= 10
    for url in https:
        http = "http://" + url.removeprefix("https://")
        assert http in iana
        assert normalize_url(url) != normalize_url(http)
        assert normalize_url(url).removeprefix("https") == normalize_url(http).removeprefix("http")
        assert url_tokens(url) == url_tokens(http)
        assert url_host(url) == url_host(http) == "www.iana.org"
    # /domains/root/db and /domains/root/db/ are one page
    assert normalize_url("http://www.iana.org/domains/root/db/") in {
        normalize_url(u) for u in iana if u.endswith("/db")
    }
    assert url_shingles(sorted(iana)).tolist() == _reference_shingles(sorted(iana))
