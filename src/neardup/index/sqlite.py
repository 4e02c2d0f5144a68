"""The SQLite store: an index in one embedded database file, safe across crashes.

Schema version 2 (version 1 had no containment samples: it opens as version 2 unchanged)::

    meta      (key TEXT PRIMARY KEY, value TEXT)       'schema_version', 'header' (JSON),
                                                       'recent_postings' (a count)
    documents (doc INTEGER PRIMARY KEY AUTOINCREMENT,  never reused
               id TEXT UNIQUE, fingerprint BLOB(16),   128-bit exact fingerprint, little-endian
               signature BLOB(8 * num_perm),           uint64 little-endian
               num_shingles INTEGER, metadata TEXT,    metadata: JSON text or NULL
               keys BLOB(8 * (num_bands + s)))         band keys, then the s shingles of the
                                                       containment sample (if the index keeps
                                                       one), uint64 little-endian (empty for a
                                                       document without shingles)
    postings, recent_postings
              (band INTEGER, key INTEGER, doc INTEGER, PRIMARY KEY (band, key, doc))
              WITHOUT ROWID                            key: the uint64 band key as int64; the
                                                       sample's shingles in band num_bands

Band postings are kept like a two-level LSM tree: small batches go to ``recent_postings``, whose
pages stay hot, so an online add rewrites few pages; when it holds ``merge_rows`` postings they
are merged into ``postings`` in key order in one transaction. Large batches go straight to
``postings``, sorted. A query searches both tables by primary key.

Opening never creates or changes a file that is not a neardup index (see :class:`SQLiteStore`),
and every SQLite failure becomes a :class:`~neardup.errors.StoreError` naming the file and what to
do (:func:`store_error`). The database file is never opened outside SQLite: closing a descriptor
of it would drop the POSIX locks of the process's connections.

The database runs in WAL mode. A committed transaction survives a crash of the process (``kill
-9``), and a crash inside a transaction leaves nothing of it. With ``sync="normal"`` (default)
the write-ahead log is not flushed to the disk at every commit, so the last transactions before
a power failure or an operating-system crash may be lost (never the file's consistency); with
``sync="full"`` every commit waits for the disk. Readers never block the writer; each thread has
its own connection.
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar

import numpy as np

from neardup._types import I64Array, U64Array
from neardup.errors import ParameterError, StoreError
from neardup.index.store import DocumentRows, StoredDocument, posting_bands

__all__ = ["REPAIR_ADVICE", "SCHEMA_VERSION", "SQLiteStore", "store_error"]

SCHEMA_VERSION = 2

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
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    # 1 -> 2: a document's keys may carry a containment sample after its band keys. A version 1
    # file has none and is valid as it is; the number changes so that a neardup of version 1,
    # which reads every key as a band key, refuses a file that has them.
    1: lambda conn: None,
}

_TABLES = {"meta", "documents", "postings", "recent_postings"}
_NOT_A_DATABASE = 26  # SQLITE_NOTADB
# Primary SQLite result codes (https://sqlite.org/rescode.html).
_LOCKED = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED
_IO = {3, 8, 10, 13, 14}  # SQLITE_PERM, SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN

REPAIR_ADVICE = (
    "restore it from a copy, or rebuild it (neardup index create, then neardup index add)"
)
"""What to do about a damaged index file: the end of every such :class:`StoreError`."""

P = ParamSpec("P")
T = TypeVar("T")


def store_error(path: Path | str, exc: BaseException) -> StoreError:
    """The :class:`StoreError` for an SQLite (or decoding) failure on the index at ``path``.

    The message names the file, what happened and what to do: wait for (or stop) the other
    writer of a locked file; check disk space and permissions on an I/O failure; restore or
    rebuild a damaged file.

    Examples
    --------
    >>> print(store_error("x.ndx", sqlite3.DatabaseError("database disk image is malformed")))
    x.ndx: the index file is damaged (database disk image is malformed): restore it from a \
