"""What a plan measures on its sample: lengths, vocabulary, shingle size, boilerplate, pairs, rates.

The pair similarities come in two parts, each scaled to the whole input (a uniform sample of
*n* of *N* documents keeps a pair with probability n(n-1) / (N(N-1))):

* near pairs, at or above a floor: found in the sample by :func:`neardup.pipeline.dedup`
  itself, at the floor's threshold, every pair verified exactly;
* the background below the floor: the exact Jaccard of random pairs of the sample.

Both are over documents with distinct normalised texts (one per exact group): exact copies are
found by their fingerprint, whatever the banding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from neardup._kernels.compiling import Stopwatch
from neardup._types import Batch, F64Array, I64Array
from neardup.lsh import candidate_pairs
from neardup.pairs import CandidatePairs
from neardup.params import DedupConfig, NormalizeSpec, ShingleSpec
from neardup.pipeline import BatchSketcher, StringTexts, dedup, score_pairs
from neardup.plan.design import NUM_PERMS, PairDistribution, Rates
from neardup.text.normalize import normalize_bytes
from neardup.text.shingle import Shingler, ShingleSets
from neardup.text.spans import concat

__all__ = [
    "CHAR_ALPHABET",
    "SPACE_FACTOR",
    "Pairs",
    "Quantiles",
    "Vocabulary",
    "boilerplate_share",
    "measure_pairs",
    "measure_rates",
    "shingle_size",
    "vocabulary",
]

SPACE_FACTOR = 100
"""How far the number of likely shingles must exceed a long document's length (MMDS §3.2.2:
the chance that a given shingle appears in a given document must be low; 1% here)."""

CHAR_ALPHABET = 20
"""MMDS §3.2.2's rule of thumb: count k-shingles of characters as 20^k, as if only 20
characters were frequent."""

BOILERPLATE_SHARE = 0.01
"""A shingle found in at least this share of the sampled documents is boilerplate..."""

BOILERPLATE_DOCS = 5
"""... and in at least this many: in a small sample, 1% is one or two documents, and a shingle
a near-duplicate pair shares is no boilerplate."""

BACKGROUND_PAIRS = 20_000
"""Random pairs whose exact Jaccard stands for the pairs below the floor."""

FLOOR_BELOW_THRESHOLD = 0.3
"""The floor of the near pairs searched for: this far below the threshold (and at least 0.1)."""

TIMED_BANDS = 8
"""Bands of random keys sorted to time the candidate stage."""

TIMED_BYTES = 4 * 2**20
"""Bytes of text normalising and sketching are timed on at least: a smaller sample is repeated
to this size, so that a call's fixed costs (allocating, starting threads, dispatching: about a
millisecond) stay a few percent of what is timed instead of being scaled up as per-byte costs
(two licences, 5 kB, once timed at 0.1 MB/s, sketched 300 times faster in the run)."""

TIMED_PAIRS = 2_000
"""Random pairs verification is timed on at least (drawn again when the sample has fewer)."""

TIMED_DOCS = 2**18
"""Documents whose random band keys are sorted to time banding: as many as the input has, at
most this many (16 MiB of keys). Sorting a band has a fixed cost (its parallel sort starts
threads: tens of milliseconds on a busy machine) that the run pays per band too, so it is timed
at the run's size, not scaled up from the sample's."""

TIMED_REPEATS = 3
"""Banding is timed this many times and the fastest taken (it is short, and a busy machine's
scheduling can stretch one sort several-fold)."""

WARM_UP = "a few words that make every kernel load or compile before it is timed"
"""The tiny text each stage is run on before it is timed
(:class:`~neardup._kernels.compiling.Stopwatch`)."""


@dataclass(frozen=True, slots=True)
class Quantiles:
    """The 10th, 50th, 90th and 99th percentiles and the largest of a measure per document."""

    p10: float
    p50: float
    p90: float
    p99: float
    max: float

    @classmethod
    def of(cls, values: I64Array) -> Quantiles:
        """Quantiles of ``values`` (all zero for none).

        Examples
        --------
        >>> Quantiles.of(np.arange(101)).p90
        90.0
        """
        if values.shape[0] == 0:
            return cls(0.0, 0.0, 0.0, 0.0, 0.0)
        p10, p50, p90, p99 = np.percentile(values, [10, 50, 90, 99]).tolist()
        return cls(p10, p50, p90, p99, float(values.max()))


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """The words of the sample: how many distinct, and how many as if equally likely."""

    distinct: int
    effective: float
    """exp(entropy) of the word frequencies (the perplexity of a unigram model): the number of
    equally likely words that would be as varied. MMDS counts 20 frequent characters, not the
    whole alphabet; this is the same correction for words."""


def vocabulary(texts: Sequence[str] | Batch, normalize: NormalizeSpec) -> Vocabulary:
    """Distinct and effective vocabulary of texts (strings, or a batch already normalised).

    Examples
    --------
    >>> v = vocabulary(["a b c d", "a b c d"], NormalizeSpec())
    >>> v.distinct, round(v.effective, 6)
    (4, 4.0)
    """
    sets, counts = Shingler(ShingleSpec(unit="word", k=1), normalize).shingle_counts(texts)
    if sets.hashes.shape[0] == 0:
        return Vocabulary(distinct=0, effective=0.0)
    _, word = np.unique(sets.hashes, return_inverse=True)
    frequency = np.bincount(word, weights=counts.astype(np.float64))
    p = frequency / frequency.sum()
    return Vocabulary(distinct=int(p.shape[0]), effective=float(np.exp(-(p * np.log(p)).sum())))


def _smallest_k(alphabet: float, length: float) -> int | None:
    """The smallest k >= 1 with ``alphabet^k >= SPACE_FACTOR * length``; None if none <= 64."""
    if alphabet <= 1.0:
        return None
    need = SPACE_FACTOR * max(length, 1.0) * (1 - 1e-9)
    return next((k for k in range(1, 65) if alphabet**k >= need), None)


def shingle_size(
    tokens: Quantiles,
    chars: Quantiles,
    effective_vocabulary: float,
    threshold: float,
    *,
    words_only: bool = False,
) -> tuple[ShingleSpec, str]:
    """The shingle unit and size MMDS §3.2.2's rule gives, and why.

    Word shingles: the smallest *k* with V^k >= :data:`SPACE_FACTOR` times the 90th percentile
    of words per document, V the effective vocabulary (:class:`Vocabulary`). Character
    shingles: the same with 20^k (:data:`CHAR_ALPHABET`) and characters per document. Words are
    chosen when the median document has enough word shingles to stay at the threshold after
    one changed word: a change removes *k* of its *n* shingles and adds *k*, leaving Jaccard
    (n - k) / (n + k), which is at least *t* when n (1 - t) >= k (1 + t). Shorter documents
    (titles, short answers, tweets) get character shingles, unless ``words_only`` (the text of
    a tokenizer, one word per token: :func:`~neardup.params.check_shingling`), where their
    word shingles are said to be too few.

    Examples
    --------
    >>> words = Quantiles(50, 100, 100, 100, 100)
    >>> shingle_size(words, Quantiles(500, 500, 500, 500, 500), 10.0, 0.8)[0]
    ShingleSpec(unit='word', k=4, fingerprint='nd64', polynomial=None, stopwords=None)
    """
    char_k = _smallest_k(CHAR_ALPHABET, chars.p90) or 64
    word_k = _smallest_k(effective_vocabulary, tokens.p90)
    if word_k is not None:
        shingles = tokens.p50 - word_k + 1
        if shingles * (1 - threshold) >= word_k * (1 + threshold) - 1e-9:
            return ShingleSpec(unit="word", k=word_k), (
                f"word {word_k}-shingles: {effective_vocabulary:,.0f}^{word_k} >= "
                f"{SPACE_FACTOR} x {tokens.p90:,.0f} words (p90), and the median document "
                f"({tokens.p50:,.0f} words) stays at {threshold:g} after one changed word"
            )
        why = (
            f"the median document ({tokens.p50:,.0f} words) has too few word {word_k}-shingles "
            f"to stay at {threshold:g} after one changed word"
        )
    else:
        why = "the texts have no varied words"
    if words_only:
        k = word_k if word_k is not None else ShingleSpec().k
        return ShingleSpec(unit="word", k=k), (
            f"word {k}-shingles, the only kind a tokenizer's text has, though {why}"
        )
    return ShingleSpec(unit="char", k=char_k), (
        f"character {char_k}-shingles: {CHAR_ALPHABET}^{char_k} >= {SPACE_FACTOR} x "
        f"{chars.p90:,.0f} characters (p90); {why}"
    )


def boilerplate_share(sets: ShingleSets) -> float:
    """The share of shingle occurrences (one per document and shingle) that are boilerplate.

    A shingle is boilerplate when it is in at least :data:`BOILERPLATE_SHARE` of the documents,
    and in :data:`BOILERPLATE_DOCS` at least. Documents with the same shingle set count once,
    so exact copies do not make their text boilerplate.

    Examples
    --------
    ``a`` is in five of the six distinct documents (``a b``, its copy and ``b a`` have one
    set, and count once): five of the eleven occurrences.

    >>> texts = ["a b", "a c", "a d", "a e", "a b", "b a", "a f", "g"]
    >>> round(boilerplate_share(Shingler(ShingleSpec(k=1)).shingle_sets(texts)), 4)
    0.4545
    """
    sizes = sets.sizes()
    filled = np.flatnonzero(sizes > 0)
    if filled.shape[0] == 0:
        return 0.0
    # A set's fingerprint: its sum and its xor (the hashes are uniform 64-bit values).
    starts = sets.offsets[filled]
    fingerprint = np.stack(
        [np.add.reduceat(sets.hashes, starts), np.bitwise_xor.reduceat(sets.hashes, starts)],
        axis=1,
    )
    _, first = np.unique(fingerprint, axis=0, return_index=True)
    distinct = np.zeros(len(sets), dtype=bool)
    distinct[filled[first]] = True
    hashes = sets.hashes[np.repeat(distinct, sizes)]
    _, shingle, frequency = np.unique(hashes, return_inverse=True, return_counts=True)
    cutoff = max(BOILERPLATE_DOCS, math.ceil(BOILERPLATE_SHARE * int(distinct.sum())))
    return float(np.count_nonzero(frequency[shingle] >= cutoff) / shingle.shape[0])


@dataclass(frozen=True, slots=True)
class Pairs:
    """The pairs of the sample, and the distribution they give for the whole input."""

    floor: float
    distinct_docs: int
    """Sampled documents with distinct normalised texts (the first of each exact group)."""
    exact_copies: int
    """Sampled documents whose normalised text an earlier sampled document has."""
    near_pairs: int
    """Pairs of the sample at or above the floor (between distinct texts)."""
    background_pairs: int
    """Random pairs of the sample whose exact Jaccard was measured."""
    background_mean: float
    """Their mean Jaccard."""
    distribution: PairDistribution
    """Estimated pairs of the whole input by similarity."""
    verify_per_pair: float
    """Seconds per exact verification of a random pair."""


def measure_pairs(texts: list[str], num_docs: int, config: DedupConfig, seed: int) -> Pairs:
    """Near pairs (found with ``config``'s shingling at the floor) and the background.

    ``texts``: the sample; ``num_docs``: documents of the whole input; ``config``: with the
    shingling and threshold of the plan.
    """
    threshold = config.lsh.threshold
    floor = max(0.1, threshold - FLOOR_BELOW_THRESHOLD)
    search = replace(
        config,
        lsh=replace(config.lsh, threshold=floor, num_bands=None, num_rows=None),
        verify="exact",
        pairs="all",
        cluster="components",
    )
    found = dedup(texts, config=search)
    n = len(texts)
    is_copy = np.zeros(n, dtype=bool)
    is_copy[found.exact_pairs[1]] = True
    distinct = np.flatnonzero(~is_copy)
    num_distinct = distinct.shape[0]
    whole = num_docs * num_distinct / n  # distinct texts expected in the whole input
    scale = whole * (whole - 1) / (num_distinct * (num_distinct - 1)) if num_distinct > 1 else 0.0
    near = found.pairs.jaccard
    background, verify_per_pair = _background(texts, distinct, config, seed)
    below = background[background < floor]
    num_pairs = whole * (whole - 1) / 2
    similarity = np.concatenate([near, below])
    weights = np.concatenate(
        [
            np.full(near.shape[0], scale),
            np.full(below.shape[0], num_pairs / max(background.shape[0], 1)),
        ]
    )
    return Pairs(
        floor=floor,
        distinct_docs=num_distinct,
        exact_copies=int(is_copy.sum()),
        near_pairs=int(near.shape[0]),
        background_pairs=int(background.shape[0]),
        background_mean=float(background.mean()) if background.shape[0] else 0.0,
        distribution=PairDistribution.of(similarity, weights, threshold),
        verify_per_pair=verify_per_pair,
    )


def _background(
    texts: list[str], distinct: I64Array, config: DedupConfig, seed: int
) -> tuple[F64Array, float]:
    """Exact Jaccard of random pairs of distinct documents, and the seconds per pair verified.

    Verification is timed after one warm-up pair, on at least :data:`TIMED_PAIRS` pairs.
    """
    m = distinct.shape[0]
    num = min(BACKGROUND_PAIRS, m * (m - 1) // 2)
    if num == 0:
        return np.empty(0), 0.0
    rng = np.random.default_rng(seed)
    drawn = max(num, TIMED_PAIRS)
    a = rng.integers(0, m, drawn)
    b = (a + 1 + rng.integers(0, m - 1, drawn)) % m
    first, second = distinct[np.minimum(a, b)], distinct[np.maximum(a, b)]
    store = StringTexts(texts, config)
    score_pairs(CandidatePairs(first=first[:1], second=second[:1]), store, config)
    watch = Stopwatch()
    with watch.running():
        _, jaccard = score_pairs(CandidatePairs(first=first, second=second), store, config)
    return jaccard[:num], watch.seconds / drawn


def _repeated(batch: Batch, num_bytes: int) -> Batch:
    """``batch`` repeated until it holds at least ``num_bytes`` bytes (once if it is empty)."""
    times = math.ceil(num_bytes / batch.num_bytes) if batch.num_bytes else 1
    return concat([batch] * times) if times > 1 else batch


def _warm_up_batch() -> Batch:
    data = np.frombuffer(WARM_UP.encode("utf-8"), dtype=np.uint8).copy()
    return Batch(data=data, offsets=np.array([0, data.shape[0]], dtype=np.int64))


def measure_rates(
    raw: Batch, read_seconds: float, config: DedupConfig, verify_per_pair: float, num_docs: int
) -> Rates:
    """Normalising, sketching (for each of :data:`NUM_PERMS`) and banding, timed.

    ``raw``: the sample; ``num_docs``: documents of the whole input (banding is timed on as
    many, at most :data:`TIMED_DOCS`). Each stage first runs on a tiny text (:data:`WARM_UP`), so
    that loading or compiling its kernels is not timed; normalising and sketching are timed on
    the sample repeated to :data:`TIMED_BYTES` at least, so that fixed costs per call are not
    scaled up as costs per byte. The rates are per byte of raw text, as the run's input is
    counted.
    """
    spec = config.sketch.normalize
    warm = normalize_bytes(_warm_up_batch(), spec)
    timed = _repeated(raw, TIMED_BYTES)
    size = max(timed.num_bytes, 1)
    watch = Stopwatch()
    with watch.running():
        normalized = normalize_bytes(timed, spec)
    normalize_per_byte = watch.seconds / size
    sketch: dict[int, float] = {}
    for num_perm in NUM_PERMS:
        sized = replace(
            config,
            sketch=replace(config.sketch, num_perm=num_perm),
            lsh=replace(config.lsh, num_bands=None, num_rows=None),
        )
        sketcher = BatchSketcher(sized)
        for _ in sketcher.blocks(warm):
            pass
        watch = Stopwatch()
        with watch.running():
            for _ in sketcher.blocks(normalized):
                pass
        sketch[num_perm] = watch.seconds / size
    rng = np.random.default_rng(0)
    candidate_pairs(rng.integers(0, 2**63, size=(2, TIMED_BANDS), dtype=np.uint64))
    banded = max(min(num_docs, TIMED_DOCS), 2)
    keys = rng.integers(0, 2**63, size=(banded, TIMED_BANDS), dtype=np.uint64)
    band_seconds = math.inf
    for _ in range(TIMED_REPEATS):
        watch = Stopwatch()
        with watch.running():
            candidate_pairs(keys)
        band_seconds = min(band_seconds, watch.seconds)
    return Rates(
        read_seconds=read_seconds,
        normalize_per_byte=normalize_per_byte,
        sketch_per_byte=sketch,
        band_per_key=band_seconds / (banded * TIMED_BANDS),
        verify_per_pair=verify_per_pair,
    )
