"""``--html-field``: JSONL, Parquet and CSV records whose text is an HTML page.

:class:`HTMLFieldSource` wraps the source that reads the HTML field as its text field (its
``inner``) and turns each page into text with :func:`neardup.text.html.html_text`, as the
options' ``html_extract`` says (``text``, ``main`` or ``altavista``): one call into
resiliparse per record, the records' batches otherwise passed on as they are. Everything
else (bad records, progress, the kept corpus, which copies the inner source's records as
they were read) is the inner source's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from neardup._types import Batch
from neardup.errors import InputError
from neardup.io.records import RecordBatch
from neardup.io.source import Source
from neardup.text.html import html_text
from neardup.text.spans import pack_strings

__all__ = ["HTMLFieldSource", "naming_the_html_field", "with_html_field"]

# The inner source reads the HTML field as its text field: its messages name the text field.
_WORDING = (
    ("choose the text field with --text-field", "choose the HTML field with --html-field"),
    ("choose the text column with --text-field", "choose the HTML column with --html-field"),
    ("choose it with --text-field", "choose it with --html-field"),
)


class HTMLFieldSource(Source):
    r"""The records of ``inner`` with each text, an HTML page, replaced by the page's text.

    Parameters
    ----------
    inner
        A source opened with ``text_field`` set to the HTML field (``options.html_field``).

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> from neardup.io.jsonl import JSONLinesSource
    >>> from neardup.params import ReadSpec
    >>> path = Path(tempfile.mkdtemp()) / "pages.jsonl"
    >>> _ = path.write_text(json.dumps({"id": "a", "html": "<p>one</p><p>two</p>"}) + "\n")
    >>> options = ReadSpec(text_field="html", html_field="html")
    >>> list(HTMLFieldSource(JSONLinesSource(path, options)).records())
    [('a', 'one two')]
    """

    def __init__(self, inner: Source) -> None:
        # Not Source.__init__: the counters are the inner source's (see the properties).
        self.inner = inner
        self.path = inner.path
        self.options = inner.options
        self.label = inner.label

    @property
    def format(self) -> str:  # type: ignore[override]
        """The inner source's format (the kept corpus is written in it)."""
        return self.inner.format

    @property
    def size(self) -> int:
        """Bytes of input on disk (for progress)."""
        return self.inner.size

    @property
    def num_bad(self) -> int:
        """Bad records counted (and skipped) in the current pass."""
        return self.inner.num_bad

    @num_bad.setter
    def num_bad(self, value: int) -> None:
        self.inner.num_bad = value

    @property
    def bad_lines(self) -> list[int]:
        """The lines (rows) of the bad records of the current pass."""
        return self.inner.bad_lines

    @bad_lines.setter
    def bad_lines(self, value: list[int]) -> None:
        self.inner.bad_lines = value

    @property
    def consumed(self) -> int:
        """Input bytes consumed so far in the current pass."""
        return self.inner.consumed

    @consumed.setter
    def consumed(self, value: int) -> None:
        self.inner.consumed = value

    def batches(self, batch_bytes: int) -> Iterator[RecordBatch]:
        """The inner source's batches, each text replaced by its HTML page's text.

        Ids, positions and the source index are kept; ``lines`` and ``stats`` are dropped
        (they describe the HTML, not the text).
        """
        extract = self.options.html_extract
        for batch in self._inner_batches(batch_bytes):
            texts = [html_text(page, extract=extract) for _, page in batch.records()]
            yield dataclasses.replace(
                batch, texts=Batch(*pack_strings(texts)), lines=None, stats=None
            )

    def _inner_batches(self, batch_bytes: int) -> Iterator[RecordBatch]:
        try:
            yield from self.inner.batches(batch_bytes)
        except InputError as exc:
            raise naming_the_html_field(exc) from None

    def _scan(self) -> Iterator[tuple[str, str, Any] | InputError]:
        """The inner source's records, each text replaced by its page's text."""
        extract = self.options.html_extract
        for item in self.inner._scan():
            if isinstance(item, InputError):
                yield item
            else:
                yield item[0], html_text(item[1], extract=extract), item[2]

    def raw_records(self) -> Iterator[Any]:
        """The inner source's raw records (with their HTML), for copying out."""
        return self.inner.raw_records()


def with_html_field(source: Source) -> Source:
    """``source`` reading its HTML field as text, when its options name one; else ``source``.

    A source opened with another text field is opened again with ``text_field`` set to the
    HTML field (a source of the same class, path and label).

    Parameters
    ----------
    source
        A JSONL, Parquet or CSV source (any :class:`Source` whose records have fields).

    Returns
    -------
    Source
        An :class:`HTMLFieldSource`, or ``source`` itself when ``options.html_field`` is
        ``None`` or ``source`` is one already.
    """
    html_field = source.options.html_field
    if html_field is None or isinstance(source, HTMLFieldSource):
        return source
    if source.options.text_field != html_field:
        options = dataclasses.replace(source.options, text_field=html_field)
        source = type(source)(source.path, options, source.label)
    return HTMLFieldSource(source)


def naming_the_html_field(exc: InputError) -> InputError:
    """``exc`` of a source reading the HTML field as its text, its advice naming --html-field."""
    reason = exc.reason
    for text_wording, html_wording in _WORDING:
        reason = reason.replace(text_wording, html_wording)
    return exc if reason == exc.reason else InputError(reason, path=exc.path, line=exc.line)
