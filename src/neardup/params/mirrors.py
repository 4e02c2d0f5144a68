"""How mirrored web hosts are found (``neardup mirrors``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from neardup.params.rules import (
    MAX_SEED,
    Rule,
    Spec,
    integer,
    real,
)
from neardup.params.text import ShingleSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class MirrorSpec(Spec):
    """How mirrors are told from hosts that merely look alike.

    Parameters
    ----------
    copy_threshold
        Word-shingle Jaccard at which a page on one host is a copy of a page on another.
    unchanged
        Jaccard (templates left out) at which a copy is unchanged; below it, edited.
    min_coverage
        Share of a host's pages with a copy on the other host that makes it a mirror of it.
    min_pages
        Fewest shared pages for a mirror (fewer is "a few copied pages").
    stale_share
        Share of edited copies from which a mirror is stale.
    url_threshold
        URL-shingle Jaccard of two hosts from which they are a candidate pair.
    shingle
        The content shingles.
    seed
        Seed of the MinHash permutations.
    """

    copy_threshold: float = 0.5
    unchanged: float = 0.95
    min_coverage: float = 0.8
    min_pages: int = 3
    stale_share: float = 0.1
    url_threshold: float = 0.3
    shingle: ShingleSpec = field(default_factory=ShingleSpec)
    seed: int = 42

    _NESTED: ClassVar[Mapping[str, type[Spec]]] = {"shingle": ShingleSpec}
    _RULES: ClassVar[Mapping[str, Rule]] = {
        "copy_threshold": real(0.0, 1.0, low_open=True),
        "unchanged": real(0.0, 1.0, low_open=True),
        "min_coverage": real(0.0, 1.0, low_open=True),
        "min_pages": integer(1, 2**31),
        "stale_share": real(0.0, 1.0, low_open=True),
        "url_threshold": real(0.0, 1.0, low_open=True),
        "shingle": Rule("a ShingleSpec", lambda v: isinstance(v, ShingleSpec)),
        "seed": integer(0, MAX_SEED),
    }

    def __post_init__(self) -> None:
        self._validate()
