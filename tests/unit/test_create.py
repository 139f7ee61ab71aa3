"""The ``create`` op: a new file written beside and published without replacing anything, in
writable zones only; undo trashes it only while it is the file ALMA wrote."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from actions.inverse import inverse_plan
from actions.ops import Create, Identity, Mkdir, Trash, op_from_dict
from policies.decide import RunContext
from policies.errors import BadArgumentError, ConflictError, RefusedError
from policies.limits import EDIT_BYTES
from sandbox.engine import Engine
from tests.support.engine import AlmaRoot, default_policy, execute_in_process, make_engine
from tests.unit.test_edit import trash_files

APPROVED = RunContext(approved_by_person=True)
SCRIPT = "user/scripts/copiar-entregas.sh"
BODY = "#!/bin/sh\n# Copia de las entregas de hoy (revísalo antes de usarlo)\nset -eu\n".encode()


@pytest.fixture
def alma(tmp_path: Path) -> AlmaRoot:
    return AlmaRoot(tmp_path).build({"user/entregas/2026-11-23/ventas.csv": b"a;b\n"})


@pytest.fixture
def engine(alma: AlmaRoot) -> Iterator[Engine]:
    eng = make_engine(alma, "inprocess")
    yield eng
    eng.journal.close()


def plan() -> list[Mkdir | Create]:
    return [Mkdir("user/scripts"), Create(SCRIPT, BODY)]


def test_the_op_round_trips_and_refuses_damaged_input() -> None:
    op = Create(SCRIPT, BODY)
    data = op.to_dict()
    assert set(data) == {"op", "path", "content_b64"}
    assert op_from_dict(data) == op
    assert op.touches_file() and op.write_paths() == (SCRIPT,)
    for bad, words in (
        ({**data, "content_b64": "no es base64!"}, "op create: content_b64 is not valid"),
        ({**data, "content_b64": "A" * (4 * (EDIT_BYTES // 3 + 2))}, "at most"),
        ({**data, "content_b64": 7}, "base64 text"),
        ({**data, "path": ["user", "x"]}, "must be a path"),
        ({k: v for k, v in data.items() if k != "content_b64"}, "content_b64"),
        ({**data, "expect": None}, "takes content_b64, path"),
    ):
        with pytest.raises(BadArgumentError, match=words):
            op_from_dict(bad)


def test_create_writes_the_file_and_undo_takes_it_to_the_trash(
    alma: AlmaRoot, engine: Engine
) -> None:
    before = alma.world()
    done = engine.execute(plan(), kind="routine", ctx=APPROVED)
    assert done["status"] == "done"
    assert alma.path(SCRIPT).read_bytes() == BODY
    assert not list(alma.path("user").rglob(".alma-tmp-*"))
    undone = engine.undo()
    assert undone["undoes"] == done["id"] and undone["status"] == "done"
    assert not alma.path("user/scripts").exists()  # the folder it made, empty, went too
    assert list(trash_files(alma).values()) == [BODY]  # never deleted: in ALMA's trash
    after = alma.world()
    assert {k: v for k, v in after.items() if not k.startswith(".alma/")} == {
        k: v for k, v in before.items() if not k.startswith(".alma/")
    }
    engine.undo(int(undone["id"]))  # the undo of the undo brings the script back
    assert alma.path(SCRIPT).read_bytes() == BODY


def test_undo_is_refused_when_the_person_changed_the_file_and_it_stays(
    alma: AlmaRoot, engine: Engine
) -> None:
    engine.execute(plan(), kind="routine", ctx=APPROVED)
    mine = BODY + b'cp -n "a" "b"\n'
    alma.path(SCRIPT).write_bytes(mine)
    before = alma.world()
    with pytest.raises(ConflictError, match="changed since"):
        engine.undo()
    assert alma.world() == before
    assert alma.path(SCRIPT).read_bytes() == mine and trash_files(alma) == {}


def test_undo_is_refused_for_other_bytes_of_the_same_size_and_time(
    alma: AlmaRoot, engine: Engine
) -> None:
    engine.execute(plan(), kind="routine", ctx=APPROVED)
    st = alma.path(SCRIPT).stat()
    with open(alma.path(SCRIPT), "r+b") as f:  # in place: same inode, same size
        f.write(b"#!/bin/bash")
    os.utime(alma.path(SCRIPT), ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(ConflictError):
        engine.undo()
    assert alma.path(SCRIPT).read_bytes().startswith(b"#!/bin/bash")


def test_create_never_replaces_a_file_or_a_link(alma: AlmaRoot, engine: Engine) -> None:
    alma.write(SCRIPT, b"el mio\n")
    before = alma.world()
    with pytest.raises(ConflictError, match="already exists; ALMA never overwrites"):
        engine.execute([Create(SCRIPT, BODY)], kind="routine", ctx=APPROVED)
    os.unlink(alma.path(SCRIPT))
    alma.path(SCRIPT).symlink_to("../../outside/precious.txt")
    with pytest.raises(ConflictError, match="already exists"):
        execute_in_process(alma, [Create(SCRIPT, BODY)])
    os.unlink(alma.path(SCRIPT))
    alma.write(SCRIPT, b"el mio\n")
    assert alma.world() == before


def test_a_file_appearing_meanwhile_is_kept_and_nothing_is_left(alma: AlmaRoot) -> None:
    theirs = b"written meanwhile\n"

    def checkpoint(label: str) -> None:
        if label == "op1:written":
            alma.path(SCRIPT).write_bytes(theirs)

    with pytest.raises(ConflictError, match="appeared while ALMA created it"):
        execute_in_process(alma, plan(), checkpoint=checkpoint)
    assert alma.path(SCRIPT).read_bytes() == theirs
    assert not list(alma.path("user").rglob(".alma-tmp-*")) and trash_files(alma) == {}


def test_the_folder_must_exist_or_be_made_before(alma: AlmaRoot) -> None:
    before = alma.world()
    with pytest.raises(ConflictError, match="does not exist"):
        execute_in_process(alma, [Create(SCRIPT, BODY)])
    with pytest.raises(ConflictError, match="does not exist"):
        execute_in_process(alma, [Create(SCRIPT, BODY), Mkdir("user/scripts")])
    assert alma.world() == before


def test_the_gate_and_the_executor_refuse_creates_outside_the_writable_zones(
    alma: AlmaRoot, engine: Engine
) -> None:
    before = alma.world()
    for path in ("system/nuevo.conf", "docs/nuevo.md", ".alma/x", "../outside/x"):
        with pytest.raises((RefusedError, BadArgumentError)):
            engine.execute([Create(path, b"x")], kind="routine", ctx=APPROVED)
    with pytest.raises(RefusedError):  # the executor's own check, without the gate
        execute_in_process(alma, [Create("logs/nuevo.md", b"x")])
    assert alma.world() == before


def test_a_later_op_failing_takes_the_create_back_to_the_trash(alma: AlmaRoot) -> None:
    kept = "user/entregas/2026-11-23/ventas.csv"
    steps = [*plan(), alma.trash(kept)]

    def checkpoint(label: str) -> None:
        if label == "op2":
            alma.path(kept).write_bytes(b"cambiado\n")

    with pytest.raises(ConflictError):
        execute_in_process(alma, steps, checkpoint=checkpoint)
    assert not alma.path("user/scripts").exists()
    assert list(trash_files(alma).values()) == [BODY]


def test_the_inverse_of_a_create_trashes_the_file_it_left() -> None:
    post = Identity(1, 11, "file", len(BODY), 300, Create(SCRIPT, BODY).sha256, "boot", 400)
    aux = {"tmp": "user/scripts/.alma-tmp-3-1", "trash": ".alma/trash/3/1/copiar-entregas.sh"}
    inverse = inverse_plan(
        [
            (Mkdir("user/scripts").to_dict(), None, {}),
            (Create(SCRIPT, BODY).to_dict(), post.to_dict(), aux),
        ]
    )
    assert inverse[0] == Trash(SCRIPT, post)
    assert inverse[1].op == "rmdir"


def test_create_and_undo_under_the_real_confinement(alma: AlmaRoot) -> None:
    engine = make_engine(alma, "landlock")
    try:
        done = engine.execute(plan(), kind="routine", ctx=APPROVED)
        assert done["sandbox"] == "landlock" and alma.path(SCRIPT).read_bytes() == BODY
        engine.undo()
        assert not alma.path(SCRIPT).exists()
    finally:
        engine.journal.close()


def test_suggestions_show_and_the_actions_log_say_a_create_in_a_sentence(
    alma: AlmaRoot,
) -> None:
    from agent.day.alma_logs import _op_line
    from agent.detectors.diagnose import edit_diffs
    from control.views import render_result
    from policies.i18n import language

    op = Create(SCRIPT, BODY + b"\x1b]0;pwned\x07\n")
    (change,) = edit_diffs(alma.root, [op.to_dict()])
    assert change["path"] == SCRIPT and "+set -eu" in change["diff"]
    shown = {"id": 4, "title": "t", "plan": [op.to_dict()], "evidence": [], "diffs": [change]}
    with language("es"):
        text = render_result("suggestions.show", {"id": 4}, shown)
        line = _op_line(op.to_dict())
    assert f"crear    {SCRIPT} (un archivo nuevo; su contenido, abajo)" in text
    assert "content_b64" not in text and "+set -eu" in text
    assert "\x1b" not in text
    assert line == f"- archivo creado: {SCRIPT}"
    alma.write(SCRIPT, "el mío\n".encode())  # accepting would be refused: said, no diff
    with language("es"):
        (stale,) = edit_diffs(alma.root, [op.to_dict()])
    assert "ya existe" in stale["diff"] and "+set -eu" not in stale["diff"]


def test_emptying_old_trash_does_not_stop_the_undo_of_a_create(
    alma: AlmaRoot, engine: Engine
) -> None:
    """A create keeps nothing in the trash (its manifest only says where recovery would put
    it): emptying the old trash takes nothing its undo needs, so the undo still works."""
    done = engine.execute(plan(), kind="routine", ctx=APPROVED)
    ten_days_ago = time.time() - 10 * 86400
    adir = alma.path(f".alma/trash/{done['id']}")
    if adir.exists():
        os.utime(adir, (ten_days_ago, ten_days_ago))
    engine.policy = lambda: default_policy(retention_days=7)
    assert engine.trash_empty(7)["removed"] == 0
    engine.undo(done["id"])
    assert not alma.path(SCRIPT).exists()
    assert list(trash_files(alma).values()) == [BODY]
