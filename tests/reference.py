"""Slow, obvious implementations that every fast path must equal."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence

import numpy as np

from neardup.params import NormalizeSpec, ShingleSpec
from neardup.text.normalize import codepoint_classes, normalize

MASK = (1 << 64) - 1
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
POLY_BASE = 0x9E3779B97F4A7C15
CHAR_SALT = 0x51ED270B27A3D5B1


def fmix64(x: int) -> int:
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & MASK
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & MASK
    x ^= x >> 33
    return x


def fnv1a(data: bytes) -> int:
    h = FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & MASK
    return h


def tokens(text: str, shingle: ShingleSpec, norm: NormalizeSpec) -> list[str]:
    """Words (or characters) of the normalised text, as the documented rules define them."""
    classes = codepoint_classes()
    text = normalize(text, norm)
    words: list[str] = []
    current: list[str] = []
    chars: list[str] = []
    for ch in text:
        cls = int(classes[ord(ch)])
        if cls == 2:
            cls = 1 if norm.strip_punctuation else 0
        if cls == 1:
            if current:
                words.append("".join(current))
                current = []
            if chars and chars[-1] != " ":
                chars.append(" ")
        else:
            chars.append(ch)
            if cls == 3:
                if current:
                    words.append("".join(current))
                    current = []
                words.append(ch)
            else:
                current.append(ch)
    if current:
        words.append("".join(current))
    if chars and chars[-1] == " ":
        chars.pop()
    return chars if shingle.unit == "char" else words


def token_hash(token: str, unit: str) -> int:
    if unit == "char":
        return fmix64((ord(token) + CHAR_SALT) & MASK)
    return fmix64(fnv1a(token.encode("utf-8", "surrogatepass")))


def shingles(text: str, shingle: ShingleSpec, norm: NormalizeSpec | None = None) -> list[str]:
    """The k-shingles as strings (tokens joined by a unit separator), in order."""
    toks = tokens(text, shingle, norm or NormalizeSpec())
    return ["\x1f".join(toks[i : i + shingle.k]) for i in range(len(toks) - shingle.k + 1)]


def shingle_fingerprints(
    text: str, shingle: ShingleSpec, norm: NormalizeSpec | None = None
) -> list[int]:
    """The 64-bit fingerprint of every shingle, straight from the documented formula."""
    toks = [token_hash(t, shingle.unit) for t in tokens(text, shingle, norm or NormalizeSpec())]
    out = []
    for i in range(len(toks) - shingle.k + 1):
        acc = 0
        for t in toks[i : i + shingle.k]:
            acc = (acc * POLY_BASE + t) & MASK
        out.append(fmix64(acc))
    return out


def jaccard(a: set[object], b: set[object]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def minhash_signature(
    hashes: Sequence[int], perm_a: Sequence[int], perm_b: Sequence[int]
) -> list[int]:
    return [
        min(((a * x + b) & MASK) for x in hashes) if hashes else MASK
        for a, b in zip(perm_a, perm_b, strict=True)
    ]


def candidate_pairs(
    band_rows: np.ndarray, active: Sequence[bool] | None = None
) -> set[tuple[int, int]]:
    """Pairs sharing a band value, from a dict of Python tuples (no bucket cap)."""
    pairs: set[tuple[int, int]] = set()
    for band in range(band_rows.shape[1]):
        buckets: dict[int, list[int]] = defaultdict(list)
        for doc in range(band_rows.shape[0]):
            if active is None or active[doc]:
                buckets[int(band_rows[doc, band])].append(doc)
        for members in buckets.values():
            for i, a in enumerate(members):
                for b in members[i + 1 :]:
                    pairs.add((a, b))
    return pairs


def components(num_items: int, edges: Sequence[tuple[int, int]]) -> list[int]:
    """Label of each item = smallest item of its connected component, by breadth-first search."""
    adjacent: dict[int, list[int]] = defaultdict(list)
    for a, b in edges:
        adjacent[a].append(b)
        adjacent[b].append(a)
    labels = [-1] * num_items
    for start in range(num_items):
        if labels[start] != -1:
            continue
        labels[start] = start
        queue = deque([start])
        while queue:
            node = queue.popleft()
            for other in adjacent[node]:
                if labels[other] == -1:
                    labels[other] = start
                    queue.append(other)
    return labels


def oph_signature(
    hashes: Sequence[int], key: Sequence[int], densify_key: int, num_bins: int
) -> list[int]:
    """One-permutation hashing with optimal densification, element by element."""

    def bin_of(h: int) -> int:
        return ((h >> 32) * num_bins) >> 32

    bins: list[int | None] = [None] * num_bins
    for x in hashes:
        h = fmix64(((x ^ key[0]) * key[1]) & MASK)
        b = bin_of(h)
        current = bins[b]
        if current is None or h < current:
            bins[b] = h
    if not hashes:
        return [MASK] * num_bins
    out = []
    for i, own in enumerate(bins):
        value, attempt = own, 0
        while value is None:
            value = bins[bin_of(fmix64((densify_key + (i << 32) + attempt) & MASK))]
            attempt += 1
        out.append(value)
    return out
