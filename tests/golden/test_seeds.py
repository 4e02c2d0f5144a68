"""The seeds' worked examples, and frozen signatures that catch any change of hash scheme."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from neardup import (
    MinHasher,
    OPHSketcher,
    Shingler,
    ShingleSpec,
    SketchSpec,
    band_keys,
    candidate_pairs,
    choose_bands,
    exact_jaccard,
    jaccard_of_sets,
    s_curve,
)
from neardup.lsh import threshold_of
from neardup.pairs import CandidatePairs
from neardup.sketch import minhash_sets
from neardup.sketch.bbit import BBitSignatures, bbit_estimate
from neardup.sketch.minhash import LeadByteMinHasher
from neardup.text import ShingleSets


def _sets(*members: list[int]) -> ShingleSets:
    """Sets of small integers as the kernels see shingle fingerprints."""
    sizes = [len(m) for m in members]
    return ShingleSets(
        hashes=np.array([x for m in members for x in m], dtype=np.uint64),
        offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
    )


def test_mmds_example_3_8_signature_matrix() -> None:
    # Fig. 3.4: rows 0..4; S1 = {0, 3}, S2 = {2}, S3 = {1, 3, 4}, S4 = {0, 2, 3}.
    sets = _sets([0, 3], [2], [1, 3, 4], [0, 2, 3])
    h1 = (np.array([1], np.uint64), np.array([1], np.uint64))  # x + 1 mod 5
    h2 = (np.array([3], np.uint64), np.array([1], np.uint64))  # 3x + 1 mod 5
    # The signature after each row of the example, as printed step by step.
    assert minhash_sets(sets, *h1, modulus=5)[:, 0].tolist() == [1, 3, 0, 1]
    assert minhash_sets(sets, *h2, modulus=5)[:, 0].tolist() == [0, 2, 0, 0]
    both = minhash_sets(sets, np.array([1, 3], np.uint64), np.array([1, 1], np.uint64), modulus=5)
    assert both.T.tolist() == [[1, 3, 0, 1], [0, 2, 0, 0]]
    # Columns 1 and 4 agree everywhere (estimate 1.0, true 2/3); 1 and 3 in half; 1 and 2 never.
    agree = lambda i, j: float(np.mean(both[i] == both[j]))  # noqa: E731
    assert (agree(0, 3), agree(0, 2), agree(0, 1)) == (1.0, 0.5, 0.0)


# MMDS Fig. 3.8: the S-curve 1 - (1 - s^5)^20, printed to three or four decimals.
FIG_3_8 = [
    (0.2, 0.006),
    (0.3, 0.047),
    (0.4, 0.186),
    (0.5, 0.470),
    (0.6, 0.802),
    (0.7, 0.975),
    (0.8, 0.9996),
]


@pytest.mark.parametrize(("similarity", "printed"), FIG_3_8)
def test_mmds_figure_3_8_s_curve(similarity: float, printed: float) -> None:
    decimals = len(str(printed)) - 2
    assert round(float(s_curve(similarity, 20, 5)), decimals) == printed


def test_threshold_approximation() -> None:
    assert threshold_of(16, 4) == 0.5  # MMDS: "the 4th root of 1/16 is 1/2"
    assert 0.5 < threshold_of(20, 5) < 0.55  # "just slightly more than 0.5"
    for threshold in (0.5, 0.7, 0.8, 0.9):
        # With balanced error weights the chosen curve rises at the requested threshold.
        b, r = choose_bands(threshold, 128, false_positive_weight=0.5, false_negative_weight=0.5)
        assert abs(threshold_of(b, r) - threshold) < 0.05


TEXT = "A rose is a rose is a rose, said Gertrude Stein; and a rose by any other name."


def test_frozen_shingle_fingerprints() -> None:
    sets = Shingler(ShingleSpec(unit="word", k=3)).shingle_sets([TEXT])
    assert [f"{h:016x}" for h in sets.set_of(0)[:3].tolist()] == FROZEN_SHINGLES


def test_frozen_minhash_signature() -> None:
    sig = MinHasher(SketchSpec(kind="minhash", num_perm=4, seed=1)).sketch([TEXT])
    assert [f"{v:016x}" for v in sig.values[0].tolist()] == FROZEN_MINHASH
    assert [f"{v:016x}" for v in sig.fingerprints[0].tolist()] == FROZEN_FINGERPRINT


def test_frozen_oph_signature() -> None:
    sig = OPHSketcher(SketchSpec(kind="oph", num_perm=4, seed=1)).sketch([TEXT])
    assert [f"{v:016x}" for v in sig.values[0].tolist()] == FROZEN_OPH


# Frozen with fingerprint scheme nd64-v1; a change here is a change of every stored signature.
FROZEN_SHINGLES = ["02123f673155638b", "1d298d2bf18d65bd", "39e1d84a3458a4c8"]
FROZEN_MINHASH = ["19ce815e0aa25811", "1222b1f3273ffdd1", "0638120be3f6927c", "005cafa675b9801b"]
FROZEN_FINGERPRINT = ["af4a7bc53096e3fb", "5026e2f43d332bbd"]
FROZEN_OPH = ["0c40e74c56539436", "491b382669fc884b", "9397fadcbf8e2a47", "c2f612fd34361ae4"]


@pytest.mark.parametrize("agreeing", [0, 31, 32, 57, 80, 128])
def test_bbit_estimator_is_seed_000s_m_minus_32_over_96(agreeing: int) -> None:
    # Seed 000: "(m-32)/96 is still and unbiased estimate of the similarity when the 2-bit
    # vectors match in m positions, when this is non-negative".
    # Two rows of 128 two-bit codes that agree in exactly `agreeing` slots.
    codes_a = np.zeros(128, dtype=np.uint8)
    codes_b = np.zeros(128, dtype=np.uint8)
    codes_b[agreeing:] = 1
    pack = lambda codes: np.array(  # noqa: E731
        [sum(int(codes[4 * i + j]) << (2 * j) for j in range(4)) for i in range(32)], np.uint8
    )
    signatures = BBitSignatures(
        packed=np.stack([pack(codes_a), pack(codes_b)]), num_perm=128, num_bits=2, source={}
    )
    pairs = CandidatePairs(first=np.array([0]), second=np.array([1]))
    assert bbit_estimate(signatures, pairs, unbiased=True)[0] == (agreeing - 32) / 96
    assert bbit_estimate(signatures, pairs)[0] == max(0, agreeing - 32) / 96


def test_mmds_exercise_3_1_1_jaccard_of_three_sets() -> None:
    # "Compute the Jaccard similarities of each pair of the following three sets: {1, 2, 3, 4},
    # {2, 3, 5, 7}, and {2, 4, 6}."
    one, two, three = (
        np.array(s, dtype=np.uint64) for s in ([1, 2, 3, 4], [2, 3, 5, 7], [2, 4, 6])
    )
    assert jaccard_of_sets(one, two) == pytest.approx(2 / 6)
    assert jaccard_of_sets(one, three) == pytest.approx(2 / 5)
    assert jaccard_of_sets(two, three) == pytest.approx(1 / 6)


def test_mmds_exercise_3_3_3_minhash_with_hash_functions_that_are_not_permutations() -> None:
    # Fig. 3.5, rows 0..5: S1 = {2, 5}, S2 = {0, 1}, S3 = {3, 4}, S4 = {0, 2, 4}. "(a) Compute the
    # minhash signature for each column if we use the following three hash functions:
    # h1(x) = 2x + 1 (mod 6); h2(x) = 3x + 2 (mod 6); h3(x) = 5x + 2 (mod 6)."
    sets = _sets([2, 5], [0, 1], [3, 4], [0, 2, 4])
    a, b = np.array([2, 3, 5], np.uint64), np.array([1, 2, 2], np.uint64)
    signatures = minhash_sets(sets, a, b, modulus=6)
    assert signatures.tolist() == [[5, 2, 0], [1, 2, 1], [1, 2, 4], [1, 2, 0]]
    # "(b) Which of these hash functions are true permutations?" Only h3.
    images = [
        len({(int(ai) * x + int(bi)) % 6 for x in range(6)}) for ai, bi in zip(a, b, strict=True)
    ]
    assert images == [3, 2, 6]
    # "(c) How close are the estimated Jaccard similarities for the six pairs of columns to the
    # true Jaccard similarities?" Not close: h1 and h2 collapse rows, so unrelated sets agree.
    pairs = CandidatePairs(first=np.array([0, 0, 0, 1, 1, 2]), second=np.array([1, 2, 3, 2, 3, 3]))
    estimated = (signatures[pairs.first] == signatures[pairs.second]).mean(axis=1)
    assert estimated.tolist() == pytest.approx([1 / 3, 1 / 3, 2 / 3, 2 / 3, 2 / 3, 2 / 3])
    assert exact_jaccard(sets, pairs).tolist() == pytest.approx([0, 0, 1 / 4, 0, 1 / 4, 1 / 4])


def test_mmds_example_3_10_columns_equal_in_a_band_are_candidates() -> None:
    # Fig. 3.6, band 1 of a 12-row signature matrix (four bands of three rows): "The second and
    # fourth of the explicitly shown columns each have the column vector [0, 2, 1] in the first
    # band, so they will definitely hash to the same bucket"; the first two, [1, 3, 0] and
    # [0, 2, 1], differ. The other bands are made different for every column.
    first_band = [[1, 3, 0], [0, 2, 1], [0, 1, 3], [0, 2, 1], [2, 2, 1]]
    rows = np.array([band + [10 * c + r for r in range(9)] for c, band in enumerate(first_band)])
    keys = band_keys(rows.astype(np.uint64), 4, 3)
    assert keys[1, 0] == keys[3, 0]
    assert keys[0, 0] != keys[1, 0]
    found = candidate_pairs(keys)
    assert list(zip(found.first.tolist(), found.second.tolist(), strict=True)) == [(1, 3)]


def test_broder_a_rose_is_a_rose_with_w_4() -> None:
    # Seed 003: "Shingle = Fixed size sequence of w contiguous words": "a rose is a rose is a rose"
    # gives "a rose is a", "rose is a rose", "is a rose is", "a rose is a", "rose is a rose":
    # a set of three shingles.
    shingler = Shingler(ShingleSpec(unit="word", k=4))
    whole = shingler.shingle_sets(["a rose is a rose is a rose"])
    listed = shingler.shingle_sets(["a rose is a", "rose is a rose", "is a rose is"])
    assert listed.sizes().tolist() == [1, 1, 1]
    assert sorted(whole.set_of(0).tolist()) == sorted(listed.hashes.tolist())


def test_mmds_examples_3_3_and_3_4_character_shingles() -> None:
    # Example 3.3: "Suppose our document D is the string abcdabd, and we pick k = 2. Then the set
    # of 2-shingles for D is {ab, bc, cd, da, bd}."
    pairs = Shingler(ShingleSpec(unit="char", k=2))
    whole = pairs.shingle_sets(["abcdabd"])
    listed = pairs.shingle_sets(["ab", "bc", "cd", "da", "bd"])
    assert sorted(whole.set_of(0).tolist()) == sorted(listed.hashes.tolist())
    # Example 3.4: "if we retain the blanks, then the first has shingles touch dow and ouch down,
    # while the second has touchdown".
    nines = Shingler(ShingleSpec(unit="char", k=9))
    sets = nines.shingle_sets(
        [
            "The plane was ready for touch down",
            "The quarterback scored a touchdown",
            "touch dow",
            "ouch down",
            "touchdown",
        ]
    )
    plane, quarterback, touch_dow, ouch_down, touchdown = (
        set(sets.set_of(d).tolist()) for d in range(5)
    )
    assert touch_dow | ouch_down <= plane
    assert touchdown <= quarterback
    assert not touchdown & plane


# MMDS Fig. 3.2, rows a..e as 0..4: S1 = {a, d}, S2 = {c}, S3 = {b, d, e}, S4 = {a, c, d}.
FIG_3_2 = ([0, 3], [2], [1, 3, 4], [0, 2, 3])


def _minhash_by_row_order(order: tuple[int, ...]) -> list[int]:
    """Each set's minhash under a permutation of the rows given as their order (MMDS §3.3.2).

    Each row is renamed by its place in ``order`` and the least name of a set is its minhash
    value (:func:`minhash_sets` with the identity); the row it names is returned.
    """
    place = {row: i for i, row in enumerate(order)}
    renamed = _sets(*([place[row] for row in members] for members in FIG_3_2))
    one, zero = np.array([1], np.uint64), np.array([0], np.uint64)
    least = minhash_sets(renamed, one, zero, modulus=5)[:, 0]
    return [order[int(i)] for i in least]


def test_mmds_example_3_7_minhash_by_a_permutation_of_the_rows() -> None:
    # "Let us suppose we pick the order of rows beadc for the matrix of Fig. 3.2. [...] Thus,
    # h(S1) = a. [...] we see that h(S2) = c, h(S3) = b, and h(S4) = a."
    a, b, c, d, e = range(5)
    assert _minhash_by_row_order((b, e, a, d, c)) == [a, c, b, a]


def test_mmds_3_3_3_minhash_agrees_with_the_jaccard_similarity_over_every_permutation() -> None:
    # "The probability that the minhash function for a random permutation of rows produces the
    # same value for two sets equals the Jaccard similarity of those sets": exactly, over all
    # 5! orders of the rows of Fig. 3.2.
    values = np.array([_minhash_by_row_order(o) for o in itertools.permutations(range(5))])
    sets = _sets(*FIG_3_2)
    for i, j in itertools.combinations(range(4), 2):
        agree = int((values[:, i] == values[:, j]).sum())
        pair = CandidatePairs(first=np.array([i]), second=np.array([j]))
        assert Fraction(agree, 120) == Fraction(exact_jaccard(sets, pair)[0]).limit_denominator(5)


def _lead_byte_tail_counts(leads: np.ndarray) -> np.ndarray:
    """Per row: the shingles whose lead byte ties or beats the row's best, up to the first 0.

    Those are the shingles whose full value the left-to-right-minima trick computes (the
    kernel computes a tail for a tie too) before the slot's lead byte can improve no more.
    """
    best = np.minimum.accumulate(leads, axis=1)
    before = np.concatenate([np.full((leads.shape[0], 1), 256), best[:, :-1]], axis=1)
    zero = leads == 0
    assert zero.any(axis=1).all()  # every row meets a 0 within its shingles
    up_to_first_zero = np.arange(leads.shape[1]) <= zero.argmax(axis=1)[:, None]
    counts: np.ndarray = ((leads <= before) & up_to_first_zero).sum(axis=1)
    return counts


def test_broder_left_to_right_minima_h_256_measured_on_real_shingles(
    licenses: list[dict[str, object]],
) -> None:
    # Seed 003, "How often do we have to compute (or store) the tail? Eventually first byte = 0
    # so 1/256 of the time. Up until the time this happens, roughly the expected number of left
    # to right minima in a permutation with 256 elements, H_256 = 6.1243... (Because of
    # repetitions, actual number is 7.1204...)"
    assert sum(Fraction(1, k) for k in range(1, 257)) == pytest.approx(6.1243, abs=5e-5)
    # With repeated bytes, from best m a tie (1 in m + 1 of the bytes that tie or beat it)
    # keeps m, a win moves to a uniform best below m: E(m) = (m + 1 + sum_{v<m} E(v)) / m.
    expected, total = [0.0], 0.0
    for m in range(1, 256):
        expected.append((m + 1 + total) / m)
        total += expected[m]
    with_ties = 1 + total / 256
    assert with_ties == pytest.approx(7.1204, abs=5e-5)
    # Measured (7.19, standard error 0.04): the lead bytes of minhash-lead's 128 slots over 40
    # random orders of 4,000 distinct real word 5-shingles each.
    texts = [str(r["text"]) for r in licenses]
    shingles = np.sort(Shingler(ShingleSpec(unit="word", k=5)).shingle_sets(texts).hashes)
    shingles = shingles[np.r_[True, shingles[1:] != shingles[:-1]]]  # distinct
    orders = np.random.default_rng(3).permutation(shingles)[: 40 * 4000].reshape(40, 4000)
    sketcher = LeadByteMinHasher(SketchSpec(kind="minhash-lead", num_perm=128, seed=11))
    leads = np.concatenate([_lead_bytes(sketcher.lead_tables, order).T for order in orders])
    counts = _lead_byte_tail_counts(leads)  # one per slot and order
    measured = counts.mean()
    assert abs(measured - with_ties) < 4 * counts.std() / np.sqrt(counts.shape[0])
    assert abs(measured - 6.1243) > 0.5  # the ties count, as the seed says


def _lead_bytes(tables: np.ndarray, fingerprints: np.ndarray) -> np.ndarray:
    """Slot ``i``'s lead byte of each fingerprint (``(n, slots)``), as the kernel derives it."""
    words = np.zeros((fingerprints.shape[0], tables.shape[0]), dtype=np.uint64)
    for j in range(8):
        byte = ((fingerprints >> np.uint64(8 * j)) & np.uint64(0xFF)).astype(np.int64)
        words ^= tables[:, j, byte].T
    return words.view(np.uint8).reshape(fingerprints.shape[0], -1).astype(np.int64)
