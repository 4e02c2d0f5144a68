"""What both indexes share: the :class:`Match` a query answers with, and the checks on ids.

:class:`~neardup.index.LSHIndex` (MinHash/OPH signatures in LSH bands, or SimHash
fingerprints; SQLite) and :class:`~neardup.hamming.HammingIndex` (SimHash fingerprints in
memory) speak one
vocabulary: ``add``, ``upsert``, ``delete``, ``get``, ``query``, ``query_signatures`` and
``info``. A query answers with a list of :class:`Match`, best first, and a batch of ids is
refused, whole, by the same errors (:func:`check_ids`, :func:`ids_exist`). This module sits
below both, so neither needs the other's module for it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from neardup.errors import IdExistsError, InputError

__all__ = ["Match", "check_ids", "ids_exist"]


@dataclass(frozen=True, slots=True)
class Match:
    """A stored document near a query.

    Attributes
    ----------
    id
        The stored document's id.
    similarity
        How similar it is to the query, estimated from the sketches; 1.0 at best. For MinHash
        signatures the estimated Jaccard similarity: the fraction of signature slots that agree
        (1.0 for the same normalised text). For SimHash fingerprints (a
        :class:`~neardup.hamming.HammingIndex`, or an :class:`~neardup.index.LSHIndex` of
        ``kind="simhash"``) the estimated cosine ``cos(π distance / bits)``
        (Charikar; what ``--verify signature`` compares with a SimHash threshold): 1.0 at
        distance 0, 0.989 at 3 bits of 64, 0.0 at half the bits.
    distance
        The bits between the query's SimHash fingerprint and the stored one; ``None`` for
        MinHash signatures, which have no distance.
    """

    id: str
    similarity: float
    distance: int | None = None

    def to_dict(self) -> dict[str, str | float | int]:
        """The match as the CLI and the service print it: ``distance`` only where there is one.

        Examples
        --------
        >>> Match("a", 0.9).to_dict(), Match("b", 1.0, 0).to_dict()
        ({'id': 'a', 'similarity': 0.9}, {'id': 'b', 'similarity': 1.0, 'distance': 0})
        """
        found: dict[str, str | float | int] = {"id": self.id, "similarity": self.similarity}
        if self.distance is not None:
            found["distance"] = self.distance
        return found


def check_ids(ids: Sequence[str]) -> None:
    """Refuse a batch of ids before anything is stored: each a non-empty string, none twice.

    Raises
    ------
    InputError
        An id is not a non-empty string, or appears twice in the batch.

    Examples
    --------
    >>> check_ids(["a", "b", "a"])
    Traceback (most recent call last):
    ...
    neardup.errors.InputError: id 'a' appears twice in one batch; ids must be unique
    """
    for doc_id in ids:
        if not isinstance(doc_id, str) or not doc_id:
            raise InputError(f"document ids must be non-empty strings; got {doc_id!r}")
    if len(set(ids)) != len(ids):
        repeated = next(i for i, count in Counter(ids).items() if count > 1)
        raise InputError(f"id {repeated!r} appears twice in one batch; ids must be unique")


def ids_exist(ids: Sequence[str], consequence: str) -> IdExistsError:
    """The error for ids that are already stored: how many, the first five, and what follows.

    Examples
    --------
    >>> print(ids_exist(["a"], "nothing of this batch was added"))
    1 id already in the index ('a'); nothing of this batch was added
    """
    shown = ", ".join(map(repr, ids[:5])) + (", ..." if len(ids) > 5 else "")
    return IdExistsError(
        f"{len(ids):,} id{'s' if len(ids) != 1 else ''} already in the index ({shown}); "
        f"{consequence}",
        ids=ids,
    )
