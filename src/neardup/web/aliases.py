"""URL aliases: the query parameters that do not change the page, learned from the crawl.

Seed 003's "cookie crumbs": a site puts a session or user id into its URLs, and a crawler
fetches the same page again and again under new URLs. Tracking parameters (``utm_source``,
``fbclid``) do the same. A parameter is an *alias parameter* when pages whose URLs differ only
in its value have the same content; :func:`learn_alias_parameters` finds them from the URLs and
the content fingerprints of a crawl, and :func:`canonical_urls` drops them, so pages under
aliased URLs share one canonical URL.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from urllib.parse import unquote

import numpy as np

from neardup._types import I64Array, U64Array
from neardup.errors import ParameterError
from neardup.text.urls import normalize_url

__all__ = [
    "TRACKING_PARAMETERS",
    "AliasParameters",
    "canonical_urls",
    "learn_alias_parameters",
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
    """

    names: frozenset[str]
    evidence: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", frozenset(name.lower() for name in self.names))
        object.__setattr__(self, "evidence", MappingProxyType(dict(self.evidence)))


def learn_alias_parameters(
    urls: Sequence[str],
    fingerprints: U64Array,
    *,
    min_support: int = 2,
    min_share: float = 0.9,
    known: Collection[str] = TRACKING_PARAMETERS,
) -> AliasParameters:
    """Find the query parameters whose value varies while the page does not.

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
    return AliasParameters(names=frozenset(names), evidence=evidence)


def canonical_urls(urls: Sequence[str], parameters: AliasParameters) -> list[str]:
    """The URLs normalised with the alias parameters dropped, ``http`` read as ``https``.

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
    return [_secure(normalize_url(url, drop_params=names)) for url in urls]


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
