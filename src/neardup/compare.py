"""Two documents side by side: exact similarities and the sketches' estimates of them.

What ``neardup compare A B`` prints: the exact Jaccard similarity of the shingle sets, the
containment of each document in the other, the cosine of the shingle-count vectors, and the
estimates of the sketches asked for (dedup's default, OPH, unless told; ``all``: every sketch
neardup has), each made with the same shingling and seed. Only the sketches asked for are made,
so only their kernels are compiled on a first run.

A text without a shingle (empty, only separators, or fewer tokens than a shingle needs)
matches nothing here, as in ``neardup dedup``, which keeps such texts out of every candidate
search: every estimate is 0, no supershingle is shared and there is no SimHash distance. Only
an exact copy of its words (:attr:`Comparison.exact_copy`) is a duplicate of it there.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from neardup.candidates import estimate
from neardup.errors import ParameterError, advice
from neardup.kinds import SKETCH_KINDS, estimated_kinds
from neardup.pairs import CandidatePairs
from neardup.params import Projection, SketchSpec
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

    ``estimates`` maps the name of each sketch asked for (one of
    :data:`~neardup.kinds.ESTIMATED_KINDS`, with ``bbit1`` .. ``bbit8`` for the b-bit widths,
    and ``bottomk-containment`` beside ``bottomk`` for the containment of A in B) to its
    estimate; ``weighted`` estimates ``weighted_jaccard``, the others ``jaccard``. With the
    supershingle sketch, ``shared_features`` counts the supershingles of ``preset`` the two
    documents share, of ``num_features``; with SimHash, ``simhash_distance`` is the Hamming
    distance of their weighted SimHashes (``simhash_bits`` bits, term-frequency weights: two
    documents are no corpus to learn IDF from), about ``bits * arccos(cosine) / pi``, and
    ``estimates["simhash"]`` is the cosine it implies. Without that sketch, these are None.

    When either text has no shingle (``num_shingles`` holds a 0) the two match nothing, as in
    ``neardup dedup``: every estimate is 0.0, ``shared_features`` is 0 and
    ``simhash_distance`` is ``None`` (no fingerprint to measure from). ``exact_copy`` says
    whether dedup would group the two as exact duplicates: the same normalised words, at least
    one of them, whatever their shingles.
    """

    num_shingles: tuple[int, int]
    jaccard: float
    containment_a_in_b: float
    containment_b_in_a: float
    cosine: float
    weighted_jaccard: float
    estimates: dict[str, float]
    shared_features: int | None
    num_features: int | None
    simhash_distance: int | None
    exact_copy: bool
    preset: str | None
    simhash_bits: int | None

    @property
    def has_shingles(self) -> bool:
        """Whether both texts have a shingle (else they match nothing)."""
        return min(self.num_shingles) > 0


