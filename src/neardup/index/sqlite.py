"""The SQLite store: an index in one embedded database file, safe across crashes.

Schema version 1::

    meta      (key TEXT PRIMARY KEY, value TEXT)       'schema_version', 'header' (JSON),
                                                       'recent_postings' (a count)
    documents (doc INTEGER PRIMARY KEY AUTOINCREMENT,  never reused
               id TEXT UNIQUE, fingerprint BLOB(16),   128-bit exact fingerprint, little-endian
               signature BLOB(8 * num_perm),           uint64 little-endian
               num_shingles INTEGER, metadata TEXT,    metadata: JSON text or NULL
               keys BLOB(8 * num_bands))               band keys, uint64 little-endian (empty
                                                       for a document without shingles)
    postings, recent_postings
              (band INTEGER, key INTEGER, doc INTEGER, PRIMARY KEY (band, key, doc))
              WITHOUT ROWID                            key: the uint64 band key as int64

Band postings are kept like a two-level LSM tree: small batches go to ``recent_postings``, whose
pages stay hot, so an online add rewrites few pages; when it holds ``merge_rows`` postings they
are merged into ``postings`` in key order in one transaction. Large batches go straight to
``postings``, sorted. A query searches both tables by primary key.

The database runs in WAL mode. A committed transaction survives a crash of the process (``kill
-9``), and a crash inside a transaction leaves nothing of it. With ``sync="normal"`` (default)
the write-ahead log is not flushed to the disk at every commit, so the last transactions before
a power failure or an operating-system crash may be lost (never the file's consistency); with
``sync="full"`` every commit waits for the disk. Readers never block the writer; each thread has
its own connection.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import numpy as np

from neardup._types import I64Array, U64Array
from neardup.errors import ParameterError, StoreError
from neardup.index.store import DocumentRows, StoredDocument

__all__ = ["SCHEMA_VERSION", "SQLiteStore"]

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE documents (
    doc INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    fingerprint BLOB NOT NULL,
    signature BLOB NOT NULL,
    num_shingles INTEGER NOT NULL,
    metadata TEXT,
    keys BLOB NOT NULL
);
CREATE INDEX documents_fingerprint ON documents (fingerprint);
CREATE TABLE postings (
    band INTEGER NOT NULL,
    key INTEGER NOT NULL,
    doc INTEGER NOT NULL,
    PRIMARY KEY (band, key, doc)
) WITHOUT ROWID;
CREATE TABLE recent_postings (
    band INTEGER NOT NULL,
    key INTEGER NOT NULL,
    doc INTEGER NOT NULL,
    PRIMARY KEY (band, key, doc)
) WITHOUT ROWID;
INSERT INTO meta VALUES ('recent_postings', '0')
"""

_POSTING_TABLES = ("postings", "recent_postings")
_COLUMNS = "doc, id, fingerprint, signature, num_shingles, metadata"

# Upgrades from an older schema version to the next, applied in order inside one transaction.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {}


