"""URL aliases: session and tracking parameters learned from a crawl (seed 003, cookie crumbs)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from neardup.errors import ParameterError
from neardup.web.aliases import (
    TRACKING_PARAMETERS,
    AliasParameters,
    PathCrumb,
    canonical_urls,
    learn_alias_parameters,
)


def _fingerprints(contents: list[str]) -> np.ndarray:
    return np.array(
        [
            int.from_bytes(hashlib.blake2b(c.encode(), digest_size=8).digest(), "little")
            for c in contents
        ],
        dtype=np.uint64,
    )


def _crawl() -> tuple[list[str], list[str]]:
    """A shop whose URLs carry a cookie crumb ``visit`` that varies on identical pages.

    ``page`` (the listing's page number) and ``item`` change the content; ``visit`` does not;
    ``Sort`` appears once (too little evidence either way).
    """
    urls, contents = [], []
    for visit in ["a1F", "b2G", "c3H", "d4J"]:
        for page in [1, 2, 3]:
            urls.append(f"http://shop.example/list?page={page}&visit={visit}")
            contents.append(f"listing page {page}")
        for item in [10, 11]:
            urls.append(f"http://Shop.example:80/item?VISIT={visit}&item={item}")
            contents.append(f"item {item}")
    urls.append("http://shop.example/list?page=1")
    contents.append("listing page 1")
    urls.append("http://shop.example/about?Sort=asc")
    contents.append("about us")
    return urls, contents


def test_a_session_parameter_is_learned_and_a_page_number_is_not() -> None:
    urls, contents = _crawl()
    learned = learn_alias_parameters(urls, _fingerprints(contents), known=())
    assert learned.names == {"visit"}
    # visit: groups /list?page=1..3 and /item?item=10..11, each with the same content
    assert learned.evidence["visit"] == (5, 0)
    # page and item change the content; counted in the last round, visit already dropped:
    # /list?page=1..3 is one group, /item?item=10..11 another
    assert learned.evidence["page"] == (0, 1)
    assert learned.evidence["item"] == (0, 1)
    assert "sort" not in learned.evidence

    canonical = canonical_urls(urls, learned)
    by_url: dict[str, set[str]] = {}
    for url, content in zip(canonical, contents, strict=True):
        by_url.setdefault(url, set()).add(content)
    # one canonical URL per page, and each holds one content
    assert all(len(c) == 1 for c in by_url.values())
    assert len(by_url) == len(set(contents))
    assert "https://shop.example/list?page=2" in by_url  # http read as https
    assert "https://shop.example/item?item=11" in by_url


def test_min_support_and_min_share() -> None:
    urls, contents = _crawl()
    fingerprints = _fingerprints(contents)
    assert learn_alias_parameters(urls, fingerprints, known=(), min_support=6).names == set()
    # one visit page whose content changed: 5 same of 6 groups, a share of 0.83
    contents[0] = "listing page 1, changed"
    fingerprints = _fingerprints(contents)
    learned = learn_alias_parameters(urls, fingerprints, known=())
    assert learned.evidence["visit"] == (4, 1)
    assert learned.names == set()
    assert learn_alias_parameters(urls, fingerprints, known=(), min_share=0.8).names == {"visit"}


def test_two_crumbs_that_vary_together_are_found_in_a_second_round() -> None:
    """``uid`` is known; ``visit`` only forms groups once ``uid`` is dropped."""
    urls, contents = [], []
    for uid, visit in [("u1", "v1"), ("u2", "v2"), ("u3", "v3")]:
        for path in ["/a", "/b"]:
            urls.append(f"http://site.example{path}?uid={uid}&visit={visit}")
            contents.append(path)
    first_round_only = learn_alias_parameters(urls, _fingerprints(contents), known=())
    assert first_round_only.names == set()
    learned = learn_alias_parameters(urls, _fingerprints(contents), known={"UID"})
    assert learned.names == {"uid", "visit"}
    assert learned.evidence["visit"] == (2, 0)
    assert len(set(canonical_urls(urls, learned))) == 2


def test_known_parameters_are_kept_unless_the_crawl_refutes_them() -> None:
    # sid is a "story id" on this site: it changes the page
    urls = [f"http://news.example/story?sid={i}&utm_source={src}" for i in range(3) for src in "xy"]
    contents = [f"story {i}" for i in range(3) for _ in "xy"]
    learned = learn_alias_parameters(urls, _fingerprints(contents))
    assert "sid" not in learned.names
    assert learned.evidence["sid"] == (0, 2)
    assert learned.evidence["utm_source"] == (3, 0)
    # never-seen known names stay (prefix patterns included)
    assert {"utm_*", "fbclid", "jsessionid"} <= learned.names
    canonical = canonical_urls(urls, learned)
    assert canonical[0] == canonical[1] == "https://news.example/story?sid=0"
    assert len(set(canonical)) == 3


def test_a_refuted_name_under_a_known_prefix_keeps_the_rest_of_the_prefix() -> None:
    urls = [f"http://x.example/p?utm_content={c}&utm_source={s}" for c in "abc" for s in "st"]
    contents = [f"content {c}" for c in "abc" for _ in "st"]
    learned = learn_alias_parameters(urls, _fingerprints(contents))
    assert "utm_*" not in learned.names
    assert "utm_content" not in learned.names
    assert "utm_source" in learned.names
    assert len(set(canonical_urls(urls, learned))) == 3


def test_tracking_parameters_and_hand_made_parameters() -> None:
    assert {"utm_*", "fbclid", "gclid", "jsessionid", "phpsessid", "sid"} <= TRACKING_PARAMETERS
    params = AliasParameters(names=frozenset({"SID", "utm_*"}))
    assert params.names == {"sid", "utm_*"}
    assert (
        canonical_urls(
            ["HTTP://a.example/x/index.html?utm_medium=m&sid=1&q=2#f", "http://a.example/x?q=2"],
            params,
        )
        == ["https://a.example/x?q=2"] * 2
    )
    with pytest.raises(TypeError):
        params.evidence["x"] = (1, 1)  # type: ignore[index]


def test_learning_leaves_a_crawl_without_parameters_alone() -> None:
    urls = ["http://a.example/", "https://a.example/", "http://a.example/b"]
    learned = learn_alias_parameters(urls, np.array([1, 1, 2], dtype=np.uint64), known=())
    assert learned.names == set()
    assert dict(learned.evidence) == {}


def test_bad_arguments() -> None:
    with pytest.raises(ParameterError, match="one per URL"):
        learn_alias_parameters(["http://a/"], np.zeros(2, dtype=np.uint64))
    with pytest.raises(ParameterError, match="min_support"):
        learn_alias_parameters([], np.zeros(0, dtype=np.uint64), min_support=0)
    with pytest.raises(ParameterError, match="min_share"):
        learn_alias_parameters([], np.zeros(0, dtype=np.uint64), min_share=0.0)


def test_seed_003s_cookie_crumbs_in_the_path_are_learned_and_dropped() -> None:
    # Seed 003, "Cookie crumbs": "Some sites create some session and/or user id that becomes
    # part of the URL", "Crawler comes many times to the same page with a different cookie
    # crumb", with the example http://www.crutchfield.com/S-fXyiE5bZS43/ and
    # http://www.crutchfield.com/S-LcNLKgc7bMg/.
    crumbs = ["S-fXyiE5bZS43", "S-LcNLKgc7bMg", "S-q7RvT2mWx9A"]
    pages = {"": "home", "speakers": "speakers", "cables/hdmi": "hdmi cables"}
    urls, contents = [], []
    for crumb in crumbs:
        for path, content in pages.items():
            urls.append(f"http://www.crutchfield.com/{crumb}/{path}")
            contents.append(content)
    # Beside it, ids in the path that name different pages (commits) are not crumbs.
    for sha, content in [("3f9a1c2e7b", "fix"), ("a81b6d04c3", "feature"), ("77c0de5f1a", "docs")]:
        urls.append(f"https://git.example/commit/{sha}")
        contents.append(content)
    aliases = learn_alias_parameters(urls, _fingerprints(contents))
    crumb = PathCrumb("www.crutchfield.com", 0, "S-*")
    assert aliases.crumbs == {crumb}
    assert aliases.crumb_evidence[crumb] == (3, 0)  # one group per page, each the same page
    assert aliases.crumb_evidence[PathCrumb("git.example", 1, "*")] == (0, 1)
    canonical = canonical_urls(urls, aliases)
    assert canonical[:3] == [
        "https://www.crutchfield.com/",
        "https://www.crutchfield.com/speakers",
        "https://www.crutchfield.com/cables/hdmi",
    ]
    assert canonical[:9] == canonical[:3] * 3
    assert canonical[9:] == [
        f"https://git.example/commit/{sha}" for sha in ("3f9a1c2e7b", "a81b6d04c3", "77c0de5f1a")
    ]
    assert str(crumb) == "www.crutchfield.com/S-*/ (segment 1)"


def test_a_path_crumb_is_learned_beside_a_session_parameter_and_needs_support() -> None:
    urls = [
        f"http://shop.example/s/{s}/item?sid={s}&id={i}"
        for s in ("ab12cd34ef", "zz98yy76xx")
        for i in (1, 2)
    ]
    contents = ["item 1", "item 2"] * 2
    aliases = learn_alias_parameters(urls, _fingerprints(contents))
    assert "sid" in aliases.names
    assert aliases.crumbs == {PathCrumb("shop.example", 1, "*")}
    assert set(canonical_urls(urls, aliases)) == {
        "https://shop.example/s/item?id=1",
        "https://shop.example/s/item?id=2",
    }
    one_group = learn_alias_parameters(urls[:2], _fingerprints(contents[:2]))
    assert one_group.crumbs == frozenset()  # no two values of the segment: no evidence
