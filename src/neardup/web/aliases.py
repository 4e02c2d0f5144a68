"""URL aliases: the query parameters and path segments that do not change the page.

Seed 003's "cookie crumbs": a site puts a session or user id into its URLs, and a crawler
fetches the same page again and again under new URLs. Tracking parameters (``utm_source``,
``fbclid``) do the same. A parameter is an *alias parameter* when pages whose URLs differ only
in its value have the same content. The seed's own example carries the crumb in the path,
``http://www.crutchfield.com/S-fXyiE5bZS43/`` and ``.../S-LcNLKgc7bMg/``: a *path crumb* is a
segment, at one position of one host's paths and of one shape (:func:`segment_shape`:
``S-*``), whose value varies while the page does not. :func:`learn_alias_parameters` finds
both from the URLs and the content fingerprints of a crawl, and :func:`canonical_urls` drops
them, so pages under aliased URLs share one canonical URL.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from urllib.parse import unquote

import numpy as np

from neardup._types import I64Array, U64Array
from neardup.errors import ParameterError
from neardup.text.urls import normalize_url, url_parts

__all__ = [
    "TRACKING_PARAMETERS",
    "AliasParameters",
    "PathCrumb",
    "canonical_urls",
    "learn_alias_parameters",
    "segment_shape",
]

TRACKING_PARAMETERS = frozenset(
    {
        # campaign and click trackers
        "utm_*",
        "fbclid",
        "gclid",
        "gclsrc",
        "dclid",
        "msclkid",
        "yclid",
        "twclid",
        "igshid",
        "mc_cid",
        "mc_eid",
        "_ga",
        "_gl",
        "_hsenc",
        "_hsmi",
        "mkt_tok",
        # session ids ("cookie crumbs")
        "sid",
        "sessionid",
        "session_id",
        "sessid",
        "jsessionid",
        "phpsessid",
        "aspsessionid*",
        "cfid",
        "cftoken",
        "zenid",
        "osCsid",
    }
)
"""Well-known parameters that do not change a page: trackers and session ids. A name ending in
``*`` is a prefix (``utm_*`` is ``utm_source``, ``utm_medium``, ...); names are compared
case-insensitively."""

_ABSENT = "\x00absent"

_TOKEN = re.compile(r"[A-Za-z0-9]{8,}")
"""A run of letters and digits long enough to be an id (one when it holds both)."""


def segment_shape(segment: str) -> str:
    """A path segment with each id-like token replaced by ``*``.

    A token is a run of 8 or more ASCII letters and digits holding at least one of each
    (``fXyiE5bZS43``, a hex digest): the random part of a session id. Words, numbers and dates
    are left as they are, so a segment without a token is its own shape and is never taken
    for a crumb.

    Examples
    --------
    >>> segment_shape("S-fXyiE5bZS43"), segment_shape("sess_9f86d081884c7d65")
    ('S-*', 'sess_*')
    >>> segment_shape("documentation"), segment_shape("20261129"), segment_shape("v1.2.3")
    ('documentation', '20261129', 'v1.2.3')
    """

    def token(match: re.Match[str]) -> str:
        run = match.group()
        is_id = any(c.isdigit() for c in run) and any(c.isalpha() for c in run)
        return "*" if is_id else run

    return _TOKEN.sub(token, segment)


@dataclass(frozen=True, slots=True, order=True)
class PathCrumb:
    """Path segments that carry a session id on one host.

    The ``position``-th segment of the host's paths (from 0) when its :func:`segment_shape` is
    ``shape``.

    Examples
    --------
    >>> str(PathCrumb("www.crutchfield.com", 0, "S-*"))
    'www.crutchfield.com/S-*/ (segment 1)'
    """

    host: str
    position: int
    shape: str

    def __str__(self) -> str:
        return f"{self.host}/{'*/' * self.position}{self.shape}/ (segment {self.position + 1})"


@dataclass(frozen=True, slots=True)
class AliasParameters:
    """The query parameters of a crawl that do not change the page, and the evidence.

    Attributes
    ----------
    names
        Parameter names (lower case; a name ending in ``*`` is a prefix) that
        :func:`canonical_urls` drops: the learned ones and the known ones the crawl did not
        contradict.
    evidence
        For each parameter seen varying in the crawl: ``(same, changed)``, the number of groups
        of pages whose URLs were equal but for this parameter, whose values varied, and whose
        content stayed the same (``same``) or changed (``changed``), as counted in the last
        learning round that examined it (with the alias parameters found before it dropped). A
        known name whose evidence shows it changes content is left out of ``names``.
    crumbs
        The path crumbs :func:`canonical_urls` drops.
    crumb_evidence
        For each host, position and shape seen varying: ``(same, changed)`` as for a
        parameter, the groups of pages whose URLs were equal but for that segment's value.
    """

    names: frozenset[str]
    evidence: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    crumbs: frozenset[PathCrumb] = frozenset()
    crumb_evidence: Mapping[PathCrumb, tuple[int, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", frozenset(name.lower() for name in self.names))
        object.__setattr__(self, "evidence", MappingProxyType(dict(self.evidence)))
        object.__setattr__(self, "crumb_evidence", MappingProxyType(dict(self.crumb_evidence)))


def learn_alias_parameters(
    urls: Sequence[str],
    fingerprints: U64Array,
    *,
    min_support: int = 2,
    min_share: float = 0.9,
    known: Collection[str] = TRACKING_PARAMETERS,
) -> AliasParameters:
    """Find the query parameters and path crumbs whose value varies while the page does not.

    For each parameter name ``p`` (compared lower case, after :func:`normalize_url`), the pages
    are grouped by their URL without ``p`` (a page without ``p`` counts as one more value, so
    ``/a`` and ``/a?sid=1`` are a group). A group where ``p`` takes at least two values is
    evidence: *same* when all its pages have one fingerprint, *changed* otherwise. ``p`` is
    learned when it has at least ``min_support`` *same* groups and they are at least
    ``min_share`` of its groups. A known name (``known``, prefixes allowed) is kept unless the
    crawl refutes it: at least ``min_support`` *changed* groups and a *same* share under
    ``min_share``.

    Learning repeats with the parameters found so far dropped: two session parameters that vary
    together (``?sid=..&uid=..`` new on every visit) only show up as groups once the other is
    gone. It stops when a round adds nothing.

    Then, with the alias parameters dropped, path crumbs: for each host, segment position and
    shape (:func:`segment_shape`) of a segment holding an id-like token, the pages are grouped
    by their URL with that segment replaced by its shape; a group where the segment takes two
    values or more is *same* or *changed* evidence as above, and the rule is the same
    (``min_support`` groups, ``min_share`` of them). No segment is known in advance.

    Content is compared by exact fingerprint. Pages that change a little between visits (seed
    003: "page is slightly modified") count as changed; pass the fingerprint of each page's
    near-duplicate cluster representative instead to count them as the same.

    Parameters
    ----------
    urls
        One URL per page.
    fingerprints
        One content fingerprint per page (uint64; any integer array of the same length).
    min_support
        The fewest agreeing groups that make (or refute) a parameter.
    min_share
        The share of a parameter's groups that must agree.
    known
        Names taken as alias parameters unless refuted.

    Returns
    -------
    AliasParameters
        The names to drop and the evidence per parameter.

    Raises
    ------
    ParameterError
        When ``fingerprints`` is not one per URL, ``min_support < 1`` or ``min_share`` is not in
        ``(0, 1]``.
    """
    fingerprints = np.asarray(fingerprints)
    if fingerprints.ndim != 1 or fingerprints.shape[0] != len(urls):
        raise ParameterError(
            f"fingerprints: need one per URL ({len(urls)}), got shape {fingerprints.shape}"
        )
    if min_support < 1:
        raise ParameterError(f"min_support: must be at least 1, got {min_support}")
    if not 0.0 < min_share <= 1.0:
        raise ParameterError(f"min_share: must be in (0, 1], got {min_share}")
    known_names = frozenset(name.lower() for name in known)
    prefixes = tuple(name[:-1] for name in known_names if name.endswith("*"))
    parsed = [_split(normalize_url(url)) for url in urls]
    content = np.unique(fingerprints, return_inverse=True)[1].reshape(-1).astype(np.int64)

    learned: set[str] = set()
    refuted: set[str] = set()
    evidence: dict[str, tuple[int, int]] = {}
    first_round = True
    while True:
        dropped = learned | (known_names - refuted) if not first_round else set()
        counts = _evidence(parsed, content, dropped, prefixes if not first_round else ())
        added = False
        for name, (same, changed) in counts.items():
            if name in learned or name in refuted:
                continue
            evidence[name] = (same, changed)
            total = same + changed
            if (
                changed >= min_support
                and same < min_share * total
                and _known(name, known_names, prefixes)
            ):
                refuted.add(name)
            elif same >= min_support and same >= min_share * total:
                learned.add(name)
                added = True
        if not added and not first_round:
            break
        first_round = False

    names = set(learned) | {name for name in known_names if name not in refuted}
    # A refuted name matching a known prefix: the prefix cannot say "but not this one", so it is
    # replaced by the names the crawl shows under it that were not refuted.
    for prefix_name in [name for name in names if name.endswith("*")]:
        prefix = prefix_name[:-1]
        if any(name.startswith(prefix) for name in refuted):
            names.discard(prefix_name)
            names |= {
                name
                for page in parsed
                for name, _ in page[1]
                if name.startswith(prefix) and name not in refuted
            }
    alias_names = frozenset(names)
    crumb_evidence = _crumb_evidence([_drop(page, alias_names) for page in parsed], content)
    crumbs = {
        crumb
        for crumb, (same, changed) in crumb_evidence.items()
        if same >= min_support and same >= min_share * (same + changed)
    }
    return AliasParameters(
        names=frozenset(names),
        evidence=evidence,
        crumbs=frozenset(crumbs),
        crumb_evidence=crumb_evidence,
    )


def canonical_urls(urls: Sequence[str], parameters: AliasParameters) -> list[str]:
    """The URLs normalised, alias parameters and path crumbs dropped, ``http`` read as ``https``.

    The plain and the secure URL of one host and path are one page here (as crawlers' SURT
    keys have it), though :func:`normalize_url` keeps them apart.

    Parameters
    ----------
    urls
        The URLs.
    parameters
        The alias parameters (:func:`learn_alias_parameters`, or built by hand).

    Returns
    -------
    list of str
        One canonical URL per input URL.
    """
    names = parameters.names
    urls = [_secure(normalize_url(url, drop_params=names)) for url in urls]
    if not parameters.crumbs:
        return urls
    crumbs: dict[str, set[tuple[int, str]]] = {}
    for crumb in parameters.crumbs:
        crumbs.setdefault(crumb.host, set()).add((crumb.position, crumb.shape))
    return [_without_crumbs(url, crumbs) for url in urls]


def _without_crumbs(url: str, crumbs: Mapping[str, set[tuple[int, str]]]) -> str:
    """``url`` with the segments that are crumbs of its host dropped."""
    origin, path, query = url_parts(url)
    of_host = crumbs.get(origin.partition("://")[2])
    if not of_host:
        return url
    segments = path.split("/")[1:]
    kept = [s for i, s in enumerate(segments) if (i, segment_shape(s)) not in of_host]
    if len(kept) == len(segments):
        return url
    return origin + "/" + "/".join(kept) + (f"?{query}" if query else "")


def _drop(page: tuple[str, list[tuple[str, str]]], names: frozenset[str]) -> str:
    """A page split by :func:`_split`, whole again without the parameters ``names`` match."""
    prefixes = tuple(name[:-1] for name in names if name.endswith("*"))
    base, params = page
    kept = [piece for name, piece in params if not _known(name, names, prefixes)]
    return base + ("?" + "&".join(kept) if kept else "")


def _crumb_evidence(urls: Sequence[str], content: I64Array) -> dict[PathCrumb, tuple[int, int]]:
    """``(same, changed)`` group counts per host, segment position and shape."""
    groups: dict[tuple[PathCrumb, str], dict[str, set[int]]] = {}
    for page, url in enumerate(urls):
        origin, path, query = url_parts(url)
        host = origin.partition("://")[2]
        segments = path.split("/")[1:]
        shapes = [segment_shape(segment) for segment in segments]
        for position, (segment, shape) in enumerate(zip(segments, shapes, strict=True)):
            if shape == segment:
                continue
            rest = "/".join([*segments[:position], shape, *segments[position + 1 :]])
            key = (PathCrumb(host, position, shape), f"{origin}/{rest}?{query}")
            groups.setdefault(key, {}).setdefault(segment, set()).add(int(content[page]))
    evidence: dict[PathCrumb, tuple[int, int]] = {}
    for (crumb, _), values in groups.items():
        if len(values) < 2:
            continue
        same, changed = evidence.get(crumb, (0, 0))
        if len(set().union(*values.values())) == 1:
            same += 1
        else:
            changed += 1
        evidence[crumb] = (same, changed)
    return evidence


def _secure(url: str) -> str:
    return "https://" + url[7:] if url.startswith("http://") else url


def _split(url: str) -> tuple[str, list[tuple[str, str]]]:
    """A normalised URL as its part before ``?`` and its query as ``(name, piece)`` pairs."""
    base, _, query = url.partition("?")
    pieces = query.split("&") if query else []
    return base, [(unquote(piece.split("=", 1)[0]).lower(), piece) for piece in pieces]


def _known(name: str, known: frozenset[str], prefixes: tuple[str, ...]) -> bool:
    """Whether a name is among the known names (exactly or by prefix)."""
    return name in known or (bool(prefixes) and name.startswith(prefixes))


def _evidence(
    parsed: Sequence[tuple[str, list[tuple[str, str]]]],
    content: I64Array,
    dropped: Collection[str],
    prefixes: tuple[str, ...],
) -> dict[str, tuple[int, int]]:
    """``(same, changed)`` group counts per parameter name, with ``dropped`` names removed."""
    drop = frozenset(dropped)

    def kept(name: str) -> bool:
        return name not in drop and not (prefixes and name.startswith(prefixes))

    pages = [(base, [(n, piece) for n, piece in params if kept(n)]) for base, params in parsed]
    names_of_base: dict[str, set[str]] = {}
    for base, params in pages:
        names_of_base.setdefault(base, set()).update(name for name, _ in params)

    keys: dict[tuple[str, str, str], int] = {}
    values: dict[str, int] = {}
    names: dict[str, int] = {}
    rows_key: list[int] = []
    rows_value: list[int] = []
    rows_page: list[int] = []
    key_names: list[int] = []
    for page, (base, params) in enumerate(pages):
        for name in names_of_base[base]:
            rest = "&".join(piece for n, piece in params if n != name)
            taken = "&".join(piece for n, piece in params if n == name) or _ABSENT
            key_id = keys.setdefault((name, base, rest), len(keys))
            if key_id == len(key_names):  # a new group
                key_names.append(names.setdefault(name, len(names)))
            rows_key.append(key_id)
            rows_value.append(values.setdefault(taken, len(values)))
            rows_page.append(page)
    if not rows_key:
        return {}
    key = np.array(rows_key, dtype=np.int64)
    fingerprint = content[np.array(rows_page, dtype=np.int64)]
    num_keys = len(keys)
    distinct_values = _distinct_per_key(key, np.array(rows_value, dtype=np.int64), num_keys)
    distinct_content = _distinct_per_key(key, fingerprint, num_keys)
    key_name = np.array(key_names, dtype=np.int64)
    varying = distinct_values >= 2
    same = np.bincount(key_name[varying & (distinct_content == 1)], minlength=len(names))
    changed = np.bincount(key_name[varying & (distinct_content > 1)], minlength=len(names))
    return {
        name: (int(same[index]), int(changed[index]))
        for name, index in names.items()
        if same[index] or changed[index]
    }


def _distinct_per_key(key: I64Array, item: I64Array, num_keys: int) -> I64Array:
    """How many distinct ``item`` values each key has."""
    pairs = np.unique(np.stack([key, item], axis=1), axis=0)
    return np.bincount(pairs[:, 0], minlength=num_keys).astype(np.int64)
