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
from neardup.sketch.weighted import WeightedMinHasher

__all__ = [
    "EMPTY_SLOT",
    "FORMAT_VERSION",
    "SKETCHERS",
    "BBitSketcher",
    "BottomKSketcher",
    "LeadByteMinHasher",
    "MinHasher",
    "OPHSketcher",
    "Signatures",
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
    )
}
"""Sketch kinds by name, as ``--sketch`` takes them."""


def make_sketcher(spec: SketchSpec) -> TextSketcher:
    """The sketcher for ``spec.kind``; an unknown kind lists the valid ones."""
    try:
        maker = SKETCHERS[spec.kind]
    except KeyError:
        raise ParameterError(
            f"SketchSpec.kind must be one of {', '.join(map(repr, SKETCHERS))}; got {spec.kind!r}."
        ) from None
    return maker(spec)
