"""The memory's own small SQLite file (``.alma/memory/memory_state.db``).

Two things live here, apart from the main database so the memory can be moved or rebuilt on
its own: how far each chat log has been ingested, and archive moves in flight. A move between
the active and the archive collection is two Chroma writes; the intent is written first and
cleared after, so a crash in between is finished on the next open.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS log_offsets (
    path TEXT PRIMARY KEY,          -- relative to the root, e.g. logs/2026-11-22.md
    offset INTEGER NOT NULL,        -- bytes consumed: every complete block before it is done
    head TEXT NOT NULL,             -- sha256 of the first bytes, to notice a rewritten file
    summarized INTEGER NOT NULL DEFAULT -1  -- offset at which the daily summary was made
);
CREATE TABLE IF NOT EXISTS pending_moves (
    id TEXT PRIMARY KEY,
    direction TEXT NOT NULL CHECK (direction IN ('archive', 'restore')),
    metadata TEXT NOT NULL          -- JSON: the metadata the memory gets at its destination
);
"""


@dataclass(frozen=True)
class LogOffset:
    path: str
    offset: int
    head: str
    summarized: int


class MemoryStateDB:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def get_offset(self, path: str) -> LogOffset | None:
        with self._lock:
            row = self._db.execute(
                "SELECT path, offset, head, summarized FROM log_offsets WHERE path = ?", (path,)
            ).fetchone()
        return LogOffset(*row) if row else None

    def set_offset(self, path: str, offset: int, head: str) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO log_offsets (path, offset, head) VALUES (?, ?, ?) "
                "ON CONFLICT(path) DO UPDATE SET offset = excluded.offset, head = excluded.head",
                (path, offset, head),
            )

    def set_summarized(self, path: str, offset: int) -> None:
        with self._lock:
            self._db.execute("UPDATE log_offsets SET summarized = ? WHERE path = ?", (offset, path))

    def reset_offset(self, path: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM log_offsets WHERE path = ?", (path,))

    def add_move(self, memory_id: str, direction: str, metadata: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO pending_moves (id, direction, metadata) VALUES (?, ?, ?)",
                (memory_id, direction, json.dumps(metadata, ensure_ascii=False)),
            )

    def clear_move(self, memory_id: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM pending_moves WHERE id = ?", (memory_id,))

    def pending_moves(self) -> list[tuple[str, str, dict[str, Any]]]:
        with self._lock:
            rows = self._db.execute("SELECT id, direction, metadata FROM pending_moves").fetchall()
        return [(r[0], r[1], json.loads(r[2])) for r in rows]
