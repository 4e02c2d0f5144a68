"""Sketches: from texts to signature matrices, and the :class:`Signatures` container."""

from neardup.errors import ParameterError
from neardup.params import SketchSpec
from neardup.sketch.base import TextSketcher
from neardup.sketch.minhash import MinHasher, minhash_sets
from neardup.sketch.oph import OPHSketcher
from neardup.sketch.signatures import EMPTY_SLOT, FORMAT_VERSION, Signatures

__all__ = [
    "EMPTY_SLOT",
    "FORMAT_VERSION",
    "SKETCHERS",
    "MinHasher",
    "OPHSketcher",
    "Signatures",
    "TextSketcher",
    "make_sketcher",
    "minhash_sets",
]

SKETCHERS: dict[str, type[TextSketcher]] = {"minhash": MinHasher, "oph": OPHSketcher}
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
