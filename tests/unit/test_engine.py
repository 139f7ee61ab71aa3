"""The action engine as a person uses it: do, undo, undo of an undo, conflicts, history, trash.

Runs on the real confinement (Landlock); the round trip also runs under bubblewrap and firejail,
where the zones are separate mounts and every move into the trash is a copy, verify, publish.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from actions.ops import Keep, Mkdir, Op
from policies.config import Policy, policy_from_dict
from policies.decide import RunContext
from policies.errors import ConflictError, InvalidStateError, NotFoundError, RefusedError
from sandbox.engine import Engine, _Child
from state.journal import PLAIN_TRANSFER, Journal, compact_aux
from tests.support.engine import REAL_BACKENDS, AlmaRoot, default_policy, make_engine

APPROVED = RunContext(approved_by_person=True)
FILES = {
    "user/proyecto/foto1.jpg": b"\xff\xd8 foto uno",
    "user/proyecto/foto2.jpg": b"\xff\xd8 foto dos",
    "user/proyecto/canción.mp3": b"ID3 una canci\xc3\xb3n",
    "user/proyecto/año/informe.pdf": b"%PDF informe",
    "user/proyecto/copia.tmp": b"temporal",
    "user/proyecto/vacío.txt": b"",
}
CONTRACT_ACTION_KEYS = {
    "id",
    "suggestion_id",
    "kind",
    "status",
    "ops",
    "auto",
    "started_at",
    "finished_at",
    "undone_by",
}


@pytest.fixture
def alma(tmp_path: Path) -> AlmaRoot:
    return AlmaRoot(tmp_path).build(FILES)


@pytest.fixture
def engine(alma: AlmaRoot) -> Iterator[Engine]:
    eng = make_engine(alma, "landlock")
    yield eng
    eng.journal.close()


def organize(alma: AlmaRoot) -> list[Op]:
    return [
        Mkdir("user/proyecto/imágenes"),
        alma.move("user/proyecto/foto1.jpg", "user/proyecto/imágenes/foto1.jpg"),
        alma.move("user/proyecto/foto2.jpg", "user/proyecto/imágenes/foto2.jpg"),
        Mkdir("user/proyecto/música"),
        alma.move("user/proyecto/canción.mp3", "user/proyecto/música/canción.mp3"),
        alma.move("user/proyecto/vacío.txt", "user/proyecto/año/vacío.txt"),
        alma.trash("user/proyecto/copia.tmp"),
    ]


def without_trash(world: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in world.items() if not k.startswith(".alma/trash")}


@pytest.mark.parametrize("backend", REAL_BACKENDS)
def test_do_then_undo_gives_back_the_tree_byte_for_byte(alma: AlmaRoot, backend: str) -> None:
    engine = make_engine(alma, backend)
    before = alma.world()
    done = engine.execute(organize(alma), kind="organize", ctx=APPROVED, suggestion_id=3)
    assert done["status"] == "done" and done["ops"] == 7 and done["sandbox"] == backend
    assert alma.path("user/proyecto/imágenes/foto1.jpg").read_bytes() == b"\xff\xd8 foto uno"
    assert alma.path("user/proyecto/música/canción.mp3").is_file()
    assert not alma.path("user/proyecto/copia.tmp").exists()
    [entry] = engine.trash_list()
    assert entry["original"] == "user/proyecto/copia.tmp" and entry["action"] == done["id"]
    assert alma.path(entry["trash"]).read_bytes() == b"temporal"
    assert alma.outside_user() == {
        k: v
        for k, v in before.items()
        if not k.startswith(("user/", ".alma/trash")) and k != "user"
    }

    undo = engine.undo()
    assert undo["status"] == "done" and undo["undoes"] == done["id"]
    assert without_trash(alma.world()) == without_trash(before)
    assert engine.trash_list() == []
    # Nothing of the action is left in the trash: no empty folders, no manifest of nothing.
    assert not alma.path(f".alma/trash/{done['id']}").exists()
    assert engine.journal.action(done["id"])["status"] == "undone"
    assert engine.journal.action(done["id"])["undone_by"] == undo["id"]


def test_undo_of_an_undo_redoes_the_action(alma: AlmaRoot, engine: Engine) -> None:
    before = alma.world()
    done = engine.execute(organize(alma), kind="organize", ctx=APPROVED)
    after_do = alma.world()
    undo = engine.undo()
    redo = engine.undo(undo["id"])
    assert redo["undoes"] == undo["id"]
    assert without_trash(alma.world()) == without_trash(after_do)
    assert engine.journal.action(undo["id"])["status"] == "undone"
    assert engine.journal.action(done["id"])["status"] == "undone"
    # and the redo itself can be taken back by its id: the tree is the starting one again
    engine.undo(redo["id"])
    assert without_trash(alma.world()) == without_trash(before)


def test_bare_undo_never_reverts_an_undo(alma: AlmaRoot, engine: Engine) -> None:
    first = engine.execute(
        [alma.move("user/proyecto/foto1.jpg", "user/foto1.jpg")], kind="organize", ctx=APPROVED
    )
    second = engine.execute(
        [alma.move("user/proyecto/foto2.jpg", "user/foto2.jpg")], kind="organize", ctx=APPROVED
    )
    undo_second = engine.undo()
    assert undo_second["undoes"] == second["id"]
    undo_first = engine.undo()  # not the undo just made: the newest action that is not an undo
    assert undo_first["undoes"] == first["id"]
    assert alma.path("user/proyecto/foto1.jpg").is_file()
    assert alma.path("user/proyecto/foto2.jpg").is_file()
    with pytest.raises(InvalidStateError):
        engine.undo()


def test_a_bare_undo_reverts_a_redo(alma: AlmaRoot, engine: Engine) -> None:
    """After undoing an undo, a bare undo takes back the redo: a redo does the original
    again, so it is the newest thing a bare undo may take back (an undo it never takes)."""
    before = alma.world()
    done = engine.execute(organize(alma), kind="organize", ctx=APPROVED)
    undo = engine.undo()
    redo = engine.undo(undo["id"])
    again = engine.undo()
    assert again["undoes"] == redo["id"]
    assert without_trash(alma.world()) == without_trash(before)
    assert engine.journal.action(redo["id"])["status"] == "undone"
    assert engine.journal.action(done["id"])["status"] == "undone"
    with pytest.raises(InvalidStateError):
        engine.undo()  # what is left done is two undos: a bare undo reverts neither


def test_undo_refuses_what_cannot_be_undone(alma: AlmaRoot, engine: Engine) -> None:
    with pytest.raises(InvalidStateError):
        engine.undo()  # nothing done yet
    with pytest.raises(NotFoundError):
        engine.undo(99)
    done = engine.execute(organize(alma), kind="organize", ctx=APPROVED)
    engine.undo()
    before = alma.world()
    with pytest.raises(InvalidStateError):
        engine.undo(done["id"])  # already undone
    assert alma.world() == before


def _undo_conflict(alma: AlmaRoot, engine: Engine, action_id: int) -> None:
    before = alma.world()
    with pytest.raises(ConflictError):
        engine.undo(action_id)
    assert alma.world() == before
    assert engine.journal.action(action_id)["status"] == "done"


@pytest.mark.parametrize("change", ["content", "mtime", "replaced"])
def test_undo_of_a_file_changed_after_the_action_is_a_conflict(
    alma: AlmaRoot, engine: Engine, change: str
) -> None:
    done = engine.execute(organize(alma), kind="organize", ctx=APPROVED)
    moved = alma.path("user/proyecto/imágenes/foto2.jpg")
    st = os.stat(moved)
    if change == "content":
        moved.write_bytes(b"edited by the person after the action")
    elif change == "mtime":
        os.utime(moved, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    else:
        moved.unlink()
        moved.write_bytes(b"\xff\xd8 foto dos")
        os.utime(moved, ns=(st.st_atime_ns, st.st_mtime_ns))
    _undo_conflict(alma, engine, done["id"])


def test_undo_when_the_original_place_is_occupied_is_a_conflict(
    alma: AlmaRoot, engine: Engine
) -> None:
    done = engine.execute(organize(alma), kind="organize", ctx=APPROVED)
    alma.write("user/proyecto/foto1.jpg", b"a new photo with the old name")
    _undo_conflict(alma, engine, done["id"])
    alma.path("user/proyecto/foto1.jpg").unlink()
    alma.write("user/proyecto/copia.tmp", b"a new temp where the trashed one was")
    _undo_conflict(alma, engine, done["id"])


def test_undo_when_a_created_folder_got_a_new_file_is_a_conflict(
    alma: AlmaRoot, engine: Engine
) -> None:
    done = engine.execute(organize(alma), kind="organize", ctx=APPROVED)
    alma.write("user/proyecto/música/nueva.mp3", b"added by the person")
    _undo_conflict(alma, engine, done["id"])


def dedupe(alma: AlmaRoot) -> list[Op]:
    alma.write("user/proyecto/foto1 (copia).jpg", b"\xff\xd8 foto uno")
    alma.write("user/proyecto/año/foto1.jpg", b"\xff\xd8 foto uno")
    return [
        Keep("user/proyecto/foto1.jpg", expect=alma.ident("user/proyecto/foto1.jpg", sha256=True)),
        alma.trash("user/proyecto/foto1 (copia).jpg", sha256=True),
        alma.trash("user/proyecto/año/foto1.jpg", sha256=True),
    ]


@pytest.mark.parametrize("change", ["edited", "gone"])
def test_a_dedupe_comes_back_whatever_became_of_the_copy_it_kept(
    alma: AlmaRoot, engine: Engine, change: str
) -> None:
    """The trashed copies are bytes of their own: the undo is not refused whole when the
    kept copy changed since, so the person gets the others back."""
    done = engine.execute(dedupe(alma), kind="duplicates", ctx=APPROVED)
    kept = alma.path("user/proyecto/foto1.jpg")
    if change == "edited":
        kept.write_bytes(b"\xff\xd8 foto uno, retocada")
    else:
        kept.unlink()
    engine.undo(done["id"])
    assert alma.path("user/proyecto/foto1 (copia).jpg").read_bytes() == b"\xff\xd8 foto uno"
    assert alma.path("user/proyecto/año/foto1.jpg").read_bytes() == b"\xff\xd8 foto uno"
    if change == "edited":
        assert kept.read_bytes() == b"\xff\xd8 foto uno, retocada"
    else:
        assert not kept.exists()
    assert engine.journal.action(done["id"])["status"] == "undone"


def test_a_dedupe_undo_stops_only_for_a_file_in_the_way(alma: AlmaRoot, engine: Engine) -> None:
    done = engine.execute(dedupe(alma), kind="duplicates", ctx=APPROVED)
    alma.write("user/proyecto/año/foto1.jpg", b"another photo by that name")
    _undo_conflict(alma, engine, done["id"])


def test_one_file_comes_back_from_the_trash_as_an_action_undo_takes_back(
    alma: AlmaRoot, engine: Engine
) -> None:
    done = engine.execute(organize(alma), kind="organize", ctx=APPROVED)
    back = engine.trash_restore(done["id"], "user/proyecto/copia.tmp")
    assert (back["kind"], back["status"], back["ops"]) == ("trash_restore", "done", 1)
    assert alma.path("user/proyecto/copia.tmp").read_bytes() == b"temporal"
    assert engine.trash_list() == []
    engine.undo(back["id"])  # journaled like any action: back to the trash
    assert not alma.path("user/proyecto/copia.tmp").exists()
    assert [e["original"] for e in engine.trash_list()] == ["user/proyecto/copia.tmp"]


def test_all_of_one_trash_entry_comes_back_never_over_a_file(
    alma: AlmaRoot, engine: Engine
) -> None:
    done = engine.execute(dedupe(alma), kind="duplicates", ctx=APPROVED)
    alma.write("user/proyecto/año/foto1.jpg", b"a new photo by that name")
    before = alma.world()
    with pytest.raises(ConflictError, match="already exists"):
        engine.trash_restore(done["id"], None)
    assert alma.world() == before  # neither came back: a restore is one action
    alma.path("user/proyecto/año/foto1.jpg").unlink()
    engine.trash_restore(done["id"], None)
    assert alma.path("user/proyecto/foto1 (copia).jpg").read_bytes() == b"\xff\xd8 foto uno"
    assert alma.path("user/proyecto/año/foto1.jpg").read_bytes() == b"\xff\xd8 foto uno"


def test_a_restore_of_nothing_in_the_trash_says_what_to_look_at(
    alma: AlmaRoot, engine: Engine
) -> None:
    done = engine.execute(organize(alma), kind="organize", ctx=APPROVED)
    with pytest.raises(NotFoundError, match="alma-ctl trash list"):
        engine.trash_restore(done["id"] + 1, None)
    with pytest.raises(NotFoundError, match="alma-ctl trash list"):
        engine.trash_restore(done["id"], "user/proyecto/foto1.jpg")


def test_undo_when_the_trashed_file_is_gone_is_a_conflict(alma: AlmaRoot, engine: Engine) -> None:
    done = engine.execute(organize(alma), kind="organize", ctx=APPROVED)
    [entry] = engine.trash_list()
    alma.path(entry["trash"]).unlink()
    _undo_conflict(alma, engine, done["id"])


def test_undo_works_after_a_restart(alma: AlmaRoot, engine: Engine) -> None:
    before = alma.world()
    engine.execute(organize(alma), kind="organize", ctx=APPROVED)
    engine.journal.close()
    again = make_engine(alma, "landlock")
    again.undo()
    assert without_trash(alma.world()) == without_trash(before)
    again.journal.close()


def test_a_failed_action_is_rolled_back_and_recorded(alma: AlmaRoot, engine: Engine) -> None:
    before = alma.world()
    plan = organize(alma)
    alma.path("user/proyecto/música").mkdir()  # the plan's mkdir now meets an existing folder
    with pytest.raises(ConflictError):
        engine.execute(plan, kind="organize", ctx=APPROVED)
    alma.path("user/proyecto/música").rmdir()
    assert alma.world() == before
    [action] = engine.journal.history()
    assert action["status"] == "rolled_back" and action["error"]
    with pytest.raises(InvalidStateError):
        engine.undo(action["id"])


def test_history_has_the_contract_shape(alma: AlmaRoot, engine: Engine) -> None:
    done = engine.execute(organize(alma), kind="organize", ctx=APPROVED, suggestion_id=3)
    undo = engine.undo()
    auto = RunContext(approved_by_person=False, effective_level="auto")
    alma.write("user/a.tmp", b"old temp")
    engine.execute([alma.trash("user/a.tmp")], kind="temp_cleanup", ctx=auto)
    history = engine.journal.history()
    assert [a["id"] for a in history] == [undo["id"] + 1, undo["id"], done["id"]]  # newest first
    assert engine.journal.history(limit=1) == history[:1]
    for action in history:
        assert set(action) >= CONTRACT_ACTION_KEYS
        assert isinstance(action["id"], int) and action["id"] > 0
        assert action["status"] in ("running", "done", "failed", "rolled_back", "undone")
        assert isinstance(action["ops"], int) and isinstance(action["auto"], bool)
        datetime.fromisoformat(action["started_at"])
        datetime.fromisoformat(action["finished_at"])
    cleanup, undo_row, done_row = history
    assert (cleanup["kind"], cleanup["auto"], cleanup["status"]) == ("temp_cleanup", True, "done")
    assert (undo_row["status"], undo_row["undone_by"], undo_row["undoes"]) == ("done", None, 1)
    assert (done_row["status"], done_row["undone_by"]) == ("undone", undo["id"])
    assert (done_row["suggestion_id"], done_row["kind"], done_row["ops"]) == (3, "organize", 7)
    # ``undoable`` is the journal's one rule (undo_refusal), for whoever offers an undo button.
    for action in history:
        refusal = engine.journal.undo_refusal(action["id"])
        assert action["undoable"] is (refusal is None), action
    assert (cleanup["undoable"], done_row["undoable"]) == (True, False)


def test_trash_empty_removes_only_what_is_older_than_asked(alma: AlmaRoot, engine: Engine) -> None:
    alma.write("user/viejo.tmp", b"trashed long ago")
    alma.write("user/nuevo.tmp", b"trashed today")
    old = engine.execute([alma.trash("user/viejo.tmp")], kind="temp_cleanup", ctx=APPROVED)
    new = engine.execute([alma.trash("user/nuevo.tmp")], kind="temp_cleanup", ctx=APPROVED)
    assert {e["original"] for e in engine.trash_list()} == {"user/viejo.tmp", "user/nuevo.tmp"}
    ten_days_ago = time.time() - 10 * 86400
    os.utime(alma.root / ".alma/trash" / str(old["id"]), (ten_days_ago, ten_days_ago))
    engine.policy = lambda: default_policy(retention_days=7)

    assert engine.trash_empty(30)["removed"] == 0
    assert len(engine.trash_list()) == 2
    before = alma.world()
    result = engine.trash_empty(7)
    assert result == {"removed": 1, "older_than_days": 7}
    assert [e["original"] for e in engine.trash_list()] == ["user/nuevo.tmp"]
    gone = {k for k in before if k.startswith(f".alma/trash/{old['id']}")}
    assert gone and set(before) - set(alma.world()) == gone
    # the emptied action can no longer be undone, and saying so changes nothing
    actions = len(engine.journal.history(100))
    after = alma.world()
    with pytest.raises(InvalidStateError, match="trash"):
        engine.undo(old["id"])
    assert alma.world() == after and len(engine.journal.history(100)) == actions
    engine.undo(new["id"])
    assert alma.path("user/nuevo.tmp").read_bytes() == b"trashed today"


def test_trash_empty_keeps_the_policys_retention_and_forgets_emptied_actions(
    alma: AlmaRoot, engine: Engine
) -> None:
    """``trash empty --older-than 0`` respects ``[trash] retention_days``, and a bare undo
    never aims at an action whose trash was emptied (it would fail and add a rolled_back row)."""
    alma.write("user/viejo.tmp", b"trashed long ago")
    old = engine.execute([alma.trash("user/viejo.tmp")], kind="temp_cleanup", ctx=APPROVED)
    before = alma.world()
    with pytest.raises(RefusedError, match="retention_days"):
        engine.trash_empty(0)  # the default policy keeps the trash 30 days
    assert alma.world() == before
    engine.policy = lambda: default_policy(retention_days=0)
    assert engine.trash_empty(0)["removed"] == 1
    actions = len(engine.journal.history(100))
    for _ in range(3):
        with pytest.raises(InvalidStateError):
            engine.undo()  # nothing else is done: the emptied action is not a target
    with pytest.raises(InvalidStateError, match="trash"):
        engine.undo(old["id"])
    assert len(engine.journal.history(100)) == actions


def test_journal_rows_read_back_the_plans_ops_and_each_transfers_aux(
    alma: AlmaRoot, engine: Engine
) -> None:
    # The journal stores of an op only what its plan does not say (a trash entry's place, an
    # identity that differs from the op's expect); reading back must complete it exactly.
    done = engine.execute(organize(alma), kind="organize", ctx=APPROVED)
    undo = engine.undo(done["id"])
    journal = Journal(alma.layout.journal_file)
    try:
        for action in (done, undo):
            rows = journal.rows(action["id"])
            plan = journal.plan(action["id"])
            assert [r.op for r in rows] == plan
            stored = journal.conn.execute(
                "SELECT idx, op, pre, aux FROM journal WHERE action_id = ?", (action["id"],)
            ).fetchall()
            assert all(op is None for _, op, _, _ in stored)
            kept = {idx for idx, _, _, _ in stored}
            for row in rows:
                op = row.op
                if op["op"] == "move":
                    assert row.aux == {"src": op["src"], "dst": op["dst"], **PLAIN_TRANSFER}
                    assert row.pre == op["expect"] and row.idx not in kept
                elif op["op"] == "restore":
                    assert row.aux == {"src": op["trash"], "dst": op["path"], **PLAIN_TRANSFER}
                    assert row.pre == op["expect"] and row.idx not in kept
                elif op["op"] == "trash":  # where it went is not in the op: stored
                    assert row.aux["dst"].startswith(f".alma/trash/{action['id']}/")
                    assert compact_aux(op, row.aux) == row.aux and row.idx in kept
                else:
                    assert row.aux == {} and row.pre is None and row.idx not in kept
        assert journal.done_rows(done["id"]) == [
            (r.op, r.post, r.aux) for r in journal.rows(done["id"]) if r.state == "done"
        ]
        assert all(r.state == "done" and r.post is not None for r in journal.rows(undo["id"])
                   if r.op["op"] != "rmdir")  # fmt: skip
    finally:
        journal.close()


def test_a_version_1_journal_is_migrated_and_reads_the_same(tmp_path: Path) -> None:
    from state.db import connect, migrate
    from state.journal import MIGRATIONS

    path = tmp_path / "journal.db"
    conn = connect(path)
    migrate(conn, MIGRATIONS[:1], name="journal")  # a journal written by the first release
    conn.execute(
        "INSERT INTO actions(kind, status, plan, ops, started_at) "
        "VALUES ('organize', 'done', '[]', 1, '2026-11-01T00:00:00+00:00')"
    )
    op = {"op": "move", "src": "user/a", "dst": "user/b/a"}
    aux = {"src": "user/a", "dst": "user/b/a", "xdev": False, "tmp": None, "src_trash": None}
    conn.execute(
        "INSERT INTO journal(action_id, idx, op, state, pre, post, aux) "
        "VALUES (1, 0, ?, 'done', NULL, '{\"ino\": 5}', ?)",
        (json.dumps(op), json.dumps(aux)),
    )
    conn.close()
    journal = Journal(path)
    try:
        (row,) = journal.rows(1)
        assert (row.op, row.state, row.post, row.aux) == (op, "done", {"ino": 5}, aux)
        assert journal.paths_touched_after(0) == {"user/a", "user/b/a"}
    finally:
        journal.close()


def test_the_journal_records_intents_before_and_posts_after(alma: AlmaRoot, engine: Engine) -> None:
    done = engine.execute(organize(alma), kind="organize", ctx=APPROVED)
    journal = Journal(alma.layout.journal_file)
    rows = journal.rows(done["id"])
    journal.close()
    assert [r.state for r in rows] == ["done"] * 7
    for row in rows:
        if row.op["op"] in ("move", "trash"):
            assert row.pre is not None and row.post is not None
            assert row.pre["ino"] == row.post["ino"]  # a rename, on one disk under Landlock


def test_pausing_the_collector_from_many_threads_always_turns_it_back_on() -> None:
    # The daemon runs plans from more than one thread; a pause must never outlive them all.
    import gc
    import sys
    import threading

    from sandbox.engine import _collector_paused

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # interleave the threads as much as possible
    try:
        for _ in range(400):
            gc.enable()

            def work() -> None:
                for _ in range(200):
                    with _collector_paused():
                        pass

            threads = [threading.Thread(target=work) for _ in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert gc.isenabled()
        gc.disable()
        with _collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        sys.setswitchinterval(switch)
        gc.enable()


@pytest.mark.parametrize("backend", ["landlock", "inprocess"])
def test_zones_named_with_a_leading_dash_reach_the_executor(alma: AlmaRoot, backend: str) -> None:
    # Passed as "--writable -entrada", an argument parser would read the zone as an option and
    # exit 2, so with such a zone in autonomy.conf every action, undo and recovery of the root
    # would fail ("the executor stopped unexpectedly").
    alma.write("-entrada/nota.txt", b"una nota")
    alma.write("-archivo/viejo.txt", b"viejo")
    policy = policy_from_dict(
        {
            "sandbox": {"allow_unconfined": True},
            "zones": {"writable": ["user", "-entrada"], "read_only": ["-archivo"]},
        }
    )
    engine = make_engine(alma, backend, policy)
    try:
        before = alma.world()
        plan = [Mkdir("-entrada/notas"), alma.move("-entrada/nota.txt", "-entrada/notas/nota.txt")]
        done = engine.execute(plan, kind="organize", ctx=APPROVED)
        assert done["status"] == "done"
        assert alma.path("-entrada/notas/nota.txt").read_bytes() == b"una nota"
        with pytest.raises(RefusedError, match="-archivo"):
            engine.execute([alma.trash("-archivo/viejo.txt")], kind="organize", ctx=APPROVED)
        assert engine.undo()["status"] == "done"
        assert without_trash(alma.world()) == without_trash(before)
    finally:
        engine.journal.close()


def test_the_runner_reads_its_command_line_by_hand() -> None:
    from sandbox.runner import _Args

    args = _Args(["--root", "/r", "--action", "7", "--writable=-entrada", "--writable", "user"])
    assert (args.root, args.action, args.writable) == (Path("/r"), 7, ["-entrada", "user"])
    assert _Args(["--root=/r", "--action", "-", "--read-only=a=b"]).action_on_stdin
    assert _Args(["--root=/r", "--action", "-", "--read-only=a=b"]).read_only == ["a=b"]
    assert _Args(["--root", "/r", "--recover"]).recover
    for bad in (
        ["--root", "/r"],  # nothing to do
        ["--root", "/r", "--recover", "--action", "1"],  # two things
        ["--action", "1"],  # no root
        ["--root", "/r", "--action"],  # no value
        ["--root", "/r", "--action", "x"],
        ["--root", "/r", "--recover", "--zone=user"],
    ):
        with pytest.raises(ValueError):
            _Args(bad)


def test_a_prestarted_child_that_gets_no_action_touches_nothing(
    alma: AlmaRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started ahead of its action (Engine._prestart), the child waits for the id; on end of
    file it exits 0, printing nothing, without even taking the executor lock."""
    import io

    from sandbox import runner

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    lock = alma.layout.journal_dir / "executor.lock"
    assert not lock.exists()
    assert runner.main(["--root", str(alma.root), "--action", "-"]) == 0
    assert not lock.exists()


