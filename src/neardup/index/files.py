"""Open an index file, whatever it holds: texts (an LSHIndex) or vectors (a VectorIndex).

Both keep their documents in an :class:`~neardup.index.SQLiteStore`; the kind in the file's
header says which index reads it. ``neardup serve`` opens its file this way.
"""

from __future__ import annotations

from pathlib import Path

from neardup.index.lsh_index import LSHIndex
from neardup.index.sqlite import SQLiteStore
from neardup.index.vectors import HEADER_KIND, VectorIndex

__all__ = ["open_index"]


def open_index(path: Path | str) -> LSHIndex | VectorIndex:
    """The existing index at ``path``, as the index its header names; nothing is created.

    Raises
    ------
    StoreError
        No index at ``path``, a file that is no neardup index, a damaged or locked one (as
        :meth:`LSHIndex.open` and :meth:`VectorIndex.open` with ``create=False`` say).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "seen.ndx"
    >>> LSHIndex.open(path).close()
    >>> with open_index(path) as index:
    ...     type(index).__name__
    'LSHIndex'
    """
    store = SQLiteStore(path, create=False)
    try:
        header = store.read_header()
    finally:
        store.close()
    if (header or {}).get("kind") == HEADER_KIND:
        return VectorIndex.open(path, create=False)
    return LSHIndex.open(path, create=False)  # refuses a missing or foreign header
