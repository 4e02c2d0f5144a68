"""Planted "document inside a longer document" pairs built from real texts.

Each planted pair is a real text (the *inner* document, unchanged) and a *host*: the same text
with a few words replaced, set among words taken from other real texts before and after it, the
host ``ratio`` times as long (drawn between ``min_ratio`` and ``max_ratio``). That is a licence
inside a README, an article inside a page with other surroundings, an answer copied into a
longer essay. The corpus holds every inner text and every host, plus ``num_others`` texts
left alone, shuffled. The truth is each planted pair's exact containment of the inner's word
5-shingle set in the host's (:func:`tests.reference.shingles`), as planted: edits may take a
pair below a threshold, and a test or benchmark counts recall among the pairs at or above it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tests import reference
from tests.reference import DEFAULT_NORMALIZE


@dataclass(frozen=True)
class Planted:
    """The corpus, and for each planted pair ``(inner, host)`` (positions) its containment."""

    texts: list[str]
    containment: dict[tuple[int, int], float]

    def pairs_at(self, threshold: float) -> set[tuple[int, int]]:
        """The planted pairs whose containment reaches ``threshold``."""
        return {pair for pair, value in self.containment.items() if value >= threshold}


@dataclass(frozen=True)
class _Words:
    unit: str = "word"
    k: int = 5


def shingle_set(text: str) -> set[str]:
    """The word 5-shingle set neardup compares by default (lower-cased, NFKC)."""
    return set(reference.shingles(text, _Words(), DEFAULT_NORMALIZE))


def plant_containment(
    texts: list[str],
    num_pairs: int,
    *,
    num_others: int = 0,
    min_ratio: float = 1.5,
    max_ratio: float = 8.0,
    edit_rate: float = 0.01,
    min_words: int = 40,
    seed: int = 0,
) -> Planted:
    """``num_pairs`` planted pairs and ``num_others`` bystanders from the distinct ``texts``."""
    rng = random.Random(seed)
    by_words = {" ".join(t.lower().split()): t for t in texts if len(t.split()) >= min_words}
    distinct = list(by_words.values())  # no two equal once normalised: no exact duplicates
    rng.shuffle(distinct)
    if len(distinct) < 2 * num_pairs + num_others:
        raise ValueError(f"{len(distinct)} distinct texts of {min_words}+ words: too few")
    inners = distinct[:num_pairs]
    filler = " ".join(distinct[num_pairs : 2 * num_pairs]).split()
    others = distinct[2 * num_pairs : 2 * num_pairs + num_others]
    docs: list[tuple[str, int, str]] = []  # (text, pair number or -1, "inner" / "host")
    for number, inner in enumerate(inners):
        words = inner.split()
        edited = [
            f"x{rng.randrange(10**6)}" if rng.random() < edit_rate else word for word in words
        ]
        surround = int(len(words) * (rng.uniform(min_ratio, max_ratio) - 1))
        start = rng.randrange(max(1, len(filler) - surround))
        around = filler[start : start + surround]
        cut = rng.randrange(len(around) + 1)
        host = " ".join(around[:cut] + edited + around[cut:])
        docs += [(inner, number, "inner"), (host, number, "host")]
    docs += [(other, -1, "other") for other in others]
    rng.shuffle(docs)
    where = {(number, role): at for at, (_, number, role) in enumerate(docs) if number >= 0}
    containment = {}
    for number in range(num_pairs):
        inner, host = where[number, "inner"], where[number, "host"]
        a, b = shingle_set(docs[inner][0]), shingle_set(docs[host][0])
        containment[inner, host] = len(a & b) / len(a)
    return Planted([text for text, _, _ in docs], containment)