def test_an_undo_refused_by_the_gate_cancels_its_child(alma: AlmaRoot) -> None:
    """The undo's child starts before the gate has seen the inverse; a refusal ends it, and no
    action is recorded."""
    alma.write("user/a.txt", b"a")
    holder = {"policy": default_policy()}
    engine = Engine(
        alma.layout,
        Journal(alma.layout.journal_file),
        make_engine(alma, "landlock").confinement,
        lambda: holder["policy"],
    )
    try:
        done = engine.execute(
            [alma.move("user/a.txt", "user/b.txt")], kind="organize", ctx=APPROVED
        )
        holder["policy"] = policy_from_dict({"zones": {"writable": ["otra"]}})
        started: list[_Child | None] = []
        prestart = engine._prestart

        def spy(policy: Policy) -> _Child | None:
            child = prestart(policy)
            started.append(child)
            return child

        engine._prestart = spy  # type: ignore[method-assign]  # the same call, its child kept
        before = alma.world()
        with pytest.raises(RefusedError):
            engine.undo(done["id"])
        (child,) = started
        assert child is not None
        assert child.proc.returncode == 0  # waited for, clean exit
        assert alma.world() == before
        assert [a["id"] for a in engine.journal.history()] == [done["id"]]
    finally:
        engine.journal.close()


