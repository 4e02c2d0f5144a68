"""URLs: normalisation, hosts, and the URL shingles of seed 002 ("Shingling URLs").

Two uses. :func:`normalize_url` makes the aliases of one page equal (``HTTP://Example.org:80/a/
index.html`` and ``http://example.org/a``), so that pages under aliased URLs can be grouped;
:func:`url_tokens`, :func:`positional_bigrams` and :func:`url_shingles` turn the URLs of a host
into a set of 64-bit fingerprints, so that MinHash + LSH over hosts finds candidate mirror hosts
(seed 002: "a host is now represented by a set of positional bigrams, just like documents were
represented as sets of shingles").

One call per URL is Python (``urllib.parse`` and one regular expression); the fingerprints of a
whole list of URLs are computed at once with NumPy, never one Python step per token.
"""

from __future__ import annotations

import contextlib
import itertools
import re
from collections.abc import Collection, Sequence
from urllib.parse import SplitResult, unquote, urlsplit

import numpy as np

from neardup._types import U64Array
from neardup.hashing.mix import fmix64

__all__ = [
    "DEFAULT_PORTS",
    "INDEX_PAGES",
    "URL_STOP_WORDS",
    "normalize_url",
    "positional_bigrams",
    "url_host",
    "url_parts",
    "url_shingles",
    "url_tokens",
]

DEFAULT_PORTS: dict[str, int] = {"http": 80, "https": 443, "ftp": 21, "ws": 80, "wss": 443}
"""The port each scheme uses when a URL names none; :func:`normalize_url` drops it."""

INDEX_PAGES = frozenset(
    {
        "index.html",
        "index.htm",
        "index.php",
        "index.shtml",
        "index.asp",
        "index.aspx",
        "index.jsp",
        "default.htm",
        "default.html",
        "default.asp",
        "default.aspx",
    }
)
"""Final path segments (compared case-insensitively) that a server serves for the directory
itself; :func:`normalize_url` removes them."""

URL_STOP_WORDS = frozenset(
    {
        # seed 002's list
        "htm",
        "html",
        "txt",
        "main",
        "index",
        "home",
        "bin",
        "cgi",
        # the same kind: file extensions and server-side machinery, not content
        "shtml",
        "xhtml",
        "php",
        "asp",
        "aspx",
        "jsp",
        "cfm",
        "default",
        "www",
        "http",
        "https",
    }
)
"""Frequent URL components dropped from :func:`url_tokens` (seed 002's "stopwords" plus file
extensions of the same kind)."""

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX = frozenset("0123456789abcdefABCDEF")
# Characters that may stand unencoded in a path or query: unreserved, sub-delims, ":", "@",
# "/", "?" and "%" (an escape, normalised separately). Anything else is percent-encoded.
_ALLOWED = _UNRESERVED | frozenset("!$&'()*+,;=:@/?%")
_NEEDS_WORK = re.compile(r"[^A-Za-z0-9\-._~!$&'()*+,;=:@/?]")
_WORD = re.compile(r"[^\W\d_]+")


