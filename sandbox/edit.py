"""Editing one file: the new version written beside it, the old one kept in ALMA's trash.

An ``edit`` op (actions.ops.Edit) runs as, each step durable before the next:

1. write the new content to ``tmp`` in the file's own folder (``O_EXCL``, the old file's mode),
   fsync it;
2. move the old version to its trash entry with a no-replace rename, checking that what moved
   is the file the plan saw (else it is put back), fsync the trash folder;
3. publish ``tmp`` at the path with a no-replace rename (a file that appeared there meanwhile is
   never replaced), fsync the folder.

:func:`rollback` takes an edit back from the files' identities whatever step it was killed at
(and whatever step of the rollback itself): it always ends with the old version at the path, no
temp file, and nothing of the edit left in the trash. Killed midway it is simply run again.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from typing import NamedTuple

from actions.ops import Edit, Identity, IdentityDict, identity_from_dict
from actions.safefs import identity_of, rename_noreplace, sha256_at
from actions.tree import Tree
from policies.errors import ConflictError, InvalidStateError
from policies.i18n import _
from policies.layout import ENGINE_TMP_PREFIX, trash_entry
from policies.modes import PRIVATE_DIR, PRIVATE_FILE
from state.journal import Aux

Checkpoint = Callable[[str], None]


def _no_checkpoint(label: str) -> None:
    return None


class EditIntent(NamedTuple):
    """One edit as journaled before it runs: where its temp file and the old version go."""

    path: str
    pre: Identity  # the old version, as validated (sha256 included)
    sha256: str  # the new content's
    tmp: str
    trash: str

    def aux(self) -> Aux:
        return {"tmp": self.tmp, "trash": self.trash}

    @classmethod
    def plan(cls, op: Edit, pre: Identity, action_id: int, idx: int) -> EditIntent:
        head, _sep, name = op.path.rpartition("/")
        tmp_name = f"{ENGINE_TMP_PREFIX}{action_id}-{idx}"
        return cls(
            path=op.path,
            pre=pre,
            sha256=op.sha256,
            tmp=f"{head}/{tmp_name}" if head else tmp_name,
            trash=trash_entry(action_id, idx, name),
        )

    @classmethod
    def from_row(cls, op: Edit, pre: IdentityDict | None, aux: Aux) -> EditIntent:
        tmp, trash = aux.get("tmp"), aux.get("trash")
        if not isinstance(tmp, str) or not isinstance(trash, str):
            raise InvalidStateError(
                _("the journal's record of editing {path!r} is damaged.", path=op.path)
            )
        return cls(
            path=op.path,
            pre=op.expect if pre is None else identity_from_dict(pre),
            sha256=op.sha256,
            tmp=tmp,
            trash=trash,
        )


def _name(relpath: str) -> str:
    return relpath.rpartition("/")[2]


def write_temp(fd: int, tmp: str, content: bytes, mode: int) -> None:
    """``content`` into the new file ``tmp`` of folder ``fd`` (``O_EXCL``, never through a
    link), with ``mode``, fsynced: a version not yet published (an edit's or a create's)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    out = os.open(tmp, flags, PRIVATE_FILE, dir_fd=fd)
    try:
        view = memoryview(content)
        while view:
            view = view[os.write(out, view) :]
        os.fchmod(out, mode)
        os.fsync(out)
    finally:
        os.close(out)


def publish(fd: int, tmp: str, name: str, refusal: str) -> None:
    """Rename ``tmp`` to ``name`` in folder ``fd`` without replacing anything: a file there is
    kept, the temp removed, and ConflictError(``refusal``) raised."""
    try:
        rename_noreplace(fd, tmp, fd, name)
    except ConflictError:
        os.unlink(tmp, dir_fd=fd)
        os.fsync(fd)
        raise ConflictError(refusal) from None
    os.fsync(fd)


