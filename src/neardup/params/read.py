"""How a file job reads its inputs (:class:`ReadSpec`): the first stage of the flow, ``read (io)``.

The algorithm's parameters (:class:`~neardup.params.DedupConfig`) say how texts are compared;
a :class:`ReadSpec` says where the texts are in the files: which field, which encoding, which
format, and what to do with a record that cannot be read. The in-memory
:func:`neardup.dedup` takes no ReadSpec: it is given the texts.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from neardup.params.rules import Rule, Spec, boolean, integer, one_of, optional_text, text

InputFormat = Literal["auto", "jsonl", "parquet", "arrow", "csv", "txt", "warc"]
HtmlExtract = Literal["text", "main", "altavista"]

DEFAULT_BATCH_BYTES = 32 * 2**20
"""Text bytes per batch when nothing else is said (a ReadSpec's, and :func:`neardup.dedup`'s)."""


def _is_encoding(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        codecs.lookup(value)
    except LookupError:
        return False
    return True


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadSpec(Spec):
    """How records are read from a file job's inputs: fields, encoding, format, bad records.

    Parameters
    ----------
    text_field
        The field (JSONL, Parquet) or column (CSV) holding the text.
    id_field
        Where ids come from. ``None`` (the default): the ``id`` field of a record that has one,
        else ``FILE:LINE`` (JSONL, CSV) or ``FILE:ROW`` (Parquet); a name: that field, which
        every record must have (a misspelt name is an error, not a silent fallback); ``""``:
        ``FILE:LINE`` (or ``FILE:ROW``) for every record. ``FILE`` is the input's name, or as
        much of its path as tells it from the run's other inputs. ``.txt`` files are named by
        their relative paths. Ids must be unique within a run.
    encoding
        The text encoding of CSV and ``.txt`` inputs (any Python codec name); JSON Lines and
        Parquet are UTF-8 by definition. A leading UTF-8 byte-order mark is skipped.
    input_format
        ``"auto"`` decides from the file extension (``.warc``/``.arc``, optionally ``.gz``, are
        web archives: each HTML response a document, its target URI the id).
    html_field
        The field (JSONL, Parquet) or column (CSV) holding a page's HTML, turned into text as
        ``html_extract`` says; ``None``: the inputs hold plain text (``text_field``).
    html_extract
        What is taken of an HTML page (a web archive's, or ``html_field``'s): ``"text"``, its
        visible text; ``"main"``, the main content only (navigation, headers and footers
        dropped); ``"altavista"``, the feature text of seed 000 (the words of the text with the
        URLs of HREF and IMG attributes as words where they stand, markup dropped).
    skip_bad_records
        Skip malformed records, counting them in the summary, instead of stopping.
    batch_bytes
        Text bytes read per batch; memory is bounded by this, not by the corpus.

    Examples
    --------
    >>> spec = ReadSpec(text_field="body", id_field="")
    >>> spec.id_name, spec.id_required, ReadSpec.from_dict(spec.to_dict()) == spec
    (None, False, True)
    """

    text_field: str = "text"
    id_field: str | None = None
    encoding: str = "utf-8"
    input_format: InputFormat = "auto"
    html_field: str | None = None
    html_extract: HtmlExtract = "text"
    skip_bad_records: bool = False
    batch_bytes: int = DEFAULT_BATCH_BYTES

    _RULES: ClassVar[Mapping[str, Rule]] = {
        "text_field": text(),
        "id_field": Rule("None or a str", lambda v: v is None or isinstance(v, str)),
        "encoding": Rule("a text encoding Python knows", _is_encoding),
        "input_format": one_of("auto", "jsonl", "parquet", "arrow", "csv", "txt", "warc"),
        "html_field": optional_text(),
        "html_extract": one_of("text", "main", "altavista"),
        "skip_bad_records": boolean(),
        "batch_bytes": integer(1, 2**40),
    }

    def __post_init__(self) -> None:
        self._validate()

    @property
    def id_name(self) -> str | None:
        """The field ids are looked for in (None: default ids only)."""
        if self.id_field is None:
            return "id"
        return self.id_field or None

    @property
    def id_required(self) -> bool:
        """Whether every record must have the id field (it was named)."""
        return bool(self.id_field)
