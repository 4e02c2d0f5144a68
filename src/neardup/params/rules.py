"""The specs' validation: each field's rule as data, one validator, one message format.

A spec declares its constraints in ``_RULES`` (a :class:`Rule` per field); :class:`Spec`
enforces them on construction with one message, e.g. *"LSHSpec.threshold must be a float in
(0, 1]; got 1.5."*, and converts to and from a plain dict, nested specs included. Options that
registry entries own (a sketch kind's, a candidate family's) are checked by
:func:`check_options`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Self, cast

from neardup.errors import ParameterError

MAX_SEED = 2**63 - 1
"""The largest seed a spec takes."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One field's constraint: a predicate and the words that describe what it allows.

    ``bounds``: the closed range of a numeric field, for a caller that takes the value in other
    units (``--batch-mb`` for :attr:`~neardup.params.ReadSpec.batch_bytes`) and says the range
    in its own.
    """

    allowed: str
    check: Callable[[Any], bool]
    bounds: tuple[int, int] | None = None


def is_int(value: Any) -> bool:
    """An int, not a bool (which Python counts as one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def integer(low: int, high: int) -> Rule:
    """An int in the closed range [low, high]."""
    return Rule(f"an int in [{low}, {high}]", lambda v: is_int(v) and low <= v <= high, (low, high))


def optional_integer(low: int, high: int) -> Rule:
    """None, or an int in [low, high]."""
    inner = integer(low, high)
    return Rule(f"None or {inner.allowed}", lambda v: v is None or inner.check(v), inner.bounds)


def real(low: float, high: float, *, low_open: bool = False, high_open: bool = False) -> Rule:
    """A finite float in the given interval (ints are accepted)."""
    left, right = "(" if low_open else "[", ")" if high_open else "]"

    def check(v: Any) -> bool:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            return False
        above = v > low if low_open else v >= low
        below = v < high if high_open else v <= high
        return above and below

    return Rule(f"a float in {left}{low}, {high}{right}", check)


def optional_real(low: float, high: float, *, low_open: bool = False) -> Rule:
    """A finite float in the interval (:func:`real`), or None: a default chosen elsewhere.

    The message names the float only: None is no value one types on the command line.
    """
    inner = real(low, high, low_open=low_open)
    return Rule(inner.allowed, lambda v: v is None or inner.check(v))


def one_of(*values: str) -> Rule:
    """One of the given strings."""
    listed = ", ".join(repr(v) for v in values)
    return Rule(f"one of {listed}", lambda v: isinstance(v, str) and v in values)


def boolean() -> Rule:
    """True or False."""
    return Rule("a bool", lambda v: isinstance(v, bool))


def text() -> Rule:
    """A non-empty string."""
    return Rule("a non-empty str", lambda v: isinstance(v, str) and v != "")


def optional_text() -> Rule:
    """None, or a non-empty string."""
    return Rule("None or a non-empty str", lambda v: v is None or (isinstance(v, str) and v != ""))


def _fail(spec: object, name: str, allowed: str, value: Any) -> ParameterError:
    return ParameterError(f"{type(spec).__name__}.{name} must be {allowed}; got {value!r}.")


class Spec:
    """Shared behaviour of the specs: rule checking, dict round trip."""

    __slots__ = ()
    _RULES: ClassVar[Mapping[str, Rule]] = {}
    _NESTED: ClassVar[Mapping[str, type[Spec]]] = {}
    """The fields that hold a spec of their own, and its class (read back by ``from_dict``)."""

    def _validate(self) -> None:
        for name, rule in self._RULES.items():
            value = getattr(self, name)
            if not rule.check(value):
                raise _fail(self, name, rule.allowed, value)
        for f in fields(cast(Any, self)):
            value = getattr(self, f.name)
            if f.name not in self._RULES and not isinstance(value, Spec):
                raise TypeError(f"{type(self).__name__}.{f.name} has no validation rule")

    def to_dict(self) -> dict[str, Any]:
        """A plain, JSON-serialisable dict of every field (nested specs become dicts)."""
        out: dict[str, Any] = {}
        for f in fields(cast(Any, self)):
            value = getattr(self, f.name)
            out[f.name] = value.to_dict() if isinstance(value, Spec) else value
        return out

    @classmethod
    def _implied_dropped(cls, data: Mapping[str, Any]) -> Mapping[str, Any]:
        """``data`` without the keys that a stored dict may hold but that say nothing."""
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "") -> Self:
        """Build the spec from a dict; unknown keys are a :class:`ParameterError` naming them."""
        data = cls._implied_dropped(data)
        known = {f.name: f for f in fields(cast(Any, cls))}
        unknown = sorted(set(data) - set(known))
        if unknown:
            place = f" in {where}" if where else ""
            raise ParameterError(
                f"unknown key(s) {', '.join(map(repr, unknown))}{place} for {cls.__name__}; "
                f"valid keys: {', '.join(known)}."
            )
        kwargs: dict[str, Any] = {}
        for name, value in data.items():
            nested = cls._NESTED.get(name)
            if nested is not None and isinstance(value, Mapping):
                sub = f"{where}.{name}" if where else name
                kwargs[name] = nested.from_dict(value, where=sub)
            else:
                kwargs[name] = value
        return cls(**kwargs)


def unset_dropped(data: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """``data`` without the keys of ``names`` whose value is None (fields added later)."""
    return {k: v for k, v in data.items() if k not in names or v is not None}


def options_of(table: Mapping[str, Any], spec: type[Spec]) -> dict[str, Any]:
    """The fields of ``spec`` that some entry of ``table`` (kinds, families) owns, and defaults.

    An entry that does not own one leaves it at its default.
    """
    return {
        f.name: f.default
        for f in fields(cast(Any, spec))
        if any(f.name in entry.options for entry in table.values())
    }


def check_options(
    spec: Spec, selector: str, table: Mapping[str, Any], defaults: Mapping[str, Any]
) -> None:
    """Refuse an option of another entry than the one ``selector`` names, set off its default."""
    chosen = getattr(spec, selector)
    if chosen is None:
        return
    for name, default in defaults.items():
        value = getattr(spec, name)
        if name not in table[chosen].options and value != default:
            owners = " or ".join(repr(key) for key, entry in table.items() if name in entry.options)
            raise ParameterError(
                f"{type(spec).__name__}.{name} applies to {selector} {owners}, not to "
                f"{chosen!r}; got {value!r}. Leave it out, or choose that {selector}."
            )


def only_chosen(data: dict[str, Any], defaults: Mapping[str, Any], chosen: Any) -> dict[str, Any]:
    """``data`` without the options (``defaults``' keys) that the ``chosen`` entry does not own."""
    return {k: v for k, v in data.items() if k not in defaults or k in chosen.options}


def defaults_dropped(data: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without the options still at their defaults (they are implied)."""
    return {k: v for k, v in data.items() if k not in defaults or v != defaults[k]}
