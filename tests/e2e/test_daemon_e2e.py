"""The real ``alma-agentd`` on a temp root, driven by the real ``alma-ctl``.

Every check goes through what a person or a script sees: alma-ctl's exit code, its ``--json``
document (contract §3), and the files on disk, compared byte for byte with
:func:`tests.support.trees.snapshot`.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import time
from datetime import datetime
from typing import Any

import pytest

from actions.summary import plan_summary
from tests.support.daemon import ALMA_CTL, DaemonRoot, find, holds
from tests.support.trees import snapshot

pytestmark = pytest.mark.e2e

#: Contract §3: the Suggestion fields (``list`` gives them without ``plan``; ``show`` adds it).
SUGGESTION_KEYS = {
    "id", "kind", "status", "title", "reason", "target", "files", "needs_approval",
    "created_at", "evidence",
}  # fmt: skip
SUGGESTION_STATUSES = {"pending", "accepted", "rejected", "executed", "failed", "expired"}
ACTION_KEYS = {
    "id", "suggestion_id", "kind", "status", "ops", "auto", "started_at", "finished_at",
    "undone_by",
}  # fmt: skip
ACTION_STATUSES = {"running", "done", "failed", "rolled_back", "undone"}
#: A window longer than debounce (1 s) + an analysis: long enough to see a proposal that
#: should not come (the positive cases below show one arrives well within it).
QUIET = 3.0
DAY = 86_400.0


def tree(d: DaemonRoot, zone: str = "user") -> dict[str, str]:
    return snapshot(d.root / zone, skip=())


def assert_suggestion_shape(s: dict[str, Any], *, with_plan: bool) -> None:
    assert set(s) >= SUGGESTION_KEYS, f"missing {SUGGESTION_KEYS - set(s)} in {s}"
    assert ("plan" in s) is with_plan
    assert isinstance(s["id"], int) and s["id"] > 0
    assert s["status"] in SUGGESTION_STATUSES
    for key in ("kind", "title", "reason", "target", "created_at"):
        assert isinstance(s[key], str) and s[key], key
    assert isinstance(s["files"], int) and s["files"] >= 0
    assert isinstance(s["needs_approval"], bool)
    assert isinstance(s["evidence"], list) and all(isinstance(e, str) for e in s["evidence"])
    assert datetime.fromisoformat(s["created_at"]).tzinfo is not None
    assert not s["target"].startswith("/") and "\\" not in s["target"]


def assert_action_shape(a: dict[str, Any]) -> None:
    assert set(a) >= ACTION_KEYS, f"missing {ACTION_KEYS - set(a)} in {a}"
    assert isinstance(a["id"], int) and a["id"] > 0
    assert a["status"] in ACTION_STATUSES
    assert isinstance(a["ops"], int) and isinstance(a["auto"], bool)
    assert datetime.fromisoformat(a["started_at"])
    assert a["undone_by"] is None or isinstance(a["undone_by"], int)


def pending_for(d: DaemonRoot, target: str) -> list[dict[str, Any]]:
    return find(d.suggestions(), target=target, status="pending")


# --------------------------------------------------------------------------- the main path


def test_messy_folder_suggested_accepted_organized_and_undone_byte_for_byte(
    alma: DaemonRoot,
) -> None:
    alma.start()
    files = alma.messy_folder("user/projectY", 40)
    before = tree(alma)
    system_before = tree(alma, "system")

    # Proposed on its own from the file events (level suggest, settle_seconds = 0).
    listed = alma.wait_suggestion(kind="organize", target="user/projectY")
    assert_suggestion_shape(listed, with_plan=False)
    assert listed["status"] == "pending"
    assert listed["files"] == 40
    assert listed["needs_approval"] is True  # 40 files > approval_files = 20
    assert listed["evidence"]
    assert [s["id"] for s in alma.suggestions()] == [listed["id"]]  # pending only, by default

    shown = alma.ok("suggestions", "show", str(listed["id"]))
    assert_suggestion_shape(shown, with_plan=True)
    # The extension for long plans (docs/protocol.md): the plan's length and its summary,
    # beside what the listing says of the suggestion.
    extension = ("plan", "plan_total", "plan_summary")
    assert {k: v for k, v in shown.items() if k not in extension} == listed
    plan = shown["plan"]
    assert shown["plan_total"] == len(plan)  # 40 moves and their folders: shown whole
    assert shown["plan_summary"] == plan_summary(plan)
    assert shown["plan_summary"]["ops"]["move"] == 40
    assert sum(e["files"] for e in shown["plan_summary"]["extensions"]) == 40
    assert all(isinstance(op, dict) and op["op"] in {"mkdir", "move"} for op in plan), plan
    moves = [op for op in plan if op["op"] == "move"]
    mkdirs = {op["path"] for op in plan if op["op"] == "mkdir"}
    assert sorted(m["src"] for m in moves) == sorted(f"user/projectY/{f.name}" for f in files)
    for m in moves:  # root-relative, /-separated, into a new subfolder of the target
        assert m["dst"].rsplit("/", 1)[0] in mkdirs
        assert m["dst"].startswith("user/projectY/") and m["dst"].count("/") == 3
    human = alma.ctl("suggestions", "show", str(listed["id"]), json_out=False).ok().stdout
    assert f"Plan ({len(plan)} ops)" in human and moves[0]["src"] in human

    # Accept: the Action shape, and the files where the plan said.
    action = alma.ok("suggestions", "accept", str(listed["id"]))
    assert_action_shape(action)
    assert action["status"] == "done" and action["auto"] is False
    assert action["suggestion_id"] == listed["id"] and action["kind"] == "organize"
    assert action["ops"] == len(plan)
    after = tree(alma)
    for m in moves:
        assert after[m["dst"].removeprefix("user/")] == before[m["src"].removeprefix("user/")]
        assert not (alma.root / m["src"]).exists()
    assert sorted(v for v in after.values() if v != "dir") == sorted(
        v for v in before.values() if v != "dir"
    )
    assert alma.ok("suggestions", "show", str(listed["id"]))["status"] == "executed"
    assert alma.suggestions() == []  # the organized folder is not proposed again

    history = alma.ok("history")
    assert [a["id"] for a in history][:1] == [action["id"]]
    for a in history:
        assert_action_shape(a)

    # Undo: the tree is byte for byte as before, and the undo is itself in history.
    undo = alma.ok("undo")
    assert_action_shape(undo)
    assert undo["status"] == "done" and undo["id"] != action["id"]
    assert tree(alma) == before
    assert tree(alma, "system") == system_before
    history = alma.ok("history")
    assert history[0]["id"] == undo["id"]
    original = find(history, id=action["id"])[0]
    assert original["status"] == "undone" and original["undone_by"] == undo["id"]
    # The suggestion reads as undone, its stored status the contract's.
    shown_again = alma.ok("suggestions", "show", str(listed["id"]))
    assert shown_again["status"] == "executed" and shown_again["undone"] is True
    listing = alma.ctl("suggestions", "list", "--all", json_out=False).ok().stdout
    row = next(line for line in listing.splitlines() if line.split()[0] == str(listed["id"]))
    assert row.split()[1] == "undone", listing

    # A bare undo never reverts an undo: nothing is left to undo, and nothing changes.
    again = alma.ctl("undo")
    assert again.rc != 0 and again.stderr.strip()
    assert tree(alma) == before
    alma.stop()


def test_accept_prints_the_action_id_and_a_pending_suggestion_survives_a_restart(
    alma: DaemonRoot,
) -> None:
    alma.start()
    alma.messy_folder("user/inbox", 30)
    s = alma.wait_suggestion(kind="organize", target="user/inbox")
    alma.restart()  # SIGTERM (exit 0 checked), start again
    kept = pending_for(alma, "user/inbox")
    assert [k["id"] for k in kept] == [s["id"]]
    assert kept[0]["created_at"] == s["created_at"]

    out = alma.ctl("suggestions", "accept", str(s["id"]), json_out=False).ok().stdout
    m = re.search(r"\bAction (\d+)\b", out)
    assert m, out
    history = alma.ok("history")
    assert history[0]["id"] == int(m.group(1)) and history[0]["suggestion_id"] == s["id"]
    assert history[0]["status"] == "done"
    assert not [p for p in (alma.root / "user/inbox").iterdir() if p.is_file()]
    alma.stop()


def test_rejected_is_not_proposed_again_even_after_a_restart_until_it_changes(
    alma: DaemonRoot,
) -> None:
    alma.start()
    alma.messy_folder("user/fotos", 25, exts=("jpg", "png", "pdf"))
    s = alma.wait_suggestion(kind="organize", target="user/fotos")
    rejected = alma.ok("suggestions", "reject", str(s["id"]), "--reason", "lo ordeno yo")
    assert rejected["status"] == "rejected"

    alma.analyze()
    assert pending_for(alma, "user/fotos") == []
    alma.restart()
    alma.analyze()
    assert pending_for(alma, "user/fotos") == []
    assert [x["status"] for x in find(alma.suggestions("--all"), target="user/fotos")] == [
        "rejected"
    ]
    # Accepting or rejecting it again is refused as a wrong state, not a missing id.
    again = alma.ctl("suggestions", "accept", str(s["id"]))
    assert again.rc not in (0, 6) and "rejected" in again.stderr

    # What it is about changes: a new finding, proposed again.
    alma.write("user/fotos/nueva.jpg", b"new photo")
    fresh = alma.wait_suggestion(kind="organize", target="user/fotos")
    assert fresh["id"] != s["id"] and fresh["files"] == 26
    alma.stop()


# --------------------------------------------------------------------------- autonomy


def test_autonomy_off_proposes_nothing_stays_paused_across_restarts_and_on_resumes(
    alma: DaemonRoot,
) -> None:
    alma.start()
    status = alma.ok("autonomy", "off")
    assert status["paused"] is True and status["effective"] == "off"
    alma.messy_folder("user/desorden", 30)

    refused = alma.ctl("analyze", "--wait")
    assert refused.rc == 4 and "autonomy on" in refused.stderr
    holds(lambda: alma.suggestions() == [], seconds=QUIET, what="no suggestion while paused")
    st = alma.ok("status")
    assert st["autonomy"]["paused"] is True and st["autonomy"]["effective"] == "off"
    assert st["autonomy"]["configured"] == "suggest" and st["pending_suggestions"] == 0

    alma.restart()  # the start's own catch-up analysis must not propose either
    st = alma.ok("status")
    assert st["autonomy"]["paused"] is True and st["autonomy"]["effective"] == "off"
    holds(lambda: alma.suggestions() == [], seconds=QUIET, what="no suggestion after restart")

    # Accept/reject/undo work at every level; resuming brings the proposal without any event.
    status = alma.ok("autonomy", "on")
    assert status["paused"] is False and status["effective"] == "suggest"
    alma.wait_suggestion(kind="organize", target="user/desorden")
    assert alma.ok("status")["autonomy"]["paused"] is False
    alma.stop()


def test_a_damaged_stored_plan_is_one_sentence_and_a_fresh_suggestion_replaces_it(
    alma: DaemonRoot,
) -> None:
    alma.start()
    alma.messy_folder("user/rotos", 30)
    before = tree(alma)
    listed = alma.wait_suggestion(kind="organize", target="user/rotos")
    sid = str(listed["id"])
    conn = sqlite3.connect(alma.root / ".alma" / "alma.db", timeout=30)
    with conn:
        conn.execute(
            "UPDATE suggestion_plans SET plan = ? WHERE suggestion_id = ?",
            ('[{"op":"mk', listed["id"]),
        )
    conn.close()

    shown = alma.ctl("suggestions", "show", sid, json_out=False)
    assert shown.rc == 2 and shown.stdout == "", shown  # bad argument: one sentence, no trace
    (line,) = shown.stderr.strip().splitlines()
    assert f"Suggestion {sid}" in line and "alma-ctl analyze" in line and "char" not in line

    accepted = alma.ctl("suggestions", "accept", sid, json_out=False)
    assert accepted.rc == 2 and accepted.stderr.strip() == line, accepted
    (row,) = find(alma.ok("suggestions", "list", "--all"), id=listed["id"])
    assert row["status"] == "failed" and row["error"] == line and row["action_id"] is None
    assert tree(alma) == before  # nothing half-done

    fresh = alma.analyze()["proposed"]  # what the sentence says to do
    assert len(fresh) == 1 and fresh[0] != listed["id"]
    assert alma.ok("suggestions", "accept", str(fresh[0]))["status"] == "done"


def test_autonomy_level_can_lower_but_never_raise(alma: DaemonRoot) -> None:
    alma.start()
    raised = alma.ctl("autonomy", "level", "auto")
    assert raised.rc == 4
    assert "autonomy.conf" in raised.stderr
    assert alma.ok("autonomy", "status")["effective"] == "suggest"

    lowered = alma.ok("autonomy", "level", "manual")
    assert lowered["effective"] == "manual" and lowered["configured"] == "suggest"
    # manual: nothing on file events, proposals on `analyze`.
    alma.messy_folder("user/manual", 20)
    holds(lambda: alma.suggestions() == [], seconds=QUIET, what="no proposal at level manual")
    proposed = alma.analyze()["proposed"]
    assert [s["id"] for s in pending_for(alma, "user/manual")] == proposed

    alma.restart()  # a lowered level persists like the pause
    assert alma.ok("autonomy", "status")["effective"] == "manual"
    assert alma.ctl("autonomy", "level", "auto").rc == 4
    assert alma.ok("autonomy", "level", "suggest")["effective"] == "suggest"  # back to configured
    assert alma.ctl("autonomy", "level", "loud").rc == 2  # not a level: usage
    alma.stop()


def test_auto_temp_cleanup_runs_on_its_own_two_undos_stop_it_until_allowed(
    alma: DaemonRoot,
) -> None:
    alma.policy(level="auto", auto__kinds=["temp_cleanup"], monitor__temp_age_days=7)
    alma.start()
    old = time.time() - 30 * DAY
    alma.write("user/notas/informe.txt", b"keep me\n")  # not temporary: never touched
    alma.write("user/notas/borrador.tmp", b"temp one\n", mtime=old)
    alma.write("user/notas/informe.txt~", b"editor backup\n", mtime=old)
    before = tree(alma)

    auto = alma.wait_action(
        lambda a: a["kind"] == "temp_cleanup" and a["status"] != "running",
        what="temp_cleanup to run on its own",
    )
    assert_action_shape(auto)
    assert auto["status"] == "done" and auto["auto"] is True and auto["ops"] == 2
    assert not (alma.root / "user/notas/borrador.tmp").exists()
    assert not (alma.root / "user/notas/informe.txt~").exists()
    assert (alma.root / "user/notas/informe.txt").read_bytes() == b"keep me\n"
    s = alma.ok("suggestions", "show", str(auto["suggestion_id"]))
    assert s["status"] == "executed" and s["needs_approval"] is False
    assert any(e["original"] == "user/notas/borrador.tmp" for e in alma.ok("trash", "list"))

    undo = alma.ok("undo")
    assert undo["status"] == "done" and undo["auto"] is False
    assert tree(alma) == before
    # One undo is not a track record: the kind still runs on its own, once the folder has
    # changed a great deal (an undo means "not this, not now": twice the files it undid).
    assert alma.ok("autonomy", "status")["auto_stopped_kinds"] == []
    alma.write("user/notas/otro.tmp", b"temp two\n", mtime=old)
    alma.write("user/notas/otro2.tmp", b"temp three\n", mtime=old)
    second = alma.wait_action(
        lambda a: (
            a["kind"] == "temp_cleanup"
            and a["auto"]
            and a["id"] > undo["id"]
            and a["status"] != "running"
        ),
        what="temp_cleanup to run on its own again after one undo",
    )
    assert second["status"] == "done" and second["ops"] == 4
    with_otro = tree(alma)
    alma.ok("undo")
    assert tree(alma) != with_otro and (alma.root / "user/notas/otro.tmp").exists()
    assert alma.ok("autonomy", "status")["auto_stopped_kinds"] == ["temp_cleanup"]
    (stopped,) = alma.ok("stats")["auto_stopped"]
    assert stopped["kind"] == "temp_cleanup"
    assert stopped["lift"] == "alma-ctl autonomy allow temp_cleanup"

    # Stopped: new old temp files (enough for the folder to have changed a great deal since
    # the undo) give a suggestion that waits for a person.
    for i in range(4):
        alma.write(f"user/notas/tercero{i}.tmp", b"temp three\n", mtime=old)
    waiting = alma.wait_suggestion(kind="temp_cleanup", target="user")
    assert waiting["needs_approval"] is True
    holds(
        lambda: len(find(alma.ok("history"), kind="temp_cleanup")) == 4,
        seconds=QUIET,
        what="no new temp_cleanup action while the kind is stopped",
    )
    assert (alma.root / "user/notas/tercero0.tmp").exists()

    # Restarting does not turn it back on; `autonomy allow` does.
    alma.restart()
    assert alma.ok("autonomy", "status")["auto_stopped_kinds"] == ["temp_cleanup"]
    allowed = alma.ok("autonomy", "allow", "temp_cleanup")
    assert allowed["auto_stopped_kinds"] == []
    assert alma.ok("stats")["auto_stopped"] == []
    alma.write("user/notas/cuarto.tmp", b"temp four\n", mtime=old)
    third = alma.wait_action(
        lambda a: (
            a["kind"] == "temp_cleanup"
            and a["auto"]
            and a["id"] > second["id"]
            and a["status"] != "running"
        ),
        what="temp_cleanup to run on its own again after `autonomy allow`",
    )
    assert third["status"] == "done"
    for name in ("borrador.tmp", "informe.txt~", "otro.tmp", "tercero0.tmp", "cuarto.tmp"):
        assert not (alma.root / "user/notas" / name).exists(), name
    assert (alma.root / "user/notas/informe.txt").exists()
    alma.stop()


# --------------------------------------------------------------------------- start-up


def test_a_second_daemon_on_the_same_root_exits_non_zero_with_a_clear_message(
    alma: DaemonRoot,
) -> None:
    first = alma.start()
    second = alma.spawn()
    rc = second.wait(timeout=60)
    assert rc != 0
    message = alma.log()
    assert "already running" in message and str(first.pid) in message
    assert "Traceback" not in message
    assert alma.ok("status")["pid"] == first.pid  # the first one is unharmed
    alma.stop()


def test_the_daemon_refuses_to_start_without_autonomy_conf(alma: DaemonRoot) -> None:
    alma.policy_file.unlink()
    proc = alma.spawn()
    assert proc.wait(timeout=60) != 0
    message = alma.log()
    assert "autonomy.conf" in message and "alma-ctl" in message and "init" in message
    assert "Traceback" not in message
    assert not alma.policy_file.exists()  # it does not create one on its own


def test_a_root_that_was_never_initialized_is_refused() -> None:
    d = DaemonRoot()
    try:
        d.root.mkdir()
        proc = d.spawn()
        assert proc.wait(timeout=60) != 0
        assert "alma-ctl" in d.log() and "init" in d.log()
    finally:
        d.close()


# --------------------------------------------------------------------------- exit codes


def test_exit_codes_of_the_contract(alma: DaemonRoot) -> None:
    # 3: not running. status --json still prints one document saying so.
    down = alma.ctl("status")
    assert down.rc == 3
    assert down.data["running"] is False and down.data["root"] == str(alma.root)
    unreachable: list[tuple[str, ...]] = [("suggestions", "list"), ("history",), ("undo",)]
    for args in unreachable:
        res = alma.ctl(*args, json_out=False)
        assert res.rc == 3, args
        assert "alma-agentd" in res.stderr and "Traceback" not in res.stderr

    alma.start()
    # 6: no such id, for suggestions and actions, with --json an error document.
    no_such_id: list[tuple[str, ...]] = [
        ("suggestions", "show", "999"),
        ("suggestions", "accept", "999"),
        ("suggestions", "reject", "999"),
        ("undo", "999"),
    ]
    for args in no_such_id:
        res = alma.ctl(*args)
        assert res.rc == 6, (args, res)
        assert res.data["ok"] is False and res.data["error"]["message"]
        assert res.stderr.strip() and "Traceback" not in res.stderr
    # 2: usage.
    usage: list[tuple[str, ...]] = [
        ("suggestions", "show", "abc"),
        ("suggestions", "show"),
        ("frobnicate",),
        ("suggestions", "list", "--status", "bogus"),
        ("history", "--limit", "x"),
    ]
    for args in usage:
        res = alma.ctl(*args, json_out=False)
        assert res.rc == 2, (args, res)
    # 0, and --json may also come after the command.
    after = subprocess.run(
        [ALMA_CTL, "--root", str(alma.root), "status", "--json"],
        capture_output=True,
        text=True,
        env=alma.env,
        check=False,
    )
    assert after.returncode == 0 and '"running": true' in after.stdout
    alma.stop()
    assert alma.ctl("status").rc == 3