@pytest.mark.parametrize("backend", ["landlock", "inprocess"])
def test_one_action_is_gated_and_confined_by_one_read_of_the_policy(
    alma: AlmaRoot, backend: str
) -> None:
    # The undo's child is prestarted with the zones of one read of the policy while the inverse
    # is built; the gate then read the policy again. A policy reloaded in between (the person
    # editing autonomy.conf) had the plan judged by one policy and confined by another.
    alma.write("user/entrada/nota.txt", b"una nota")
    wide = policy_from_dict({"sandbox": {"allow_unconfined": True}})
    narrow = policy_from_dict(
        {"sandbox": {"allow_unconfined": True}, "zones": {"writable": ["otra"]}}
    )
    engine = make_engine(alma, backend, wide)
    reads: list[Policy] = []

    def reloaded() -> Policy:
        # The first read of each action sees `wide`; any later read the edited file.
        reads.append(wide if not reads else narrow)
        return reads[-1]

    try:
        before = alma.world()
        plan = [Mkdir("user/notas"), alma.move("user/entrada/nota.txt", "user/notas/nota.txt")]
        engine.policy = reloaded
        assert engine.execute(plan, kind="organize", ctx=APPROVED)["status"] == "done"
        reads.clear()
        assert engine.undo()["status"] == "done"
        assert without_trash(alma.world()) == without_trash(before)
    finally:
        engine.journal.close()
