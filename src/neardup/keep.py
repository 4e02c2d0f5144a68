"""The values ``keep_by`` chooses representatives by: one comparable column per field.

``DedupConfig.keep_by`` names fields of the records (``"quality:max"``, ``"crawl_date"``,
``"priority:min"``); :func:`~neardup.cluster.preference_order` ranks the documents by them. A
field's values are compared as one type over the whole run, whichever input they come from:
numbers (JSON numbers, Parquet numeric, date and time columns, CSV columns whose every value
is a number) as 64-bit floats, strings by code point (ISO dates sort as dates). A record
without the field, or with null (or NaN), is preferred last whatever the direction. Anything
else (a boolean, an array, an object, a field holding numbers in some records and strings in
others) is an error naming where.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from neardup.errors import InputError, remedy
from neardup.params import DedupConfig, KeepDirection

__all__ = ["KeepValues", "comparable", "joined_column"]


@dataclass(frozen=True, slots=True)
class KeepValues:
    """Each document's values of the ``keep_by`` fields, most significant first.

    ``columns`` are Arrow arrays, one per field, of ``float64`` or ``large_string`` with
    nulls where a record has no value (:func:`comparable`); ``directions`` say which end
    is preferred.
    """

    columns: tuple[Any, ...]
    directions: tuple[KeepDirection, ...]

    @classmethod
    def of(cls, config: DedupConfig, columns: Sequence[Any]) -> KeepValues:
        """The values of ``config.keep_by``'s fields, given in that order."""
        return cls(tuple(columns), tuple(direction for _, direction in config.keep_fields))

    @classmethod
    def of_mapping(
        cls, config: DedupConfig, fields: Mapping[str, Any], num_docs: int
    ) -> KeepValues:
        """Values given in memory (``fields[name]``: one per document), for the library API."""
        import pyarrow as pa

        columns = []
        for name, _ in config.keep_fields:
            if name not in fields:
                raise InputError(
                    f"keep_by names {name!r}, which fields does not hold (it holds "
                    f"{', '.join(map(repr, fields)) or 'nothing'})"
                )
            values = pa.array(fields[name], from_pandas=True)
            if len(values) != num_docs:
                raise InputError(
                    f"fields[{name!r}] has {len(values)} values for {num_docs} documents"
                )
            columns.append(comparable(values, name, f"fields[{name!r}]"))
        return cls.of(config, columns)


def comparable(values: Any, name: str, where: str) -> Any:
    """An Arrow array as ``keep_by`` compares it: ``float64`` or ``large_string``, NaN as null.

    Integers, floats, decimals, dates and times become floats (times in their own unit: only
    their order counts); strings stay strings; an all-null column is ``float64``.
    ``where`` names the values in the error for any other type.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = values.type
    if pa.types.is_null(kind):
        return pa.nulls(len(values), pa.float64())
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return values.cast(pa.large_string())
    if pa.types.is_temporal(kind) and kind.bit_width in (32, 64):
        values = values.view(pa.int32() if kind.bit_width == 32 else pa.int64())
    elif not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)):
        raise InputError(
            f"--keep-by field {name!r} is {kind} in {where}"
            + remedy("keep by a field of numbers, dates or strings")
        )
    floats = values.cast(pa.float64(), safe=False)
    return pc.if_else(pc.is_nan(floats), pa.scalar(None, pa.float64()), floats)


def joined_column(parts: Sequence[Any], name: str, where: Sequence[str]) -> Any:
    """One field's columns of several inputs (``where``: each one's input) as one.

    Numbers in one input and strings in another are an error naming both.
    """
    import pyarrow as pa

    typed = [(p, w) for p, w in zip(parts, where, strict=True) if p.null_count < len(p)]
    kinds = {str(p.type) for p, _ in typed}
    if len(kinds) > 1:
        numbers = next(w for p, w in typed if pa.types.is_floating(p.type))
        strings = next(w for p, w in typed if not pa.types.is_floating(p.type))
        raise InputError(
            f"--keep-by field {name!r} holds numbers in {numbers} and strings in {strings}"
            + remedy("keep by a field of one type in every input")
        )
    kind = typed[0][0].type if typed else pa.float64()
    return pa.concat_arrays([p.cast(kind) for p in parts]) if parts else pa.array([], kind)
