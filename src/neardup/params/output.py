"""How a file job writes the kept corpus (:class:`OutputSpec`): the last stage, ``write (io)``.

Which documents are kept is the algorithm's (:class:`~neardup.params.DedupConfig`); how the
corpus they make is written is this spec's. The in-memory :func:`neardup.dedup` writes no
files and takes none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

from neardup.params.rules import Rule, Spec, one_of, optional_text

Compression = Literal["none", "gzip", "zstd"]


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputSpec(Spec):
    """How the kept corpus of a file job is written.

    Parameters
    ----------
    compress
        Compression of the written deduplicated corpus (JSONL or CSV).
    annotate
        Instead of the kept corpus, write every record with this field added (``{"cluster",
        "keep", "similarity"}``, as ``clusters.jsonl`` gives them): ``annotated.jsonl``,
        ``.csv`` (three columns ``FIELD.cluster``, ...) or ``.parquet`` (a struct column).
        ``None``: the kept corpus.

    Examples
    --------
    >>> OutputSpec(annotate="dup").to_dict()
    {'compress': 'none', 'annotate': 'dup'}
    """

    compress: Compression = "none"
    annotate: str | None = None

    _RULES: ClassVar[Mapping[str, Rule]] = {
        "compress": one_of("none", "gzip", "zstd"),
        "annotate": optional_text(),
    }

    def __post_init__(self) -> None:
        self._validate()