def normalize_url(url: str, *, drop_params: Collection[str] = frozenset()) -> str:
    """The normal form of a URL: aliases of one resource become one string.

    Rules, in order (RFC 3986 §6 plus the usual crawler conventions):

    - surrounding whitespace stripped; the fragment (``#...``) dropped;
    - scheme and host lower case, an internationalised host in IDNA (punycode), a final dot of
      the host dropped, the port dropped when it is the scheme's default (:data:`DEFAULT_PORTS`);
      user information, if any, kept as it is;
    - percent-encoding normalised in path and query: an escaped unreserved character decoded
      (``%7E`` → ``~``), the hex digits of other escapes upper case (``%2f`` → ``%2F``, kept
      encoded: ``a%2Fb`` and ``a/b`` are different paths), and characters that must not stand
      unencoded (space, non-ASCII) encoded as UTF-8 (``é`` → ``%C3%A9``); a ``%`` that starts
      no valid escape is left alone;
    - dot segments removed (``/a/./b/../c`` → ``/a/c``), an empty path made ``/``;
    - a final directory page removed (:data:`INDEX_PAGES`: ``/a/index.html`` → ``/a/``), then a
      trailing slash removed except for the root (``/a/`` → ``/a``);
    - query parameters (split at ``&``, empty ones dropped) sorted by name, stably, so the
      values of a repeated parameter keep their order; parameters named in ``drop_params``
      removed, and so are ``;name=value`` path parameters of that name (``;jsessionid=...``);
      an empty query dropped.

    ``http`` and ``https`` stay different URLs: a site may serve different pages on them, and
    whether it does is for the content comparison to find (see :mod:`neardup.web.aliases`).
    :func:`url_tokens` and :func:`url_shingles` ignore scheme and host altogether.

    A reference without scheme and host (``a/b/../index.html?b=1&a=2``) is normalised as a
    path with the same rules (its case kept; a leading slash is not added). A URL with a scheme
    but no ``//`` authority (``mailto:``, ``urn:``) only has its scheme lower-cased and its
    fragment dropped. A URL that cannot be parsed (a bad port, an unclosed IPv6 bracket) is
    returned stripped, unchanged: the function never raises on a string, so one odd URL in a
    crawl does not stop the job.

    Parameters
    ----------
    url
        The URL.
    drop_params
        Query parameter names to remove, compared case-insensitively after percent-decoding; a
        name ending in ``*`` is a prefix (``utm_*``).

    Returns
    -------
    str
        The normal form.

    Examples
    --------
    >>> normalize_url("HTTP://WWW.Example.ORG:80/%7euser/./a/../Index.HTML?b=2&a=1#top")
    'http://www.example.org/~user?a=1&b=2'
    >>> normalize_url("https://example.org/page?sid=42&id=7", drop_params={"SID"})
    'https://example.org/page?id=7'
    """
    url = url.strip()
    exact, prefixes = _drop_rules(drop_params)
    try:
        parts = urlsplit(url)
        netloc = _netloc(parts) if parts.netloc else ""
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    if scheme and not parts.netloc and not url[len(scheme) + 1 :].startswith("//"):
        # Not hierarchical (mailto:, urn:, data:): only the scheme's case is ours to change.
        rest = url[len(scheme) + 1 :].split("#", 1)[0]
        return f"{scheme}:{rest}"
    path = _path(parts.path, exact, prefixes, absolute=bool(scheme or parts.netloc))
    query = _query(parts.query, exact, prefixes)
    head = f"{scheme}:" if scheme else ""
    if scheme or parts.netloc or url.startswith("//"):
        head += "//" + netloc
    return head + path + (f"?{query}" if query else "")


def url_parts(url: str) -> tuple[str, str, str]:
    """A normalised absolute URL (:func:`normalize_url`) as ``(scheme://host, /path, query)``.

    Examples
    --------
    >>> url_parts("https://example.org/a/b?x=1"), url_parts("https://example.org")
    (('https://example.org', '/a/b', 'x=1'), ('https://example.org', '/', ''))
    """
    base, _, query = url.partition("?")
    scheme, sep, rest = base.partition("://")
    host, slash, path = rest.partition("/")
    return scheme + sep + host, "/" + path if slash else "/", query


def url_host(url: str) -> str:
    """The host of a URL as mirrors are named: lower case, no scheme, no default port.

    Parameters
    ----------
    url
        An absolute URL.

    Returns
    -------
    str
        ``"www.example.org"``, or ``"www.example.org:8080"`` when the port is not the scheme's
        default; ``""`` when the URL has no host or cannot be parsed.

    Examples
    --------
    >>> url_host("HTTPS://WWW.Example.org:443/a")
    'www.example.org'
    >>> url_host("http://user@example.org:8080/")
    'example.org:8080'
    """
    try:
        parts = urlsplit(url.strip())
        if not parts.netloc:
            return ""
        return _netloc(parts, userinfo=False)
    except ValueError:
        return ""


def url_tokens(url: str) -> list[str]:
    """The tokens of a URL's path and query for URL shingling (seed 002).

    The URL is normalised (:func:`normalize_url`), its path and query percent-decoded and
    lower-cased, and split at every run of characters that are not letters (punctuation and
    digits separate tokens: ``cellblock16`` gives ``cellblock``); :data:`URL_STOP_WORDS` are
    dropped. Scheme and host are left out, unlike the seed, which tokenises the host too: a
    mirror lives under another host name by definition, and host tokens of differing number
    would shift every positional bigram of the path.

    Parameters
    ----------
    url
        The URL (absolute, or a path).

    Returns
    -------
    list of str
        The tokens, in order.

    Examples
    --------
    >>> url_tokens("http://www6.infoseek.com/cellblock16/inmates/dilbert/personal/foo.htm")
    ['cellblock', 'inmates', 'dilbert', 'personal', 'foo']
    """
    normal = normalize_url(url)
    try:
        parts = urlsplit(normal)
    except ValueError:  # pragma: no cover - normalize_url returned it unparsed
        parts = SplitResult("", "", normal, "", "")
    text = unquote(parts.path + (" " + parts.query if parts.query else "")).lower()
    return [token for token in _WORD.findall(text) if token not in URL_STOP_WORDS]