copy, or rebuild it (neardup index create, then neardup index add)
    """
    text = " ".join(str(exc).split()) or type(exc).__name__  # one line, whatever SQLite says
    if len(text) > 160:
        text = text[:157] + "..."
    if isinstance(exc, sqlite3.ProgrammingError | sqlite3.InterfaceError):
        return StoreError(f"{path}: {text}")
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in _LOCKED or "database is locked" in text:
        return StoreError(
            f"{path}: the index is locked by another process ({text}): wait for its write to "
            "finish, or stop it, and try again"
        )
    if primary in _IO:
        return StoreError(
            f"{path}: cannot read or write the index file ({text}): check the disk space, the "
            "file's permissions and the storage it is on"
        )
    return StoreError(f"{path}: the index file is damaged ({text}): {REPAIR_ADVICE}")


def _translated(
    method: Callable[Concatenate[SQLiteStore, P], T],
) -> Callable[Concatenate[SQLiteStore, P], T]:
    """``method`` with every ``sqlite3.Error`` turned into a :class:`StoreError`."""

    @functools.wraps(method)
    def wrapper(self: SQLiteStore, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from None

    return wrapper


class SQLiteStore:
    """A :class:`~neardup.index.store.Store` in an SQLite file.

    Parameters
    ----------
    path
        The index file.
    create
        ``None`` (default): open the index at ``path``, or create it where no file exists.
        ``False``: open an existing index only. ``True``: create a new one (``path`` must not
        exist). A file is created only where none exists, in an existing directory; an
        existing file that is not a neardup index is refused without being changed.
    sync
        ``"normal"`` or ``"full"`` (every commit waits for the disk).
    merge_rows
        Recent postings merged into the main table at this count.
    timeout_s
        How long a write waits for another process's write transaction.

    Raises
    ------
    StoreError
        No index at ``path`` (with ``create=False``), a directory that does not exist, a path
        that is a directory, an empty file, a file that is not an SQLite database or not a
        neardup index, a newer schema version, a damaged or locked file. Every SQLite failure
        of a later call is a :class:`StoreError` too, naming the file and what to do.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        create: bool | None = None,
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
        self.created = False
        """Whether this store made the file (:meth:`remove` may then delete it)."""
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._prepare(create)

    def _connection(self) -> sqlite3.Connection:
        """The connection of the calling thread, opened and set up on first use."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(f"PRAGMA synchronous={self.sync.upper()}")
                conn.execute("PRAGMA cache_size=-65536")  # 64 MiB: the recent postings stay hot
                # Checkpoint (copy the log into the file, and sync it) every ~256 MiB of log
                # rather than every 4 MiB: with small transactions that was a disk sync per
                # commit.
                conn.execute("PRAGMA wal_autocheckpoint=65536")
            except sqlite3.Error as exc:
                conn.close()
                raise store_error(self.path, exc) from None
            self._local.conn = conn
            self._local.depth = 0
            with self._connections_lock:
                self._connections.append(conn)
        return conn

    def _connect(self) -> sqlite3.Connection:
        """A new connection to the file, with no settings applied (they may write)."""
        try:
            return sqlite3.connect(
                self.path, timeout=self.timeout_s, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from None

    def _prepare(self, create: bool | None) -> None:
        path = self.path
        if not os.path.lexists(path):
            if create is False:
                raise StoreError(
                    f"no index at {path}; create one with: neardup index create {path}"
                )
            self._create()
            return
        if create is True:
            raise StoreError(f"{path}: already exists; choose another path")
        self._refuse_foreign()
        try:
            conn = self._connection()
            version = int(self._meta("schema_version") or 0)
            if version < SCHEMA_VERSION:
                with self.transaction():
                    for step in range(version, SCHEMA_VERSION):
                        MIGRATIONS[step](conn)
                    conn.execute(
                        "UPDATE meta SET value = ? WHERE key = 'schema_version'",
                        (str(SCHEMA_VERSION),),
                    )
        except sqlite3.Error as exc:
            self.close()
            raise store_error(path, exc) from None
        except BaseException:
            self.close()
            raise

    def _create(self) -> None:
        """Make the file (exclusively: never over another) and its schema, or nothing."""
        path = self.path
        parent = path.parent
        if not parent.is_dir():
            what = "is not a directory" if parent.exists() else "does not exist"
            raise StoreError(f"{path}: the directory {parent} {what}; create it first")
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        except FileExistsError:
            raise StoreError(f"{path}: already exists; choose another path") from None
        except OSError as exc:
            raise StoreError(f"{path}: cannot create the index file: {exc.strerror}") from None
        self.created = True
        try:
            conn = self._connection()
            with self.transaction():
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(
                    "INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
                )
        except sqlite3.Error as exc:
            self.remove()
            raise store_error(path, exc) from None
        except BaseException:
            self.remove()
            raise

    def _refuse_foreign(self) -> None:
        """Raise :class:`StoreError` unless ``path`` is a neardup index; change nothing.

        The tables are read with a connection that sets nothing (WAL mode, applied afterwards,
        would rewrite the header of a foreign SQLite file). The file itself is never opened
        outside SQLite: closing any descriptor of it would drop the POSIX locks that this
        process's other connections to it hold.
        """
        path = self.path
        if path.is_dir():
            raise StoreError(f"{path}: a directory, not an index file")
        if not path.is_file():
            raise StoreError(f"{path}: not a regular file, not an index")
        if path.stat().st_size == 0:
            raise StoreError(f"{path}: an empty file, not a neardup index")
        conn = self._connect()
        try:
            tables = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            if not _TABLES.issubset(tables):
                raise StoreError(f"{path}: an SQLite database, but not a neardup index")
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.Error as exc:
            if getattr(exc, "sqlite_errorcode", None) == _NOT_A_DATABASE:
                raise StoreError(
                    f"{path}: not a neardup index (not an SQLite database, or one damaged in its "
                    f"first page); if it was an index, {REPAIR_ADVICE}"
                ) from None
            raise store_error(path, exc) from None
        finally:
            conn.close()
        version = None if row is None else row[0]
        if not isinstance(version, str) or not version.isdigit():
            raise StoreError(
                f"{path}: a neardup index without a valid schema version: damaged? {REPAIR_ADVICE}"
            )
        if int(version) > SCHEMA_VERSION:
            raise StoreError(
                f"{path}: index schema version {version} was written by a newer neardup; "
                f"this one reads versions up to {SCHEMA_VERSION}: upgrade neardup"
            )

    def _meta(self, key: str) -> str | None:
        row = self._connection().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _damaged(self, what: str) -> StoreError:
        return StoreError(f"{self.path}: the index file is damaged ({what}): {REPAIR_ADVICE}")

    @_translated
    def read_header(self) -> dict[str, Any] | None:
        """The header written at creation, or None for a new store."""
        value = self._meta("header")
        if value is None:
            return None
        try:
            header = json.loads(value)
        except ValueError as exc:
            raise self._damaged(f"the header is not valid JSON: {exc}") from None
        if not isinstance(header, dict):
            raise self._damaged("the header is not a JSON object")
        return header

    @_translated
    def write_header(self, header: dict[str, Any]) -> None:
        """Write the header (once)."""
        with self.transaction():
            self._connection().execute(
                "INSERT INTO meta VALUES ('header', ?)", (json.dumps(header, sort_keys=True),)
            )

    @_translated
    def replace_header(self, header: dict[str, Any]) -> None:
        """Replace the header (inside the caller's transaction, which keeps it or not)."""
        with self.transaction():
            self._connection().execute(
                "UPDATE meta SET value = ? WHERE key = 'header'",
                (json.dumps(header, sort_keys=True),),
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
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise store_error(self.path, exc) from None
            self._local.depth = 1
            try:
                yield
                conn.execute("COMMIT")
            except BaseException as exc:
                self._rollback(conn, exc)
                if isinstance(exc, sqlite3.Error):
                    raise store_error(self.path, exc) from None
                raise
            finally:
                self._local.depth = 0

    def _rollback(self, conn: sqlite3.Connection, cause: BaseException) -> None:
        """Roll back the open transaction, if SQLite has not already (after some errors)."""
        if not conn.in_transaction:
            return
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error as exc:  # the cause is what to report; keep this one beside it
            cause.add_note(f"and rolling back failed: {exc}")

    def _recent_count(self) -> int:
        value = self._meta("recent_postings") or "0"
        if not value.isdigit():
            raise self._damaged(f"meta recent_postings is {value!r}")
        return int(value)

    @_translated
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
        stored = [rows.keys_of(i).astype("<u8") for i in range(len(rows))]
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
                    stored[i].tobytes(),
                )
                for i in range(len(rows))
            ),
        )
        num_bands = rows.keys.shape[1]
        sizes = [keys.shape[0] for keys in stored]
        band = posting_bands(sizes, num_bands)
        key = np.concatenate([np.empty(0, "<u8"), *stored]).view(np.int64)
        doc = np.repeat(docs, sizes)
        order = np.lexsort((doc, key, band))
        table = "postings" if key.shape[0] >= self.merge_rows else "recent_postings"
        conn.executemany(
            f"INSERT INTO {table} VALUES (?, ?, ?)",  # noqa: S608 - a fixed table name
            zip(band[order].tolist(), key[order].tolist(), doc[order].tolist(), strict=True),
        )
        if table == "recent_postings":
            recent = self._recent_count() + key.shape[0]
            if recent >= self.merge_rows:
                self.merge()
            else:
                conn.execute(
                    "UPDATE meta SET value = ? WHERE key = 'recent_postings'", (str(recent),)
                )

    @_translated
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

    @_translated
    def delete(self, ids: Sequence[str]) -> list[str]:
        """Remove documents and their postings (found by primary key from the stored keys)."""
        conn = self._connection()
        found = self.docs_of(ids)
        num_bands = self._num_bands()
        removed: list[tuple[int, int, int]] = []
        for start in range(0, len(found), 500):
            chunk = list(found.values())[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for doc, blob in conn.execute(
                f"SELECT doc, keys FROM documents WHERE doc IN ({marks})",  # noqa: S608
                chunk,
            ):
                if not isinstance(blob, bytes) or len(blob) % 8:
                    raise self._damaged(f"document {doc}: band keys {blob!r:.40}")
                keys = np.frombuffer(blob, dtype="<u8").view(np.int64).tolist()
                bands = posting_bands([len(keys)], num_bands).tolist()
                removed.extend((band, key, int(doc)) for band, key in zip(bands, keys, strict=True))
        for table in _POSTING_TABLES:
            conn.executemany(
                f"DELETE FROM {table} WHERE band = ? AND key = ? AND doc = ?",  # noqa: S608
                removed,
            )
        conn.executemany("DELETE FROM documents WHERE doc = ?", ((d,) for d in found.values()))
        return [i for i in ids if i in found]

    @_translated
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

    @_translated
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

    @_translated
    def scan(
        self, band: I64Array, low: U64Array, high: U64Array
    ) -> tuple[I64Array, I64Array, U64Array]:
        """``(range, doc, key)`` of each posting in ``band[i]`` with a key in ``[low[i], high[i]]``.

        A range must not straddle ``2^63`` (keys are stored as signed integers). One range scan
        of the primary key per range, in both posting tables; up to 1,000 ranges a statement
        (fewer where SQLite binds fewer than 4,000 parameters).
        """
        found: list[tuple[int, int, int]] = []
        lows = low.astype(np.uint64).view(np.int64).tolist()
        highs = high.astype(np.uint64).view(np.int64).tolist()
        bands = band.tolist()
        conn = self._connection()
        step = min(1000, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // 4)
        for start in range(0, len(bands), step):
            stop = min(start + step, len(bands))
            values = ",".join("(?, ?, ?, ?)" for _ in range(start, stop))
            params = [v for i in range(start, stop) for v in (i, bands[i], lows[i], highs[i])]
            # CROSS JOIN keeps the ranges as the outer loop: a primary-key range scan for each.
            rows = conn.execute(
                f"WITH ranges(i, band, low, high) AS (VALUES {values}) "  # noqa: S608
                "SELECT r.i, p.doc, p.key FROM ranges r CROSS JOIN postings p "
                "ON p.band = r.band AND p.key BETWEEN r.low AND r.high "
                "UNION ALL SELECT r.i, p.doc, p.key FROM ranges r CROSS JOIN recent_postings p "
                "ON p.band = r.band AND p.key BETWEEN r.low AND r.high",
                params,
            )
            found.extend(rows.fetchall())
        table = np.array(found, dtype=np.int64).reshape(-1, 3)
        return table[:, 0].copy(), table[:, 1].copy(), table[:, 2].view(np.uint64).copy()

    @_translated
    def holders(self, keys: U64Array, band: int) -> dict[int, int]:
        """For each document holding some of ``keys`` in ``band``, how many: point lookups."""
        counts: dict[int, int] = {}
        signed = np.unique(keys.astype(np.uint64)).view(np.int64).tolist()
        for start in range(0, len(signed), 400):
            chunk = signed[start : start + 400]
            marks = ",".join("?" * len(chunk))
            rows = self._connection().execute(
                f"SELECT doc, count(*) FROM (SELECT doc FROM postings "  # noqa: S608
                f"WHERE band = ? AND key IN ({marks}) UNION ALL SELECT doc FROM recent_postings "
                f"WHERE band = ? AND key IN ({marks})) GROUP BY doc",
                [band, *chunk, band, *chunk],
            )
            for doc, count in rows:
                counts[int(doc)] = counts.get(int(doc), 0) + int(count)
        return counts

    def _num_bands(self) -> int:
        """The index's band count, from its header (the band of its containment samples)."""
        header = self.read_header()
        try:
            return int((header or {})["num_bands"])
        except (KeyError, TypeError, ValueError):
            raise self._damaged("the header names no band count") from None

    @_translated
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
            out.extend(self._stored(r) for r in rows)
        return out

    @_translated
    def get(self, doc_id: str) -> StoredDocument | None:
        """The stored row of an id."""
        row = self._connection().execute(
            f"SELECT {_COLUMNS} FROM documents WHERE id = ?",  # noqa: S608 - fixed columns
            (doc_id,),
        )
        found = row.fetchone()
        return None if found is None else self._stored(found)

    @_translated
    def count(self) -> int:
        """Stored documents."""
        return int(self._connection().execute("SELECT count(*) FROM documents").fetchone()[0])

    @_translated
    def documents_ever(self) -> int:
        """Documents ever stored: the documents table's autoincrement counter (one lookup)."""
        row = (
            self._connection()
            .execute("SELECT seq FROM sqlite_sequence WHERE name = 'documents'")
            .fetchone()
        )
        return 0 if row is None else int(row[0])

    def all_documents(self) -> Iterator[StoredDocument]:
        """Every stored row, by number (read in chunks of 1,000)."""
        for rows in self._chunks(f"SELECT {_COLUMNS} FROM documents ORDER BY doc"):  # noqa: S608
            yield from (self._stored(r) for r in rows)

    def _chunks(self, sql: str) -> Iterator[list[tuple[Any, ...]]]:
        """The rows of a query, 1,000 at a time, with SQLite errors as :class:`StoreError`."""
        try:
            cursor = self._connection().execute(sql)
            while rows := cursor.fetchmany(1000):
                yield rows
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from None

    @_translated
    def all_postings(self) -> tuple[I64Array, U64Array, I64Array]:
        """Every posting of both tables."""
        rows = self._connection().execute(
            "SELECT band, key, doc FROM postings "
            "UNION ALL SELECT band, key, doc FROM recent_postings"
        )
        table = np.array(rows.fetchall(), dtype=np.int64).reshape(-1, 3)
        return table[:, 0].copy(), table[:, 1].view(np.uint64).copy(), table[:, 2].copy()

    @_translated
    def integrity_problems(self) -> list[str]:
        """What is wrong with the file itself (empty when sound). Cost: a full scan.

        SQLite's own integrity check (pages, b-trees, every index against its table); then what
        only this store knows: the schema's text, the meta values, the document counter, and
        each document's stored band keys against the postings they name.
        """
        conn = self._connection()
        rows = conn.execute("PRAGMA integrity_check").fetchall()
        if rows != [("ok",)]:
            return [str(r[0]) for r in rows]
        problems: list[str] = []
        expected = {" ".join(sql.split()) for sql in _SCHEMA.split(";") if "CREATE" in sql}
        stored = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        ).fetchall()
        problems.extend(
            f"the schema of {name} is not a neardup index's"
            for name, sql in stored
            if " ".join(str(sql).split()) not in expected
        )
        try:
            self._recent_count()
        except StoreError:
            problems.append("meta 'recent_postings' is not a count")
        last = conn.execute("SELECT max(doc) FROM documents").fetchone()[0]
        seq = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'documents'").fetchone()
        if last is not None and (seq is None or not isinstance(seq[0], int) or seq[0] < last):
            problems.append(f"the document counter {seq and seq[0]!r} is below document {last}")
        named: list[tuple[int, int, int]] = []
        num_bands = self._num_bands()
        for chunk in self._chunks("SELECT doc, num_shingles, keys FROM documents ORDER BY doc"):
            for doc, num_shingles, blob in chunk:
                if not isinstance(num_shingles, int) or num_shingles < 0:
                    problems.append(f"document {doc}: shingle count {num_shingles!r:.40}")
                elif not isinstance(blob, bytes) or len(blob) % 8:
                    problems.append(f"document {doc}: band keys {blob!r:.40}")
                elif (num_shingles > 0) != (len(blob) > 0):
                    problems.append(
                        f"document {doc}: {num_shingles} shingles, {len(blob)} key bytes"
                    )
                else:
                    keys = np.frombuffer(blob, dtype="<u8").view(np.int64).tolist()
                    bands = posting_bands([len(keys)], num_bands).tolist()
                    named.extend((b, key, int(doc)) for b, key in zip(bands, keys, strict=True))
        band, key, doc = self.all_postings()
        stored = sorted(zip(band.tolist(), key.view(np.int64).tolist(), doc.tolist(), strict=True))
        if stored != sorted(named):
            missing, extra = set(named) - set(stored), set(stored) - set(named)
            problems.append(
                f"postings do not match the documents' band keys: {len(missing)} missing, "
                f"{len(extra)} extra"
            )
        return problems

    def file_bytes(self) -> int:
        """Bytes on disk: the database file and its write-ahead log."""
        wal = self.path.with_name(self.path.name + "-wal")
        try:
            return self.path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot read the index file: {exc.strerror}") from None

    def close(self) -> None:
        """Close every thread's connection."""
        with self._connections_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    def remove(self) -> None:
        """Close the store and delete its file, with its write-ahead log and shared memory."""
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)

    def _stored(self, row: tuple[Any, ...]) -> StoredDocument:
        doc, doc_id, fingerprint, signature, num_shingles, metadata = row
        if not (
            isinstance(doc, int)
            and isinstance(doc_id, str)
            and isinstance(fingerprint, bytes)
            and isinstance(signature, bytes)
            and len(signature) % 8 == 0
            and isinstance(num_shingles, int)
            and (metadata is None or isinstance(metadata, str))
        ):
            raise self._damaged(f"document {doc!r} holds values of the wrong types")
        return StoredDocument(
            doc=doc,
            id=doc_id,
            fingerprint=fingerprint,
            signature=np.frombuffer(signature, dtype="<u8").astype(np.uint64),
            num_shingles=num_shingles,
            metadata=metadata,
        )
