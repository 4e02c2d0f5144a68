"""Sketches: from texts to signature matrices, and the :class:`Signatures` container."""

from neardup.errors import ParameterError
from neardup.kinds import SKETCH_KINDS, load
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
    name: load(kind.maker) for name, kind in SKETCH_KINDS.items()
}
"""The makers of :data:`neardup.kinds.SKETCH_KINDS`, by kind name."""


def make_sketcher(spec: SketchSpec, idf: IDFWeights | None = None) -> TextSketcher:
    """The sketcher for ``spec.kind``.

    A kind that ``uses_idf`` takes the ``idf`` of ``weighting="tfidf"``.
    """
    maker = SKETCHERS[spec.kind]  # the spec has checked its kind against the registry
    if SKETCH_KINDS[spec.kind].uses_idf:
        return maker(spec, idf)  # type: ignore[call-arg]
    if idf is not None:
        users = ", ".join(name for name, kind in SKETCH_KINDS.items() if kind.uses_idf)
        raise ParameterError(f"IDF weights are used by {users} only, not by {spec.kind!r}.")
    return maker(spec)
