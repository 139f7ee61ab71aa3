"""Creating one new file, never over anything that is there.

A ``create`` op (actions.ops.Create) runs as, each step durable before the next:

1. write the content to ``tmp`` in the file's own folder (``O_EXCL``), fsync it;
2. publish ``tmp`` at the path with a no-replace rename (a file that is there, or appeared
   since validation, is never replaced: the temp is removed and the op refused), fsync the
   folder.

:func:`rollback` takes a create back whatever step it was killed at (and whatever step of the
rollback itself): the temp is removed, and a regular file at the path holding exactly the
create's bytes (its sha256) goes to the action's trash entry, never deleted. Anything else at
the path is not ALMA's and is left as it is. Killed midway it is simply run again.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from typing import NamedTuple

from actions.ops import Create, Identity
from actions.safefs import identity_of, rename_noreplace, sha256_at
from actions.tree import Tree
from policies.errors import InvalidStateError
from policies.i18n import _
from policies.layout import ENGINE_TMP_PREFIX, trash_entry
from policies.modes import PRIVATE_DIR, SHARED_FILE, for_person
from sandbox.edit import publish, write_temp
from state.journal import Aux

Checkpoint = Callable[[str], None]


def _no_checkpoint(label: str) -> None:
    return None


class CreateIntent(NamedTuple):
    """One create as journaled before it runs: its temp file, and the trash entry recovery
    takes a published file to."""

    path: str
    sha256: str  # the content's
    tmp: str
    trash: str

    def aux(self) -> Aux:
        return {"tmp": self.tmp, "trash": self.trash}

    @classmethod
    def plan(cls, op: Create, action_id: int, idx: int) -> CreateIntent:
        head, _sep, name = op.path.rpartition("/")
        tmp_name = f"{ENGINE_TMP_PREFIX}{action_id}-{idx}"
        return cls(
            path=op.path,
            sha256=op.sha256,
            tmp=f"{head}/{tmp_name}" if head else tmp_name,
            trash=trash_entry(action_id, idx, name),
        )

    @classmethod
    def from_row(cls, op: Create, aux: Aux) -> CreateIntent:
        tmp, trash = aux.get("tmp"), aux.get("trash")
        if not isinstance(tmp, str) or not isinstance(trash, str):
            raise InvalidStateError(
                _("the journal's record of creating {path!r} is damaged.", path=op.path)
            )
        return cls(path=op.path, sha256=op.sha256, tmp=tmp, trash=trash)


def _name(relpath: str) -> str:
    return relpath.rpartition("/")[2]


def apply(
    tree: Tree, it: CreateIntent, content: bytes, checkpoint: Checkpoint = _no_checkpoint
) -> Identity:
    """Write the new file; return its identity (sha256 included). ConflictError, with nothing
    left behind, when a file is at the path by the time it is published."""
    fd, name = tree.parent(it.path)
    tmp = _name(it.tmp)
    write_temp(fd, tmp, content, for_person(SHARED_FILE))  # the person's file, as they make one
    checkpoint("written")
    refusal = _(
        "{dst!r} appeared while ALMA created it; ALMA never overwrites a file, so it was left "
        "as it is and nothing was created.",
        dst=it.path,
    )
    publish(fd, tmp, name, refusal)
    return identity_of(os.stat(name, dir_fd=fd, follow_symlinks=False), sha256=it.sha256)


def remove_temp(tree: Tree, it: CreateIntent) -> None:
    """Remove the create's temp file if it is there (a create that raised left at most it)."""
    try:
        fd = tree.parent(it.path)[0]
    except FileNotFoundError:  # its folder was never made
        return
    with contextlib.suppress(FileNotFoundError):
        os.unlink(_name(it.tmp), dir_fd=fd)
        os.fsync(fd)


def rollback(tree: Tree, it: CreateIntent, checkpoint: Checkpoint = _no_checkpoint) -> None:
    """Take the create back from the files: its temp removed, the file it published (a regular
    file with exactly its bytes) moved to its trash entry. Safe to run again at any point."""
    remove_temp(tree, it)
    st = tree.lstat(it.path)
    if st is None or not stat.S_ISREG(st.st_mode):
        return  # never published, or taken back already; anything else there is not ours
    fd, name = tree.parent(it.path)
    if sha256_at(fd, name) != it.sha256:
        return  # not the bytes ALMA wrote: the person's file, left alone
    tree.ensure_dir(tuple(it.trash.split("/")[:-1]), PRIVATE_DIR)
    tdir, tname = tree.parent(it.trash)
    rename_noreplace(fd, name, tdir, tname)
    os.fsync(tdir)
    os.fsync(fd)
    checkpoint("create:trashed")
