"""Slow, obvious implementations that every fast path must equal.

Each function restates a definition from the documentation (``docs/dedup.md``, "Normalisation
and shingling"; ``docs/sketches.md``) or from the docstring of the kernel it checks, with the
standard library (``unicodedata``, ``str`` methods, Python integers and floats) and, for
whole-matrix helpers, NumPy. Nothing here imports or calls neardup code: a test comparing
neardup with these functions compares it with an independent statement of what it must
compute. Specs (``NormalizeSpec``, ``ShingleSpec``) are passed in only as the options they name,
read by attribute. Random parameters of a sketcher (permutations, keys, tables) are taken as
arguments: they are draws, not behaviour.
"""

from __future__ import annotations

import math
import re
import statistics
import unicodedata
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike

MASK = (1 << 64) - 1
FNV_OFFSET = 0xCBF29CE484222325  # FNV-1a 64-bit offset basis
FNV_PRIME = 0x100000001B3  # FNV-1a 64-bit prime
POLY_BASE = 0x9E3779B97F4A7C15  # the rolling polynomial's base P (nd64-v1)
CHAR_SALT = 0x51ED270B27A3D5B1  # added to a code point before fmix64 (nd64-v1)
FOLD_A = 0xFF51AFD7ED558CCD  # the multipliers of the 128-bit document fingerprint's two halves
FOLD_B = 0xC4CEB9FE1A85EC53
BAND_SALT = 0x2545F4914F6CDD1D  # band keys: band j starts from fmix64(j + BAND_SALT)
ICWS_STEP = 0x9E3779B97F4A7C15  # ICWS: stream s of sample i hashes key + (8 i + s) * ICWS_STEP
ICWS_T_MIX = 0x632BE59BD9B4E019  # ICWS: a sample (k, t) is fmix64(k ^ t * ICWS_T_MIX)
SIMHASH_DRAW = 0x9E3779B97F4A7C15  # Gaussian SimHash: draw q of a word hashes phi ^ (q + 1) * it


class NormalizeOptions(Protocol):
    """What :func:`normalize` and :func:`tokens` read of a ``NormalizeSpec``."""

    @property
    def nfkc(self) -> bool: ...
    @property
    def casefold(self) -> bool: ...
    @property
    def strip_punctuation(self) -> bool: ...


class ShingleOptions(Protocol):
    """What the shingle references read of a ``ShingleSpec``."""

    @property
    def unit(self) -> str: ...
    @property
    def k(self) -> int: ...


class _Defaults:
    """NFKC and case folding on, punctuation kept: ``NormalizeSpec()``'s documented defaults."""

    nfkc = True
    casefold = True
    strip_punctuation = False


DEFAULT_NORMALIZE: NormalizeOptions = _Defaults()


# --- 64-bit arithmetic -------------------------------------------------------------------------


def fmix64(x: int) -> int:
    """MurmurHash3's 64-bit finaliser (Appleby), on Python integers."""
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & MASK
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & MASK
    x ^= x >> 33
    return x


def fnv1a(data: bytes) -> int:
    """64-bit FNV-1a (Fowler, Noll, Vo): xor in each byte, then multiply by the prime."""
    h = FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & MASK
    return h


def rotl64(x: int, bits: int) -> int:
    """``x`` rotated left by ``bits`` within 64 bits."""
    return ((x << bits) | (x >> (64 - bits))) & MASK


# --- Normalisation and code-point classes (docs/dedup.md) --------------------------------------


def normalize(text: str, norm: NormalizeOptions = DEFAULT_NORMALIZE) -> str:
    """Unicode NFKC, then case folding, each when ``norm`` asks for it (docs/dedup.md).

    Whitespace and punctuation are not touched here: they are token separators (:func:`tokens`).
    """
    if norm.nfkc:
        text = unicodedata.normalize("NFKC", text)
    if norm.casefold:
        text = text.casefold()
    return text


# The classes, numbered as ``neardup.text.normalize.codepoint_classes`` documents them.
WORD, SPACE, PUNCT, ALONE = 0, 1, 2, 3

ASCII_SYMBOLS = "$+<=>^`|~"
"""ASCII characters of category S* that count as punctuation ("plus ASCII symbols")."""

