"""What the three indexes share: the :class:`NearIndex` protocol, its :class:`Match`, the checks.

:class:`~neardup.index.LSHIndex` (MinHash/OPH signatures in LSH bands, or SimHash
fingerprints; SQLite or memory), :class:`~neardup.hamming.HammingIndex` (SimHash fingerprints
in memory, saved to a file) and :class:`~neardup.index.VectorIndex` (vectors under a join
metric; SQLite or memory) speak one vocabulary, :class:`NearIndex`: ``add``, ``upsert``,
``delete``, ``get``, ``query(items, threshold=, k=)``, ``info``, ``close``, ``len`` and the
context manager. A query answers with a list of :class:`Match` per item, best first (then by
id); a batch of ids is refused, whole, by the same errors (:func:`check_ids`,
:func:`ids_exist`), and a closed index by :func:`closed_error`. This module sits below all
three, so none needs another's module for it.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol, Self, TypeVar, runtime_checkable

from neardup.errors import IdExistsError, InputError, NeardupWarning, ParameterError, StoreError

__all__ = [
    "Match",
    "NearIndex",
    "Stored",
    "check_ids",
    "check_k",
    "closed_error",
    "ids_exist",
    "ranked",
    "renamed_k",
]

ItemsT_contra = TypeVar("ItemsT_contra", contravariant=True)
"""What an index takes as a batch of items: texts (``Sequence[str]``) or a matrix of vectors."""


@dataclass(frozen=True, slots=True)
class Match:
    """A stored item near a query: its id, and how near, as a similarity or a distance.

    Attributes
    ----------
    id
        The stored item's id.
    similarity
        How similar it is to the query; higher is nearer. For MinHash signatures the estimated
        Jaccard similarity: the fraction of signature slots that agree (1.0 for the same
        normalised text). For SimHash fingerprints (a :class:`~neardup.hamming.HammingIndex`,
        or an :class:`~neardup.index.LSHIndex` of ``kind="simhash"``) the estimated cosine
        ``cos(π distance / bits)`` (Charikar; what ``--verify signature`` compares with a
        SimHash threshold): 1.0 at distance 0, 0.989 at 3 bits of 64, 0.0 at half the bits.
        For a :class:`~neardup.index.VectorIndex` of ``cosine`` the exact cosine; ``None`` for
        one of a distance metric (``hamming``, ``l1``, ``l2``), which measures distance only.
    distance
        How far it is from the query; lower is nearer. The bits between SimHash fingerprints,
        or a :class:`~neardup.index.VectorIndex`'s exact ``hamming``, ``l1`` or ``l2``
        distance; ``None`` for MinHash signatures and cosine vectors, which have none.
    """

    id: str
    similarity: float | None
    distance: float | None = None

    def to_dict(self) -> dict[str, str | float | int]:
        """The match as the CLI and the service print it: only the measures it has.

        Examples
        --------
        >>> Match("a", 0.9).to_dict(), Match("b", 1.0, 0).to_dict(), Match("c", None, 2.5).to_dict()
        ({'id': 'a', 'similarity': 0.9}, {'id': 'b', 'similarity': 1.0, 'distance': 0}, \
{'id': 'c', 'distance': 2.5})
        """
        found: dict[str, str | float | int] = {"id": self.id}
        if self.similarity is not None:
            found["similarity"] = self.similarity
        if self.distance is not None:
            found["distance"] = self.distance
        return found


@runtime_checkable
class Stored(Protocol):
    """What :meth:`NearIndex.get` returns for a stored id: a record of it, by index kind."""

    @property
    def id(self) -> str:
        """The stored item's id."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready values (what the service answers ``GET`` with)."""
        ...


@runtime_checkable
class NearIndex(Protocol[ItemsT_contra]):
    """The vocabulary of every neardup index; ``ItemsT_contra`` is what one batch of items is.

    Semantics shared by all (``tests/index/test_protocol.py`` holds each index to them):
    ids are non-empty strings, unique within a batch; ``add`` refuses a stored id and then
    adds nothing (:class:`~neardup.errors.IdExistsError`); ``upsert`` replaces stored ids;
    ``delete`` ignores unknown ids and returns those it removed, each once, in the order
    given; ``get`` is ``None`` for an unknown id; a query finds no deleted item. After
    ``close`` (and so after a ``with`` block) every call but ``close`` raises
    :class:`~neardup.errors.StoreError`.
    """

    def add(self, ids: Sequence[str], items: ItemsT_contra, /) -> None:
        """Store new items, all or none; an id already stored is an error."""
        ...

    def upsert(self, ids: Sequence[str], items: ItemsT_contra, /) -> None:
        """Store items, replacing stored ones with the same ids, all or none."""
        ...

    def delete(self, ids: Sequence[str], /) -> list[str]:
        """Remove items; return the ids that were stored, each once, in the order given."""
        ...

    def get(self, doc_id: str, /) -> Stored | None:
        """What the index holds about ``doc_id``, or ``None``."""
        ...

    def query(
        self, items: ItemsT_contra, /, *, threshold: float | None = None, k: int | None = None
    ) -> list[list[Match]]:
        """The stored items near each query, best first (then by id).

        ``threshold`` (default: the index's own) keeps the items that reach it; ``k`` alone
        gives the ``k`` best candidates, whatever their measure; both: those reaching the
        threshold, at most ``k``.
        """
        ...

    def info(self) -> dict[str, Any]:
        """``documents`` (the count), ``measure`` and ``header`` (how the index was made)."""
        ...

    def close(self) -> None:
        """Release the index; closing twice is harmless."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    def __len__(self) -> int: ...


def ranked(matches: Sequence[Match], k: int | None) -> list[Match]:
    """``matches`` best first (highest similarity, else smallest distance), then by id; ``k``.

    Examples
    --------
    >>> [m.id for m in ranked([Match("b", 0.5), Match("c", 0.9), Match("a", 0.5)], 2)]
    ['c', 'a']
    >>> [m.id for m in ranked([Match("b", None, 2.0), Match("a", None, 3.0)], None)]
    ['b', 'a']
    """
    ordered = sorted(
        matches,
        key=lambda m: (-m.similarity if m.similarity is not None else m.distance or 0.0, m.id),
    )
    return ordered[:k] if k is not None else ordered


def renamed_k(k: int | None, top_k: int | None, owner: str) -> int | None:
    """``k``, or ``top_k``, its name before the indexes shared one, in its place (with a warning).

    Both given is a :class:`~neardup.errors.ParameterError`.
    """
    if top_k is None:
        return k
    warnings.warn(
        f"{owner}(top_k=) is deprecated: pass k= instead (the same meaning)",
        NeardupWarning,
        stacklevel=3,
    )
    if k is not None:
        raise ParameterError(f"{owner}: give k only (top_k is its deprecated name), not both.")
    return top_k


def check_k(k: int | None) -> None:
    """Refuse a ``k`` that is not ``None`` or a whole number of at least 1.

    Examples
    --------
    >>> check_k(0)
    Traceback (most recent call last):
    ...
    neardup.errors.ParameterError: k must be None or an int >= 1; got 0.
    """
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ParameterError(f"k must be None or an int >= 1; got {k!r}.")


def closed_error(name: str) -> StoreError:
    """The error of any call but ``close`` on a closed index (``name``: its class).

    Examples
    --------
    >>> print(closed_error("VectorIndex"))
    this VectorIndex is closed: open the index again to use it
    """
    return StoreError(f"this {name} is closed: open the index again to use it")


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
