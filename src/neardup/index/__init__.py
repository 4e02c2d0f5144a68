"""The persistent indexes: :class:`LSHIndex` (texts) and :class:`VectorIndex` (vectors).

Both speak :class:`~neardup.lookup.NearIndex`, as :class:`~neardup.hamming.HammingIndex`
does, and keep their documents in memory or in an SQLite file (:func:`open_index` opens
either).
"""

from neardup.index.files import open_index
from neardup.index.lsh_index import CheckResult, IndexedDocument, LSHIndex
from neardup.index.recall import recall_at, threshold_warning
from neardup.index.sqlite import SCHEMA_VERSION, SQLiteStore
from neardup.index.store import MemoryStore, Store
from neardup.index.vectors import IndexedVector, VectorIndex
from neardup.lookup import Match, NearIndex

__all__ = [
    "SCHEMA_VERSION",
    "CheckResult",
    "IndexedDocument",
    "IndexedVector",
    "LSHIndex",
    "Match",
    "MemoryStore",
    "NearIndex",
    "SQLiteStore",
    "Store",
    "VectorIndex",
    "open_index",
    "recall_at",
    "threshold_warning",
]