def positional_bigrams(tokens: Sequence[str]) -> list[tuple[str, str, int]]:
    """Seed 002's positional bigrams: each token with the next one and the first one's position.

    Parameters
    ----------
    tokens
        A URL's tokens (:func:`url_tokens`).

    Returns
    -------
    list of (str, str, int)
        ``(tokens[i], tokens[i + 1], i)`` for every ``i``; empty for fewer than two tokens.

    Examples
    --------
    >>> positional_bigrams(["cellblock", "inmates", "dilbert"])
    [('cellblock', 'inmates', 0), ('inmates', 'dilbert', 1)]
    """
    return [(tokens[i], tokens[i + 1], i) for i in range(len(tokens) - 1)]


_FNV_PRIME = np.uint64(0x100000001B3)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_SECOND = np.uint64(0xD6E8FEB86659FD93)


def _token_hashes(tokens: Sequence[str]) -> U64Array:
    """A 64-bit hash of each token's UTF-8 bytes, vectorised over one flat buffer.

    ``fmix64(Σ_j b_j · P^(L-1-j) mod 2^64 ^ L · φ)`` for the bytes ``b_0 .. b_{L-1}``: a
    polynomial hash (odd ``P``, the FNV prime) finished by fmix64.
    """
    if not tokens:
        return np.zeros(0, dtype=np.uint64)
    encoded = [token.encode() for token in tokens]  # one call per distinct token
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8).astype(np.uint64)
    starts = np.cumsum(lengths) - lengths
    ends = np.repeat(starts + lengths, lengths)
    exponent = ends - 1 - np.arange(data.shape[0], dtype=np.int64)
    powers = np.cumprod(np.full(int(lengths.max()), _FNV_PRIME, dtype=np.uint64))
    powers = np.concatenate([np.ones(1, dtype=np.uint64), powers[:-1]])
    terms = (data + np.uint64(1)) * powers[exponent]
    h = np.add.reduceat(terms, starts)
    return fmix64(h ^ (lengths.astype(np.uint64) * _GOLDEN))


def url_shingles(urls: Sequence[str]) -> U64Array:
    """The set of a host's URLs as 64-bit fingerprints of their positional bigrams.

    Every URL is tokenised (:func:`url_tokens`) and each positional bigram ``(a, b, i)``
    (:func:`positional_bigrams`) hashed: ``fmix64(h(a) * φ ^ h(b) * c ^ (i + 1))`` with ``h``
    a 64-bit polynomial hash of the token's UTF-8 bytes finished by fmix64. A URL of a single
    token contributes ``(a, "", 0)`` (with ``h("") = 0``), so that a site of flat paths
    (``/about``, ``/news``) is not an empty set; a URL without tokens contributes nothing. The
    hash is fixed: the same on every run and machine. Tokens are hashed once per distinct token,
    bigrams with array arithmetic.

    Parameters
    ----------
    urls
        The URLs of one host.

    Returns
    -------
    numpy.ndarray of uint64
        The sorted, distinct fingerprints.
    """
    per_url = [url_tokens(url) for url in urls]
    lengths = np.fromiter(map(len, per_url), dtype=np.int64, count=len(per_url))
    flat = np.array(list(itertools.chain.from_iterable(per_url)), dtype=np.str_)
    if flat.shape[0] == 0:
        return np.zeros(0, dtype=np.uint64)
    vocabulary, inverse = np.unique(flat, return_inverse=True)
    hashes = _token_hashes(vocabulary.tolist())[inverse.reshape(-1)]
    starts = np.cumsum(lengths) - lengths
    position = np.arange(flat.shape[0], dtype=np.int64) - np.repeat(starts, lengths)
    url_length = np.repeat(lengths, lengths)
    first = np.flatnonzero(position < url_length - 1)
    single = np.flatnonzero(url_length == 1)
    a = np.concatenate([hashes[first], hashes[single]])
    b = np.concatenate([hashes[first + 1], np.zeros(single.shape[0], dtype=np.uint64)])
    where = np.concatenate([position[first], np.zeros(single.shape[0], dtype=np.int64)])
    mixed = (a * _GOLDEN) ^ (b * _SECOND) ^ (where.astype(np.uint64) + np.uint64(1))
    return np.unique(fmix64(mixed))


