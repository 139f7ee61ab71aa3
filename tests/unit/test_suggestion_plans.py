"""A suggestion's plan lives beside its row, not in it, as an action's does (test_journal_plans):
SQLite rewrites a whole row on every UPDATE, so a status change must not rewrite the plan, and
a read of the row must not read it. The plan is encoded once, when the suggestion is stored,
and read back with its text (actions.ops.StoredPlan), which its action copies."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from actions.ops import Mkdir, encode_plan
from actions.planners import PlanResult
from policies.errors import BadArgumentError
from state.db import connect, migrate
from state.suggestions import MIGRATIONS, SuggestionStore


def _finding(n: int, fingerprint: str = "f1") -> PlanResult:
    return PlanResult(
        kind="organize",
        title="Ordenar user/descargas",
        reason=f"{n} archivos sueltos",
        target="user/descargas",
        files=n,
        evidence=["año", "ñandú"],
        plan=[Mkdir(f"user/descargas/carpeta-{i:06d}-año") for i in range(n)],
        fingerprint=fingerprint,
    )


def _wal_bytes(store: SuggestionStore, path: Path) -> int:
    return os.stat(f"{path}-wal").st_size


@pytest.fixture
def store(tmp_path: Path) -> SuggestionStore:
    return SuggestionStore(tmp_path / "alma.db")


def test_a_status_change_does_not_rewrite_the_plan(store: SuggestionStore, tmp_path: Path) -> None:
    sid = store.add(_finding(20_000), needs_approval=True)
    before = _wal_bytes(store, tmp_path / "alma.db")
    store.update(sid, status="accepted")
    store.update(sid, status="executed", action_id=1)
    assert _wal_bytes(store, tmp_path / "alma.db") - before < 64 * 1024  # pages, not 2 x 1 MB
    assert store.get(sid, with_plan=False)["status"] == "executed"
    assert len(store.get(sid)["plan"]) == 20_000
    stored = store.plan(sid)
    assert stored.ops[0] == Mkdir("user/descargas/carpeta-000000-año")
    assert stored.text == encode_plan(_finding(20_000).plan)[0]  # as encoded when stored
    store.close()


def test_reading_a_suggestions_row_does_not_read_its_plan(store: SuggestionStore) -> None:
    sid = store.add(_finding(5_000), needs_approval=True)
    empty = store.add(_finding(0, "f2"), needs_approval=False)
    assert store.row(sid)["has_plan"] == 1
    assert store.row(empty)["has_plan"] == 0 and store.get(empty)["plan"] == []
    assert [r["id"] for r in store.with_status("pending")] == [sid, empty]
    store.replace_plan(empty, [])
    store.replace_plan(sid, [Mkdir("user/x")])
    assert store.row(sid)["has_plan"] == 1 and store.get(sid)["plan"] == [
        {"op": "mkdir", "path": "user/x"}
    ]
    assert store.row(empty)["has_plan"] == 0
    store.close()


def test_a_damaged_stored_plan_says_what_to_do(store: SuggestionStore) -> None:
    sid = store.add(_finding(2), needs_approval=True)
    store.conn.execute(
        "UPDATE suggestion_plans SET plan = '[{\"op\": 3' WHERE suggestion_id = ?", (sid,)
    )
    with pytest.raises(BadArgumentError, match=f"Suggestion {sid}'s stored plan is damaged"):
        store.plan(sid)
    store.conn.execute("DELETE FROM suggestion_plans WHERE suggestion_id = ?", (sid,))
    with pytest.raises(BadArgumentError, match=f"Suggestion {sid}'s stored plan is damaged"):
        store.get(sid)
    store.close()


def test_a_version_2_database_keeps_its_plans(tmp_path: Path) -> None:
    path = tmp_path / "alma.db"
    conn = connect(path)
    migrate(conn, MIGRATIONS[:2], name="alma")
    for i, plan in enumerate(('[{"op": "mkdir", "path": "user/música"}]', "[]")):
        conn.execute(
            "INSERT INTO suggestions(kind, status, title, reason, target, files, needs_approval,"
            " evidence, plan, fingerprint, created_at, updated_at) VALUES ('organize', 'pending',"
            " 't', 'r', 'user', 1, 1, '[]', ?, ?, '2026-11-01T00:00:00+00:00',"
            " '2026-11-01T00:00:00+00:00')",
            (plan, f"f{i}"),
        )
    conn.close()
    store = SuggestionStore(path)
    try:
        assert store.get(1)["plan"] == [{"op": "mkdir", "path": "user/música"}]
        assert store.row(1)["has_plan"] == 1
        assert store.get(2)["plan"] == [] and store.row(2)["has_plan"] == 0
        assert store.add(_finding(2, "f3"), needs_approval=True) == 3
        assert len(store.get(3)["plan"]) == 2
    finally:
        store.close()


def test_a_version_3_database_loses_its_dead_columns_and_keeps_its_plans(tmp_path: Path) -> None:
    path = tmp_path / "alma.db"
    conn = connect(path)
    migrate(conn, MIGRATIONS[:3], name="alma")
    conn.execute(
        "INSERT INTO suggestions(kind, status, title, reason, target, files, needs_approval,"
        " evidence, plan, has_plan, fingerprint, thread_id, created_at, updated_at) VALUES"
        " ('organize', 'pending', 't', 'r', 'user', 1, 1, '[]', '', 1, 'f0', 's1',"
        " '2026-11-01T00:00:00+00:00', '2026-11-01T00:00:00+00:00')"
    )
    conn.execute(
        "INSERT INTO suggestion_plans(suggestion_id, plan) VALUES"
        ' (1, \'[{"op": "mkdir", "path": "user/música"}]\')'
    )
    conn.close()
    store = SuggestionStore(path)
    try:
        columns = {r[1] for r in store.conn.execute("PRAGMA table_info(suggestions)")}
        assert "thread_id" not in columns and "plan" not in columns
        assert store.row(1)["status"] == "pending" and store.row(1)["has_plan"] == 1
        assert store.plan(1).ops == [Mkdir("user/música")]
        assert store.add(_finding(2, "f3"), needs_approval=True) == 2
        assert store.conn.execute("PRAGMA foreign_key_check").fetchall() == []
        indexes = {r[1] for r in store.conn.execute("PRAGMA index_list(suggestions)")}
        assert {"suggestions_fingerprint", "suggestions_status"} <= indexes
    finally:
        store.close()