UNSPACED_BLOCKS = (
    (0x0E00, 0x0E7F, "Thai"),
    (0x0E80, 0x0EFF, "Lao"),
    (0x0F00, 0x0FFF, "Tibetan"),
    (0x1000, 0x109F, "Myanmar"),
    (0x1780, 0x17FF, "Khmer"),
    (0x19E0, 0x19FF, "Khmer Symbols"),
    (0x2E80, 0x2EFF, "CJK Radicals Supplement"),
    (0x2F00, 0x2FDF, "Kangxi Radicals"),
    (0x3005, 0x3007, "CJK Symbols and Punctuation: ideographic iteration, closing, zero marks"),
    (0x3021, 0x3029, "CJK Symbols and Punctuation: Hangzhou numerals one to nine"),
    (0x3040, 0x309F, "Hiragana"),
    (0x30A0, 0x30FF, "Katakana"),
    (0x3100, 0x312F, "Bopomofo"),
    (0x31A0, 0x31BF, "Bopomofo Extended"),
    (0x31C0, 0x31EF, "CJK Strokes"),
    (0x31F0, 0x31FF, "Katakana Phonetic Extensions"),
    (0x3400, 0x4DBF, "CJK Unified Ideographs Extension A"),
    (0x4E00, 0x9FFF, "CJK Unified Ideographs"),
    (0xF900, 0xFAFF, "CJK Compatibility Ideographs"),
    (0xFF66, 0xFF9F, "Halfwidth and Fullwidth Forms: half-width Katakana"),
    (0x20000, 0x2FFFF, "Supplementary Ideographic Plane"),
    (0x30000, 0x3FFFF, "Tertiary Ideographic Plane"),
)
"""Unicode blocks of the scripts written without spaces that docs/dedup.md names (Han,
Hiragana, Katakana, Bopomofo, Thai, Lao, Khmer, Myanmar, Tibetan): each of their characters
that is neither whitespace nor punctuation is a word of its own. The docs do not say which
characters of the shared "CJK Symbols and Punctuation" block count as Han; the two ranges
taken from it are the ideographic marks and numerals the library treats so (the rest of that
block is punctuation, symbols or whitespace, or rare: the vertical kana repeat marks and the
Hangzhou numerals ten to thirty are words)."""


def char_class(ch: str) -> int:
    """WORD, SPACE, PUNCT or ALONE: whitespace is ``str.isspace``; punctuation is Unicode
    category P* or an ASCII symbol; ALONE is a character of :data:`UNSPACED_BLOCKS`."""
    if ch.isspace():
        return SPACE
    if unicodedata.category(ch).startswith("P") or ch in ASCII_SYMBOLS:
        return PUNCT
    cp = ord(ch)
    if any(low <= cp <= high for low, high, _ in UNSPACED_BLOCKS):
        return ALONE
    return WORD


_class_of = cache(char_class)  # per distinct character of the texts tokenised


def tokens(
    text: str, shingle: ShingleOptions, norm: NormalizeOptions = DEFAULT_NORMALIZE
) -> list[str]:
    """Words (or characters) of the normalised text, as docs/dedup.md defines them.

    Words: maximal runs of word characters (punctuation included unless stripped), each
    unspaced-script character a word by itself. Characters: every code point but whitespace
    (and stripped punctuation), each run of those separators one space, none at either end.
    """
    words: list[str] = []
    current: list[str] = []
    chars: list[str] = []
    for ch in normalize(text, norm):
        cls = _class_of(ch)
        if cls == PUNCT:
            cls = SPACE if norm.strip_punctuation else WORD
        if cls == SPACE:
            if current:
                words.append("".join(current))
                current = []
            if chars and chars[-1] != " ":
                chars.append(" ")
            continue
        chars.append(ch)
        if cls == ALONE:
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
    """nd64-v1: a word is FNV-1a of its UTF-8 bytes, finalised by fmix64; a character (code
    point) ``c`` is ``fmix64(c + CHAR_SALT)``."""
    if unit == "char":
        return fmix64((ord(token) + CHAR_SALT) & MASK)
    return fmix64(fnv1a(token.encode("utf-8", "surrogatepass")))


def shingles(
    text: str, shingle: ShingleOptions, norm: NormalizeOptions = DEFAULT_NORMALIZE
) -> list[str]:
    """The k-shingles as strings (tokens joined by a unit separator), in order."""
    toks = tokens(text, shingle, norm)
    return ["\x1f".join(toks[i : i + shingle.k]) for i in range(len(toks) - shingle.k + 1)]


