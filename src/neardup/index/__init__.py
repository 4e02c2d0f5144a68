"""The persistent near-duplicate index: an :class:`LSHIndex` over a memory or SQLite store."""

from neardup.index.lsh_index import CheckResult, IndexedDocument, LSHIndex
from neardup.index.recall import recall_at, threshold_warning
from neardup.index.sqlite import SCHEMA_VERSION, SQLiteStore
from neardup.index.store import MemoryStore, Store
from neardup.lookup import Match

__all__ = [
    "SCHEMA_VERSION",
    "CheckResult",
    "IndexedDocument",
    "LSHIndex",
    "Match",
    "MemoryStore",
    "SQLiteStore",
    "Store",
    "recall_at",
    "threshold_warning",
]
