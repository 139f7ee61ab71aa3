"""Small edges against the real daemon, through the real alma-ctl: a report of a
day out of reach, an audit log that cannot be written, a dedupe undone after its kept copy
changed, `trash restore`, and `model use ""`."""

from __future__ import annotations

import os
import time
from datetime import date, timedelta

import pytest

from tests.support.daemon import DaemonRoot, find

pytestmark = pytest.mark.slow

DAY = 86400


def test_a_report_of_a_day_out_of_reach_is_a_usage_error(alma: DaemonRoot) -> None:
    alma.start()
    tomorrow = (date.today() + timedelta(days=1)).isoformat()
    for day in ("9999-12-31", "0001-01-01", tomorrow):
        res = alma.ctl("report", day, json_out=False)
        assert res.rc == 2, (day, res)
        assert day in res.stderr and "internal error" not in res.stderr
    assert alma.ok("status")["running"]


def test_model_use_of_nothing_says_to_give_a_path(alma: DaemonRoot) -> None:
    alma.start()
    res = alma.ctl("model", "use", "", json_out=False)
    assert res.rc == 2 and "PATH" in res.stderr and os.getcwd() not in res.stderr


def test_dedupe_undo_trash_restore_and_an_audit_log_that_cannot_be_written(
    alma: DaemonRoot,
) -> None:
    old = time.time() - 30 * DAY
    alma.write("user/otros/a.txt", b"la misma copia\n", mtime=old)  # the oldest: kept
    alma.write("user/fotos/a.txt", b"la misma copia\n")
    alma.write("user/papeles/a.txt", b"la misma copia\n")
    audit = alma.root / "logs" / "alma" / "acciones.md"
    audit.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(audit)
    alma.start()
    alma.analyze()
    (dupes,) = find(alma.suggestions(), kind="duplicates")
    done = alma.ok("suggestions", "accept", str(dupes["id"]))
    assert "acciones.md" in done["audit_problem"]
    status = alma.ctl("status", json_out=False)
    assert status.rc == 0 and "WARNING: Action" in status.stdout, status.stdout

    # The kept copy changed: the trashed copies come back all the same.
    (alma.root / "user/otros/a.txt").write_bytes(b"otra cosa ya\n")
    alma.ok("undo", str(done["id"]))
    for rel in ("user/fotos/a.txt", "user/papeles/a.txt"):
        assert (alma.root / rel).read_bytes() == b"la misma copia\n"

    # An undo holds duplicates there until the person lifts it; then again, and one file back
    # by `trash restore`; never over a file (exit 5).
    audit.unlink()
    alma.analyze()
    assert find(alma.suggestions(), kind="duplicates", status="pending") == []
    alma.ok("autonomy", "allow", "duplicates", "--folder", "user")
    alma.analyze()
    (dupes,) = find(alma.suggestions(), kind="duplicates", status="pending")
    again = alma.ok("suggestions", "accept", str(dupes["id"]))
    assert "audit_problem" not in again
    trashed = {e["original"]: e for e in alma.ok("trash", "list")}
    back = sorted(trashed)[0]
    (alma.root / back).write_bytes(b"in the way\n")
    res = alma.ctl("trash", "restore", str(again["id"]), back)
    assert res.rc == 5, res
    (alma.root / back).unlink()
    restored = alma.ok("trash", "restore", str(again["id"]), back)
    assert restored["kind"] == "trash_restore" and restored["status"] == "done"
    assert (alma.root / back).read_bytes() == b"la misma copia\n"
    assert f"action {restored['id']}" in audit.read_text(encoding="utf-8").lower()
    alma.ok("undo", str(restored["id"]))
    assert not (alma.root / back).exists()
    assert alma.ctl("status", json_out=False).stdout.count("WARNING: Action") == 0