def apply(
    tree: Tree, it: EditIntent, content: bytes, checkpoint: Checkpoint = _no_checkpoint
) -> Identity:
    """Carry out the edit; return the identity of the new version. ConflictError when the file
    is not the one the plan saw (nothing changed) or a file appeared at its path meanwhile."""
    fd, name = tree.parent(it.path)
    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    if not it.pre.same_file(identity_of(st)):
        raise ConflictError(
            _("{src!r} changed since the plan was made; it was left alone.", src=it.path)
        )
    tmp = _name(it.tmp)
    write_temp(fd, tmp, content, stat.S_IMODE(st.st_mode))  # the old version's mode, kept
    checkpoint("written")
    tree.ensure_dir(tuple(it.trash.split("/")[:-1]), PRIVATE_DIR)
    tdir, tname = tree.parent(it.trash)
    rename_noreplace(fd, name, tdir, tname)
    moved = identity_of(os.stat(tname, dir_fd=tdir, follow_symlinks=False))
    if not it.pre.same_file(moved, check_ctime=False):
        rename_noreplace(tdir, tname, fd, name)
        os.unlink(tmp, dir_fd=fd)
        raise ConflictError(
            _(
                "{src!r} changed or was replaced since the plan was made; it was put back and "
                "left alone.",
                src=it.path,
            )
        )
    os.fsync(tdir)
    checkpoint("trashed")
    refusal = _(
        "a new {path!r} appeared while ALMA edited it; it was kept, and the version ALMA "
        "replaced is in {trash!r}.",
        path=it.path,
        trash=it.trash,
    )
    publish(fd, tmp, name, refusal)
    return identity_of(os.stat(name, dir_fd=fd, follow_symlinks=False), sha256=it.sha256)


def _is(st: os.stat_result | None, ident: Identity) -> bool:
    # Our own renames move ctime: the question is where this inode is now.
    return st is not None and ident.same_file(identity_of(st), check_ctime=False)


def _same_inode(a: os.stat_result | None, b: os.stat_result | None) -> bool:
    return a is not None and b is not None and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _holds_new(tree: Tree, relpath: str, st: os.stat_result, sha256: str) -> bool:
    if not stat.S_ISREG(st.st_mode):
        return False
    fd, name = tree.parent(relpath)
    return sha256_at(fd, name) == sha256


def rollback(tree: Tree, it: EditIntent, checkpoint: Checkpoint = _no_checkpoint) -> None:
    """Put the old version back at the path, from the files' identities, and remove what the
    edit left (its temp file, the new version). Safe to run again at any point; ConflictError,
    with nothing changed, when the files say something the edit could not have left (the new
    version changed by someone, or the old one in neither place)."""
    fd, name = tree.parent(it.path)
    tmp = _name(it.tmp)
    at_path = tree.lstat(it.path)
    try:
        in_trash = tree.lstat(it.trash)
        tdir, tname = tree.parent(it.trash)
    except FileNotFoundError:  # the trash folder was never made: step 2 never ran
        in_trash, tdir, tname = None, -1, ""
    if _is(at_path, it.pre):
        if _is(in_trash, it.pre):  # a link() without its unlink(): a second name, dropped
            os.unlink(tname, dir_fd=tdir)
            os.fsync(tdir)
        with contextlib.suppress(FileNotFoundError):  # the edit may have died before its temp
            os.unlink(tmp, dir_fd=fd)
        os.fsync(fd)
        return
    if not _is(in_trash, it.pre):
        raise ConflictError(
            _(
                "cannot tell where the version of {path!r} that ALMA edited is: neither the file "
                "nor {trash!r} holds it; nothing was changed, check both by hand.",
                path=it.path,
                trash=it.trash,
            )
        )
    if at_path is not None:
        tmp_st = tree.lstat(it.tmp)
        # A temp beside a file that is not its second name: step 3 never ran, so what is at
        # the path is not ours (a file that appeared meanwhile).
        theirs = tmp_st is not None and not _same_inode(at_path, tmp_st)
        if tmp_st is not None:  # ours either way; a link() of it without its unlink() too
            os.unlink(tmp, dir_fd=fd)
            os.fsync(fd)
        if theirs or not _holds_new(tree, it.path, at_path, it.sha256):
            raise ConflictError(
                _(
                    "{path!r} is not the version ALMA wrote any more, so it was left as it is; "
                    "the version before ALMA's edit is in {trash!r}.",
                    path=it.path,
                    trash=it.trash,
                )
            )
        rename_noreplace(fd, name, fd, tmp)  # the new version aside, never deleted before...
        os.fsync(fd)
        checkpoint("edit:aside")
    rename_noreplace(tdir, tname, fd, name)  # ...the old one is back in place
    os.fsync(fd)
    os.fsync(tdir)
    checkpoint("edit:restored")
    with contextlib.suppress(FileNotFoundError):  # an empty path: maybe no temp was written
        os.unlink(tmp, dir_fd=fd)
    os.fsync(fd)
