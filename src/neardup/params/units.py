"""How passage-level dedup cuts documents into units (``neardup dedup --unit``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, cast

from neardup.errors import ParameterError
from neardup.params.rules import (
    Rule,
    Spec,
    boolean,
    integer,
    one_of,
)

UnitKind = Literal["line", "paragraph", "sentences"]


@dataclass(frozen=True, slots=True, kw_only=True)
class UnitSpec(Spec):
    """How passage-level dedup cuts documents into units (``neardup dedup --unit``).

    Parameters
    ----------
    kind
        ``"line"``; ``"paragraph"`` (lines up to a blank line); ``"sentences"`` (every run of
        ``num_sentences`` consecutive sentences of a document, overlapping, as datatrove's
        sentence dedup: a document with fewer sentences is one unit).
    num_sentences
        Sentences per unit (``kind="sentences"`` only; 1 otherwise).
    min_chars
        Units with fewer characters (whitespace left out) are never removed (0: every unit
        that is not blank is a candidate).
    min_doc_chars
        A document left with fewer characters (whitespace left out) after its repeated units
        are removed is dropped from the kept corpus (0: none is).
    fold_digits
        Match units with every ASCII digit read as 0, as CCNet does, so page footers and
        headers that differ only by their page number or date are one unit.

    Examples
    --------
    >>> UnitSpec.parse("sentences:3").num_sentences
    3
    """

    kind: UnitKind = "line"
    num_sentences: int = 1
    min_chars: int = 0
    min_doc_chars: int = 0
    fold_digits: bool = True

    _RULES: ClassVar[Mapping[str, Rule]] = {
        "kind": one_of("line", "paragraph", "sentences"),
        "num_sentences": integer(1, 1024),
        "min_chars": integer(0, 2**31),
        "min_doc_chars": integer(0, 2**31),
        "fold_digits": boolean(),
    }

    def __post_init__(self) -> None:
        self._validate()
        if self.kind != "sentences" and self.num_sentences != 1:
            raise ParameterError(
                f"UnitSpec.num_sentences applies to kind='sentences'; got "
                f"{self.num_sentences!r} with kind={self.kind!r}."
            )

    @classmethod
    def parse(cls, value: str, **rest: Any) -> UnitSpec:
        """The spec of ``--unit``: ``line``, ``paragraph`` or ``sentences:K``."""
        kind, _, count = value.partition(":")
        if kind == "sentences" and count:
            if not count.isdigit():
                raise ParameterError(
                    f"--unit sentences:K needs a whole number of sentences; got {value!r}."
                )
            return cls(kind="sentences", num_sentences=int(count), **rest)
        if count or kind not in ("line", "paragraph", "sentences"):
            raise ParameterError(f"--unit must be line, paragraph or sentences:K; got {value!r}.")
        return cls(kind=cast(UnitKind, kind), **rest)

    @property
    def label(self) -> str:
        """The ``--unit`` value that gives this spec's cut."""
        return f"sentences:{self.num_sentences}" if self.kind == "sentences" else self.kind
