"""Moving one file, the only way ALMA changes a file: forward, and back when rolling back.

Every file-changing op (move, trash, restore) is a *transfer* ``src -> dst`` of one regular file,
described by the intent written to the journal before it runs:

- same filesystem: one no-replace rename between directory fds;
- across filesystems: copy to ``tmp`` beside ``dst`` -> fsync -> verify the hash -> publish with a
  no-replace rename -> fsync -> move the source to ALMA's trash (``src_trash``), or unlink it
  when the verified copy *is* in the trash.

:func:`probe` tells from the files' identities (never from names alone) how far a transfer got,
so recovery can undo exactly what happened, and is safe to run again if it is itself killed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from enum import Enum
from typing import NamedTuple

from actions.ops import Identity, IdentityDict, identity_from_dict
from actions.safefs import (
    CrossDevice,
    copy_file_at,
    identity_of,
    rename_noreplace,
    sha256_at,
    split_relpath,
)
from actions.tree import Tree
from policies.errors import AlmaError, ConflictError
from policies.i18n import _
from policies.layout import TRASH
from policies.modes import PRIVATE_DIR
from state.journal import Aux

Checkpoint = Callable[[str], None]
_IN_TRASH = TRASH + "/"


def _no_checkpoint(label: str) -> None:
    return None


class Intent(NamedTuple):
    """One transfer as journaled before it runs. A named tuple (immutable, like a frozen
    dataclass, and built faster: a plan builds one per move)."""

    src: str
    dst: str
    pre: Identity
    xdev: bool = False
    tmp: str | None = None
    src_trash: str | None = None

    def aux(self) -> Aux:
        return {
            "src": self.src,
            "dst": self.dst,
            "xdev": self.xdev,
            "tmp": self.tmp,
            "src_trash": self.src_trash,
        }

    @classmethod
    def from_row(cls, aux: Aux, pre: IdentityDict) -> Intent:
        return cls(
            src=aux["src"],
            dst=aux["dst"],
            pre=identity_from_dict(pre),
            xdev=bool(aux.get("xdev")),
            tmp=aux.get("tmp"),
            src_trash=aux.get("src_trash"),
        )


def _mkdirs(tree: Tree, relpath: str) -> None:
    """Create the missing parents of a trash entry (only ever under ``.alma/trash``)."""
    tree.ensure_dir(tuple(relpath.split("/")[:-1]), PRIVATE_DIR)


def apply(tree: Tree, it: Intent, checkpoint: Checkpoint = _no_checkpoint) -> Identity:
    """Carry out a transfer; return the identity of the file at ``dst``. Raises ConflictError
    (nothing changed) when the source is not the file the plan saw or ``dst`` is occupied."""
    sdir, sname = tree.parent(it.src)
    if it.dst.startswith(_IN_TRASH):
        _mkdirs(tree, it.dst)
    ddir, dname = tree.parent(it.dst)
    if not it.xdev:
        # One check, after the rename, on what arrived: a rename keeps inode, size and mtime
        # (only ctime moves), so anything else means the source was swapped or changed since
        # validation, and it is put back. Checking before as well would not close the gap
        # between that check and the rename; checking what actually moved does.
        try:
            rename_noreplace(sdir, sname, ddir, dname)
        except CrossDevice:
            raise ConflictError(
                _(
                    "{src!r} and {dst!r} turned out to be on different disks; run it again.",
                    src=it.src,
                    dst=it.dst,
                )
            ) from None
        post = os.stat(dname, dir_fd=ddir, follow_symlinks=False)
        moved = identity_of(post)
        if not it.pre.same_file(moved, check_ctime=False):
            rename_noreplace(ddir, dname, sdir, sname)
            raise ConflictError(
                _(
                    (
                        "{src!r} changed or was replaced since the plan was made; it was put back and "
                        "left alone."
                    ),
                    src=it.src,
                )
            )
        return moved
    st = os.stat(sname, dir_fd=sdir, follow_symlinks=False)
    if not it.pre.same_file(identity_of(st)):
        raise ConflictError(
            _("{src!r} changed since the plan was made; it was left alone.", src=it.src)
        )
    assert it.tmp is not None
    checkpoint("copy")
    digest, _stat = copy_file_at(sdir, sname, ddir, it.tmp)
    if (it.pre.sha256 and digest != it.pre.sha256) or sha256_at(ddir, it.tmp) != digest:
        os.unlink(it.tmp, dir_fd=ddir)
        raise ConflictError(
            _("{src!r} changed while it was copied; nothing was moved.", src=it.src)
        )
    checkpoint("copied")
    try:
        # A copy can take long: before it is published, both folders must still be the ones
        # validated (not swapped for a symlink or moved away while the bytes were copied).
        for relpath in (it.src, it.dst):
            tree.verify(tuple(split_relpath(relpath))[:-1])
    except AlmaError:
        os.unlink(it.tmp, dir_fd=ddir)
        raise
    rename_noreplace(ddir, it.tmp, ddir, dname)
    os.fsync(ddir)
    checkpoint("published")
    _retire_source(tree, it, sdir, sname)
    os.fsync(sdir)
    post = os.stat(dname, dir_fd=ddir, follow_symlinks=False)
    return identity_of(post, sha256=digest)


def _retire_source(tree: Tree, it: Intent, sdir: int, sname: str) -> None:
    """After a verified copy is published, the source goes to the trash (never deleted), unless
    the copy itself is the trash entry."""
    if it.src_trash is None:
        os.unlink(sname, dir_fd=sdir)
        return
    _mkdirs(tree, it.src_trash)
    tdir, tname = tree.parent(it.src_trash)
    try:
        rename_noreplace(sdir, sname, tdir, tname)
    except CrossDevice:
        os.unlink(sname, dir_fd=sdir)  # the verified copy at dst holds these bytes
    os.fsync(tdir)


class State(Enum):
    NOT_DONE = "not_done"  # the source is in place, nothing of ours is left
    DONE = "done"  # the file is at dst (and the source retired)
    PARTIAL = "partial"  # across filesystems: a temp or a published copy while the source stays


def _is(st: os.stat_result | None, ident: Identity) -> bool:
    # Recovery's question is "where is this inode now", and our own rename moved its ctime.
    return st is not None and ident.same_file(identity_of(st), check_ctime=False)


def _sibling(relpath: str, name: str) -> str:
    head, _sep, _name = relpath.rpartition("/")
    return f"{head}/{name}" if head else name


def _back_tmp(it: Intent) -> str:
    return f"{it.tmp}.back"


def _holds(tree: Tree, relpath: str, sha256: str | None) -> bool:
    """``relpath`` is a regular file with exactly these bytes."""
    st = tree.lstat(relpath)
    if st is None or sha256 is None or identity_of(st).kind != "file":
        return False
    fd, name = tree.parent(relpath)
    return sha256_at(fd, name) == sha256


def _src_in_place(tree: Tree, it: Intent) -> bool:
    if _is(tree.lstat(it.src), it.pre):
        return True
    # Copied back across filesystems by an earlier, interrupted recovery: same bytes, new inode.
    return it.xdev and _holds(tree, it.src, it.pre.sha256)


def copied_back(tree: Tree, it: Intent) -> Identity | None:
    """The identity of the file at ``src`` when a rollback (this one or an interrupted earlier
    one) copied it back across filesystems: the same bytes under a new inode, which the action
    that left the original must from now on expect instead (Journal.record_copy)."""
    if not it.xdev:
        return None
    st = tree.lstat(it.src)
    if st is None or _is(st, it.pre) or not _holds(tree, it.src, it.pre.sha256):
        return None
    return identity_of(st, sha256=it.pre.sha256)


def probe(tree: Tree, it: Intent, post: Identity | None) -> State:
    """How far the transfer got, from identities. ConflictError when the evidence disagrees."""
    if not it.xdev:
        s, d = tree.lstat(it.src), tree.lstat(it.dst)
        if _is(d, it.pre):
            if _is(s, it.pre):
                return State.PARTIAL  # link() done, unlink() not: two names of one file
            return State.DONE  # (a new file at src makes the revert refuse, as it must)
        if s is not None:
            return State.NOT_DONE  # whatever is at src now is the person's; we never acted
        raise ConflictError(
            _(
                (
                    "cannot tell whether moving {src!r} to {dst!r} happened: neither place holds "
                    "the file the journal recorded; nothing was changed, check both places by hand."
                ),
                src=it.src,
                dst=it.dst,
            )
        )
    assert it.tmp is not None
    leftovers = any(
        tree.lstat(_sibling(p, n)) is not None
        for p, n in ((it.dst, it.tmp), (it.src, _back_tmp(it)))
    )
    published = _holds(tree, it.dst, it.pre.sha256)
    if _src_in_place(tree, it):
        return State.PARTIAL if (leftovers or published) else State.NOT_DONE
    if published:
        return State.DONE
    raise ConflictError(
        _(
            (
                "cannot tell whether copying {src!r} to {dst!r} happened: the source is gone "
                "and the destination does not hold its bytes; nothing was changed, check both "
                "by hand."
            ),
            src=it.src,
            dst=it.dst,
        )
    )


def revert(tree: Tree, it: Intent, state: State, touched: set[str] | None = None) -> None:
    """Undo what :func:`probe` found, leaving the source as it was and nothing of ours behind.

    ``touched``: a rename on one disk adds its two folders there, for the caller to fsync
    (Tree.sync) before it records the op rolled back; without it they are fsynced here. Two
    fsyncs per file would make the recovery of a large action take minutes."""
    if state is State.NOT_DONE and not it.xdev:
        return  # nothing of ours exists (dst's folder may not even exist yet)
    # The file goes back into its folder through the handle kept since validation: that folder
    # must still be the one at its path (moved into system/ meanwhile, it must not receive it).
    # ConflictError says what moved; the rollback stops there, and finishing it walks afresh.
    tree.verify(tuple(split_relpath(it.src))[:-1])
    sdir, sname = tree.parent(it.src)
    try:
        ddir, dname = tree.parent(it.dst)
    except FileNotFoundError:
        return  # dst's folder was never created, so nothing was copied or published there
    if not it.xdev:
        if state is State.DONE:
            rename_noreplace(ddir, dname, sdir, sname)
        elif state is State.PARTIAL:
            os.unlink(dname, dir_fd=ddir)  # the second name of the same inode
        if touched is None:
            os.fsync(ddir)
            os.fsync(sdir)
        else:
            touched.update(relpath.rpartition("/")[0] for relpath in (it.dst, it.src))
        return
    assert it.tmp is not None
    for fd, name in ((ddir, it.tmp), (sdir, _back_tmp(it))):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=fd)
    if state is State.DONE:
        _bring_source_back(tree, it, sdir, sname, ddir, dname)
    # The source is in place; a copy at dst with the same verified bytes is ours: drop it.
    if state is not State.NOT_DONE and _holds(tree, it.dst, it.pre.sha256):
        os.unlink(dname, dir_fd=ddir)
    os.fsync(ddir)
    os.fsync(sdir)


def _bring_source_back(
    tree: Tree, it: Intent, sdir: int, sname: str, ddir: int, dname: str
) -> None:
    if it.src_trash is not None and _is(tree.lstat(it.src_trash), it.pre):
        tdir, tname = tree.parent(it.src_trash)
        rename_noreplace(tdir, tname, sdir, sname)
        return
    # The source was unlinked after its copy was verified: copy the bytes back the safe way.
    tmp = _back_tmp(it)
    digest, _stat = copy_file_at(ddir, dname, sdir, tmp)
    if digest != it.pre.sha256 or sha256_at(sdir, tmp) != digest:
        os.unlink(tmp, dir_fd=sdir)
        raise ConflictError(
            _("copying {dst!r} back to {src!r} did not verify; try again.", dst=it.dst, src=it.src)
        )
    rename_noreplace(sdir, tmp, sdir, sname)
    os.fsync(sdir)
