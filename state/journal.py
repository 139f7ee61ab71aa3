"""The action journal: actions and, per op, the intent made durable before any change.

Lives in ``.alma/journal/journal.db``, the one part of ``.alma/`` the confined executor may
write. The daemon creates an action row; the executor writes every op's intent in one durable
transaction, applies the ops, and records them done in batches (group commit). Recovery reads
what is left without ``done``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from policies.errors import NotFoundError
from state.db import connect, migrate, utcnow

ACTION_STATUSES = ("running", "done", "failed", "rolled_back", "undone")

MIGRATIONS = (
    """
    CREATE TABLE actions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        suggestion_id INTEGER,
        kind TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running','done','failed','rolled_back','undone')),
        auto INTEGER NOT NULL DEFAULT 0,
        undoes INTEGER REFERENCES actions(id),
        undone_by INTEGER REFERENCES actions(id),
        plan TEXT NOT NULL,
        ops INTEGER NOT NULL,
        sandbox TEXT NOT NULL DEFAULT '',
        started_at TEXT NOT NULL,
        finished_at TEXT,
        error TEXT,
        error_code INTEGER
    );
    CREATE TABLE journal (
        action_id INTEGER NOT NULL REFERENCES actions(id),
        idx INTEGER NOT NULL,
        op TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('intent','done','rolled_back')),
        pre TEXT,
        post TEXT,
        aux TEXT,
        PRIMARY KEY (action_id, idx)
    ) WITHOUT ROWID;
    CREATE INDEX actions_status ON actions(status)
    """,
)


@dataclass(frozen=True)
class JournalRow:
    idx: int
    op: dict[str, Any]
    state: str
    pre: dict[str, Any] | None
    post: dict[str, Any] | None
    aux: dict[str, Any]


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


#: One encoder for every row: ``json.dumps`` with options builds a new one per call.
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class Journal:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path = path
        self.conn = connect(path, durable=True)
        migrate(self.conn, MIGRATIONS, name="journal")

    def close(self) -> None:
        self.conn.close()

    # -- actions -------------------------------------------------------------------------
    def create_action(
        self,
        *,
        kind: str,
        plan: Sequence[dict[str, Any]],
        suggestion_id: int | None = None,
        auto: bool = False,
        undoes: int | None = None,
        sandbox: str = "",
    ) -> int:
        cur = self.conn.execute(
            "INSERT INTO actions(suggestion_id, kind, status, auto, undoes, plan, ops, sandbox,"
            " started_at) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?)",
            (
                suggestion_id,
                kind,
                int(auto),
                undoes,
                _dumps(list(plan)),
                len(plan),
                sandbox,
                utcnow(),
            ),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    def action_row(self, action_id: int) -> sqlite3.Row:
        row: sqlite3.Row | None = self.conn.execute(
            "SELECT * FROM actions WHERE id = ?", (action_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"there is no action {action_id}; `alma-ctl history` lists them.")
        return row

    def action(self, action_id: int) -> dict[str, Any]:
        return action_json(self.action_row(action_id))

    def plan(self, action_id: int) -> list[dict[str, Any]]:
        return list(json.loads(self.action_row(action_id)["plan"]))

    def history(self, limit: int = 20) -> list[dict[str, Any]]:
        rows = self.conn.execute("SELECT * FROM actions ORDER BY id DESC LIMIT ?", (limit,))
        return [action_json(r) for r in rows]

    def for_suggestion(self, suggestion_id: int) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT * FROM actions WHERE suggestion_id = ? ORDER BY id", (suggestion_id,)
        )
        return [action_json(r) for r in rows]

    def paths_touched_after(self, action_id: int) -> set[str]:
        """Every path an op of a later action moved a file from or to."""
        paths: set[str] = set()
        rows = self.conn.execute("SELECT op, aux FROM journal WHERE action_id > ?", (action_id,))
        for op_text, aux_text in rows:
            op, aux = json.loads(op_text), json.loads(aux_text or "{}")
            for key in ("path", "src", "dst", "trash"):
                for source in (op, aux):
                    if isinstance(source.get(key), str):
                        paths.add(source[key])
        return paths

    def running(self, *, sandbox: str | None = None) -> list[int]:
        """Actions left running, newest first. By default the file actions (the executor's to
        recover); ``sandbox="memory"``: the memory merges, recovered when the store loads."""
        if sandbox is None:
            rows = self.conn.execute(
                "SELECT id FROM actions WHERE status = 'running' AND sandbox != 'memory' "
                "ORDER BY id DESC"
            )
        else:
            rows = self.conn.execute(
                "SELECT id FROM actions WHERE status = 'running' AND sandbox = ? ORDER BY id DESC",
                (sandbox,),
            )
        return [int(r[0]) for r in rows]

    def newest_undoable(self) -> int | None:
        """The newest action that is done, not undone, and not itself an undo."""
        row = self.conn.execute(
            "SELECT id FROM actions WHERE status = 'done' AND undoes IS NULL "
            "ORDER BY id DESC LIMIT 1"
        ).fetchone()
        return None if row is None else int(row[0])

    def finish(
        self, action_id: int, status: str, *, error: str | None = None, code: int | None = None
    ) -> None:
        assert status in ACTION_STATUSES
        self.conn.execute(
            "UPDATE actions SET status = ?, finished_at = ?, error = ?, error_code = ? WHERE id = ?",
            (status, utcnow(), error, code, action_id),
        )

    def mark_undone(self, action_id: int, by: int) -> None:
        self.conn.execute(
            "UPDATE actions SET status = 'undone', undone_by = ? WHERE id = ?", (by, action_id)
        )

    # -- the journal proper -----------------------------------------------------------------
    def write_intents(
        self,
        action_id: int,
        intents: Iterable[tuple[int, dict[str, Any], dict[str, Any] | None, dict[str, Any]]],
    ) -> None:
        """All intents of an action in one durable transaction, before anything changes."""
        with self.transaction():
            self.conn.executemany(
                "INSERT INTO journal(action_id, idx, op, state, pre, aux) "
                "VALUES (?, ?, ?, 'intent', ?, ?)",
                (
                    (action_id, idx, _dumps(op), None if pre is None else _dumps(pre), _dumps(aux))
                    for idx, op, pre, aux in intents
                ),
            )

    def mark_done(self, action_id: int, done: Iterable[tuple[int, dict[str, Any] | None]]) -> None:
        with self.transaction():
            self.conn.executemany(
                "UPDATE journal SET state = 'done', post = ? WHERE action_id = ? AND idx = ?",
                ((None if post is None else _dumps(post), action_id, idx) for idx, post in done),
            )

    def mark_rolled_back(self, action_id: int, idx: int) -> None:
        self.conn.execute(
            "UPDATE journal SET state = 'rolled_back' WHERE action_id = ? AND idx = ?",
            (action_id, idx),
        )

    def rows(self, action_id: int) -> list[JournalRow]:
        cur = self.conn.execute(
            "SELECT idx, op, state, pre, post, aux FROM journal WHERE action_id = ? ORDER BY idx",
            (action_id,),
        )
        return [
            JournalRow(
                idx=int(r["idx"]),
                op=json.loads(r["op"]),
                state=r["state"],
                pre=_loads(r["pre"]),
                post=_loads(r["post"]),
                aux=json.loads(r["aux"] or "{}"),
            )
            for r in cur
        ]

    def done_rows(
        self, action_id: int
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any]]]:
        """(op, post, aux) of the ops done, in order: what an undo inverts (no ``pre``)."""
        cur = self.conn.execute(
            "SELECT op, post, aux FROM journal WHERE action_id = ? AND state = 'done' ORDER BY idx",
            (action_id,),
        )
        loads = json.loads
        return [
            (loads(op), None if post is None else loads(post), loads(aux) if aux else {})
            for op, post, aux in cur
        ]

    def transaction(self) -> _Tx:
        return _Tx(self.conn)


class _Tx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")


def action_json(row: sqlite3.Row) -> dict[str, Any]:
    """The contract's Action shape (§3), plus ``undoes``, ``error`` and ``sandbox``."""
    return {
        "id": row["id"],
        "suggestion_id": row["suggestion_id"],
        "kind": row["kind"],
        "status": row["status"],
        "ops": row["ops"],
        "auto": bool(row["auto"]),
        "started_at": row["started_at"],
        "finished_at": row["finished_at"],
        "undone_by": row["undone_by"],
        "undoes": row["undoes"],
        "error": row["error"],
        "sandbox": row["sandbox"],
    }
