"""An action's plan lives beside its row, not in it: SQLite rewrites a whole row on every
UPDATE, so in the row a status change (running -> done, done -> undone) would rewrite the
plan, megabytes for a large action, twice at each undo's finish, while the person waits; and
every read of a row (history, the executor's checks) would read the plan with it."""

from __future__ import annotations

import os
from pathlib import Path

from actions.ops import Mkdir
from state.db import connect, migrate
from state.journal import MIGRATIONS, Journal


def _wal_bytes(journal: Journal) -> int:
    return os.stat(f"{journal.path}-wal").st_size


def _big_plan(n: int) -> list[dict[str, object]]:
    return [{"op": "mkdir", "path": f"user/carpeta-{i:06d}-año"} for i in range(n)]


def test_a_status_change_does_not_rewrite_the_plan(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.db")
    try:
        first = journal.create_action(kind="organize", plan=_big_plan(20_000))
        second = journal.create_action(kind="organize", plan=_big_plan(20_000), undoes=first)
        before = _wal_bytes(journal)
        with journal.transaction():
            journal.finish(second, "done")
            journal.mark_undone(first, second)
        assert _wal_bytes(journal) - before < 64 * 1024  # a page or two, not 2 x 600 KB
        assert journal.action(first)["status"] == "undone"
        assert len(journal.plan(first)) == 20_000
        assert journal.plan_ops(second)[0] == Mkdir("user/carpeta-000000-año")
    finally:
        journal.close()


def test_reading_an_actions_row_does_not_read_its_plan(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.db")
    try:
        action = journal.create_action(kind="organize", plan=_big_plan(5_000))
        assert journal.action_row(action)["plan"] == ""
        assert [a["id"] for a in journal.history()] == [action]
    finally:
        journal.close()


def test_a_version_4_journal_keeps_its_plans(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    conn = connect(path)
    migrate(conn, MIGRATIONS[:4], name="journal")
    plan = '[\n{"op":"mkdir","path":"user/música"}\n]'
    conn.execute(
        "INSERT INTO actions(kind, status, plan, ops, started_at) "
        "VALUES ('organize', 'done', ?, 1, '2026-11-01T00:00:00+00:00')",
        (plan,),
    )
    conn.close()
    journal = Journal(path)
    try:
        assert journal.plan(1) == [{"op": "mkdir", "path": "user/música"}]
        assert journal.action_row(1)["plan"] == ""
        added = journal.create_action(kind="organize", plan=_big_plan(2))
        assert added == 2 and len(journal.plan(2)) == 2
    finally:
        journal.close()
