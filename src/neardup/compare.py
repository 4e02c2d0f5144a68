"""Two documents side by side: exact similarities and every sketch's estimate of them.

What ``neardup compare A B`` prints: the exact Jaccard similarity of the shingle sets, the
containment of each document in the other, the cosine of the shingle-count vectors, and the
estimate of every sketch neardup has, each made with the same shingling and seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neardup.candidates import estimate
from neardup.kinds import SKETCH_KINDS
from neardup.pairs import CandidatePairs
from neardup.params import SketchSpec
from neardup.sketch import make_sketcher
from neardup.sketch.bbit import BBIT_WIDTHS
from neardup.sketch.bottomk import containment
from neardup.sketch.features import PRESETS, supershingles
from neardup.sketch.signatures import Signatures
from neardup.sketch.simhash import hamming_distance
from neardup.text.shingle import Shingler

__all__ = ["Comparison", "compare"]


@dataclass(frozen=True, slots=True)
class Comparison:
    """Exact similarities of two documents and the sketches' estimates.

    ``estimates`` maps a sketch name (every kind of :data:`~neardup.kinds.SKETCH_KINDS`, with
    ``bbit1`` .. ``bbit8`` for the b-bit widths, and ``bottomk-containment`` for the
    containment of A in B) to its estimate; ``weighted`` estimates ``weighted_jaccard``, the
    others ``jaccard``. ``shared_features`` counts the supershingles of ``spec.preset`` the two
    documents share, of ``num_features``; ``simhash_distance`` is the Hamming distance of their
    weighted SimHashes (``spec.simhash_bits`` bits, term-frequency weights: two documents are
    no corpus to learn IDF from), about ``bits * arccos(cosine) / pi``; ``estimates["simhash"]``
    is the cosine it implies.
    """

    num_shingles: tuple[int, int]
    jaccard: float
    containment_a_in_b: float
    containment_b_in_a: float
    cosine: float
    weighted_jaccard: float
    estimates: dict[str, float]
    shared_features: int
    num_features: int
    simhash_distance: int


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
    overlap = float(np.minimum(count_a[in_a], count_b[in_b]).sum())
    total = float(count_a.sum() + count_b.sum()) - overlap
    pair = CandidatePairs(first=np.array([0]), second=np.array([1]))

    def sketch(kind: str, **options: object) -> tuple[float, Signatures]:
        """Both texts sketched by ``kind`` with ``spec``'s common settings, and the estimate."""
        signatures = make_sketcher(spec.with_kind(kind, **options)).sketch([a, b])
        return float(estimate(signatures, pair)[0]), signatures

    estimates: dict[str, float] = {}
    for kind in SKETCH_KINDS:
        if kind == "bbit":
            for bits in BBIT_WIDTHS:
                estimates[f"bbit{bits}"] = sketch(kind, bbits=bits)[0]
        elif kind == "simhash":
            estimates[kind], simhashes = sketch(kind, weighting="tf")
        elif kind == "canonical":
            continue  # one fingerprint, equal or not: no estimate of a similarity
        else:
            estimates[kind] = sketch(kind)[0]
    estimates["bottomk-containment"] = float(containment(sketch("bottomk")[1], pair)[0][0])
    preset = PRESETS[spec.preset]
    num_perm = max(spec.num_perm, preset.num_samples)
    wide = sketch("supershingle", preset=spec.preset, num_perm=num_perm)[1]
    features = supershingles(wide.values, preset)
    return Comparison(
        num_shingles=(int(set_a.shape[0]), int(set_b.shape[0])),
        jaccard=shared / union if union else 0.0,
        containment_a_in_b=shared / set_a.shape[0] if set_a.shape[0] else 0.0,
        containment_b_in_a=shared / set_b.shape[0] if set_b.shape[0] else 0.0,
        cosine=float(count_a[in_a] @ count_b[in_b]) / norm if norm else 0.0,
        weighted_jaccard=overlap / total if total else 0.0,
        estimates=estimates,
        shared_features=int((features[0] == features[1]).sum()),
        num_features=int(features.shape[1]),
        simhash_distance=int(hamming_distance(*simhashes.values)),
    )
