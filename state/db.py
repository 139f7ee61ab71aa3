"""SQLite plumbing shared by the stores, and the one owner of opening ALMA's databases.

Every descriptor of a database ALMA uses (``alma.db``, the journal, the memory's state, the
memory store's Chroma file, their WAL files) is opened by SQLite, through this module, never by
a plain ``open``, a copy or a header read: on Linux closing any descriptor of a file drops all
of the process's POSIX locks on it, SQLite's included, and the confined executor (another
process) would then take itself for the journal's last user, fold its WAL and delete it under
the daemon. SQLite keeps its own descriptors of one file together within a process, so a
second connection opened here is safe where a plain ``open`` is not. A consistent copy goes
through SQLite's online backup API (:func:`copy_database`). ``tests/unit/test_db_owner.py``
fails on a database opened anywhere else.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from policies.modes import private_file


def utcnow() -> str:
    return utc_stamp(time.time())


def utc_stamp(ts: float) -> str:
    """The one format of the stores' times (``2026-11-22T10:00:00+00:00``): fixed width and
    UTC, so two stamps compare as text as they do as times (a day's rows by a range)."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")


def connect(
    path: Path, *, durable: bool = True, autocheckpoint_pages: int = 1000
) -> sqlite3.Connection:
    """A connection in WAL mode. ``durable``: every commit reaches the disk before it returns.
    The database is private (0600) whoever creates it, and its WAL files take its mode.
    ``autocheckpoint_pages``: the commit that takes the WAL past this many pages folds it into
    the database itself, and waits for it (SQLite's default)."""
    private_file(path)
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=30000")
    # After a checkpoint the WAL is cut back to this size: it grows to the largest transaction
    # (a large action's plan) and would otherwise stay that big on disk.
    conn.execute("PRAGMA journal_size_limit=4194304")
    # Temp files would go to /tmp, which the confined executor may not write.
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute(f"PRAGMA wal_autocheckpoint={int(autocheckpoint_pages)}")
    return conn


def _existing(path: Path) -> sqlite3.Connection:
    """A connection of its own to the existing database at ``path``, never creating one.

    Read-write even to read: a read-only connection's descriptor cannot take the write lock
    SQLite asks for when it closes the database in WAL mode (``EBADF``, a "disk I/O error"
    for the process's other connections to it)."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, timeout=30.0)


def checkpoint(path: Path) -> None:
    """Fold the WAL of the database at ``path`` into it, on a connection of its own. PASSIVE:
    it never waits on a writer or a reader, nor makes them wait; what they hold is folded the
    next time. The database must exist: this never creates one."""
    conn = _existing(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    finally:
        conn.close()


def copy_database(src: Path, dst: Path) -> None:
    """A consistent copy of the live database ``src`` into the new file ``dst``: SQLite's online
    backup API on a connection of its own (pages of one committed moment, whatever writers do
    meanwhile; a transaction open on another connection is not in it)."""
    source = _existing(src)
    try:
        target = sqlite3.connect(dst)
        try:
            source.backup(target)
        finally:
            target.close()
    finally:
        source.close()


def migrate(conn: sqlite3.Connection, migrations: Sequence[str], *, name: str) -> int:
    """Apply the migrations not yet applied, each in its own transaction; return the version.

    ``migrations[i]`` takes the schema from version i to i+1. They are append-only: a released
    migration is never edited, a change is a new one.
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (name TEXT PRIMARY KEY, version INTEGER)"
    )
    row = conn.execute("SELECT version FROM schema_version WHERE name = ?", (name,)).fetchone()
    version = int(row[0]) if row else 0
    if version > len(migrations):
        raise RuntimeError(
            f"the {name} database is version {version}, newer than this ALMA ({len(migrations)}); "
            "update ALMA before using this root"
        )
    for target in range(version, len(migrations)):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(migrations[target]):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_version(name, version) VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET version = excluded.version",
                (name, target + 1),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return len(migrations)


def _statements(script: str) -> list[str]:
    # executescript() would COMMIT first; splitting keeps each migration one transaction.
    return [s.strip() for s in script.split(";") if s.strip()]