def shingle_fingerprints(
    text: str, shingle: ShingleOptions, norm: NormalizeOptions = DEFAULT_NORMALIZE
) -> list[int]:
    """nd64-v1: the shingle ``t_0 .. t_{k-1}`` is ``fmix64(sum_j t_j * P^(k-1-j) mod 2^64)``."""
    toks = [token_hash(t, shingle.unit) for t in tokens(text, shingle, norm)]
    out = []
    for i in range(len(toks) - shingle.k + 1):
        acc = 0
        for t in toks[i : i + shingle.k]:
            acc = (acc * POLY_BASE + t) & MASK
        out.append(fmix64(acc))
    return out


def document_fingerprint(
    text: str, shingle: ShingleOptions, norm: NormalizeOptions = DEFAULT_NORMALIZE
) -> tuple[int, int]:
    """The 128-bit exact fingerprint ``(high, low)``: a fold of the ``n`` token hashes ``t``.

    ``a = FNV_OFFSET``, ``b = CHAR_SALT``; per token ``a = (a ^ t) * FOLD_A`` and
    ``b = (b ^ rotl(t, 31)) * FOLD_B`` (mod 2^64); then ``high = fmix64(a ^ n)`` and
    ``low = fmix64(b + n * POLY_BASE)``. Equal token sequences (the normalised text up to
    whitespace) give equal fingerprints; the count ``n`` ends the fold, so a text is never its
    own prefix's fingerprint.
    """
    a, b = FNV_OFFSET, CHAR_SALT
    toks = [token_hash(t, shingle.unit) for t in tokens(text, shingle, norm)]
    for t in toks:
        a = ((a ^ t) * FOLD_A) & MASK
        b = ((b ^ rotl64(t, 31)) * FOLD_B) & MASK
    n = len(toks)
    return fmix64(a ^ n), fmix64((b + n * POLY_BASE) & MASK)


# --- Similarities and sketches -----------------------------------------------------------------