def compare(
    a: str,
    b: str,
    spec: SketchSpec | None = None,
    *,
    sketches: Collection[str] | None = None,
    preset: str | None = None,
    simhash_bits: int | None = None,
    projection: Projection | None = None,
) -> Comparison:
    """Compare two texts exactly and through the sketches ``sketches`` names.

    Parameters
    ----------
    a, b
        The texts.
    spec
        The shingling, normalisation, ``num_perm`` and seed of every sketch; its kind's own
        options (``preset`` of a supershingle spec, ``simhash_bits`` and ``projection`` of a
        SimHash spec) apply to that kind's estimate, other kinds' take their defaults.
    sketches
        Kinds of :data:`~neardup.kinds.ESTIMATED_KINDS` to estimate with, or ``{"all"}``;
        default: the kind of ``spec`` (OPH by default). Only these are made (and their kernels
        compiled).
    preset, simhash_bits, projection
        The supershingles' preset and the SimHash's bits and hyperplanes, over ``spec``'s.

    Raises
    ------
    ParameterError
        A SimHash ``spec`` weighted by TF-IDF: two documents are no corpus to learn IDF from;
        a sketch compare does not know.

    Examples
    --------
    >>> c = compare("a b c d e f g h i j", "a b c d e f g h i j k l")
    >>> round(c.jaccard, 3), c.containment_a_in_b, round(c.containment_b_in_a, 3)
    (0.75, 1.0, 0.75)
    >>> list(c.estimates), c.simhash_distance
    (['oph'], None)

    Texts without a shingle match nothing, whatever the sketches would say:

    >>> c = compare("", "", sketches={"all"})
    >>> c.has_shingles, set(c.estimates.values()), c.shared_features, c.simhash_distance
    (False, {0.0}, 0, None)
    """
    spec = spec if spec is not None else SketchSpec()
    kinds = estimated_kinds(sketches if sketches is not None else {spec.kind})
    if spec.kind == "simhash" and spec.weighting != "tf":
        raise ParameterError(
            "compare weighs SimHash shingles by term frequency (two documents are no corpus to "
            f"learn IDF from); got SketchSpec.weighting {spec.weighting!r}"
            + advice("--weighting", ": drop --weighting.", ".")
        )
    own = {k: getattr(spec, k) for k in SKETCH_KINDS[spec.kind].options}
    preset = preset if preset is not None else str(own.get("preset", "altavista"))
    if preset not in PRESETS:
        raise ParameterError(f"compare preset must be one of {', '.join(PRESETS)}; got {preset!r}.")
    simhash = {
        "simhash_bits": simhash_bits if simhash_bits is not None else own.get("simhash_bits", 64),
        "projection": projection if projection is not None else own.get("projection", "gaussian"),
        "weighting": "tf",
    }
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
    shared_features: int | None = None
    num_features: int | None = None
    distance: int | None = None
    for kind in kinds:
        if kind == "bbit":
            for bits in BBIT_WIDTHS:
                estimates[f"bbit{bits}"] = sketch(kind, bbits=bits)[0]
        elif kind == "simhash":
            estimates[kind], simhashes = sketch(kind, **simhash)
            distance = int(hamming_distance(*simhashes.values))
        elif kind == "supershingle":
            estimates[kind] = sketch(kind, preset=preset)[0]
            num_perm = max(spec.num_perm, PRESETS[preset].num_samples)
            wide = sketch("supershingle", preset=preset, num_perm=num_perm)[1]
            features = supershingles(wide.values, PRESETS[preset])
            shared_features = int((features[0] == features[1]).sum())
            num_features = int(features.shape[1])
        elif kind == "bottomk":
            estimates[kind], bottom = sketch(kind)
            estimates["bottomk-containment"] = float(containment(bottom, pair)[0][0])
        else:
            estimates[kind] = sketch(kind)[0]
    if min(set_a.shape[0], set_b.shape[0]) == 0:  # no shingle: matched with nothing, as in dedup
        estimates = dict.fromkeys(estimates, 0.0)
        shared_features = None if shared_features is None else 0
        distance = None
    return Comparison(
        num_shingles=(int(set_a.shape[0]), int(set_b.shape[0])),
        jaccard=shared / union if union else 0.0,
        containment_a_in_b=shared / set_a.shape[0] if set_a.shape[0] else 0.0,
        containment_b_in_a=shared / set_b.shape[0] if set_b.shape[0] else 0.0,
        cosine=float(count_a[in_a] @ count_b[in_b]) / norm if norm else 0.0,
        weighted_jaccard=overlap / total if total else 0.0,
        estimates=estimates,
        shared_features=shared_features,
        num_features=num_features,
        simhash_distance=distance,
        exact_copy=_exact_copy(a, b, spec),
        preset=preset if "supershingle" in kinds else None,
        simhash_bits=int(simhash["simhash_bits"]) if "simhash" in kinds else None,
    )


def _exact_copy(a: str, b: str, spec: SketchSpec) -> bool:
    """Whether dedup groups ``a`` and ``b`` as exact duplicates.

    That is: equal fingerprints of their normalised tokens, and not the fingerprint of a text
    without a token (such texts are never grouped).
    """
    sketcher = make_sketcher(spec.with_kind("oph"))
    prints = sketcher.sketch([a, b]).fingerprints
    return bool(
        (prints[0] == prints[1]).all() and (prints[0] != sketcher.no_token_fingerprint).any()
    )