def _drop_rules(drop_params: Collection[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """Split parameter names to drop into exact names and prefixes, all lower case."""
    exact = frozenset(name.lower() for name in drop_params if not name.endswith("*"))
    prefixes = tuple(name[:-1].lower() for name in drop_params if name.endswith("*"))
    return exact, prefixes


def _dropped(name: str, exact: frozenset[str], prefixes: tuple[str, ...]) -> bool:
    """Whether a (raw) parameter name is one to drop."""
    if not exact and not prefixes:
        return False
    key = unquote(name).lower()
    return key in exact or (bool(prefixes) and key.startswith(prefixes))


def _netloc(parts: SplitResult, *, userinfo: bool = True) -> str:
    """The normalised authority: user information, host and non-default port."""
    host = parts.hostname or ""  # lower case already; raises nothing
    port = parts.port  # raises ValueError on a bad port
    host = host.rstrip(".")
    if not host.isascii():
        with contextlib.suppress(UnicodeError):  # not valid IDNA: kept as it is
            host = host.encode("idna").decode("ascii")
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    if port is not None and DEFAULT_PORTS.get(parts.scheme.lower()) != port:
        host = f"{host}:{port}"
    if userinfo and "@" in parts.netloc:
        host = parts.netloc.rsplit("@", 1)[0] + "@" + host
    return host


def _escapes(text: str) -> str:
    """Percent-encoding normalised: unreserved escapes decoded, others upper case, raw encoded."""
    if not _NEEDS_WORK.search(text):
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "%" and i + 2 < n and text[i + 1] in _HEX and text[i + 2] in _HEX:
            decoded = chr(int(text[i + 1 : i + 3], 16))
            out.append(decoded if decoded in _UNRESERVED else "%" + text[i + 1 : i + 3].upper())
            i += 3
            continue
        if char in _ALLOWED:
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
        i += 1
    return "".join(out)


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 on a path split at slashes."""
    if "." not in path:
        return path
    absolute = path.startswith("/")
    segments = path.split("/")
    out: list[str] = []
    for index, segment in enumerate(segments):
        final = index == len(segments) - 1
        if segment == ".":
            if final:
                out.append("")
        elif segment == "..":
            if len(out) > (1 if absolute else 0):
                out.pop()
            if final:
                out.append("")
        else:
            out.append(segment)
    result = "/".join(out)
    if absolute and not result.startswith("/"):
        result = "/" + result
    return result


def _path(path: str, exact: frozenset[str], prefixes: tuple[str, ...], *, absolute: bool) -> str:
    """The normalised path (see :func:`normalize_url`)."""
    path = _escapes(path)
    if ";" in path and (exact or prefixes):
        path = "/".join(
            ";".join(
                [piece[0]]
                + [p for p in piece[1:] if not _dropped(p.split("=", 1)[0], exact, prefixes)]
            )
            for piece in (segment.split(";") for segment in path.split("/"))
        )
    path = _remove_dot_segments(path)
    if absolute and not path:
        return "/"
    while True:  # until stable, so that the result is its own normal form
        if len(path) > 1 and path.endswith("/"):
            path = path.rstrip("/") or "/"
        head, _, last = path.rpartition("/")
        if last.lower() not in INDEX_PAGES or not (head or path.startswith("/")):
            return path
        path = head + "/"


def _query(query: str, exact: frozenset[str], prefixes: tuple[str, ...]) -> str:
    """The normalised query (see :func:`normalize_url`)."""
    if not query:
        return ""
    pieces = [_escapes(piece) for piece in query.split("&") if piece]
    kept = [piece for piece in pieces if not _dropped(piece.split("=", 1)[0], exact, prefixes)]
    kept.sort(key=lambda piece: piece.split("=", 1)[0])
    return "&".join(kept)