def jaccard(a: set[Any], b: set[Any]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def minhash_signature(
    hashes: Sequence[int], perm_a: Sequence[int], perm_b: Sequence[int]
) -> list[int]:
    """Classic MinHash: slot ``i`` is ``min over x of (a_i x + b_i) mod 2^64`` (empty: MASK)."""
    return [
        min(((a * x + b) & MASK) for x in hashes) if hashes else MASK
        for a, b in zip(perm_a, perm_b, strict=True)
    ]


def lead_byte(x: int, columns: Sequence[int], slot: int) -> int:
    """Slot ``slot``'s lead byte of ``x``: byte ``slot % 8`` of the GF(2)-linear map
    ``L(x) = xor of columns[bit] over the set bits of x`` (its group's 64 columns)."""
    image = 0
    for bit in range(64):
        if x >> bit & 1:
            image ^= columns[bit]
    return image >> (8 * (slot % 8)) & 0xFF


def lead_byte_minhash_signature(
    hashes: Sequence[int],
    perm_a: Sequence[int],
    perm_b: Sequence[int],
    columns: Sequence[Sequence[int]],
) -> list[int]:
    """MinHash by left-to-right minima (docs/sketches.md): slot ``i`` ranks the shingles by
    the pair ``(lead_i(x), a_i x + b_i mod 2^64)`` and keeps ``a_i x + b_i`` of the first;
    ``columns[g]`` are the 64 columns of the linear map of slots ``8g .. 8g + 7``."""
    out = []
    for i, (a, b) in enumerate(zip(perm_a, perm_b, strict=True)):
        ranked = [(lead_byte(x, columns[i // 8], i), (a * x + b) & MASK) for x in hashes]
        out.append(min(ranked)[1] if ranked else MASK)
    return out


def _oph_bin_of(h: int, num_bins: int) -> int:
    return ((h >> 32) * num_bins) >> 32


def oph_bins(hashes: Sequence[int], key: Sequence[int], num_bins: int) -> list[int | None]:
    """One-permutation hashing's bins, element by element: each its least hash, or None."""
    bins: list[int | None] = [None] * num_bins
    for x in hashes:
        h = fmix64(((x ^ key[0]) * key[1]) & MASK)
        b = _oph_bin_of(h, num_bins)
        current = bins[b]
        if current is None or h < current:
            bins[b] = h
    return bins


def oph_estimate_without_densification(a: list[int | None], b: list[int | None]) -> float:
    """Seed 000: "empty != non-empty for comparing vectors, but empty vs. empty doesn't count
    at all": the equal bins over the bins not empty in both."""
    counted = [(x, y) for x, y in zip(a, b, strict=True) if x is not None or y is not None]
    return sum(x == y for x, y in counted) / len(counted) if counted else math.nan


def oph_signature(
    hashes: Sequence[int], key: Sequence[int], densify_key: int, num_bins: int
) -> list[int]:
    """One-permutation hashing with optimal densification, element by element."""

    def bin_of(h: int) -> int:
        return _oph_bin_of(h, num_bins)

    bins = oph_bins(hashes, key, num_bins)
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


def _icws_uniform(feature_key: int, sample: int, stream: int) -> float:
    """A uniform in (0, 1) from the top 53 bits of a hash of (feature, sample, stream)."""
    h = fmix64((feature_key + (8 * sample + stream) * ICWS_STEP) & MASK)
    return ((h >> 11) + 0.5) / 2.0**53


def icws_signature(
    features: Sequence[int], weights: Sequence[float], num_samples: int, seed: int
) -> list[int]:
    """Ioffe's improved consistent weighted sampling (ICDM 2010), as written in the paper.

    Per feature ``k`` of weight ``S_k > 0`` and sample ``i``: ``r, c ~ Gamma(2, 1)`` (each minus
    the log of a product of two uniforms), ``beta ~ U(0, 1)``, all drawn from
    ``fmix64(k ^ seed)``; ``t = floor(ln S_k / r + beta)``, ``y = exp(r (t - beta))``,
    ``a = c / (y exp(r))``. The sample is the ``(k, t)`` of least ``a`` (the first feature on a
    tie), reported as ``fmix64(k ^ t * ICWS_T_MIX)``; no positive weight: 0.
    """
    best = [math.inf] * num_samples
    chosen = [0] * num_samples
    for feature, weight in zip(features, weights, strict=True):
        if weight <= 0:
            continue
        key = fmix64(feature ^ seed)
        for i in range(num_samples):
            u = [_icws_uniform(key, i, stream) for stream in range(5)]
            r = -math.log(u[0] * u[1])
            c = -math.log(u[2] * u[3])
            beta = u[4]
            t = math.floor(math.log(weight) / r + beta)
            y = math.exp(r * (t - beta))
            a = c / (y * math.exp(r))
            if a < best[i]:
                best[i] = a
                chosen[i] = fmix64(feature ^ ((t * ICWS_T_MIX) & MASK))
    return chosen


def feature_weights(
    hashes: Iterable[int], idf: Mapping[int, float] | None = None, missing_idf: float = 1.0
) -> dict[int, float]:
    """A document's features ``F(u)`` and weights ``w_i(u)``: each distinct shingle, weighted
    by its count (TF), times its IDF when ``idf`` is given (``missing_idf`` for one it lacks)."""
    counts = Counter(hashes)
    if idf is None:
        return {x: float(n) for x, n in counts.items()}
    return {x: n * idf.get(x, missing_idf) for x, n in counts.items()}


def simhash(
    features: Mapping[int, float], keys: Sequence[int], bits: int, *, gaussian: bool = False
) -> tuple[list[int], list[float]]:
    """Weighted SimHash as seed 004 writes it: Algorithm 1, or equation (4) when ``gaussian``.

    Each feature ``i`` of weight ``w_i`` has a uniformly random hash ``phi_i``, whose 64-bit
    word ``m`` is ``fmix64((i ^ keys[2m]) * keys[2m + 1])``. Algorithm 1: for each bit ``j``,
    ``W_j += w_i`` when bit ``j`` of ``phi_i`` is 1, ``W_j -= w_i`` when it is 0. Equation
    (4): ``W_j = sum_i nu_ij w_i``, with ``nu_ij`` a standard normal permanently associated
    with the feature: bit ``j = 4q + t`` of word ``m`` takes the normal quantile at
    ``(v + 0.5) / 65536``, ``v`` the 16-bit field ``t`` of ``fmix64(phi ^ (q + 1) *
    SIMHASH_DRAW)`` (``phi`` the word's hash). Then "bits of simhash with non-negative W_j are
    set to 1 and the remaining bits are set to 0". Returns the fingerprint's 64-bit words and
    the ``W_j``, each an exact sum (``math.fsum``): an exactly cancelling ``W_j`` is 0, not a
    rounding error of either sign.
    """
    quantile = statistics.NormalDist().inv_cdf
    terms: list[list[float]] = [[] for _ in range(bits)]
    for i, w in features.items():
        for m in range(bits // 64):
            phi = fmix64(((i ^ keys[2 * m]) * keys[2 * m + 1]) & MASK)
            for j in range(64):
                if gaussian:
                    draw = fmix64(phi ^ ((j // 4 + 1) * SIMHASH_DRAW & MASK))
                    nu = quantile(((draw >> (16 * (j % 4)) & 0xFFFF) + 0.5) / 65536)
                    terms[64 * m + j].append(nu * w)
                else:
                    terms[64 * m + j].append(w if phi >> j & 1 else -w)
    weights = [math.fsum(t) for t in terms]
    words = [sum(1 << j for j in range(64) if weights[64 * m + j] >= 0) for m in range(bits // 64)]
    return words, weights


def band_keys(row: Sequence[int], num_bands: int, num_rows: int) -> list[int]:
    """LSH band keys (MMDS §3.4): band ``j`` of slots ``j r .. j r + r - 1`` hashes as
    ``h = fmix64(j + BAND_SALT)``, then ``h = fmix64(h ^ slot)`` for each of its slots in order:
    the band's index is mixed in, so equal slots in different bands give different keys."""
    keys = []
    for j in range(num_bands):
        h = fmix64((j + BAND_SALT) & MASK)
        for slot in row[j * num_rows : (j + 1) * num_rows]:
            h = fmix64(h ^ int(slot))
        keys.append(h)
    return keys


def bucket_pairs(members: Sequence[int], max_bucket_size: int | None) -> set[tuple[int, int]]:
    """Pairs of one bucket (members ascending): all of them, or for a bucket larger than
    ``max_bucket_size`` each member with the ``max_bucket_size - 1`` members just before it."""
    n = len(members)
    giant = max_bucket_size is not None and n > max_bucket_size
    reach = max_bucket_size - 1 if max_bucket_size is not None and giant else n
    return {(members[i], members[j]) for j in range(n) for i in range(max(0, j - reach), j)}


def candidate_pairs(
    band_rows: np.ndarray,
    active: Sequence[bool] | None = None,
    max_bucket_size: int | None = None,
) -> set[tuple[int, int]]:
    """Pairs sharing a band value, from a dict of Python lists per band (capped as
    :func:`bucket_pairs` says when ``max_bucket_size`` is given)."""
    pairs: set[tuple[int, int]] = set()
    for band in range(band_rows.shape[1]):
        buckets: dict[int, list[int]] = defaultdict(list)
        for doc in range(band_rows.shape[0]):
            if active is None or active[doc]:
                buckets[int(band_rows[doc, band])].append(doc)
        for members in buckets.values():
            pairs |= bucket_pairs(members, max_bucket_size)
    return pairs


def components(num_items: int, edges: Iterable[tuple[int, int]]) -> list[int]:
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


BITS_IN_BYTE = np.array([bin(byte).count("1") for byte in range(256)], dtype=np.int64)


def hamming(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Hamming distance of fingerprints: the bits in which ``a`` and ``b`` differ, summed over
    the last axis (the 64-bit words of one fingerprint; give single-word fingerprints a last
    axis of length 1). ``a`` and ``b`` broadcast, so ``hamming(x[:, None], x[None, :])`` is the
    matrix of all pairs. Bits are counted a byte at a time from a table of ``bin(v).count("1")``.
    """
    differ = np.ascontiguousarray(
        np.bitwise_xor(np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64))
    )
    distance: np.ndarray = BITS_IN_BYTE[differ.view(np.uint8)].sum(axis=-1)
    return distance


def center_clusters(
    num_items: int,
    edges: Iterable[tuple[int, int]],
    similarity: Callable[[int, int], float],
    threshold: float,
) -> tuple[list[int], list[bool], list[float]]:
    """Center clustering as its docstring states it, by the first-document keep rule.

    Components of ``edges`` with their smallest member as representative; a member at
    ``threshold`` or above stays; the others, in document order, join the center they share an
    edge with at the threshold with the highest similarity (ties to the smaller center) or
    become centers. Returns labels (smallest member), keep flags and similarities to centers.
    """
    edges = list(edges)
    labels = components(num_items, edges)
    center: list[int | None] = []
    to_center: list[float] = []
    for d in range(num_items):
        rep = labels[d]
        s = 1.0 if d == rep else similarity(d, rep)
        center.append(rep if s >= threshold else None)
        to_center.append(s)
    neighbours: dict[int, set[int]] = {d: set() for d in range(num_items)}
    for a, b in edges:
        if a != b:
            neighbours[a].add(b)
            neighbours[b].add(a)
    for d in range(num_items):
        if center[d] is not None:
            continue
        options = [
            (similarity(d, c), -c)
            for c in neighbours[d]
            if center[c] == c and similarity(d, c) >= threshold
        ]
        if options:
            s, negative = max(options)
            center[d], to_center[d] = -negative, s
        else:
            center[d], to_center[d] = d, 1.0
    members: dict[int | None, list[int]] = {}
    for d in range(num_items):
        members.setdefault(center[d], []).append(d)
    result = [min(members[center[d]]) for d in range(num_items)]
    return result, [center[d] == d for d in range(num_items)], to_center


# --- Passage units (docs/passages.md) ------------------------------------------------------------


def line_pieces(text: str, paragraphs: bool = False) -> list[tuple[int, int, str]]:
    """``(tile_start, tile_end, content)`` of each line that is not blank (``str.isspace``), or
    of each paragraph (non-blank lines up to a blank line): the tile runs from the piece's first
    character to where the next piece begins (lines: past its newline), the content is the
    tile stripped."""
    lines: list[tuple[int, int]] = []
    at = 0
    for line in text.split("\n"):
        end = min(at + len(line) + 1, len(text))
        lines.append((at, end))
        at = end
    pieces: list[tuple[int, int]] = []
    open_at: int | None = None
    gap = False
    for start, end in lines:
        if not text[start:end].strip():
            gap = open_at is not None
            continue
        if not paragraphs:
            pieces.append((start, end))
            continue
        if open_at is not None and gap:
            pieces.append((open_at, start))
            open_at = None
        if open_at is None:
            open_at, gap = start, False
    if open_at is not None:
        pieces.append((open_at, len(text)))
    return [(a, b, text[a:b].strip()) for a, b in pieces]


def unit_key(content: str, fold_digits: bool = True) -> tuple[str, ...]:
    """What two units must share to be exact copies: their words after digit folding (every
    ASCII digit read as 0), NFKC and case folding, whitespace collapsed."""
    if fold_digits:
        content = re.sub("[0-9]", "0", content)
    return tuple(normalize(content).split())


def raw_word_tokens(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, token)`` of the raw words of ``text`` (docs/substrings.md): runs of
    characters that are not whitespace, each character of a script written without spaces a
    token by itself; no normalisation."""
    out: list[tuple[int, int, str]] = []
    start = None
    for i, ch in enumerate(text):
        kind = _class_of(ch)
        if start is not None and kind in (SPACE, ALONE):
            out.append((start, i, text[start:i]))
            start = None
        if kind == ALONE:
            out.append((i, i + 1, ch))
        elif kind != SPACE and start is None:
            start = i
    if start is not None:
        out.append((start, len(text), text[start:]))
    return out


def repeated_token_marks(
    texts: Sequence[str], size: int, against: Sequence[str] = ()
) -> list[list[bool]]:
    """Per text, which tokens lie in a window of ``size`` tokens that occurred earlier: in an
    earlier text or earlier in the same one (Lee et al.'s later occurrences), or, with
    ``against``, in those texts only. Every window of every text, compared as tuples."""
    seen: set[tuple[str, ...]] = set()
    for text in against:
        words = [t for _, _, t in raw_word_tokens(text)]
        seen.update(tuple(words[q : q + size]) for q in range(len(words) - size + 1))
    marks = []
    for text in texts:
        words = [t for _, _, t in raw_word_tokens(text)]
        marked = [False] * len(words)
        for q in range(len(words) - size + 1):
            window = tuple(words[q : q + size])
            if window in seen:
                marked[q : q + size] = [True] * size
            if not against:
                seen.add(window)
        marks.append(marked)
    return marks
