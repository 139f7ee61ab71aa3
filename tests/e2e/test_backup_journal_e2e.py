"""A backup never costs the journal: the daily routine (a backup, an accept and its undo, a
backup) through the real daemon, the real restic and alma-ctl, with the journal read from a
second connection after every step, then a SIGKILL and a restart."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_backup_e2e import set_up_repo
from tests.support.daemon import DaemonRoot

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not shutil.which("restic"), reason="no restic")]

ROUNDS = 3


def tree(root: Path) -> dict[str, str]:
    """Every folder and file under ``user/``: its name, and its sha256 (``dir`` for a folder)."""
    out: dict[str, str] = {}
    for dirpath, dirs, files in os.walk(root / "user"):
        here = Path(dirpath)
        for name in dirs:
            out[str((here / name).relative_to(root))] = "dir"
        for name in files:
            path = here / name
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def journal_rows(d: DaemonRoot) -> dict[int, tuple[str, str]]:
    """The journal's actions as another process sees them: id -> (kind, status)."""
    conn = sqlite3.connect(f"{d.journal_db.as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        rows = conn.execute("SELECT id, kind, status FROM actions").fetchall()
    finally:
        conn.close()
    return {int(r[0]): (str(r[1]), str(r[2])) for r in rows}


def deleted_databases(pid: int) -> list[str]:
    """The daemon's descriptors of a database file that is no longer there."""
    out = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if "/.alma/" in target and target.endswith(" (deleted)"):
            out.append(target)
    return out


def seen_outside(d: DaemonRoot) -> None:
    """Every action the daemon lists is in the journal's file, with the same status, and the
    daemon holds no database file that was deleted under it."""
    history = {int(a["id"]): (a["kind"], a["status"]) for a in d.ok("history", "--limit", "1000")}
    assert journal_rows(d) == history, d.log()
    assert deleted_databases(d.pid) == []


def backup(d: DaemonRoot) -> dict[str, Any]:
    taken: dict[str, Any] = d.ok("backup", "now")
    assert taken["kind"] == "backup" and taken["status"] == "done", taken
    seen_outside(d)
    return taken


def test_backups_accepts_and_undos_in_a_row_keep_the_journal_whole_through_a_sigkill(
    alma: DaemonRoot,
) -> None:
    folders = [f"user/descargas{i}" for i in range(ROUNDS + 1)]
    for folder in folders:
        alma.messy_folder(folder, 24)
    alma.start()
    set_up_repo(alma)
    alma.analyze()
    pending = {s["target"]: s for s in alma.suggestions() if s["kind"] == "organize"}
    assert sorted(pending) == folders, pending
    before = tree(alma.root)

    for folder in folders[:ROUNDS]:
        backup(alma)
        done = alma.ok("suggestions", "accept", str(pending[folder]["id"]))
        assert done["status"] == "done" and done["kind"] == "organize", done
        assert tree(alma.root) != before
        seen_outside(alma)
        undo = alma.ok("undo")
        assert undo["status"] == "done" and undo["undoes"] == done["id"], undo
        assert tree(alma.root) == before
        seen_outside(alma)
        backup(alma)

    backup(alma)
    last = alma.ok("suggestions", "accept", str(pending[folders[-1]]["id"]))
    assert last["status"] == "done", last
    organized = tree(alma.root)
    seen_outside(alma)
    listed = {a["id"] for a in alma.ok("history", "--limit", "1000")}

    alma.kill()
    alma.start()
    after = {a["id"]: a for a in alma.ok("history", "--limit", "1000")}
    assert set(after) == listed
    assert after[last["id"]]["status"] == "done"
    assert tree(alma.root) == organized
    undo = alma.ok("undo")
    assert undo["undoes"] == last["id"] and undo["status"] == "done", undo
    assert tree(alma.root) == before
    seen_outside(alma)
    alma.stop()
