"""Suggestions, the person's rejections, and small run-time settings, in ``.alma/alma.db``.

A suggestion is a finding with its exact plan, waiting for a person (or run on its own at level
auto). Its fingerprint names what it is about: the same finding is never proposed twice, and a
rejected fingerprint is not proposed again; a changed target gives a new fingerprint.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import logging
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, TypedDict, overload

from actions.ops import Op, StoredPlan, encode_plan, iter_plan_items, read_plan
from actions.planners.base import PlanResult
from policies.errors import BadArgumentError, NotFoundError
from policies.i18n import Said, _, say_again
from policies.modes import PRIVATE_DIR
from policies.results import Suggestion, SuggestionPlanned
from policies.states import OUTCOMES, SUGGESTION_STATUSES, UNDONE
from state.db import connect, migrate, utcnow

log = logging.getLogger(__name__)

#: A finding whose fingerprint has a suggestion in one of these states is not proposed again.
_BLOCKING = ("pending", "accepted", "rejected", "executed")

MIGRATIONS = (
    """
    CREATE TABLE suggestions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN
            ('pending','accepted','rejected','executed','failed','expired')),
        title TEXT NOT NULL,
        reason TEXT NOT NULL,
        target TEXT NOT NULL,
        files INTEGER NOT NULL,
        needs_approval INTEGER NOT NULL,
        evidence TEXT NOT NULL,
        plan TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        thread_id TEXT,
        action_id INTEGER,
        reject_reason TEXT,
        error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX suggestions_fingerprint ON suggestions(fingerprint);
    CREATE INDEX suggestions_status ON suggestions(status);
    CREATE TABLE rejections (
        fingerprint TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        target TEXT NOT NULL,
        reason TEXT,
        at TEXT NOT NULL
    );
    CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)
    """,
    """
    CREATE TABLE outcomes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        event TEXT NOT NULL CHECK (event IN
            ('proposed','accepted','rejected','undone','useful','useless','lifted')),
        kind TEXT NOT NULL,
        folder TEXT NOT NULL,
        suggestion_id INTEGER,
        action_id INTEGER,
        auto INTEGER NOT NULL DEFAULT 0,
        reason TEXT,
        at TEXT NOT NULL
    );
    CREATE INDEX outcomes_suggestion ON outcomes(suggestion_id, event)
    """,
    # 3: a plan lives beside its suggestion's row (as an action's, state.journal's 5): SQLite
    # rewrites a whole row on every UPDATE, so each status change of an accept would rewrite
    # the plan, and every read of the row would read it. ``has_plan`` answers whether it
    # changes files without reading it.
    """
    CREATE TABLE suggestion_plans (
        suggestion_id INTEGER PRIMARY KEY REFERENCES suggestions(id),
        plan TEXT NOT NULL
    );
    INSERT INTO suggestion_plans(suggestion_id, plan) SELECT id, plan FROM suggestions;
    ALTER TABLE suggestions ADD COLUMN has_plan INTEGER NOT NULL DEFAULT 0;
    UPDATE suggestions SET has_plan = (plan != '[]'), plan = ''
    """,
    # 4: the plan lives only in suggestion_plans, and whether a suggestion waits for a person
    # is its status alone (agent.loop.decision): the columns plan and thread_id go. Rebuilt
    # rather than ALTER TABLE DROP COLUMN, which older SQLite lacks; suggestion_plans, whose
    # rows refer to suggestions, is set aside while suggestions is replaced.
    """
    CREATE TABLE suggestions_v4 (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN
            ('pending','accepted','rejected','executed','failed','expired')),
        title TEXT NOT NULL,
        reason TEXT NOT NULL,
        target TEXT NOT NULL,
        files INTEGER NOT NULL,
        needs_approval INTEGER NOT NULL,
        evidence TEXT NOT NULL,
        has_plan INTEGER NOT NULL DEFAULT 0,
        fingerprint TEXT NOT NULL,
        action_id INTEGER,
        reject_reason TEXT,
        error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    INSERT INTO suggestions_v4(id, kind, status, title, reason, target, files, needs_approval,
        evidence, has_plan, fingerprint, action_id, reject_reason, error, created_at, updated_at)
    SELECT id, kind, status, title, reason, target, files, needs_approval, evidence, has_plan,
        fingerprint, action_id, reject_reason, error, created_at, updated_at FROM suggestions;
    UPDATE sqlite_sequence SET seq = max(seq,
        (SELECT seq FROM sqlite_sequence WHERE name = 'suggestions'))
        WHERE name = 'suggestions_v4';
    CREATE TABLE plans_aside (suggestion_id INTEGER, plan TEXT NOT NULL);
    INSERT INTO plans_aside SELECT suggestion_id, plan FROM suggestion_plans;
    DROP TABLE suggestion_plans;
    DROP TABLE suggestions;
    ALTER TABLE suggestions_v4 RENAME TO suggestions;
    CREATE INDEX suggestions_fingerprint ON suggestions(fingerprint);
    CREATE INDEX suggestions_status ON suggestions(status);
    CREATE TABLE suggestion_plans (
        suggestion_id INTEGER PRIMARY KEY REFERENCES suggestions(id),
        plan TEXT NOT NULL
    );
    INSERT INTO suggestion_plans SELECT suggestion_id, plan FROM plans_aside;
    DROP TABLE plans_aside
    """,
    # How the title and the reason were said (policies.i18n.Said), to say them again in the
    # language a person reads them in; NULL for text that was not a sentence of the catalog.
    """
    ALTER TABLE suggestions ADD COLUMN said TEXT
    """,
)


class SuggestionStore:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
        self.conn = connect(path, durable=True)
        self._lock = threading.RLock()
        migrate(self.conn, MIGRATIONS, name="alma")

    def close(self) -> None:
        self.conn.close()

    # -- suggestions ----------------------------------------------------------------------
    def find_blocking(self, fingerprint: str) -> int | None:
        """A suggestion that makes this finding not worth proposing again, if any."""
        marks = ",".join("?" * len(_BLOCKING))
        row = self.conn.execute(
            f"SELECT id FROM suggestions WHERE fingerprint = ? AND status IN ({marks}) "
            "ORDER BY id DESC LIMIT 1",
            (fingerprint, *_BLOCKING),
        ).fetchone()
        if row is not None:
            return int(row[0])
        rejected = self.conn.execute(
            "SELECT 1 FROM rejections WHERE fingerprint = ?", (fingerprint,)
        ).fetchone()
        return -1 if rejected else None

    def add(self, finding: PlanResult, *, needs_approval: bool) -> int:
        """Store a finding as a pending suggestion; its plan is encoded here, once."""
        plan, count = encode_plan(finding.plan)
        with self._lock, self._savepoint():
            now = utcnow()
            cur = self.conn.execute(
                "INSERT INTO suggestions(kind, status, title, reason, target, files, needs_approval,"
                " evidence, has_plan, fingerprint, created_at, updated_at, said)"
                " VALUES (?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    finding.kind,
                    finding.title,
                    finding.reason,
                    finding.target,
                    finding.files,
                    int(needs_approval),
                    json.dumps(finding.evidence, ensure_ascii=False),
                    int(count > 0),
                    finding.fingerprint,
                    now,
                    now,
                    _said(finding),
                ),
            )
            sid = cur.lastrowid
            assert sid is not None
            self.conn.execute(
                "INSERT INTO suggestion_plans(suggestion_id, plan) VALUES (?, ?)", (sid, plan)
            )
            return sid

    def propose(self, finding: PlanResult, *, needs_approval: bool) -> int:
        """A new suggestion and its ``proposed`` outcome in one transaction: one write to the
        disk instead of two (a first analysis proposes dozens)."""
        with self._lock, self._transaction():
            sid = self.add(finding, needs_approval=needs_approval)
            self.record_outcome("proposed", finding.kind, finding.target, suggestion_id=sid)
            return sid

    def reject(self, suggestion_id: int, reason: str | None) -> sqlite3.Row:
        """A person's rejection in one transaction: the status, the fingerprint not proposed
        again, the track record's outcome. Returns the row as it was."""
        with self._lock, self._transaction():
            row = self.row(suggestion_id)
            self.update(suggestion_id, status="rejected", reject_reason=reason)
            self.remember_rejection(row, reason)
            self.record_outcome(
                "rejected", row["kind"], row["target"], suggestion_id=suggestion_id, reason=reason
            )
            return row

    def row(self, suggestion_id: int) -> sqlite3.Row:
        row: sqlite3.Row | None = self.conn.execute(
            "SELECT * FROM suggestions WHERE id = ?", (suggestion_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(
                _(
                    "There is no suggestion {id}; `alma-ctl suggestions list --all` lists them.",
                    id=suggestion_id,
                )
            )
        return row

    @overload
    def get(self, suggestion_id: int) -> SuggestionPlanned: ...
    @overload
    def get(self, suggestion_id: int, *, with_plan: Literal[True]) -> SuggestionPlanned: ...
    @overload
    def get(self, suggestion_id: int, *, with_plan: Literal[False]) -> Suggestion: ...

    def get(self, suggestion_id: int, *, with_plan: bool = True) -> Suggestion:
        row = self.conn.execute(
            f"SELECT *, {_UNDONE} AS undone FROM suggestions WHERE id = ?", (suggestion_id,)
        ).fetchone()
        data = suggestion_json(row if row is not None else self.row(suggestion_id))
        if not with_plan:
            return data
        planned: SuggestionPlanned = {**data, "plan": list(self.iter_plan(suggestion_id))}
        return planned

    def plan(self, suggestion_id: int) -> StoredPlan:
        """The suggestion's stored plan, parsed strictly (to run it), with its text (which its
        action's journal row copies)."""
        text = self._plan_text(suggestion_id)
        try:
            return read_plan(text)
        except BadArgumentError as exc:
            raise _damaged(suggestion_id, exc) from exc

    def iter_plan(self, suggestion_id: int) -> Iterator[Any]:
        """The suggestion's stored plan, item by item as stored (to show it)."""
        text = self._plan_text(suggestion_id)
        try:
            yield from iter_plan_items(text)
        except BadArgumentError as exc:
            raise _damaged(suggestion_id, exc) from exc

    def _plan_text(self, suggestion_id: int) -> str:
        row = self.conn.execute(
            "SELECT plan FROM suggestion_plans WHERE suggestion_id = ?", (suggestion_id,)
        ).fetchone()
        if row is None:
            self.row(suggestion_id)  # NotFoundError when there is no such suggestion
            return ""  # none stored: a damaged plan
        return str(row[0])

    def list(self, status: str | None = None, all: bool = False) -> list[Suggestion]:
        """The suggestions of ``status`` (pending by default), or ``all`` of them."""
        if all:
            rows = self.conn.execute(f"SELECT *, {_UNDONE} AS undone FROM suggestions ORDER BY id")
        elif status == UNDONE:  # derived, never stored (policies.states.UNDONE)
            rows = self.conn.execute(
                f"SELECT *, {_UNDONE} AS undone FROM suggestions WHERE {_UNDONE} ORDER BY id"
            )
        else:
            rows = self.conn.execute(
                f"SELECT *, {_UNDONE} AS undone FROM suggestions WHERE status = ? ORDER BY id",
                (status or "pending",),
            )
        return [suggestion_json(r) for r in rows]

    def created_between(self, since: str, until: str) -> builtins.list[Suggestion]:
        """Suggestions made in [since, until) (state.db.utc_stamp times), oldest first."""
        rows = self.conn.execute(
            f"SELECT *, {_UNDONE} AS undone FROM suggestions "
            "WHERE created_at >= ? AND created_at < ? ORDER BY id",
            (since, until),
        )
        return [suggestion_json(r) for r in rows]

    def update(self, suggestion_id: int, **fields: Any) -> None:
        """Change a suggestion's status, action_id, reject_reason or error."""
        if not fields:
            return
        assert set(fields) <= {"status", "action_id", "reject_reason", "error"}
        if "status" in fields:
            assert fields["status"] in SUGGESTION_STATUSES
        cols = ", ".join(f"{k} = ?" for k in fields)
        with self._lock:
            self.conn.execute(
                f"UPDATE suggestions SET {cols}, updated_at = ? WHERE id = ?",
                (*fields.values(), utcnow(), suggestion_id),
            )

    def restate(self, suggestion_id: int, finding: PlanResult) -> None:
        """A pending suggestion's title, reason and evidence as ``finding`` says them now (a
        condition that lasts, said in its latest words); written only when they changed."""
        evidence = json.dumps(finding.evidence, ensure_ascii=False)
        with self._lock:
            self.conn.execute(
                "UPDATE suggestions SET title = ?, reason = ?, evidence = ?, said = ?,"
                " updated_at = ? WHERE id = ? AND status = 'pending'"
                " AND (title != ? OR reason != ? OR evidence != ?)",
                (
                    finding.title,
                    finding.reason,
                    evidence,
                    _said(finding),
                    utcnow(),
                    suggestion_id,
                    finding.title,
                    finding.reason,
                    evidence,
                ),
            )

    def replace_plan(self, suggestion_id: int, plan: Sequence[Op]) -> None:
        """A fresh plan for the same finding (its files' identities read again)."""
        text, count = encode_plan(plan)
        with self._lock, self._savepoint():
            self.conn.execute(
                "UPDATE suggestion_plans SET plan = ? WHERE suggestion_id = ?",
                (text, suggestion_id),
            )
            self.conn.execute(
                "UPDATE suggestions SET has_plan = ?, updated_at = ? WHERE id = ?",
                (int(count > 0), utcnow(), suggestion_id),
            )

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """Several writes as one: one write to the disk, all or nothing."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @contextlib.contextmanager
    def _savepoint(self) -> Iterator[None]:
        """One write of several statements, inside a transaction (propose's) or on its own."""
        self.conn.execute("SAVEPOINT suggestion")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK TO suggestion")
            self.conn.execute("RELEASE suggestion")
            raise
        self.conn.execute("RELEASE suggestion")

    def with_status(self, *statuses: str) -> builtins.list[sqlite3.Row]:
        marks = ",".join("?" * len(statuses))
        return list(
            self.conn.execute(
                f"SELECT * FROM suggestions WHERE status IN ({marks}) ORDER BY id", statuses
            )
        )

    def count(self, status: str) -> int:
        row = self.conn.execute("SELECT COUNT(*) FROM suggestions WHERE status = ?", (status,))
        return int(row.fetchone()[0])

    def remember_rejection(self, row: sqlite3.Row, reason: str | None) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO rejections(fingerprint, kind, target, reason, at) "
            "VALUES (?, ?, ?, ?, ?)",
            (row["fingerprint"], row["kind"], row["target"], reason, utcnow()),
        )

    # -- the track record (agent.loop.track) -------------------------------------------------------
    def record_outcome(
        self,
        event: str,
        kind: str,
        folder: str,
        *,
        suggestion_id: int | None = None,
        action_id: int | None = None,
        auto: bool = False,
        reason: str | None = None,
    ) -> None:
        """Record what happened to a suggestion: once per suggestion and event (an undo once
        per action); a feedback verdict replaces the one given before."""
        assert event in OUTCOMES
        with self._lock:
            if suggestion_id is not None:
                if event in ("useful", "useless"):
                    self.conn.execute(
                        "DELETE FROM outcomes WHERE suggestion_id = ? AND event IN "
                        "('useful', 'useless')",
                        (suggestion_id,),
                    )
                elif self.conn.execute(
                    "SELECT 1 FROM outcomes WHERE suggestion_id = ? AND event = ? "
                    "AND action_id IS ?",
                    (suggestion_id, event, action_id),
                ).fetchone():
                    return
            self.conn.execute(
                "INSERT INTO outcomes(event, kind, folder, suggestion_id, action_id, auto, reason,"
                " at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (event, kind, folder, suggestion_id, action_id, int(auto), reason, utcnow()),
            )

    def outcomes(self) -> builtins.list[sqlite3.Row]:
        """Every outcome, with the files of its suggestion's plan (``files``, None without one)."""
        return list(
            self.conn.execute(
                "SELECT o.*, s.files AS files FROM outcomes o "
                "LEFT JOIN suggestions s ON s.id = o.suggestion_id ORDER BY o.id"
            )
        )

    # -- run-time settings (pause, lowered level, kinds stopped from auto) -------------------
    def setting(self, key: str, default: Any = None) -> Any:
        row = self.conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    def set_setting(self, key: str, value: Any) -> None:
        with self._lock:
            if value is None:
                self.conn.execute("DELETE FROM settings WHERE key = ?", (key,))
            else:
                self.conn.execute(
                    "INSERT OR REPLACE INTO settings(key, value) VALUES (?, ?)",
                    (key, json.dumps(value)),
                )


def _damaged(suggestion_id: int, exc: BadArgumentError) -> BadArgumentError:
    """A damaged plan as the sentence that says what to do with this suggestion; what was
    wrong goes to the log."""
    log.warning(
        "suggestion %s: its stored plan is damaged: %s (%s)", suggestion_id, exc, exc.__cause__
    )
    return BadArgumentError(
        _(
            "Suggestion {id}'s stored plan is damaged ({why}), so it cannot run: "
            "accepting it only marks it failed, and then `alma-ctl analyze` proposes a "
            "fresh one.",
            id=suggestion_id,
            why=str(exc).rstrip("."),
        )
    )


def _said(finding: PlanResult) -> str | None:
    """How the finding's title, reason and evidence lines were said, as stored in ``said``:
    a line that was no sentence of the catalog (a file's name) has none."""
    keys: dict[str, object] = {
        name: text.key
        for name, text in (("title", finding.title), ("reason", finding.reason))
        if isinstance(text, Said)
    }
    lines = [line.key if isinstance(line, Said) else None for line in finding.evidence]
    if any(lines):
        keys["evidence"] = lines
    return json.dumps(keys, ensure_ascii=False) if keys else None


class _Shown(TypedDict):
    title: str
    reason: str
    evidence: list[str]


def _shown(row: sqlite3.Row) -> _Shown:
    """A suggestion's title, reason and evidence in the language of the moment: said again
    from how they were said, or as stored where they were no sentence of the catalog (or
    cannot be said again: a message that left the catalog)."""
    keys: dict[str, object] = {}
    if row["said"]:
        with contextlib.suppress(ValueError):
            loaded = json.loads(row["said"])
            keys = loaded if isinstance(loaded, dict) else {}
    evidence = json.loads(row["evidence"])
    lines = keys.get("evidence")
    if isinstance(lines, list) and len(lines) == len(evidence):
        evidence = [say_again(key) or line for key, line in zip(lines, evidence, strict=True)]
    return {
        "title": say_again(keys.get("title")) or row["title"],
        "reason": say_again(keys.get("reason")) or row["reason"],
        "evidence": evidence,
    }


def shown(row: sqlite3.Row, name: Literal["title", "reason"]) -> str:
    """A suggestion's title or reason as :func:`suggestion_json` shows it."""
    return _shown(row)[name]


#: An executed suggestion's action was undone by a person (policies.states.UNDONE): its
#: ``undone`` outcome for that very action, so a later run of it again would not count.
_UNDONE = (
    "(status = 'executed' AND EXISTS (SELECT 1 FROM outcomes o WHERE o.event = 'undone' "
    "AND o.suggestion_id = suggestions.id AND o.action_id IS suggestions.action_id))"
)


def suggestion_json(row: sqlite3.Row) -> Suggestion:
    """The contract's Suggestion shape (§3) without its plan (SuggestionStore.get adds it),
    plus action_id, reject_reason, error, updated_at, and ``undone`` where the query asked."""
    columns = row.keys()  # a Row's ``in`` looks at its values, not its columns
    shown = _shown(row)
    out: Suggestion = {
        "id": row["id"],
        "kind": row["kind"],
        "status": row["status"],
        "title": shown["title"],
        "reason": shown["reason"],
        "evidence": shown["evidence"],
        "target": row["target"],
        "files": row["files"],
        "needs_approval": bool(row["needs_approval"]),
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "action_id": row["action_id"],
        "reject_reason": row["reject_reason"],
        "error": row["error"],
    }
    if "undone" in columns:
        out["undone"] = bool(row["undone"])
    return out
