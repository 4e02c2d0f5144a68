"""Sketches: from texts to signature matrices, and the :class:`Signatures` container."""

from neardup.errors import ParameterError
from neardup.params import SketchSpec
from neardup.sketch.base import TextSketcher
from neardup.sketch.bbit import BBitSketcher
from neardup.sketch.bottomk import BottomKSketcher
from neardup.sketch.minhash import (
    LeadByteMinHasher,
    MinHasher,
    SupershingleSketcher,
    minhash_sets,
)
from neardup.sketch.oph import OPHSketcher
from neardup.sketch.signatures import EMPTY_SLOT, FORMAT_VERSION, Signatures
from neardup.sketch.simhash import SimHasher
from neardup.sketch.weighted import IDFWeights, WeightedMinHasher

__all__ = [
    "EMPTY_SLOT",
    "FORMAT_VERSION",
    "SKETCHERS",
    "BBitSketcher",
    "BottomKSketcher",
    "IDFWeights",
    "LeadByteMinHasher",
    "MinHasher",
    "OPHSketcher",
    "Signatures",
    "SimHasher",
    "SupershingleSketcher",
    "TextSketcher",
    "WeightedMinHasher",
    "make_sketcher",
    "minhash_sets",
]

SKETCHERS: dict[str, type[TextSketcher]] = {
    sketcher.kind: sketcher
    for sketcher in (
        OPHSketcher,
        MinHasher,
        LeadByteMinHasher,
        BottomKSketcher,
        BBitSketcher,
        SupershingleSketcher,
        WeightedMinHasher,
        SimHasher,
    )
}
"""Sketch kinds by name, as ``--sketch`` takes them."""


def make_sketcher(spec: SketchSpec, idf: IDFWeights | None = None) -> TextSketcher:
    """The sketcher for ``spec.kind`` (SimHash takes the ``idf`` of ``weighting="tfidf"``).

    An unknown kind lists the valid ones.
    """
    try:
        maker = SKETCHERS[spec.kind]
    except KeyError:
        raise ParameterError(
            f"SketchSpec.kind must be one of {', '.join(map(repr, SKETCHERS))}; got {spec.kind!r}."
        ) from None
    if maker is SimHasher:
        return SimHasher(spec, idf)
    if idf is not None:
        raise ParameterError(f"IDF weights are used by SimHash only, not by {spec.kind!r}.")
    return maker(spec)
