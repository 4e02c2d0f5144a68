"""SimHash recall against exact TF-IDF cosine on real text, as Charikar's theorem predicts.

With Gaussian hyperplanes each bit of two vectors at angle ``θ`` differs with probability
``θ / π``, independently, so a pair is within ``h`` bits with probability
``P(Binomial(64, θ / π) <= h)``. Over the licence pairs of cosine >= 0.9 (seed 004's similar
pairs), the number found within ``h`` must match the sum of those probabilities; the tolerance
is three standard errors of the mean over seeds, measured.
"""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from neardup import CandidatePairs, IDFWeights, ShingleSpec, SimHasher, SketchSpec
from neardup.sketch.weighted import cosine_similarity
from tests import reference

SPEC = SketchSpec(kind="simhash", shingle=ShingleSpec(k=1), weighting="tfidf")
SEEDS = 12


def _within(h: int, flip: np.ndarray) -> np.ndarray:
    return sum(comb(64, d) * flip**d * (1 - flip) ** (64 - d) for d in range(h + 1))


@pytest.mark.parametrize("h", [3, 7])
@pytest.mark.slow
def test_pairs_within_h_number_what_the_angle_predicts(
    licenses: list[dict[str, object]], h: int
) -> None:
    texts = list(dict.fromkeys(str(r["text"]) for r in licenses[:1200]))
    idf = IDFWeights(SPEC).fit(texts)
    first, second = np.triu_indices(len(texts), 1)
    everything = CandidatePairs(first=first, second=second)
    cosine = cosine_similarity(idf.transform(texts), everything)
    similar = cosine >= 0.9
    first, second = first[similar], second[similar]
    assert first.shape[0] >= 200
    flip = np.arccos(np.minimum(cosine[similar], 1.0)) / np.pi
    expected = float(_within(h, flip).sum())
    found = []
    for seed in range(SEEDS):
        spec = SketchSpec.from_dict({**SPEC.to_dict(), "seed": seed})
        values = SimHasher(spec, idf).sketch(texts).values
        distance = reference.hamming(values[first], values[second])
        found.append(int((distance <= h).sum()))
    error = 3 * np.std(found, ddof=1) / np.sqrt(SEEDS) + 1
    assert abs(np.mean(found) - expected) <= error, (np.mean(found), expected, error)
