"""Two documents side by side: exact similarities and every sketch's estimate of them.

What ``neardup compare A B`` prints: the exact Jaccard similarity of the shingle sets, the
containment of each document in the other, the cosine of the shingle-count vectors, and the
estimate of every sketch neardup has, each made with the same shingling and seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neardup.lsh.banding import CandidatePairs
from neardup.params import SketchSpec
from neardup.sketch import SKETCHERS
from neardup.sketch.bbit import BBIT_WIDTHS, bbit_estimate, pack_bbit
from neardup.sketch.bottomk import BottomKSketcher, containment, resemblance
from neardup.text.shingle import Shingler
from neardup.verify import estimate_jaccard

__all__ = ["Comparison", "compare"]


@dataclass(frozen=True, slots=True)
class Comparison:
    """Exact similarities of two documents and the sketches' estimates.

    ``estimates`` maps a sketch name (``minhash``, ``oph``, ``bbit1`` .. ``bbit8``,
    ``bottomk``, ``bottomk-containment``) to its estimate.
    """

    num_shingles: tuple[int, int]
    jaccard: float
    containment_a_in_b: float
    containment_b_in_a: float
    cosine: float
    estimates: dict[str, float]


def compare(a: str, b: str, spec: SketchSpec | None = None) -> Comparison:
    """Compare two texts exactly and through every sketch made with ``spec``'s settings.

    Examples
    --------
    >>> c = compare("a b c d e f g h i j", "a b c d e f g h i j k l")
    >>> round(c.jaccard, 3), c.containment_a_in_b, round(c.containment_b_in_a, 3)
    (0.75, 1.0, 0.75)
    """
    spec = spec if spec is not None else SketchSpec()
    sets, counts = Shingler(spec.shingle, spec.normalize).shingle_counts([a, b])
    set_a, set_b = sets.set_of(0), sets.set_of(1)
    count_a = counts[sets.offsets[0] : sets.offsets[1]].astype(np.float64)
    count_b = counts[sets.offsets[1] : sets.offsets[2]].astype(np.float64)
    _, in_a, in_b = np.intersect1d(set_a, set_b, assume_unique=True, return_indices=True)
    shared = in_a.shape[0]
    union = set_a.shape[0] + set_b.shape[0] - shared
    norm = float(np.linalg.norm(count_a) * np.linalg.norm(count_b))
    pair = CandidatePairs(first=np.array([0]), second=np.array([1]))
    estimates: dict[str, float] = {}
    for kind, maker in sorted(SKETCHERS.items()):
        signatures = maker(SketchSpec.from_dict({**spec.to_dict(), "kind": kind})).sketch([a, b])
        estimates[kind] = float(estimate_jaccard(signatures, pair)[0])
        if kind == spec.kind:
            for bits in BBIT_WIDTHS:
                estimates[f"bbit{bits}"] = float(
                    bbit_estimate(pack_bbit(signatures, bits), pair)[0]
                )
    bottom = BottomKSketcher(spec).sketch([a, b])
    estimates["bottomk"] = float(resemblance(bottom, pair)[0])
    estimates["bottomk-containment"] = float(containment(bottom, pair)[0][0])
    return Comparison(
        num_shingles=(int(set_a.shape[0]), int(set_b.shape[0])),
        jaccard=shared / union if union else 0.0,
        containment_a_in_b=shared / set_a.shape[0] if set_a.shape[0] else 0.0,
        containment_b_in_a=shared / set_b.shape[0] if set_b.shape[0] else 0.0,
        cosine=float(count_a[in_a] @ count_b[in_b]) / norm if norm else 0.0,
        estimates=estimates,
    )
