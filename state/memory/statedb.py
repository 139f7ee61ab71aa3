"""The memory's own small SQLite file (``.alma/memory/memory_state.db``).

Three things live here, apart from the main database so the memory can be moved or rebuilt on
its own: how far each chat log has been ingested, archive moves in flight, and the catalog
(the fields `memory list` and `memory stats` need, a rebuildable mirror of Chroma's metadata).
A move between the active and the archive collection is two Chroma writes; the intent is
written first and cleared after, so a crash in between is finished on the next open.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from policies.modes import PRIVATE_DIR
from policies.text import fold
from state.db import connect
from state.memory.models import RankFacts

_SCHEMA = """
CREATE TABLE IF NOT EXISTS log_offsets (
    path TEXT PRIMARY KEY,          -- relative to the root, e.g. logs/2026-11-22.md
    offset INTEGER NOT NULL,        -- bytes consumed: every complete block before it is done
    head TEXT NOT NULL,             -- sha256 of the first bytes, to notice a rewritten file
    summarized INTEGER NOT NULL DEFAULT -1  -- offset at which the daily summary was made
);
-- The catalog: what `memory list` and `memory stats` need of every memory, mirrored from
-- Chroma by MemoryStore on each write. Reading those fields from Chroma means reading all of
-- its metadata (measured at 100,000 memories: about 30 s), so list and stats read this.
CREATE TABLE IF NOT EXISTS catalog (
    id TEXT NOT NULL,
    archived INTEGER NOT NULL,      -- 0: alma_memories, 1: alma_memory_archive
    created_ts REAL NOT NULL,
    memory_type TEXT NOT NULL,
    layer TEXT NOT NULL,
    project TEXT NOT NULL,
    project_key TEXT NOT NULL,
    -- What a search's ranking reads of each candidate (with layer, project, created_ts and
    -- the tags): reading them from Chroma's metadata cost more than the vector search itself.
    kind TEXT NOT NULL DEFAULT 'add',
    importance INTEGER NOT NULL DEFAULT 3,
    use_count INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (id, archived)
);
-- In list's order (newest first, ties by id), so a listing reads its LIMIT rows and stops:
-- an index on created_ts alone sorts every memory of one instant (a day ingested at once).
DROP INDEX IF EXISTS catalog_recent;
CREATE INDEX IF NOT EXISTS catalog_newest ON catalog (archived, created_ts DESC, id);
CREATE TABLE IF NOT EXISTS catalog_tags (
    id TEXT NOT NULL,
    archived INTEGER NOT NULL,
    tag_key TEXT NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (id, archived, tag_key)
);
CREATE INDEX IF NOT EXISTS catalog_by_tag ON catalog_tags (archived, tag_key);
-- Covering indexes for stats' counts: they are counted from the index alone (docs/benchmarks.md).
CREATE INDEX IF NOT EXISTS catalog_count_tag ON catalog_tags (archived, tag);
CREATE INDEX IF NOT EXISTS catalog_count_project ON catalog (archived, project);
-- By type, then in list's order: stats counts types from it, and a listing of one type (the
-- principles, on every Memory page) reads its rows and stops.
DROP INDEX IF EXISTS catalog_count_type;
CREATE INDEX IF NOT EXISTS catalog_by_type ON catalog (archived, memory_type, created_ts DESC, id);
CREATE INDEX IF NOT EXISTS catalog_count_layer ON catalog (archived, layer);
-- version: of the catalog's layout; writing: 1 while a store write is in flight, so a crash
-- in the middle (Chroma written, catalog not) is noticed at the next open and rebuilt.
CREATE TABLE IF NOT EXISTS catalog_state (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
-- The lexical index of active memories (names, numbers, rare words: what an embedding blurs).
-- Bodies are folded by ALMA (state.memory.normalize) so the tokenizer keeps ñ apart from n.
-- FTS5 rows are addressed by rowid; lexicon_ids gives each memory id a stable one.
CREATE TABLE IF NOT EXISTS lexicon_ids (n INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE);
CREATE VIRTUAL TABLE IF NOT EXISTS lexicon USING fts5(
    body, tokenize = "unicode61 remove_diacritics 0"
);
CREATE VIRTUAL TABLE IF NOT EXISTS lexicon_vocab USING fts5vocab(lexicon, 'row');
-- Changes made to stored memories when a rule changed (agent/memory/migrate.py): what each
-- memory was before, so the change can be undone exactly. state: applying, done, undone.
CREATE TABLE IF NOT EXISTS migrations (
    name TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    record TEXT NOT NULL            -- JSON: {id: the fields as they were}
);
CREATE TABLE IF NOT EXISTS pending_moves (
    id TEXT PRIMARY KEY,
    direction TEXT NOT NULL CHECK (direction IN ('archive', 'restore')),
    metadata TEXT NOT NULL          -- JSON: the metadata the memory gets at its destination
);
"""


#: A lexical term held by more than this share of the memories is left out of the query.
COMMON = 0.2
LEXICAL_MIN_COMMON = 50  # ... but never below this many (a small store has no "common" word)
#: 2: the lexicon; 3: kind, importance and use_count (an older catalog is rebuilt, filling it).
CATALOG_VERSION = 3
#: Columns later layouts added to ``catalog``: an older file gets them (then is rebuilt).
_ADDED_COLUMNS = {
    "kind": "TEXT NOT NULL DEFAULT 'add'",
    "importance": "INTEGER NOT NULL DEFAULT 3",
    "use_count": "INTEGER NOT NULL DEFAULT 0",
}
_CATALOG_COLUMNS = (
    "id, archived, created_ts, memory_type, layer, project, project_key, kind, importance,"
    " use_count"
)


@dataclass(frozen=True)
class CatalogRow:
    """The fields of one memory that list and stats need (tags as (key, as written))."""

    id: str
    archived: bool
    created_ts: float
    memory_type: str
    layer: str
    project: str
    project_key: str
    tags: tuple[tuple[str, str], ...]
    #: The lexical body (``normalize.lexical_text``); indexed while the memory is active.
    text: str = ""
    kind: str = "add"
    importance: int = 3
    use_count: int = 0


@dataclass(frozen=True)
class LogOffset:
    path: str
    offset: int
    head: str
    summarized: int


class MemoryStateDB:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = connect(path, durable=True)
        self._db.row_factory = None  # plain tuples: the rows are unpacked by position
        self._db.executescript(_SCHEMA)
        have = {r[1] for r in self._db.execute("PRAGMA table_info(catalog)").fetchall()}
        for column, decl in _ADDED_COLUMNS.items():
            if column not in have:
                self._db.execute(f"ALTER TABLE catalog ADD COLUMN {column} {decl}")

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

    def migration(self, name: str) -> tuple[str, dict[str, Any]] | None:
        """A migration's state and undo record, or None if it never ran."""
        with self._lock:
            row = self._db.execute(
                "SELECT state, record FROM migrations WHERE name = ?", (name,)
            ).fetchone()
        return (row[0], json.loads(row[1])) if row else None

    def set_migration(self, name: str, state: str, record: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO migrations (name, state, record) VALUES (?, ?, ?)",
                (name, state, json.dumps(record, ensure_ascii=False)),
            )

    # -- the catalog -----------------------------------------------------------------------
    def catalog_clean(self) -> bool:
        """True when the catalog has this layout and no write was interrupted."""
        with self._lock:
            state = dict(self._db.execute("SELECT key, value FROM catalog_state").fetchall())
        return state.get("version") == CATALOG_VERSION and state.get("writing") == 0

    def catalog_begin(self) -> None:
        """Mark a store write as in flight (cleared by the ``catalog_put`` that follows it)."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO catalog_state (key, value) VALUES ('writing', 1)"
            )

    def catalog_put(
        self,
        rows: Sequence[CatalogRow],
        *,
        remove: Sequence[tuple[str, bool]] = (),
        done: bool = True,
    ) -> None:
        """Replace ``rows``, remove ``(id, archived)`` entries; with ``done``, the write in
        flight is over. One transaction."""
        with self._lock, self._txn():
            gone = [(i, int(a)) for i, a in remove] + [(r.id, int(r.archived)) for r in rows]
            self._db.executemany("DELETE FROM catalog WHERE id = ? AND archived = ?", gone)
            self._db.executemany("DELETE FROM catalog_tags WHERE id = ? AND archived = ?", gone)
            self._unindex([i for i, a in gone if not a])
            self._insert(rows)
            if done:
                self._db.execute(
                    "INSERT OR REPLACE INTO catalog_state (key, value) VALUES ('writing', 0)"
                )

    def catalog_rebuild(self, rows: Iterable[CatalogRow]) -> None:
        with self._lock, self._txn():
            self._db.execute("DELETE FROM catalog")
            self._db.execute("DELETE FROM catalog_tags")
            self._db.execute("DELETE FROM lexicon")
            self._db.execute("DELETE FROM lexicon_ids")
            batch: list[CatalogRow] = []
            for row in rows:
                batch.append(row)
                if len(batch) >= 5000:
                    self._insert(batch)
                    batch = []
            self._insert(batch)
            self._db.executemany(
                "INSERT OR REPLACE INTO catalog_state (key, value) VALUES (?, ?)",
                [("version", CATALOG_VERSION), ("writing", 0)],
            )

    def catalog_count(self, *, archived: bool = False) -> int:
        with self._lock:
            (n,) = self._db.execute(
                "SELECT COUNT(*) FROM catalog WHERE archived = ?", (int(archived),)
            ).fetchone()
        return int(n)

    def catalog_recent(
        self,
        limit: int,
        *,
        archived: bool = False,
        tag_key: str | None = None,
        project_key: str | None = None,
        memory_type: str | None = None,
    ) -> list[str]:
        """Ids of the newest memories matching the filters, newest first."""
        sql = "SELECT c.id FROM catalog c WHERE c.archived = ?"
        params: list[Any] = [int(archived)]
        if tag_key is not None:
            sql += (
                " AND EXISTS (SELECT 1 FROM catalog_tags t WHERE t.id = c.id"
                " AND t.archived = c.archived AND t.tag_key = ?)"
            )
            params.append(tag_key)
        if project_key is not None:
            sql += " AND c.project_key = ?"
            params.append(project_key)
        if memory_type is not None:
            sql += " AND c.memory_type = ?"
            params.append(memory_type)
        sql += " ORDER BY c.created_ts DESC, c.id LIMIT ?"
        params.append(limit)
        with self._lock:
            return [r[0] for r in self._db.execute(sql, params).fetchall()]

    def catalog_created(self, start_ts: float, end_ts: float) -> dict[str, int]:
        """Active memories created in [start_ts, end_ts), counted by project ('' for none),
        the project of the newest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT project, COUNT(*) FROM catalog WHERE archived = 0 AND created_ts >= ?"
                " AND created_ts < ? GROUP BY project ORDER BY MAX(created_ts) DESC, project",
                (start_ts, end_ts),
            ).fetchall()
        return {str(project): int(n) for project, n in rows}

    def catalog_layer(self, layer: str) -> list[str]:
        """Ids of every active memory of ``layer``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id FROM catalog WHERE archived = 0 AND layer = ? ORDER BY id", (layer,)
            ).fetchall()
        return [r[0] for r in rows]

    def catalog_ranked(self, ids: Sequence[str]) -> dict[str, RankFacts]:
        """The ranking's fields of the active memories among ``ids`` (absent ones left out)."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        with self._lock:
            rows = self._db.execute(
                "SELECT id, layer, kind, importance, project, created_ts, use_count FROM catalog"
                f" WHERE archived = 0 AND id IN ({marks})",
                list(ids),
            ).fetchall()
            tags = self._db.execute(
                f"SELECT id, tag_key FROM catalog_tags WHERE archived = 0 AND id IN ({marks})",
                list(ids),
            ).fetchall()
        keys: dict[str, list[str]] = {}
        for memory_id, key in tags:
            keys.setdefault(memory_id, []).append(key)
        return {
            memory_id: RankFacts(
                id=memory_id,
                layer=layer,
                kind=kind,
                importance=int(importance),
                created_ts=float(created_ts),
                use_count=int(use_count),
                names=frozenset(keys.get(memory_id, ())) | ({fold(project)} if project else set()),
            )
            for memory_id, layer, kind, importance, project, created_ts, use_count in rows
        }

    def catalog_uses(self, counts: dict[str, int], *, archived: bool = False) -> None:
        """Set the stored ``use_count`` of memories (written to Chroma just before)."""
        if counts:
            with self._lock:
                self._db.executemany(
                    "UPDATE catalog SET use_count = ? WHERE id = ? AND archived = ?",
                    [(n, i, int(archived)) for i, n in counts.items()],
                )

    def catalog_counts(self, *, archived: bool = False) -> dict[str, dict[str, int]]:
        """Active (or archived) memories by tag, project, memory type and layer, most first."""
        a = int(archived)
        queries = {
            "by_tag": ("SELECT tag, COUNT(*) FROM catalog_tags WHERE archived = ? GROUP BY tag"),
            "by_project": (
                "SELECT project, COUNT(*) FROM catalog WHERE archived = ? AND project != ''"
                " GROUP BY project"
            ),
            "by_memory_type": (
                "SELECT memory_type, COUNT(*) FROM catalog WHERE archived = ? GROUP BY memory_type"
            ),
            "by_layer": "SELECT layer, COUNT(*) FROM catalog WHERE archived = ? GROUP BY layer",
        }
        out: dict[str, dict[str, int]] = {}
        with self._lock:
            for name, sql in queries.items():
                rows = self._db.execute(sql + " ORDER BY COUNT(*) DESC, 1", (a,)).fetchall()
                out[name] = {str(k): int(v) for k, v in rows}
        return out

    def lexical(self, terms: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """Active memories matching any of ``terms`` (folded stems, see
        ``normalize.search_terms``), best BM25 first: ``(id, bm25)``, lower is better."""
        if not terms or limit <= 0:
            return []
        with self._lock:
            rare = self._rare([t.replace('"', "") for t in terms])
        if not rare:
            return []
        query = " OR ".join(f'"{t}"' + ("*" if len(t) >= 4 else "") for t in rare)
        sql = (
            "SELECT i.id, s.score FROM (SELECT rowid, bm25(lexicon) AS score FROM lexicon"
            " WHERE lexicon MATCH ? ORDER BY score LIMIT ?) s"
            " JOIN lexicon_ids i ON i.n = s.rowid ORDER BY s.score"
        )
        with self._lock:
            try:
                rows = self._db.execute(sql, (query, limit)).fetchall()
            except sqlite3.OperationalError:  # a term FTS5 cannot parse: no lexical hits
                return []
        return [(str(r[0]), float(r[1])) for r in rows]

    def lexical_bodies(self, ids: Sequence[str]) -> dict[str, str]:
        """The lexical body of each active memory among ``ids`` (absent ones left out)."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        with self._lock:
            rows = self._db.execute(
                "SELECT i.id, l.body FROM lexicon_ids i JOIN lexicon l ON l.rowid = i.n"
                f" WHERE i.id IN ({marks})",
                list(ids),
            ).fetchall()
        return {str(i): str(body) for i, body in rows}

    def _rare(self, terms: list[str]) -> list[str]:
        """The terms held by at most ``COMMON`` of the memories. A word in most of them tells
        nothing apart (its BM25 weight is near zero) and scoring every row that holds it is
        what would make a lexical search slow: "recuerdo" in 100,000 memories."""
        (rows,) = self._db.execute("SELECT COUNT(*) FROM catalog WHERE archived = 0").fetchone()
        limit = max(LEXICAL_MIN_COMMON, int(rows * COMMON))
        out: list[str] = []
        for term in terms:
            if len(term) >= 4:  # a prefix: every word that starts with it (docs over-counted)
                sql = "SELECT SUM(doc) FROM lexicon_vocab WHERE term >= ? AND term < ?"
                args: tuple[str, ...] = (term, term + "\U0010ffff")
            else:
                sql, args = "SELECT SUM(doc) FROM lexicon_vocab WHERE term = ?", (term,)
            (docs,) = self._db.execute(sql, args).fetchone()
            if docs and docs <= limit:
                out.append(term)
        return out

    def _unindex(self, ids: Sequence[str]) -> None:
        self._db.executemany(
            "DELETE FROM lexicon WHERE rowid = (SELECT n FROM lexicon_ids WHERE id = ?)",
            [(i,) for i in ids],
        )

    def _insert(self, rows: Sequence[CatalogRow]) -> None:
        active = [r for r in rows if not r.archived]
        self._unindex([r.id for r in active])
        self._db.executemany(
            "INSERT OR IGNORE INTO lexicon_ids (id) VALUES (?)", [(r.id,) for r in active]
        )
        self._db.executemany(
            "INSERT INTO lexicon (rowid, body) SELECT n, ? FROM lexicon_ids WHERE id = ?",
            [(r.text, r.id) for r in active],
        )
        self._db.executemany(
            f"INSERT OR REPLACE INTO catalog ({_CATALOG_COLUMNS})"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    r.id,
                    int(r.archived),
                    r.created_ts,
                    r.memory_type,
                    r.layer,
                    r.project,
                    r.project_key,
                    r.kind,
                    r.importance,
                    r.use_count,
                )
                for r in rows
            ],
        )
        self._db.executemany(
            "INSERT OR REPLACE INTO catalog_tags VALUES (?, ?, ?, ?)",
            [(r.id, int(r.archived), key, tag) for r in rows for key, tag in r.tags],
        )

    @contextmanager
    def _txn(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
