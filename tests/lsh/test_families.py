"""The LSH families over vectors on real data: elementary collision rates against
``collision_probability``, recall of the amplified family against the S-curve, keys against
plain-Python references, determinism and input validation.

Data: hashed term-frequency vectors of the bundled licence texts (cosine), their 128-bit
SimHash fingerprints (Hamming), and scikit-learn's bundled handwritten digits, 8 x 8 images
of integers 0..16 (L1 and L2).
"""

from __future__ import annotations

import dataclasses
import math
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
import pytest

from neardup import ShingleSpec, SketchSpec
from neardup.errors import ParameterError
from neardup.lsh import (
    BitSampler,
    CauchyHasher,
    HyperplaneHasher,
    PStableHasher,
    UnaryBitSampler,
    choose_amplification,
    pack_bits,
    unpack_bits,
)
from neardup.lsh.family import AmplifiedHasher
from neardup.params import JoinSpec
from neardup.sketch.simhash import SimHasher

MASK = (1 << 64) - 1
BAND_SALT = 0x2545F4914F6CDD1D
TF_DIM = 256
ELEMENTARY = 4000
"""Bands of one row in the collision-rate tests: each band key is one elementary hash, so a
pair's count of equal keys is Binomial(ELEMENTARY, p) (the hashes are drawn independently)."""


# --- plain references ----------------------------------------------------------------------


def fmix64(x: int) -> int:
    """MurmurHash3's 64-bit finaliser, on Python integers."""
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & MASK
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & MASK
    x ^= x >> 33
    return x


def band_key(band: int, words: list[int]) -> int:
    """A band's key: ``h = fmix64(j + BAND_SALT)``, then ``h = fmix64(h ^ word)`` per word."""
    h = fmix64((band + BAND_SALT) & MASK)
    for word in words:
        h = fmix64(h ^ word)
    return h


