"""A small TOML writer for nested dicts of scalars (what ``DedupConfig.to_dict()`` gives).

``tomllib`` reads TOML but does not write it; configs need only tables, strings, integers,
floats and booleans, so a few lines do without a dependency. ``None`` values are left out (TOML
has no null; a field left out takes its default, which is None for every field that may be).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from neardup.errors import ParameterError

__all__ = ["toml_text"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def toml_text(data: Mapping[str, Any], comments: Iterable[str] = ()) -> str:
    r"""``data`` as a TOML document, after the ``comments`` (one ``#`` line each).

    Scalars of a table come before its sub-tables; ``None`` values are left out.

    Examples
    --------
    >>> print(toml_text({"a": 1, "b": None, "t": {"s": 'say "hi"', "on": True, "l": ["x"]}},
    ...                 ["made"]))
    # made
    a = 1
    <BLANKLINE>
    [t]
    s = "say \"hi\""
    on = true
    l = ["x"]
    <BLANKLINE>
    """
    lines = [f"# {line}".rstrip() for comment in comments for line in comment.split("\n")]
    _table(lines, (), data)
    return "\n".join(lines) + "\n"


def _table(lines: list[str], path: tuple[str, ...], data: Mapping[str, Any]) -> None:
    tables = [(k, v) for k, v in data.items() if isinstance(v, Mapping)]
    scalars = [(k, v) for k, v in data.items() if v is not None and not isinstance(v, Mapping)]
    if path and (scalars or not tables):
        lines += ["", f"[{'.'.join(map(_key, path))}]"]
    lines += [f"{_key(k)} = {_value(v, (*path, k))}" for k, v in scalars]
    for key, table in tables:
        _table(lines, (*path, key), table)


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _value(value: Any, where: tuple[str, ...]) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(item, where) for item in value) + "]"
    raise ParameterError(
        f"toml_text writes str, int, float, bool and None values, and arrays of them, in "
        f"nested dicts; got "
        f"{type(value).__name__} at {'.'.join(where)!r}."
    )


def _float(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def _string(value: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, and DEL must be escaped too."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
