"""Text: normalisation into a :class:`~neardup._types.Batch`, tokenising and shingling."""

from neardup.text.normalize import codepoint_classes, normalize, normalize_batch
from neardup.text.shingle import Shingler, ShingleSets

__all__ = ["ShingleSets", "Shingler", "codepoint_classes", "normalize", "normalize_batch"]