class SQLiteStore:
    """A :class:`~neardup.index.store.Store` in an SQLite file (created if missing).

    Raises
    ------
    StoreError
        The file is not an SQLite database, not a neardup index, or of a newer schema version.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        sync: Literal["normal", "full"] = "normal",
        merge_rows: int = 2_000_000,
        timeout_s: float = 30.0,
    ) -> None:
        if sync not in ("normal", "full"):
            raise ParameterError(f"SQLiteStore sync must be 'normal' or 'full'; got {sync!r}.")
        self.path = Path(path)
        self.sync = sync
        self.merge_rows = merge_rows
        self.timeout_s = timeout_s
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._prepare()

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path, timeout=self.timeout_s, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self.sync.upper()}")
            conn.execute("PRAGMA cache_size=-65536")  # 64 MiB: the recent postings stay hot
            # Checkpoint (copy the log into the file, and sync it) every ~256 MiB of log rather
            # than every 4 MiB: with small transactions that was a disk sync per commit.
            conn.execute("PRAGMA wal_autocheckpoint=65536")
            self._local.conn = conn
            self._local.depth = 0
            with self._connections_lock:
                self._connections.append(conn)
        return conn

    def _prepare(self) -> None:
        try:
            conn = self._connection()
            tables = {
                row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.path}: not a neardup index (not an SQLite database: {exc})"
            ) from None
        if not tables:
            with self.transaction():
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(
                    "INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
                )
            return
        if "meta" not in tables:
            raise StoreError(f"{self.path}: an SQLite database, but not a neardup index")
        version = self._meta("schema_version")
        if version is None or not version.isdigit():
            raise StoreError(f"{self.path}: a neardup index without a schema version (corrupt?)")
        found = int(version)
        if found > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: index schema version {found} was written by a newer neardup; "
                f"this one reads versions up to {SCHEMA_VERSION}: upgrade neardup"
            )
        if found < SCHEMA_VERSION:
            with self.transaction():
                for step in range(found, SCHEMA_VERSION):
                    MIGRATIONS[step](conn)
                conn.execute(
                    "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),)
                )

    def _meta(self, key: str) -> str | None:
        row = self._connection().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def read_header(self) -> dict[str, Any] | None:
        """The header written at creation, or None for a new store."""
        value = self._meta("header")
        return None if value is None else dict(json.loads(value))

    def write_header(self, header: dict[str, Any]) -> None:
        """Write the header (once)."""
        with self.transaction():
            self._connection().execute(
                "INSERT INTO meta VALUES ('header', ?)", (json.dumps(header, sort_keys=True),)
            )

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (``BEGIN IMMEDIATE``): committed whole, or rolled back."""
        conn = self._connection()
        with self._write_lock:
            if self._local.depth:
                self._local.depth += 1
                try:
                    yield
                finally:
                    self._local.depth -= 1
                return
            conn.execute("BEGIN IMMEDIATE")
            self._local.depth = 1
            try:
                yield
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")
            finally:
                self._local.depth = 0

    def insert(self, rows: DocumentRows) -> None:
        """Store new documents and their postings, in key order.

        The postings go to the recent table, or, for a batch of at least ``merge_rows``
        postings, straight to the main table.
        """
        conn = self._connection()
        row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'documents'").fetchone()
        first = (0 if row is None else int(row[0])) + 1
        docs = np.arange(first, first + len(rows), dtype=np.int64)
        fingerprints = rows.fingerprints.astype("<u8")
        signatures = rows.signatures.astype("<u8")
        has_postings = rows.num_shingles > 0
        keys = rows.keys.astype("<u8")
        conn.executemany(
            "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                (
                    int(docs[i]),
                    rows.ids[i],
                    fingerprints[i].tobytes(),
                    signatures[i].tobytes(),
                    int(rows.num_shingles[i]),
                    rows.metadata[i],
                    keys[i].tobytes() if has_postings[i] else b"",
                )
                for i in range(len(rows))
            ),
        )
        num_bands = rows.keys.shape[1]
        band = np.tile(np.arange(num_bands, dtype=np.int64), int(has_postings.sum()))
        key = rows.keys[has_postings].reshape(-1).view(np.int64)
        doc = np.repeat(docs[has_postings], num_bands)
        order = np.lexsort((doc, key, band))
        table = "postings" if key.shape[0] >= self.merge_rows else "recent_postings"
        conn.executemany(
            f"INSERT INTO {table} VALUES (?, ?, ?)",  # noqa: S608 - a fixed table name
            zip(band[order].tolist(), key[order].tolist(), doc[order].tolist(), strict=True),
        )
        if table == "recent_postings":
            recent = int(self._meta("recent_postings") or 0) + key.shape[0]
            if recent >= self.merge_rows:
                self.merge()
            else:
                conn.execute(
                    "UPDATE meta SET value = ? WHERE key = 'recent_postings'", (str(recent),)
                )

    def merge(self) -> None:
        """Move the recent postings into the main table, in key order (one transaction)."""
        with self.transaction():
            conn = self._connection()
            conn.execute(
                "INSERT INTO postings SELECT band, key, doc FROM recent_postings "
                "ORDER BY band, key, doc"
            )
            conn.execute("DELETE FROM recent_postings")
            conn.execute("UPDATE meta SET value = '0' WHERE key = 'recent_postings'")

    def delete(self, ids: Sequence[str]) -> list[str]:
        """Remove documents and their postings (found by primary key from the stored keys)."""
        conn = self._connection()
        found = self.docs_of(ids)
        removed: list[tuple[int, int, int]] = []
        for start in range(0, len(found), 500):
            chunk = list(found.values())[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for doc, blob in conn.execute(
                f"SELECT doc, keys FROM documents WHERE doc IN ({marks})",  # noqa: S608
                chunk,
            ):
                band_keys = np.frombuffer(blob, dtype="<u8").view(np.int64).tolist()
                removed.extend((band, key, int(doc)) for band, key in enumerate(band_keys))
        for table in _POSTING_TABLES:
            conn.executemany(
                f"DELETE FROM {table} WHERE band = ? AND key = ? AND doc = ?",  # noqa: S608
                removed,
            )
        conn.executemany("DELETE FROM documents WHERE doc = ?", ((d,) for d in found.values()))
        return [i for i in ids if i in found]

    def docs_of(self, ids: Sequence[str]) -> dict[str, int]:
        """The document numbers of stored ids."""
        conn = self._connection()
        out: dict[str, int] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for doc_id, doc in conn.execute(
                f"SELECT id, doc FROM documents WHERE id IN ({marks})",  # noqa: S608 - only placeholders
                chunk,
            ):
                out[str(doc_id)] = int(doc)
        return out

    def candidates(self, keys: U64Array, fingerprint: U64Array) -> list[int]:
        """Documents sharing a band key or the exact fingerprint: point lookups."""
        signed = keys.astype(np.uint64).view(np.int64).tolist()
        # An OR of (band, key) terms: SQLite answers it with one primary-key search per band
        # (a row-value IN over VALUES would scan the table).
        terms = " OR ".join("(band = ? AND key = ?)" for _ in signed)
        params: list[Any] = [v for band, key in enumerate(signed) for v in (band, key)]
        params.append(fingerprint.astype("<u8").tobytes())
        rows = self._connection().execute(
            f"SELECT doc FROM postings WHERE {terms} "  # noqa: S608 - only placeholders
            f"UNION SELECT doc FROM recent_postings WHERE {terms} "
            "UNION SELECT doc FROM documents WHERE fingerprint = ?",
            params[:-1] + params,
        )
        return [int(r[0]) for r in rows]

    def documents(self, docs: Sequence[int]) -> list[StoredDocument]:
        """Stored rows by number."""
        out: list[StoredDocument] = []
        conn = self._connection()
        for start in range(0, len(docs), 500):
            chunk = list(docs[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM documents WHERE doc IN ({marks}) ORDER BY doc",  # noqa: S608
                chunk,
            )
            out.extend(_stored(r) for r in rows)
        return out

    def get(self, doc_id: str) -> StoredDocument | None:
        """The stored row of an id."""
        row = self._connection().execute(
            f"SELECT {_COLUMNS} FROM documents WHERE id = ?",  # noqa: S608 - fixed columns
            (doc_id,),
        )
        found = row.fetchone()
        return None if found is None else _stored(found)

    def count(self) -> int:
        """Stored documents."""
        return int(self._connection().execute("SELECT count(*) FROM documents").fetchone()[0])

    def all_documents(self) -> Iterator[StoredDocument]:
        """Every stored row, by number."""
        for row in self._connection().execute(
            f"SELECT {_COLUMNS} FROM documents ORDER BY doc"  # noqa: S608 - fixed columns
        ):
            yield _stored(row)

    def all_postings(self) -> tuple[I64Array, U64Array, I64Array]:
        """Every posting of both tables."""
        rows = self._connection().execute(
            "SELECT band, key, doc FROM postings "
            "UNION ALL SELECT band, key, doc FROM recent_postings"
        )
        table = np.array(rows.fetchall(), dtype=np.int64).reshape(-1, 3)
        return table[:, 0].copy(), table[:, 1].view(np.uint64).copy(), table[:, 2].copy()

    def integrity_problems(self) -> list[str]:
        """What SQLite's own integrity check reports (empty when the file is sound)."""
        rows = self._connection().execute("PRAGMA integrity_check").fetchall()
        return [] if rows == [("ok",)] else [str(r[0]) for r in rows]

    def file_bytes(self) -> int:
        """Bytes on disk: the database file and its write-ahead log."""
        wal = self.path.with_name(self.path.name + "-wal")
        return self.path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)

    def close(self) -> None:
        """Close every thread's connection."""
        with self._connections_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()


def _stored(row: tuple[Any, ...]) -> StoredDocument:
    doc, doc_id, fingerprint, signature, num_shingles, metadata = row
    return StoredDocument(
        doc=int(doc),
        id=str(doc_id),
        fingerprint=bytes(fingerprint),
        signature=np.frombuffer(signature, dtype="<u8").astype(np.uint64),
        num_shingles=int(num_shingles),
        metadata=metadata,
    )
