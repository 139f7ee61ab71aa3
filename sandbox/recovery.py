"""Roll an interrupted (or failed) action back, from the files' identities.

Every op of the action is examined newest first, whatever the journal says of it: a ``done`` mark
is a hint, the files are the truth. So recovery can itself be killed at any point and run again.
When the evidence disagrees (neither place holds the recorded file), it stops, changes nothing
more, and says so: a person looks before anything else happens to those files.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from typing import Any

from actions.ops import Create, Edit, Mkdir, Move, Restore, Rmdir, Trash, op_from_dict
from actions.tree import Tree
from policies.errors import ConflictError
from policies.i18n import _
from policies.layout import TRASH, TRASH_PARTS
from policies.modes import SHARED_DIR
from sandbox import create, edit, transfer
from sandbox.create import CreateIntent
from sandbox.edit import EditIntent
from sandbox.transfer import Intent
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
                _rollback_one(
                    tree, journal, row.op, row.pre, row.post, row.aux, touched, checkpoint
                )
            elif row.idx == stopped_at:
                _clean_failed(tree, row.op, row.pre, row.aux)
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


def _rollback_one(
    tree: Tree,
    journal: Journal,
    raw_op: dict[str, Any],
    pre: dict[str, Any] | None,
    post: dict[str, Any] | None,
    aux: dict[str, Any],
    touched: set[str],
    checkpoint: Checkpoint = _no_checkpoint,
) -> None:
    op = op_from_dict(raw_op)
    if isinstance(op, Edit):
        if aux:  # no aux: its intent was never written, so nothing happened
            edit.rollback(tree, EditIntent.from_row(op, pre, aux), checkpoint)
        return
    if isinstance(op, Create):
        if aux:  # no aux: its intent was never written, so nothing happened
            create.rollback(tree, CreateIntent.from_row(op, aux), checkpoint)
        return
    if isinstance(op, Mkdir):
        st = tree.lstat(op.path)
        if st is None:
            return
        if not stat.S_ISDIR(st.st_mode):
            raise ConflictError(
                _("{path!r} is not the folder ALMA created; check it by hand.", path=op.path)
            )
        tree.sync(touched)  # the files taken out of it are durably out before it goes
        touched.clear()
        fd, name = tree.parent(op.path)
        tree.forget(op.path)
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            # Every later op was taken back first, so what is inside is not ALMA's: a person
            # saved something there meanwhile. The folder is theirs now; keep it.
            return
        os.fsync(fd)
        return
    if isinstance(op, Rmdir):
        if tree.lstat(op.path) is None:
            fd, name = tree.parent(op.path)
            os.mkdir(name, SHARED_DIR, dir_fd=fd)
            os.fsync(fd)
        return
    if pre is None:
        return  # an intent without identity was never applied (validation records one always)
    it = Intent.from_row(aux, pre)
    transfer.revert(tree, it, transfer.probe(tree, it, None), touched)
    copy = transfer.copied_back(tree, it)
    if copy is not None:
        # Durable before the op is marked rolled back: killed in between, the next run finds
        # the copy in place again and records it again.
        journal.record_copy(it.pre, copy)


def _clean_failed(
    tree: Tree, raw_op: dict[str, Any], pre: dict[str, Any] | None, aux: dict[str, Any]
) -> None:
    """Take back what is left of the op that raised: a transfer's temp or copy. A mkdir or rmdir
    that raised did nothing; a source missing from both places was removed by someone else."""
    op = op_from_dict(raw_op)
    if isinstance(op, Edit):
        if aux:
            # An edit that raised put its old version back, except when a new file appeared
            # at its path: that one is kept, the old version stays in the trash (its error
            # said so).
            with contextlib.suppress(ConflictError):
                edit.rollback(tree, EditIntent.from_row(op, pre, aux))
        return
    if isinstance(op, Create):
        if aux:  # a create that raised published nothing: only its temp may be left
            create.remove_temp(tree, CreateIntent.from_row(op, aux))
        return
    if pre is None or not isinstance(op, Move | Trash | Restore):
        return
    it = Intent.from_row(aux, pre)
    try:
        state = transfer.probe(tree, it, None)
    except ConflictError:
        return
    transfer.revert(tree, it, state)


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
