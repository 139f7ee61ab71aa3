"""The journal's WAL is folded into its database after an action, never by the action's own
commit: the person's accept or undo does not wait for SQLite's checkpoint of megabytes of plan
and done marks. Durability is the WAL's (synchronous=FULL), so nothing here is about safety; it
is about who pays the checkpoint and that the WAL stays bounded."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from actions.ops import Mkdir, Move, Op
from actions.safefs import identity_of
from policies.decide import RunContext
from state import db
from state.journal import WAL_BACKSTOP_PAGES, Journal
from tests.support.engine import AlmaRoot, make_engine

APPROVED = RunContext(approved_by_person=True)


def _in_main_file(journal_file: Path, tmp: Path, action_id: int) -> bool:
    """Whether the action's row is in the database file itself: a copy of the file alone,
    without its WAL, shows only what was checkpointed."""
    copy = tmp / "main-file-only.db"
    shutil.copyfile(journal_file, copy)
    conn = sqlite3.connect(copy)
    try:
        row = conn.execute("SELECT 1 FROM actions WHERE id = ?", (action_id,)).fetchone()
    except sqlite3.DatabaseError:
        return False  # not even the schema was checkpointed yet
    finally:
        conn.close()
        copy.unlink()
    return row is not None


def _big_plan(n: int) -> list[dict[str, object]]:
    return [{"op": "mkdir", "path": f"user/carpeta-número-{i:06d}-" + "ñ" * 40} for i in range(n)]


def test_an_actions_commit_leaves_the_checkpoint_to_later(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.db")
    try:
        # Past SQLite's default auto-checkpoint (1,000 pages): that commit would fold it itself.
        action = journal.create_action(kind="organize", plan=_big_plan(60_000))
        wal = Path(f"{journal.path}-wal")
        assert wal.stat().st_size > 1000 * 4096
        assert not _in_main_file(journal.path, tmp_path, action)

        journal.checkpoint_later()
        journal.wait_checkpoint()
        assert _in_main_file(journal.path, tmp_path, action)
    finally:
        journal.close()


def test_a_small_wal_is_not_checkpointed_after_every_action(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.db")
    try:
        action = journal.create_action(kind="organize", plan=_big_plan(3))
        journal.checkpoint_later()
        journal.wait_checkpoint()
        assert not _in_main_file(journal.path, tmp_path, action)
    finally:
        journal.close()


def test_every_journal_connection_keeps_a_backstop(tmp_path: Path) -> None:
    """The daemon folds the WAL after each action; a journal written by anything else (the
    child, a tool, a daemon that died) still has SQLite fold it past the backstop, so the WAL
    cannot grow without bound."""
    journal = Journal(tmp_path / "journal.db")
    try:
        (pages,) = journal.conn.execute("PRAGMA wal_autocheckpoint").fetchone()
        assert pages == WAL_BACKSTOP_PAGES
        assert 1000 < WAL_BACKSTOP_PAGES <= 256 * 2**20 // 4096
    finally:
        journal.close()
    other = db.connect(tmp_path / "other.db")
    try:
        assert tuple(other.execute("PRAGMA wal_autocheckpoint").fetchone()) == (1000,)
    finally:
        other.close()


def test_close_waits_for_a_checkpoint_under_way(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.db")
    action = journal.create_action(kind="organize", plan=_big_plan(60_000))
    journal.checkpoint_later()
    journal.close()
    assert _in_main_file(journal.path, tmp_path, action)


def test_a_checkpoint_that_fails_is_logged_and_harmless(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = Journal(tmp_path / "journal.db")
    try:
        journal.create_action(kind="organize", plan=_big_plan(60_000))

        def broken(path: Path) -> None:
            raise sqlite3.OperationalError("disk I/O error")

        monkeypatch.setattr("state.journal.checkpoint", broken)
        journal.checkpoint_later()
        journal.wait_checkpoint()
        assert "checkpoint failed" in caplog.text
        journal.create_action(kind="organize", plan=_big_plan(2))  # the journal still works
    finally:
        journal.close()


def test_the_engine_folds_the_wal_after_an_action_not_during_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("state.journal.WAL_FOLD_BYTES", 0)  # any WAL at all: fold it
    alma = AlmaRoot(tmp_path / "root").build({f"user/in/f{i:03d}.txt": b"x" for i in range(300)})
    engine = make_engine(alma, "landlock")
    try:
        plan: list[Op] = [Mkdir("user/in/textos")]
        for i in range(300):
            src = f"user/in/f{i:03d}.txt"
            st = (alma.root / src).lstat()
            plan.append(Move(src, f"user/in/textos/f{i:03d}.txt", identity_of(st)))
        running_when_folded: list[list[int]] = []
        real = engine.journal.checkpoint_later

        def spy() -> None:
            running_when_folded.append(list(engine.journal.running()))
            real()

        engine.journal.checkpoint_later = spy  # type: ignore[method-assign]
        action = engine.execute(plan, kind="organize", ctx=APPROVED)
        engine.journal.wait_checkpoint()
        assert _in_main_file(engine.journal.path, tmp_path, action["id"])
        undo = engine.undo(action["id"])
        engine.journal.wait_checkpoint()
        assert _in_main_file(engine.journal.path, tmp_path, undo["id"])
        assert running_when_folded == [[], []]  # once per action, each over when asked
    finally:
        engine.journal.close()
