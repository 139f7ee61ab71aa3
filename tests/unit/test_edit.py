"""The ``edit`` op: the old version to the trash, the new one published without replacing
anything, undo byte for byte with the mode kept, and every refusal with nothing lost."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from actions.inverse import inverse_plan
from actions.ops import Edit, Restore, Trash, op_from_dict
from policies.decide import RunContext
from policies.errors import BadArgumentError, ConflictError, RefusedError
from policies.limits import EDIT_BYTES
from sandbox.engine import Engine
from tests.support.engine import AlmaRoot, execute_in_process, make_engine

APPROVED = RunContext(approved_by_person=True)
CONF = "user/scripts/backup.conf"
OLD = b"# copia\r\ndestino = /media/discoo/copias\r\nmodo = r\xe1pido\r\n"  # latin-1, CRLF
NEW = b"# copia\r\ndestino = /media/disco/copias\r\nmodo = r\xe1pido\r\n"


@pytest.fixture
def alma(tmp_path: Path) -> AlmaRoot:
    root = AlmaRoot(tmp_path).build({CONF: OLD, "user/scripts/backup.sh": b"#!/bin/sh\n"})
    os.chmod(root.path(CONF), 0o640)
    return root


@pytest.fixture
def engine(alma: AlmaRoot) -> Iterator[Engine]:
    eng = make_engine(alma, "inprocess")
    yield eng
    eng.journal.close()


def edit(alma: AlmaRoot, rel: str = CONF, content: bytes = NEW) -> Edit:
    return Edit(rel, alma.ident(rel, sha256=True), content)


def trash_files(alma: AlmaRoot) -> dict[str, bytes]:
    base = alma.path(".alma/trash")
    return {
        str(p.relative_to(base)): p.read_bytes()
        for p in base.rglob("*")
        if p.is_file() and p.name != "manifest.json"
    }


def test_the_op_round_trips_and_refuses_damaged_content(alma: AlmaRoot) -> None:
    op = edit(alma)
    data = op.to_dict()
    assert op_from_dict(data) == op
    assert op.touches_file() and op.write_paths() == (CONF,)
    for bad, words in (
        ({**data, "content_b64": "no es base64!"}, "base64"),
        ({**data, "content_b64": "A" * (4 * (EDIT_BYTES // 3 + 2))}, "at most"),
        ({**data, "expect": {**data["expect"], "sha256": None}}, "sha256"),
        ({**data, "expect": None}, "expect"),
        ({k: v for k, v in data.items() if k != "content_b64"}, "content_b64"),
    ):
        with pytest.raises(BadArgumentError, match=words):
            op_from_dict(bad)


def test_edit_keeps_the_old_version_and_undo_gives_it_back_byte_for_byte(
    alma: AlmaRoot, engine: Engine
) -> None:
    before = alma.world()
    done = engine.execute([edit(alma)], kind="repeated_failure", ctx=APPROVED)
    assert done["status"] == "done"
    assert alma.path(CONF).read_bytes() == NEW
    assert stat.S_IMODE(alma.path(CONF).stat().st_mode) == 0o640
    assert list(trash_files(alma).values()) == [OLD]  # the old version, in ALMA's trash
    assert not list(alma.path("user").rglob(".alma-tmp-*"))

    undone = engine.undo()
    assert undone["undoes"] == done["id"] and undone["status"] == "done"
    assert alma.path(CONF).read_bytes() == OLD
    assert stat.S_IMODE(alma.path(CONF).stat().st_mode) == 0o640
    # Nothing lost either way: the version ALMA wrote is in the trash now.
    assert list(trash_files(alma).values()) == [NEW]
    after = alma.world()
    assert {k: v for k, v in after.items() if not k.startswith(".alma/trash")} == {
        k: v for k, v in before.items() if not k.startswith(".alma/trash")
    }
    # The undo of the undo edits again.
    engine.undo(int(undone["id"]))
    assert alma.path(CONF).read_bytes() == NEW


def test_a_file_changed_after_the_plan_refuses_the_edit_with_nothing_changed(
    alma: AlmaRoot, engine: Engine
) -> None:
    op = edit(alma)
    alma.path(CONF).write_bytes(OLD.replace(b"copias", b"copiaz"))  # same size, other bytes
    before = alma.world()
    with pytest.raises(ConflictError, match="changed since the plan was made"):
        engine.execute([op], kind="repeated_failure", ctx=APPROVED)
    assert alma.world() == before


def test_undo_refuses_when_the_person_edited_the_file_after_and_both_versions_stay(
    alma: AlmaRoot, engine: Engine
) -> None:
    engine.execute([edit(alma)], kind="repeated_failure", ctx=APPROVED)
    mine = b"destino = /media/otro\n"
    alma.path(CONF).write_bytes(mine)
    with pytest.raises(ConflictError, match="changed since"):
        engine.undo()
    assert alma.path(CONF).read_bytes() == mine
    assert list(trash_files(alma).values()) == [OLD]


def test_the_gate_and_the_executor_refuse_edits_outside_the_writable_zones(
    alma: AlmaRoot, engine: Engine
) -> None:
    before = alma.world()
    with pytest.raises(RefusedError):
        engine.execute(
            [edit(alma, "system/autonomy.conf", b'level = "auto"\n')],
            kind="repeated_failure",
            ctx=APPROVED,
        )
    with pytest.raises(RefusedError):  # the executor's own check, without the gate
        execute_in_process(alma, [edit(alma, "docs/leeme.md", b"otra cosa\n")])
    assert alma.world() == before


def test_a_link_or_a_hard_linked_file_is_never_edited(alma: AlmaRoot) -> None:
    op = edit(alma)
    os.link(alma.path(CONF), alma.path("user/scripts/otro_nombre.conf"))
    with pytest.raises(RefusedError, match="hard links"):
        execute_in_process(alma, [edit(alma)])
    os.unlink(alma.path("user/scripts/otro_nombre.conf"))
    alma.path("user/scripts/link.conf").symlink_to("backup.conf")
    with pytest.raises(RefusedError, match="not a regular file"):
        execute_in_process(alma, [Edit("user/scripts/link.conf", op.expect, NEW)])
    assert alma.path(CONF).read_bytes() == OLD


def test_a_file_appearing_at_the_path_meanwhile_is_never_replaced(alma: AlmaRoot) -> None:
    """Between moving the old version to the trash and publishing the new one, a program writes
    the path: its file is kept, the old version stays reachable in the trash, no temp left."""
    op = edit(alma)
    theirs = b"written meanwhile\n"

    def checkpoint(label: str) -> None:
        if label == "op0:trashed":
            alma.path(CONF).write_bytes(theirs)

    with pytest.raises(ConflictError, match="appeared while ALMA edited it"):
        execute_in_process(alma, [op], checkpoint=checkpoint)
    assert alma.path(CONF).read_bytes() == theirs
    assert list(trash_files(alma).values()) == [OLD]
    assert not list(alma.path("user").rglob(".alma-tmp-*"))


def test_a_later_op_failing_takes_the_edit_back(alma: AlmaRoot) -> None:
    plan = [edit(alma), alma.trash("user/scripts/backup.sh")]
    changed = b"#!/bin/sh\necho cambiado\n"

    def checkpoint(label: str) -> None:
        if label == "op1":  # the edit is done; the next op's file changes under it
            alma.path("user/scripts/backup.sh").write_bytes(changed)

    before = alma.world()
    with pytest.raises(ConflictError):
        execute_in_process(alma, plan, checkpoint=checkpoint)
    after = alma.world()
    assert after.pop("user/scripts/backup.sh") != before.pop("user/scripts/backup.sh")
    assert after == before
    assert alma.path(CONF).read_bytes() == OLD


def test_the_inverse_of_an_edit_trashes_the_new_version_then_restores_the_old() -> None:
    from actions.ops import Identity

    old = Identity(1, 10, "file", 5, 100, "a" * 64, "boot", 200)
    new = Identity(1, 11, "file", 6, 300, "b" * 64, "boot", 400)
    op = Edit("user/x.conf", old, b"nuevo\n")
    aux = {"tmp": "user/.alma-tmp-3-0", "trash": ".alma/trash/3/0/x.conf"}
    plan = inverse_plan([(op.to_dict(), new.to_dict(), aux)])
    assert plan == [
        Trash("user/x.conf", new),
        Restore(".alma/trash/3/0/x.conf", "user/x.conf", old._replace(ctime_ns=None)),
    ]


def test_edit_and_undo_under_the_real_confinement(alma: AlmaRoot) -> None:
    engine = make_engine(alma, "landlock")
    try:
        done = engine.execute([edit(alma)], kind="repeated_failure", ctx=APPROVED)
        assert done["sandbox"] == "landlock" and alma.path(CONF).read_bytes() == NEW
        engine.undo()
        assert alma.path(CONF).read_bytes() == OLD
        assert stat.S_IMODE(alma.path(CONF).stat().st_mode) == 0o640
    finally:
        engine.journal.close()


def test_suggestions_show_prints_an_edit_as_its_diff_with_controls_escaped(alma: AlmaRoot) -> None:
    from agent.detectors.diagnose import edit_diffs
    from control.views import render_result
    from policies.i18n import language

    hostile = NEW + b"\x1b]0;pwned\x07\r\n"
    op = edit(alma, CONF, hostile)
    (change,) = edit_diffs(alma.root, [op.to_dict()])
    assert change["path"] == CONF
    assert "-destino = /media/discoo/copias" in change["diff"]
    assert "+destino = /media/disco/copias" in change["diff"]
    shown = {"id": 4, "title": "t", "plan": [op.to_dict()], "evidence": [], "diffs": [change]}
    with language("es"):
        text = render_result("suggestions.show", {"id": 4}, shown)
    assert f"editar   {CONF}" in text and "content_b64" not in text
    assert f"Cambio en {CONF}:" in text and "+destino = /media/disco/copias" in text
    assert "\x1b" not in text and "\\x1b]0;pwned" in text
    # The file changed since the plan: no diff, the sentence that accepting would refuse.
    alma.path(CONF).write_bytes(b"otra cosa\n")
    with language("es"):
        (stale,) = edit_diffs(alma.root, [op.to_dict()])
    assert "cambió desde que se hizo este plan" in stale["diff"]
