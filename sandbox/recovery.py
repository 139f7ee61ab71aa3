"""Roll an interrupted (or failed) action back, from the files' identities.

Every op of the action is examined newest first, whatever the journal says of it: a ``done`` mark
is a hint, the files are the truth. So recovery can itself be killed at any point and run again.
When the evidence disagrees (neither place holds the recorded file), it stops, changes nothing
more, and says so: a person looks before anything else happens to those files. How each op is
taken back is its handler's (sandbox.ops); this walks the action's ops and marks them.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

from actions.ops import op_from_dict
from actions.tree import Tree
from policies.layout import TRASH, TRASH_PARTS
from sandbox.ops import handler
from state.journal import Journal

Checkpoint = Callable[[str], None]
MARK_BATCH = 256


def _no_checkpoint(label: str) -> None:
    return None


def rollback(
    tree: Tree,
    journal: Journal,
    action_id: int,
    checkpoint: Checkpoint = _no_checkpoint,
    *,
    stopped_at: int | None = None,
) -> None:
    """Take back every op of ``action_id`` that happened. Raises ConflictError (and leaves the
    rest as it is) when an op's files are not as the journal recorded.

    ``stopped_at``: the executor, in this process, saw op ``stopped_at`` fail and never started
    the ones after it. Those are not examined (a person's change to their files, often the very
    reason the action stopped, must not stop the rollback of the ops that did happen), and the
    failed op is only cleaned up: it raised before it could leave its file anywhere but in place.
    """
    marks: list[int] = []
    touched: set[str] = set()  # folders whose renames are fsynced before their ops are marked
    try:
        for row in journal.iter_rows(action_id, newest_first=True):
            if row.state == "rolled_back":
                continue
            checkpoint(f"rollback{row.idx}")
            if stopped_at is None or row.idx < stopped_at:
                op = op_from_dict(row.op)
                handler(op).rollback(tree, journal, op, row, touched, checkpoint)
            elif row.idx == stopped_at:
                op = op_from_dict(row.op)
                handler(op).clean_failed(tree, op, row)
            marks.append(row.idx)
            if len(marks) >= MARK_BATCH:
                _mark(tree, journal, action_id, marks, touched)
                checkpoint("rollback:marked")
    finally:
        _mark(tree, journal, action_id, marks, touched)
    checkpoint("rollback:marked")
    clean_trash_dirs(tree, action_id)
    # Killed here, the action is still running with every op rolled back: the next recovery
    # walks it again, takes back nothing, and finishes it.
    checkpoint("rollback:cleaned")


def _mark(
    tree: Tree, journal: Journal, action_id: int, marks: list[int], touched: set[str]
) -> None:
    """Record ``marks`` rolled back, once what their ops renamed is durable: a rolled-back op
    is never examined again, so its mark must not outlive a rename lost to a power cut."""
    tree.sync(touched)
    touched.clear()
    if not marks:
        return
    with journal.transaction():
        for idx in marks:
            journal.mark_rolled_back(action_id, idx)
    marks.clear()


def clean_trash_dirs(tree: Tree, action_id: int) -> None:
    """Remove the action's trash folders left empty (and its manifest once nothing is left)."""
    try:
        afd = tree.dir((*TRASH_PARTS, str(action_id)))
    except FileNotFoundError:
        return
    for entry in os.listdir(afd):
        if entry.isdigit():
            try:
                tree.forget(f"{TRASH}/{action_id}/{entry}")
                os.rmdir(entry, dir_fd=afd)
            except OSError:
                pass  # holds a file: keep it
    if set(os.listdir(afd)) <= {"manifest.json"}:
        with contextlib.suppress(FileNotFoundError):
            os.unlink("manifest.json", dir_fd=afd)
        tree.forget(f"{TRASH}/{action_id}")
        tfd = tree.dir(TRASH_PARTS)
        os.rmdir(str(action_id), dir_fd=tfd)
        os.fsync(tfd)