def bit_words(bits: list[bool]) -> list[int]:
    """Bits packed 64 to a word, bit ``t`` at bit ``t % 64`` of word ``t // 64``."""
    words = [0] * ((len(bits) + 63) // 64)
    for t, bit in enumerate(bits):
        if bit:
            words[t // 64] |= 1 << (t % 64)
    return words


def reference_keys(
    elementary: Callable[[int, int], Any], num_items: int, hasher: AmplifiedHasher, bits: bool
) -> list[list[int]]:
    """Keys from ``elementary(item, k)``, the k-th elementary hash (a bit or a bucket)."""
    r = hasher.num_rows
    keys = []
    for item in range(num_items):
        row = []
        for j in range(hasher.num_bands):
            values = [elementary(item, j * r + t) for t in range(r)]
            words = bit_words(values) if bits else [v & MASK for v in values]
            row.append(band_key(j, words))
        keys.append(row)
    return keys


# --- real data -----------------------------------------------------------------------------


def hashed_tf(text: str) -> np.ndarray:
    """Each lower-cased word adds +-1 to one of TF_DIM coordinates, both from its CRC-32."""
    vector = np.zeros(TF_DIM)
    for word in re.findall(r"\w+", text.lower()):
        h = zlib.crc32(word.encode("utf-8"))
        vector[h % TF_DIM] += 1.0 if (h >> 16) & 1 else -1.0
    return vector


@pytest.fixture(scope="module")
def licence_texts(licenses: list[dict[str, object]]) -> list[str]:
    """The bundled licence texts in id order (a licence's variants side by side)."""
    return [str(r["text"]) for r in sorted(licenses, key=lambda r: str(r["id"]))]


@pytest.fixture(scope="module")
def tf_vectors(licence_texts: list[str]) -> np.ndarray:
    """Hashed TF vectors of the texts that hold a word (a zero vector has no cosine)."""
    vectors = np.array([hashed_tf(t) for t in licence_texts])
    return vectors[np.any(vectors != 0, axis=1)]


@pytest.fixture(scope="module")
def simhash_bits(licence_texts: list[str]) -> np.ndarray:
    spec = SketchSpec(kind="simhash", simhash_bits=128, shingle=ShingleSpec(k=1))
    return SimHasher(spec).sketch(licence_texts).values


@pytest.fixture(scope="module")
def digits() -> np.ndarray:
    from sklearn.datasets import load_digits

    return np.asarray(load_digits().data, dtype=np.int64)


def cosine(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.sum(x * y, axis=-1) / (np.linalg.norm(x, axis=-1) * np.linalg.norm(y, axis=-1))


def hamming(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.bitwise_count(x ^ y).astype(np.int64).sum(axis=-1)


def l1(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.abs(x - y).sum(axis=-1).astype(np.float64)


def l2(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.linalg.norm((x - y).astype(np.float64), axis=-1)


@dataclass
class Case:
    """One family on its real data."""

    family: type[AmplifiedHasher]
    spec: JoinSpec
    items: np.ndarray  # what keys() takes
    dim: int
    measure: Callable[[np.ndarray, np.ndarray], np.ndarray]
    max_value: int | None = None

    def hasher(self, num_bands: int, num_rows: int) -> AmplifiedHasher:
        return self.family(
            self.spec, self.dim, num_bands=num_bands, num_rows=num_rows, max_value=self.max_value
        )

    def probability(self, values: np.ndarray) -> np.ndarray:
        p = self.family.collision_probability(values, self.spec, self.dim, self.max_value)
        return np.asarray(p)


@pytest.fixture(params=["cosine", "hamming", "l1", "l1-cauchy", "l2"])
def case(
    request: pytest.FixtureRequest,
    tf_vectors: np.ndarray,
    simhash_bits: np.ndarray,
    digits: np.ndarray,
) -> Case:
    if request.param == "cosine":
        spec = JoinSpec(metric="cosine", threshold=0.9, seed=5)
        return Case(HyperplaneHasher, spec, tf_vectors, TF_DIM, cosine)
    if request.param == "hamming":
        spec = JoinSpec(metric="hamming", threshold=12, seed=5)
        return Case(BitSampler, spec, simhash_bits, 128, hamming)
    if request.param == "l1":
        spec = JoinSpec(metric="l1", threshold=100, family="unary", seed=5)
        return Case(UnaryBitSampler, spec, digits, 64, l1, max_value=16)
    if request.param == "l1-cauchy":
        spec = JoinSpec(metric="l1", threshold=100, seed=5)
        return Case(CauchyHasher, spec, digits, 64, l1)
    spec = JoinSpec(metric="l2", threshold=20.0, seed=5)
    return Case(PStableHasher, spec, digits.astype(np.float64), 64, l2)


def spread_pairs(items: np.ndarray) -> np.ndarray:
    """120 pairs spanning the range: 60 neighbours in id order, 60 taken at random."""
    rng = np.random.default_rng(7)
    n = items.shape[0]
    near = rng.choice(n - 1, 60, replace=False)
    first = np.concatenate([near, rng.integers(0, n, 60)])
    second = np.concatenate([near + 1, rng.integers(0, n, 60)])
    keep = first != second
    return np.stack([first[keep], second[keep]], axis=1)


def test_elementary_collision_rate_matches_collision_probability(case: Case) -> None:
    pairs = spread_pairs(case.items)
    values = case.measure(case.items[pairs[:, 0]], case.items[pairs[:, 1]])
    p = case.probability(values)
    assert p.max() - p.min() > 0.25, "the pairs should span the range of probabilities"
    keys = case.hasher(ELEMENTARY, 1).keys(case.items)
    rate = np.mean(keys[pairs[:, 0]] == keys[pairs[:, 1]], axis=1)
    # Each pair's count of agreeing elementary hashes is Binomial(ELEMENTARY, p): standard
    # deviation sqrt(p (1 - p) / ELEMENTARY) of the rate (at most 0.0079). 5 sigma: about 480
    # pairs over the four families, P(|Z| > 5) = 5.7e-7 each, 3e-4 that any fails by chance
    # (measured: at most 4.5 sigma, cosine; 3.2 elsewhere), plus the rounding of p.
    sigma = np.sqrt(p * (1 - p) / ELEMENTARY)
    assert np.all(np.abs(rate - p) <= 5 * sigma + 1e-12), np.max(np.abs(rate - p) / sigma)


def near_pairs(case: Case) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair within the threshold, by brute force over all pairs (row by row)."""
    items = case.items
    similarity = case.spec.metric == "cosine"
    firsts, seconds, values = [], [], []
    for i in range(items.shape[0] - 1):
        v = case.measure(items[i], items[i + 1 :])
        close = np.flatnonzero(v >= case.spec.threshold if similarity else v <= case.spec.threshold)
        firsts.append(np.full(close.shape[0], i))
        seconds.append(close + i + 1)
        values.append(v[close])
    return np.concatenate(firsts), np.concatenate(seconds), np.concatenate(values)


NEAR_PAIRS = 300
"""Pairs within the threshold in the recall test, each hashed by a family of its own."""


def test_amplified_recall_at_the_threshold_follows_the_s_curve(case: Case) -> None:
    rng = np.random.default_rng(11)
    n = case.items.shape[0]
    sample = rng.integers(0, n, (2000, 2))
    sample = sample[sample[:, 0] != sample[:, 1]]
    far = case.probability(case.measure(case.items[sample[:, 0]], case.items[sample[:, 1]]))
    p_near = float(case.probability(np.array(case.spec.threshold)))
    chosen = choose_amplification(
        p_near, recall=0.8, max_hashes=256, far_probabilities=far, num_items=n
    )
    num_bands, num_rows = chosen.as_bands()
    assert chosen.probability(p_near) >= 0.8

    first, second, values = near_pairs(case)
    assert first.shape[0] >= NEAR_PAIRS, "the data should hold enough pairs within the threshold"
    picked = rng.choice(first.shape[0], NEAR_PAIRS, replace=False)
    found = np.empty(NEAR_PAIRS, dtype=bool)
    for k, pair in enumerate(picked.tolist()):
        spec = dataclasses.replace(case.spec, seed=1000 + k)
        hasher = case.family(
            spec, case.dim, num_bands=num_bands, num_rows=num_rows, max_value=case.max_value
        )
        keys = hasher.keys(case.items[[first[pair], second[pair]]])
        found[k] = np.any(keys[0] == keys[1])
    # A pair within the threshold is a candidate with probability S(p(value)) >= S(p_near)
    # >= 0.8, S the S-curve. Each pair is hashed by a family of its own (its own seed), so the
    # outcomes are independent and the count found is Poisson-binomial: mean sum S_i,
    # variance sum S_i (1 - S_i). 4 standard deviations below the mean fails.
    # (One family shared by all pairs, as in a join, has the same mean but correlated
    # outcomes: on the SimHash pairs at distance <= 12 the fraction found varied with
    # standard deviation 0.030 over 30 seeds, against 0.012 for independent outcomes.)
    predicted = np.asarray(chosen.probability(case.probability(values[picked])))
    sigma = math.sqrt(float(np.sum(predicted * (1 - predicted))))
    assert found.sum() >= predicted.sum() - 4 * sigma, (found.sum(), predicted.sum(), sigma)


# --- keys against plain references ---------------------------------------------------------


@pytest.mark.parametrize(("num_bands", "num_rows"), [(3, 4), (2, 70), (5, 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hyperplane_keys_equal_the_reference(
    num_bands: int, num_rows: int, dtype: type[np.floating[Any]]
) -> None:
    x = np.random.default_rng(1).standard_normal((6, 7)).astype(dtype)
    hasher = HyperplaneHasher(JoinSpec(), 7, num_bands=num_bands, num_rows=num_rows)
    a = hasher.hyperplanes.tolist()
    rows = [[float(v) for v in row] for row in x]

    def sign(item: int, k: int) -> bool:
        return sum(ak * xk for ak, xk in zip(a[k], rows[item], strict=True)) > 0

    assert hasher.keys(x).tolist() == reference_keys(sign, 6, hasher, bits=True)


@pytest.mark.parametrize(("num_bands", "num_rows"), [(3, 4), (2, 70)])
def test_bit_sampler_keys_equal_the_reference(num_bands: int, num_rows: int) -> None:
    bits = np.random.default_rng(2).integers(0, 2, (6, 130)).astype(np.uint8)
    spec = JoinSpec(metric="hamming", threshold=3)
    hasher = BitSampler(spec, 130, num_bands=num_bands, num_rows=num_rows)
    positions = hasher.positions.tolist()
    rows = bits.tolist()
    keys = reference_keys(lambda i, k: rows[i][positions[k]] == 1, 6, hasher, bits=True)
    assert hasher.keys(pack_bits(bits)).tolist() == keys


@pytest.mark.parametrize(("num_bands", "num_rows"), [(3, 4), (2, 70)])
@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.int64])
def test_unary_keys_equal_the_reference(num_bands: int, num_rows: int, dtype: type) -> None:
    x = np.random.default_rng(3).integers(0, 10, (6, 5)).astype(dtype)
    spec = JoinSpec(metric="l1", threshold=3, family="unary", max_value=9)
    hasher = UnaryBitSampler(spec, 5, num_bands=num_bands, num_rows=num_rows)
    coordinates, levels = hasher.coordinates.tolist(), hasher.levels.tolist()
    rows = x.tolist()
    # The unary code of x_i: C bits, bit t set when x_i > t; the sampled bit k is (i_k, t_k).
    codes = [[c > t for c in row for t in range(9)] for row in rows]
    keys = reference_keys(lambda i, k: codes[i][9 * coordinates[k] + levels[k]], 6, hasher, True)
    assert hasher.keys(x).tolist() == keys


@pytest.mark.parametrize(("num_bands", "num_rows"), [(3, 4), (2, 9)])
@pytest.mark.parametrize(
    ("family", "spec", "x"),
    [
        (PStableHasher, JoinSpec(metric="l2", threshold=0.5),
         np.random.default_rng(4).standard_normal((6, 7)) * 3),
        (CauchyHasher, JoinSpec(metric="l1", threshold=0.5),
         np.random.default_rng(4).integers(0, 500, (6, 7))),
    ],
    ids=["gaussian", "cauchy"],
)  # fmt: skip
def test_pstable_keys_equal_the_reference(
    num_bands: int, num_rows: int, family: type[PStableHasher], spec: JoinSpec, x: np.ndarray
) -> None:
    hasher = family(spec, 7, num_bands=num_bands, num_rows=num_rows)
    lines, offsets = hasher.lines.tolist(), hasher.offsets.tolist()
    rows = x.tolist()

    def bucket(item: int, k: int) -> int:
        dot = sum(a * v for a, v in zip(lines[k], rows[item], strict=True))
        return math.floor((dot + offsets[k]) / 2.0)  # w = 4 * threshold

    assert hasher.width == 2.0
    assert hasher.keys(x).tolist() == reference_keys(bucket, 6, hasher, bits=False)


def test_pack_bits_equals_the_reference_and_unpacks() -> None:
    bits = np.random.default_rng(5).integers(0, 2, (4, 150)).astype(np.uint8)
    words = [[sum(int(b) << (j - 64 * k) for j, b in enumerate(row) if j // 64 == k)
              for k in range(3)] for row in bits.tolist()]  # fmt: skip
    packed = pack_bits(bits)
    assert packed.dtype == np.uint64
    assert packed.tolist() == words
    assert np.array_equal(pack_bits(bits.astype(bool)), packed)
    assert np.array_equal(unpack_bits(packed, 150), bits)


# --- determinism ---------------------------------------------------------------------------


def test_keys_do_not_depend_on_chunking_threads_or_instance(case: Case) -> None:
    items = case.items[:300]
    hasher = case.hasher(16, 5)
    whole = hasher.keys(items)
    for chunk_rows in (1, 7, 299):
        assert np.array_equal(hasher.keys(items, chunk_rows=chunk_rows), whole)
    default = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        assert np.array_equal(case.hasher(16, 5).keys(items), whole)
    finally:
        numba.set_num_threads(default)
    other = case.family(
        JoinSpec(**{**case.spec.to_dict(), "seed": 6}),
        case.dim,
        num_bands=16,
        num_rows=5,
        max_value=case.max_value,
    )
    assert not np.array_equal(other.keys(items), whole)


def test_float32_and_float64_vectors_hash_alike(tf_vectors: np.ndarray) -> None:
    x = tf_vectors[:50].astype(np.float32)
    hasher = HyperplaneHasher(JoinSpec(), TF_DIM, num_bands=8, num_rows=8)
    assert np.array_equal(hasher.keys(x), hasher.keys(x.astype(np.float64)))


def test_zero_vector_hashes_to_zero_bits_in_every_band() -> None:
    hasher = HyperplaneHasher(JoinSpec(), 4, num_bands=3, num_rows=5)
    keys = hasher.keys(np.zeros((1, 4)))
    assert keys[0].tolist() == [band_key(j, [0]) for j in range(3)]


def test_unary_code_memory_does_not_depend_on_the_range() -> None:
    # C = 2^31 - 1: the code would be 8.6e9 bits a coordinate; only the samples are kept.
    spec = JoinSpec(metric="l1", threshold=10, family="unary", max_value=2**31 - 1)
    hasher = UnaryBitSampler(spec, 4, num_bands=8, num_rows=2)
    x = np.array([[0, 2**31 - 1, 5, 10**9], [0, 2**31 - 1, 5, 10**9], [1, 0, 0, 0]])
    keys = hasher.keys(x)
    assert np.array_equal(keys[0], keys[1])
    assert hasher.levels.max() < 2**31 - 1
    assert hasher.coordinates.max() < 4


def test_spec_max_value_wins_over_the_data_range() -> None:
    spec = JoinSpec(metric="l1", threshold=3, family="unary", max_value=20)
    assert UnaryBitSampler(spec, 3, num_bands=1, num_rows=1, max_value=9).max_value == 20
    plain = JoinSpec(metric="l1", threshold=3, family="unary")
    assert UnaryBitSampler(plain, 3, num_bands=1, num_rows=1, max_value=9).max_value == 9
    assert UnaryBitSampler.collision_probability(6, plain, 3, 9) == pytest.approx(1 - 6 / 27)


def test_pstable_width_at_threshold_zero_keeps_identical_vectors_together() -> None:
    spec = JoinSpec(metric="l2", threshold=0.0)
    hasher = PStableHasher(spec, 3, num_bands=4, num_rows=6)
    assert hasher.width == 1.0
    x = np.array([[0.1, 0.2, 0.3], [0.1, 0.2, 0.3], [5.0, 0.0, 0.0]])
    keys = hasher.keys(x)
    assert np.array_equal(keys[0], keys[1])
    assert not np.any(keys[0] == keys[2])
    assert PStableHasher.collision_probability(0.0, spec, 3) == 1.0


def test_no_items_give_no_keys() -> None:
    keys = HyperplaneHasher(JoinSpec(), 5, num_bands=3, num_rows=2).keys(np.empty((0, 5)))
    assert keys.shape == (0, 3)
    assert keys.dtype == np.uint64


# --- validation ----------------------------------------------------------------------------

HAMMING = JoinSpec(metric="hamming", threshold=3)
L1 = JoinSpec(metric="l1", threshold=3, family="unary", max_value=9)
L1_UNBOUNDED = JoinSpec(metric="l1", threshold=3, family="unary")
L1_CAUCHY = JoinSpec(metric="l1", threshold=3)
L2 = JoinSpec(metric="l2", threshold=1.0)


@pytest.mark.parametrize(
    ("make", "vectors", "match"),
    [
        (lambda: HyperplaneHasher(JoinSpec(), 4, num_bands=2, num_rows=2), np.zeros((3, 5)),
         r"2-D array of 4 columns"),
        (lambda: HyperplaneHasher(JoinSpec(), 4, num_bands=2, num_rows=2), np.zeros(4),
         r"got shape \(4,\)"),
        (lambda: HyperplaneHasher(JoinSpec(), 4, num_bands=2, num_rows=2),
         np.zeros((3, 4), np.int64), r"float32 or float64 vectors; got dtype int64"),
        (lambda: HyperplaneHasher(JoinSpec(), 2, num_bands=2, num_rows=2),
         np.array([[0.0, 1.0], [np.nan, 0.0]]), r"finite coordinates; got nan at row 1, column 0"),
        (lambda: PStableHasher(L2, 2, num_bands=2, num_rows=2),
         np.array([[0.0, 1.0], [2.0, np.inf]]), r"finite coordinates; got inf at row 1, column 1"),
        (lambda: PStableHasher(L2, 2, num_bands=2, num_rows=2), np.array([[1e300, 1e300]]),
         r"too long for bucket_width 4"),
        (lambda: BitSampler(HAMMING, 130, num_bands=2, num_rows=2), np.zeros((2, 2), np.uint64),
         r"2-D array of 3 columns"),
        (lambda: BitSampler(HAMMING, 130, num_bands=2, num_rows=2), np.zeros((2, 3), np.int64),
         r"packed bits, uint64\[n, 3\]; got dtype int64 \(pack 0/1 arrays"),
        (lambda: UnaryBitSampler(L1, 3, num_bands=2, num_rows=2), np.array([[0, 10, 1]]),
         r"coordinates in \[0, 9\] \(C\); got 10 at row 0, column 1"),
        (lambda: UnaryBitSampler(L1, 3, num_bands=2, num_rows=2), np.array([[0, 1, -2]]),
         r"got -2 at row 0, column 2"),
        (lambda: UnaryBitSampler(L1, 3, num_bands=2, num_rows=2), np.zeros((1, 3)),
         r"integer coordinates in \[0, 9\]; got dtype float64 \(shift by the minimum"),
        (lambda: CauchyHasher(L1_CAUCHY, 2, num_bands=2, num_rows=2),
         np.array([[0.0, np.nan]]), r"finite coordinates; got nan at row 0, column 1"),
        (lambda: CauchyHasher(L1_CAUCHY, 2, num_bands=2, num_rows=2),
         np.array([["a", "b"]]), r"integer or float vectors; got dtype <U1"),
    ],
)  # fmt: skip
def test_invalid_vectors_are_refused(
    make: Callable[[], AmplifiedHasher], vectors: np.ndarray, match: str
) -> None:
    with pytest.raises(ParameterError, match=match):
        make().keys(vectors)


def test_an_error_names_the_row_in_a_later_chunk() -> None:
    x = np.zeros((10, 2))
    x[8, 1] = np.nan
    hasher = HyperplaneHasher(JoinSpec(), 2, num_bands=2, num_rows=2)
    with pytest.raises(ParameterError, match="at row 8, column 1"):
        hasher.keys(x, chunk_rows=3)
    with pytest.raises(ParameterError, match="chunk_rows must be None or an int >= 1"):
        hasher.keys(np.zeros((1, 2)), chunk_rows=0)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: HyperplaneHasher(L2, 4, num_bands=2, num_rows=2),
         "HyperplaneHasher hashes metric 'cosine'; got JoinSpec.metric 'l2'"),
        (lambda: HyperplaneHasher(JoinSpec(), 0, num_bands=2, num_rows=2), "dim must be an int"),
        (lambda: BitSampler(HAMMING, 8, num_bands=0, num_rows=2), "num_bands must be an int"),
        (lambda: PStableHasher(L2, 8, num_bands=2, num_rows=0), "num_rows must be an int"),
        (lambda: UnaryBitSampler(L1_UNBOUNDED, 3, num_bands=1, num_rows=1),
         "needs the coordinates' range C"),
    ],
)  # fmt: skip
def test_invalid_families_are_refused(make: Callable[[], AmplifiedHasher], match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        make()


@pytest.mark.parametrize(
    ("family", "spec", "value", "match"),
    [
        (HyperplaneHasher, JoinSpec(), 1.5, r"cosine similarity must be in"),
        (BitSampler, HAMMING, 9.0, r"Hamming distance must be in \[0, 8\]; got 9.0"),
        (UnaryBitSampler, L1, -1.0, r"L1 distance must be in \[0, 72\]"),
        (CauchyHasher, L1_CAUCHY, -1.0, r"L1 distance must be in \[0, inf\]"),
        (PStableHasher, L2, float("nan"), r"Euclidean distance must be in \[0, inf\]"),
    ],
)
def test_collision_probability_refuses_values_outside_the_domain(
    family: type[AmplifiedHasher], spec: JoinSpec, value: float, match: str
) -> None:
    with pytest.raises(ParameterError, match=match):
        family.collision_probability(value, spec, 8)


def test_collision_probabilities_are_vectorised_and_monotone() -> None:
    grid = np.linspace(0, 1, 11)
    cos = HyperplaneHasher.collision_probability(1 - 2 * grid, JoinSpec(), 8)
    assert isinstance(cos, np.ndarray)
    assert np.all(np.diff(cos) < 0)
    assert isinstance(HyperplaneHasher.collision_probability(1.0 + 1e-12, JoinSpec(), 8), float)
    for family, spec, top in [
        (BitSampler, HAMMING, 8),
        (UnaryBitSampler, L1, 72),
        (CauchyHasher, L1_CAUCHY, 50),
        (PStableHasher, L2, 50),
    ]:
        p = np.asarray(family.collision_probability(grid * top, spec, 8))
        assert p[0] == 1.0
        assert np.all(np.diff(p) < 0)
        assert np.all(p >= 0)
