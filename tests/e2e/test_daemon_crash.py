"""alma-agentd SIGKILLed in the middle of a large accepted action: nothing lost at the next start.

The daemon is killed (no clean-up of any kind runs; its confined executor dies with it through
PDEATHSIG) once the journal shows the action running with some ops applied. The next start
rolls the action back before the socket opens: the tree is byte for byte as before, the
suggestion is shown as failed, and accepting it again succeeds (and undoes cleanly too).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.support.daemon import ALMA_CTL, DaemonRoot, find, wait_for
from tests.support.trees import snapshot

pytestmark = pytest.mark.e2e

FILES = 3000


def _progress(journal: Path) -> tuple[str, int, int] | None:
    """(status, ops done, ops) of the newest action, read-only; None before it exists."""
    if not journal.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=0.2)
    except sqlite3.Error:
        return None
    try:
        row = conn.execute(
            "SELECT id, status, ops FROM actions ORDER BY id DESC LIMIT 1"
        ).fetchone()
        if row is None:
            return None
        (done,) = conn.execute(
            "SELECT COALESCE(SUM(json_array_length(posts)), 0) FROM journal_done "
            "WHERE action_id = ?",
            (row[0],),
        ).fetchone()
        return str(row[1]), int(done), int(row[2])
    except sqlite3.Error:  # a table not created yet, or a writer holding a lock this instant
        return None
    finally:
        conn.close()


def _moved(folder: Path) -> int:
    """Files already moved into the organize subfolders of ``folder``."""
    count = 0
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                with os.scandir(entry.path) as inner:
                    count += sum(1 for _ in inner)
    return count


def _everything_but_reports(alma: DaemonRoot) -> dict[str, str]:
    """The whole root but ALMA's data and its own reports (logs/alma/ records what it did)."""
    tree = snapshot(alma.root, skip=(".alma",))
    return {k: v for k, v in tree.items() if not k.startswith("logs/alma/")}


def test_sigkill_mid_action_rolls_back_at_restart_and_the_suggestion_can_be_accepted_again(
    alma: DaemonRoot,
) -> None:
    alma.policy(thresholds__max_files=FILES * 2)
    alma.set_settings("", "language", "es")  # the audit log below is read in Spanish
    alma.start()
    folder = alma.root / "user/big"
    alma.messy_folder("user/big", FILES)
    before = _everything_but_reports(alma)
    s = alma.wait_suggestion(kind="organize", target="user/big", timeout=90)
    assert s["files"] == FILES

    accept = subprocess.Popen(
        [ALMA_CTL, "--root", str(alma.root), "--json", "suggestions", "accept", str(s["id"])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=alma.env,
    )

    def mid_action() -> tuple[str, int, int] | None:
        p = _progress(alma.journal_db)
        if p is None or p[0] != "running":
            assert p is None or p[0] != "done", f"the action finished before the kill: {p}"
            return None
        return p if p[1] > 0 or _moved(folder) > 0 else None

    _status, done, ops = wait_for(mid_action, timeout=90, interval=0.005, what="ops applied")
    alma.kill()
    accept.wait(timeout=60)
    assert accept.returncode != 0  # the person is told it did not finish
    moved_at_kill = _moved(folder)
    assert 0 < moved_at_kill < FILES or 0 < done < ops, (moved_at_kill, done, ops)

    alma.start()
    assert _everything_but_reports(alma) == before
    st = alma.ok("status")
    assert st["recovered_at_start"], st
    failed = find(alma.suggestions("--all"), id=s["id"])[0]
    assert failed["status"] == "failed"
    history = alma.ok("history")
    assert history[0]["suggestion_id"] == s["id"] and history[0]["status"] == "rolled_back"

    again = alma.ok("suggestions", "accept", str(s["id"]))
    assert again["status"] == "done" and again["id"] != history[0]["id"]
    assert _moved(folder) == FILES
    assert not [e for e in folder.iterdir() if e.is_file()]
    assert alma.ok("suggestions", "show", str(s["id"]))["status"] == "executed"

    undo = alma.ok("undo")
    assert _everything_but_reports(alma) == before
    # ALMA's own audit log records the action that finished and its undo, not the one killed.
    audit = (alma.root / "logs/alma/acciones.md").read_text(encoding="utf-8")
    assert f"· acción {again['id']} (organize)" in audit
    assert f"· acción {undo['id']} · deshace la acción {again['id']}" in audit
    assert f"· acción {history[0]['id']} " not in audit
    alma.stop()
