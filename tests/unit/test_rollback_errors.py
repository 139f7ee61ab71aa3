"""A rollback that meets an error other than a conflict (a symlink swapped in, EACCES, ENOSPC)
never leaves the action ``running`` and never says "nothing was changed" while files are still
moved: the tree is whole again, or the action is ``failed`` with a message naming what is still
moved and the one command that finishes the job, and that command does finish it.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from actions.ops import Mkdir, Op
from policies.decide import RunContext
from policies.errors import AlmaError, ConflictError
from state.journal import Journal
from tests.support.engine import AlmaRoot, InProcessEngine, default_policy
from tests.support.trees import snapshot
from tests.unit.test_crash import Witness, child, make_root, new_action, organize_plan
from tests.unit.test_crash import engine as real_engine

APPROVED = RunContext(approved_by_person=True)
FILES = {f"user/inbox/foto_{i}.jpg": f"foto {i} ñ".encode() for i in range(6)}


class Faults:
    """Raise an error once when the executor passes a label."""

    def __init__(self) -> None:
        self.at: dict[str, BaseException] = {}

    def __call__(self, label: str) -> None:
        error = self.at.pop(label, None)
        if error is not None:
            raise error


@pytest.fixture
def alma(tmp_path: Path) -> AlmaRoot:
    return AlmaRoot(tmp_path).build(FILES)


@pytest.fixture
def faults() -> Faults:
    return Faults()


@pytest.fixture
def engine(alma: AlmaRoot, faults: Faults) -> Iterator[InProcessEngine]:
    pol = default_policy()
    eng = InProcessEngine(alma.layout, Journal(alma.layout.journal_file), lambda: pol, faults)
    yield eng
    eng.journal.close()


def organize(alma: AlmaRoot) -> list[Op]:
    plan: list[Op] = [Mkdir("user/inbox/imágenes")]
    plan += [
        alma.move(f"user/inbox/foto_{i}.jpg", f"user/inbox/imágenes/foto_{i}.jpg") for i in range(6)
    ]
    return plan


def test_an_oserror_while_applying_is_rolled_back_and_said_plainly(
    alma: AlmaRoot, faults: Faults, engine: InProcessEngine
) -> None:
    before = alma.world()
    faults.at["op4"] = OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(AlmaError) as caught:
        engine.execute(organize(alma), kind="organize", ctx=APPROVED)
    message = str(caught.value)
    assert "Traceback" not in message and "space" in message, message
    [action] = engine.journal.history()
    assert action["status"] == "rolled_back", action
    assert alma.world() == before


def test_an_unexpected_error_never_leaves_the_action_running(
    alma: AlmaRoot, faults: Faults, engine: InProcessEngine
) -> None:
    before = alma.world()
    faults.at["op3"] = RuntimeError("a bug")
    with pytest.raises(AlmaError):
        engine.execute(organize(alma), kind="organize", ctx=APPROVED)
    [action] = engine.journal.history()
    assert action["status"] == "rolled_back", action
    assert alma.world() == before


@pytest.mark.parametrize(
    "error",
    [
        OSError(errno.ENOSPC, "No space left on device"),
        OSError(errno.EACCES, "Permission denied"),
        RuntimeError("a bug"),
    ],
    ids=["ENOSPC", "EACCES", "bug"],
)
def test_a_rollback_stopped_by_a_non_conflict_error_says_what_is_moved_and_how_to_finish(
    alma: AlmaRoot, faults: Faults, engine: InProcessEngine, error: BaseException
) -> None:
    before = alma.world()
    plan = organize(alma)

    def occupy(label: str) -> None:
        # op 5 then meets an occupied destination (a conflict): the rollback starts from op 4
        # and, newest first, meets the error at op 2, with ops 1 and 2 still moved.
        if label == "op5":
            alma.write("user/inbox/imágenes/foto_4.jpg", b"someone else's")
        faults(label)

    engine.checkpoint = occupy
    faults.at["rollback2"] = error
    with pytest.raises(AlmaError) as caught:
        engine.execute(plan, kind="organize", ctx=APPROVED)
    message = str(caught.value)
    [action] = engine.journal.history()
    aid = action["id"]
    assert action["status"] == "failed", action
    assert "nothing was changed" not in message and "Traceback" not in message, message
    assert f"alma-ctl undo {aid}" in message, message
    assert "foto_1.jpg" in message and "2 files" in message, message
    assert not isinstance(caught.value, ConflictError)
    assert action["error"] == message
    # The one command finishes the job: the tree is whole again, the action rolled back.
    os.unlink(alma.path("user/inbox/imágenes/foto_4.jpg"))
    engine.undo(aid)
    assert engine.journal.action(aid)["status"] == "rolled_back"
    assert alma.world() == before


def test_recovery_that_meets_a_folder_swapped_for_a_symlink_ends_failed_and_undo_finishes(
    tmp_path: Path,
) -> None:
    """A swapped folder on real files: an organize is killed midway, then a folder it
    filled is swapped for a symlink to a folder outside the root before ALMA starts again.
    Recovery must not write through the link, must not leave the action running, and must say
    what is still moved and the one command that finishes; after the person puts the folder
    back, that command makes the tree whole."""
    root, outside = make_root(tmp_path, n_files=30)
    witness = Witness(root, outside)
    outside_before = snapshot(outside)
    action = new_action(root, organize_plan(root))
    assert child(root, action, "op20", "execute").returncode == -9
    images = root / "user" / "inbox" / "images"
    moved_in = sorted(p.name for p in images.iterdir())
    assert moved_in  # some files really are in the folder swapped away
    images.rename(root / "user" / "inbox" / "images.real")
    images.symlink_to(outside)

    rec = child(root, 0, -1, "recover")
    assert rec.returncode == 0, rec.stdout + rec.stderr
    journal = Journal(root / ".alma" / "journal" / "journal.db")
    try:
        row = journal.action(action)
    finally:
        journal.close()
    message = str(row["error"])
    assert row["status"] == "failed", row
    assert f"alma-ctl undo {action}" in message, message
    assert "Traceback" not in message and "still where it put them" in message, message
    assert snapshot(outside) == outside_before  # nothing went through the link

    images.unlink()
    (root / "user" / "inbox" / "images.real").rename(images)
    eng = real_engine(root)
    try:
        done = eng.undo(action)
    finally:
        eng.journal.close()
    assert done["status"] == "rolled_back"
    witness.check_restored("after the person's fix and alma-ctl undo")
