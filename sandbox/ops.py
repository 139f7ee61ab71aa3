"""Each op of the sandbox family at work on the files: how it is validated, applied, journaled,
and taken back by recovery. One handler an op, registered in :data:`HANDLERS`, the one place
the executor (sandbox.executor) and recovery (sandbox.recovery) look an op up.

What an op is (its fields, what it touches, its inverse, its description) is its class in
actions.ops; what it does to the files is its handler here. A handler is abstract in every step,
so one that lacks a step cannot be built; ``tests/unit/test_op_table.py`` fails when an op of
the sandbox family has no handler. The work on one file that several ops share lives apart
(sandbox.transfer for move, trash and restore; sandbox.edit; sandbox.create).

Imported by the confined child: the standard library and ALMA's light layers only. One module,
longer than most, because it is the one registry: every op's handler side by side, each short.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import stat
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from actions.ops import (
    Create,
    Edit,
    Identity,
    IdentityDict,
    Keep,
    Mkdir,
    Move,
    Op,
    Restore,
    Rmdir,
    Trash,
)
from actions.safefs import identity_of, sha256_at, split_relpath
from actions.tree import Tree
from policies.errors import ConflictError, RefusedError
from policies.i18n import _
from policies.layout import ENGINE_TMP_PREFIX, TRASH, TRASH_PARTS, trash_entry
from policies.modes import SHARED_DIR
from sandbox import create, edit, transfer
from sandbox.create import CreateIntent
from sandbox.edit import EditIntent
from sandbox.transfer import Intent
from state.journal import DERIVES_AUX, Aux, Journal, JournalRow, Post

if TYPE_CHECKING:
    from sandbox.executor import Executor, Overlay

Checkpoint = Callable[[str], None]
#: What the journal keeps of an op's intent besides the plan: its pre and aux (None: NULL,
#: what the plan already says).
Journaled = tuple[IdentityDict | None, Aux | None]
#: An op's line in the trash's manifest.json: where the file was, where it is in the trash.
ManifestEntry = dict[str, str | bool]
OpT = TypeVar("OpT", bound=Op)
WorkT = TypeVar("WorkT")
_IN_TRASH = TRASH + "/"


def _parent(relpath: str) -> str:
    return relpath.rpartition("/")[0]


def _no_checkpoint(label: str) -> None:
    return None


class Handler(ABC, Generic[OpT, WorkT]):
    """One op's work in the sandbox. ``WorkT`` is what validation hands to the later steps (a
    transfer's intent, say), None for an op that needs nothing."""

    @abstractmethod
    def prepare(self, ex: Executor, overlay: Overlay, idx: int, op: OpT) -> WorkT:
        """Validate ``op`` against the real tree and what the plan's earlier ops will have done
        (``overlay``, which it updates); raise ConflictError or RefusedError, nothing changed."""

    @abstractmethod
    def apply(self, ex: Executor, op: OpT, work: WorkT, touched: set[str], idx: int) -> Post:
        """Apply it, checking its files once more right before; add the folders it changed to
        ``touched`` (fsynced before it is marked done); return what it left."""

    @abstractmethod
    def rollback(
        self,
        tree: Tree,
        journal: Journal,
        op: OpT,
        row: JournalRow,
        touched: set[str],
        checkpoint: Checkpoint,
    ) -> None:
        """Take it back from the files' identities, whatever step it (or an earlier rollback)
        was killed at; ConflictError when the evidence disagrees."""

    @abstractmethod
    def clean_failed(self, tree: Tree, op: OpT, row: JournalRow) -> None:
        """Clean up after it raised (it never left its file anywhere but in place)."""

    def journaled(self, op: OpT, work: WorkT) -> Journaled:
        """Its intent's pre and aux, beyond what the plan says (none, by default)."""
        return None, None

    def manifest(self, work: WorkT) -> ManifestEntry | None:
        """Its line in the trash's manifest.json, when it puts a file in the trash."""
        return None

    def left(self, row: JournalRow) -> str | None:
        """What it may have left in place of a file, for the sentence of a rollback that stopped
        (sandbox.runner.unfinished), read from its row as stored; None for an op on no file."""
        return None


class Prepared(NamedTuple):
    """A validated op, its handler and what validation handed on."""

    op: Op
    handler: Handler[Any, Any]
    work: Any


def _journal_pre(pre: Identity, expect: Identity | None) -> IdentityDict | None:
    """The identity validated, for the journal; None (NULL) when it is exactly the op's
    ``expect``, which the journal reads from the plan (state.journal._pre_of)."""
    return None if pre == expect else pre.to_dict()


# -- folders ----------------------------------------------------------------------------------
class _Mkdir(Handler[Mkdir, None]):
    def prepare(self, ex: Executor, overlay: Overlay, idx: int, op: Mkdir) -> None:
        ex.need_dir(overlay, _parent(op.path), op.path)
        if overlay.exists(ex.tree, op.path):
            raise ConflictError(_("{path!r} already exists; nothing was changed.", path=op.path))
        overlay.created.add(op.path)
        overlay.removed_dirs.discard(op.path)

    def apply(self, ex: Executor, op: Mkdir, work: None, touched: set[str], idx: int) -> Post:
        fd, name = ex.tree.parent_verified(op.path)
        try:
            os.mkdir(name, SHARED_DIR, dir_fd=fd)
        except FileExistsError:
            raise ConflictError(
                _("{path!r} appeared meanwhile; nothing was changed.", path=op.path)
            ) from None
        touched.add(_parent(op.path))
        return identity_of(os.stat(name, dir_fd=fd, follow_symlinks=False)).to_dict()

    def rollback(
        self,
        tree: Tree,
        journal: Journal,
        op: Mkdir,
        row: JournalRow,
        touched: set[str],
        checkpoint: Checkpoint,
    ) -> None:
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

    def clean_failed(self, tree: Tree, op: Mkdir, row: JournalRow) -> None:
        return None  # a mkdir that raised made nothing


class _Rmdir(Handler[Rmdir, None]):
    def prepare(self, ex: Executor, overlay: Overlay, idx: int, op: Rmdir) -> None:
        relpath = op.path
        if not overlay.is_dir(ex.tree, relpath):
            raise ConflictError(
                _("{relpath!r} is not a folder; nothing was changed.", relpath=relpath)
            )
        prefix = relpath + "/"
        if relpath not in overlay.created:
            try:
                dfd = ex.tree.dir(tuple(split_relpath(relpath)))
            except FileNotFoundError:
                raise ConflictError(
                    _("{relpath!r} does not exist; nothing was changed.", relpath=relpath)
                ) from None
            for entry in os.listdir(dfd):
                if (
                    prefix + entry not in overlay.vacated
                    and prefix + entry not in overlay.removed_dirs
                ):
                    raise ConflictError(
                        _(
                            "{relpath!r} is not empty; ALMA removes only empty folders it created.",
                            relpath=relpath,
                        )
                    )
        # map over a C method: each rmdir of an undo scans every path the plan occupies.
        inside = map(
            str.startswith,
            itertools.chain(overlay.occupied, overlay.created),
            itertools.repeat(prefix),
        )
        if any(inside):
            raise ConflictError(
                _("{relpath!r} would not be empty; nothing was changed.", relpath=relpath)
            )
        overlay.created.discard(op.path)
        overlay.removed_dirs.add(op.path)

    def apply(self, ex: Executor, op: Rmdir, work: None, touched: set[str], idx: int) -> Post:
        fd, name = ex.tree.parent_verified(op.path)
        ex.tree.forget(op.path)
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError:
            raise ConflictError(
                _("{path!r} is not empty any more; nothing was changed.", path=op.path)
            ) from None
        touched.add(_parent(op.path))
        return None

    def rollback(
        self,
        tree: Tree,
        journal: Journal,
        op: Rmdir,
        row: JournalRow,
        touched: set[str],
        checkpoint: Checkpoint,
    ) -> None:
        if tree.lstat(op.path) is None:
            fd, name = tree.parent(op.path)
            os.mkdir(name, SHARED_DIR, dir_fd=fd)
            os.fsync(fd)

    def clean_failed(self, tree: Tree, op: Rmdir, row: JournalRow) -> None:
        return None  # an rmdir that raised removed nothing


# -- a kept file ------------------------------------------------------------------------------
class _Keep(Handler[Keep, None]):
    def prepare(self, ex: Executor, overlay: Overlay, idx: int, op: Keep) -> None:
        if op.path in overlay.vacated or op.path in overlay.occupied:
            raise ConflictError(
                _("{path!r} is used twice in the plan; nothing was changed.", path=op.path)
            )
        self._check(ex.tree, op)

    def apply(self, ex: Executor, op: Keep, work: None, touched: set[str], idx: int) -> Post:
        self._check(ex.tree, op)  # again, right before the ops that rely on it
        return None

    @staticmethod
    def _check(tree: Tree, op: Keep) -> None:
        """The file the plan keeps is still there, the same file with the same bytes."""
        st = tree.lstat(op.path)
        if st is None or op.expect is None or not op.expect.same_file(identity_of(st)):
            raise ConflictError(
                _(
                    "{path!r}, the file this plan keeps, changed or is gone; nothing was changed.",
                    path=op.path,
                )
            )
        if op.expect.sha256 is not None:
            fd, name = tree.parent(op.path)
            if sha256_at(fd, name) != op.expect.sha256:
                raise ConflictError(
                    _("{path!r}, the file this plan keeps, has other bytes now.", path=op.path)
                )

    def rollback(
        self,
        tree: Tree,
        journal: Journal,
        op: Keep,
        row: JournalRow,
        touched: set[str],
        checkpoint: Checkpoint,
    ) -> None:
        return None  # it changed nothing

    def clean_failed(self, tree: Tree, op: Keep, row: JournalRow) -> None:
        return None


# -- new content ------------------------------------------------------------------------------
class _Edit(Handler[Edit, EditIntent]):
    def prepare(self, ex: Executor, overlay: Overlay, idx: int, op: Edit) -> EditIntent:
        """The file is still the regular file, with the bytes, the plan's content came from;
        its folder is real, on the trash's disk (the old version goes there by a rename)."""
        if op.path in overlay.vacated or op.path in overlay.occupied or op.path in overlay.created:
            raise ConflictError(
                _("{path!r} is used twice in the plan; nothing was changed.", path=op.path)
            )
        ex.need_dir(overlay, _parent(op.path), op.path)
        st = ex.tree.lstat(op.path)
        if st is None:
            raise ConflictError(_("{src!r} no longer exists; nothing was changed.", src=op.path))
        if not stat.S_ISREG(st.st_mode):
            raise RefusedError(
                _("{path!r} is not a regular file (ALMA never edits links).", path=op.path)
            )
        if st.st_nlink != 1:
            raise RefusedError(
                _(
                    "{src!r} has {st_nlink} hard links: other names share its bytes, so ALMA "
                    "leaves it alone.",
                    src=op.path,
                    st_nlink=st.st_nlink,
                )
            )
        now = identity_of(st)
        fd, name = ex.tree.parent(op.path)
        if not op.expect.same_file(now) or sha256_at(fd, name) != op.expect.sha256:
            raise ConflictError(
                _(
                    "{path!r} changed since the plan was made, so the edit no longer applies; "
                    "it was left alone.",
                    path=op.path,
                )
            )
        if not ex.on_trash_disk(overlay, op.path):
            raise RefusedError(
                _(
                    "{path!r} is on another disk than ALMA's trash, where its old version "
                    "would go; ALMA does not edit it.",
                    path=op.path,
                )
            )
        overlay.occupied.add(op.path)
        return EditIntent.plan(op, now._replace(sha256=op.expect.sha256), ex.action_id, idx)

    def apply(self, ex: Executor, op: Edit, work: EditIntent, touched: set[str], idx: int) -> Post:
        ex.tree.verify(tuple(split_relpath(op.path))[:-1])
        post = edit.apply(
            ex.tree, work, op.content, lambda label: ex.checkpoint(f"op{idx}:{label}")
        )
        touched.add(_parent(op.path))
        return post.to_dict()

    def journaled(self, op: Edit, work: EditIntent) -> Journaled:
        return _journal_pre(work.pre, op.expect), work.aux()

    def manifest(self, work: EditIntent) -> ManifestEntry | None:
        return {"from": work.path, "to": work.trash, "edited": True}

    def left(self, row: JournalRow) -> str | None:
        return f"{row.op.get('path')} (edited; its old version is in {row.aux.get('trash')})"

    def rollback(
        self,
        tree: Tree,
        journal: Journal,
        op: Edit,
        row: JournalRow,
        touched: set[str],
        checkpoint: Checkpoint,
    ) -> None:
        if row.aux:  # no aux: its intent was never written, so nothing happened
            edit.rollback(tree, EditIntent.from_row(op, row.pre, row.aux), checkpoint)

    def clean_failed(self, tree: Tree, op: Edit, row: JournalRow) -> None:
        if row.aux:
            # An edit that raised put its old version back, except when a new file appeared
            # at its path: that one is kept, the old version stays in the trash (its error
            # said so).
            with contextlib.suppress(ConflictError):
                edit.rollback(tree, EditIntent.from_row(op, row.pre, row.aux))


class _Create(Handler[Create, CreateIntent]):
    def prepare(self, ex: Executor, overlay: Overlay, idx: int, op: Create) -> CreateIntent:
        """Nothing is at the path (nor will be, by the plan's earlier ops); its folder is real
        or made before by the plan, on the trash's disk (recovery takes a published file there
        by a rename)."""
        if op.path in overlay.vacated or op.path in overlay.occupied:
            raise ConflictError(
                _("{path!r} is used twice in the plan; nothing was changed.", path=op.path)
            )
        ex.need_dir(overlay, _parent(op.path), op.path)
        if overlay.exists(ex.tree, op.path):
            raise ConflictError(
                _("{dst!r} already exists; ALMA never overwrites a file.", dst=op.path)
            )
        if not ex.on_trash_disk(overlay, op.path):
            raise RefusedError(
                _(
                    "{path!r} is on another disk than ALMA's trash, where an interrupted "
                    "creation would be taken back; ALMA does not create it.",
                    path=op.path,
                )
            )
        overlay.occupied.add(op.path)
        return CreateIntent.plan(op, ex.action_id, idx)

    def apply(
        self, ex: Executor, op: Create, work: CreateIntent, touched: set[str], idx: int
    ) -> Post:
        ex.tree.verify(tuple(split_relpath(op.path))[:-1])
        post = create.apply(
            ex.tree, work, op.content, lambda label: ex.checkpoint(f"op{idx}:{label}")
        )
        touched.add(_parent(op.path))
        return post.to_dict()

    def journaled(self, op: Create, work: CreateIntent) -> Journaled:
        return None, work.aux()

    def manifest(self, work: CreateIntent) -> ManifestEntry | None:
        # Where recovery would take a file a create published (undo's trash has its own).
        return {"from": work.path, "to": work.trash, "created": True}

    def left(self, row: JournalRow) -> str | None:
        return f"{row.op.get('path')} (created)"

    def rollback(
        self,
        tree: Tree,
        journal: Journal,
        op: Create,
        row: JournalRow,
        touched: set[str],
        checkpoint: Checkpoint,
    ) -> None:
        if row.aux:  # no aux: its intent was never written, so nothing happened
            create.rollback(tree, CreateIntent.from_row(op, row.aux), checkpoint)

    def clean_failed(self, tree: Tree, op: Create, row: JournalRow) -> None:
        if row.aux:  # a create that raised published nothing: only its temp may be left
            create.remove_temp(tree, CreateIntent.from_row(op, row.aux))


# -- transfers: one file from one place to another --------------------------------------------
class _Transfer(Handler[OpT, Intent]):
    """Move, trash and restore: one regular file renamed (or copied, verified, across disks)."""

    @abstractmethod
    def ends(self, ex: Executor, idx: int, op: OpT) -> tuple[str, str, Identity | None]:
        """Where its file is, where it goes, and what the file was when planned."""

    def prepare(self, ex: Executor, overlay: Overlay, idx: int, op: OpT) -> Intent:
        src, dst, expect = self.ends(ex, idx, op)
        if expect is None:
            raise RefusedError(
                _(
                    (
                        "the plan does not record what {src!r} was when it was made; make the plan "
                        "again."
                    ),
                    src=src,
                )
            )
        if src in overlay.vacated or src in overlay.occupied:
            raise ConflictError(
                _("{src!r} is used twice in the plan; nothing was changed.", src=src)
            )
        st = ex.tree.lstat(src)
        if st is None:
            raise ConflictError(_("{src!r} no longer exists; nothing was changed.", src=src))
        if not stat.S_ISREG(st.st_mode):
            raise RefusedError(
                _("{src!r} is not a regular file (ALMA never follows or moves links).", src=src)
            )
        if st.st_nlink != 1:
            raise RefusedError(
                _(
                    (
                        "{src!r} has {st_nlink} hard links: other names share its bytes, so ALMA "
                        "leaves it alone."
                    ),
                    src=src,
                    st_nlink=st.st_nlink,
                )
            )
        now = identity_of(st)
        if not expect.same_file(now):
            raise ConflictError(
                _("{src!r} changed since the plan was made; it was left alone.", src=src)
            )
        if expect.sha256 is not None:
            # The plan rests on content (a duplicate): same inode, size and mtime are not enough.
            sdir, sname = ex.tree.parent(src)
            if sha256_at(sdir, sname) != expect.sha256:
                raise ConflictError(
                    _("{src!r} has other bytes than when planned; it was left alone.", src=src)
                )
        if not dst.startswith(_IN_TRASH):
            ex.need_dir(overlay, _parent(dst), dst)
            if overlay.exists(ex.tree, dst):
                raise ConflictError(
                    _("{dst!r} already exists; ALMA never overwrites a file.", dst=dst)
                )
        xdev = ex.dev_of(overlay, _parent(src)) != ex.dev_of(overlay, _parent(dst))
        sha = expect.sha256
        if xdev or expect.sha256:
            # A plan that recorded the content (duplicates) is held to it: the same size and
            # mtime are not the same bytes (an in-place rewrite can keep both).
            sdir, sname = ex.tree.parent(src)
            sha = sha256_at(sdir, sname)
            if expect.sha256 and sha != expect.sha256:
                raise ConflictError(
                    _("{src!r} changed since the plan was made; it was left alone.", src=src)
                )
        pre = now if sha is None else now._replace(sha256=sha)
        if pre == expect:
            pre = expect  # the same value: one object per op kept, not two (100,000 a plan)
        overlay.vacated.add(src)
        overlay.occupied.discard(src)
        overlay.occupied.add(dst)
        overlay.vacated.discard(dst)
        src_trash = None
        # Across disks the source is kept in the trash once the verified copy is published,
        # unless either end already is the trash: a restore's source *is* a trash entry, and
        # keeping it again would leave a second copy listed in the trash after every undo.
        if xdev and not dst.startswith(_IN_TRASH) and not src.startswith(_IN_TRASH):
            src_trash = trash_entry(ex.action_id, idx, src.rpartition("/")[2])
        return Intent(
            src=src,
            dst=dst,
            pre=pre,
            xdev=xdev,
            tmp=f"{ENGINE_TMP_PREFIX}{ex.action_id}-{idx}" if xdev else None,
            src_trash=src_trash,
        )

    def apply(self, ex: Executor, op: OpT, work: Intent, touched: set[str], idx: int) -> Post:
        ex.verify_folders(work)
        try:
            post = transfer.apply(ex.tree, work, lambda label: ex.checkpoint(f"op{idx}:{label}"))
        except FileNotFoundError:
            # Removed by someone while the plan ran: a conflict to roll back here and now, not
            # a crash of the child left to the next start's recovery.
            raise ConflictError(
                _(
                    (
                        "{src!r} disappeared while the plan ran; ALMA took back what it had done, so "
                        "look for the file and make the plan again."
                    ),
                    src=work.src,
                )
            ) from None
        touched.update((_parent(work.src), _parent(work.dst)))
        return _post_of(post, work.pre)

    def journaled(self, op: OpT, work: Intent) -> Journaled:
        pre = _journal_pre(work.pre, getattr(op, "expect", None))
        plain = not work.xdev and work.tmp is None and work.src_trash is None
        return pre, None if plain and op.op in DERIVES_AUX else work.aux()

    def manifest(self, work: Intent) -> ManifestEntry | None:
        if work.dst.startswith(_IN_TRASH) or work.src_trash is not None:
            return {"from": work.src, "to": work.dst}
        return None

    def left(self, row: JournalRow) -> str | None:
        return f"{row.aux.get('src')} -> {row.aux.get('dst')}"

    def rollback(
        self,
        tree: Tree,
        journal: Journal,
        op: OpT,
        row: JournalRow,
        touched: set[str],
        checkpoint: Checkpoint,
    ) -> None:
        if row.pre is None:
            return  # an intent without identity was never applied (validation records one always)
        it = Intent.from_row(row.aux, row.pre)
        transfer.revert(tree, it, transfer.probe(tree, it, None), touched)
        copy = transfer.copied_back(tree, it)
        if copy is not None:
            # Durable before the op is marked rolled back: killed in between, the next run finds
            # the copy in place again and records it again.
            journal.record_copy(it.pre, copy)

    def clean_failed(self, tree: Tree, op: OpT, row: JournalRow) -> None:
        """What is left of a transfer that raised: its temp or copy. A source missing from both
        places was removed by someone else."""
        if row.pre is None:
            return
        it = Intent.from_row(row.aux, row.pre)
        try:
            state = transfer.probe(tree, it, None)
        except ConflictError:  # its ends are no longer as it left them: not ours to clean
            return
        transfer.revert(tree, it, state)


class _Move(_Transfer[Move]):
    def ends(self, ex: Executor, idx: int, op: Move) -> tuple[str, str, Identity | None]:
        return op.src, op.dst, op.expect


class _Trash(_Transfer[Trash]):
    def ends(self, ex: Executor, idx: int, op: Trash) -> tuple[str, str, Identity | None]:
        return op.path, trash_entry(ex.action_id, idx, op.path.rpartition("/")[2]), op.expect


class _Restore(_Transfer[Restore]):
    def ends(self, ex: Executor, idx: int, op: Restore) -> tuple[str, str, Identity | None]:
        parts = split_relpath(op.trash)
        if tuple(parts[:2]) != TRASH_PARTS or len(parts) < 3:
            raise RefusedError(_("{src!r} is not an entry of ALMA's trash.", src=op.trash))
        return op.trash, op.path, op.expect


def _post_of(post: Identity, pre: Identity) -> IdentityDict | int:
    """What the journal records a transfer left: only the new ctime when everything else is
    the identity validated (a rename on one disk moves nothing else: state.journal completes
    it from the op's ``pre``), else the whole identity. Half the done marks' bytes, and no
    identity encoded, then decoded again by the undo, per file."""
    # ctime_ns is Identity's last field: every other one compared, without building a copy (a
    # field added after it would put ctime in the slice: then nothing is shortened, not wrong).
    if post[:-1] == pre[:-1] and post.ctime_ns is not None:
        return post.ctime_ns
    return post.to_dict()


#: The handler of every op of the sandbox family, by the op's name: the one registry the
#: executor and recovery read.
HANDLERS: Mapping[str, Handler[Any, Any]] = {
    "mkdir": _Mkdir(),
    "rmdir": _Rmdir(),
    "move": _Move(),
    "trash": _Trash(),
    "restore": _Restore(),
    "keep": _Keep(),
    "edit": _Edit(),
    "create": _Create(),
}


def handler(op: Op) -> Handler[Any, Any]:
    """``op``'s handler; RefusedError for an op the sandbox does not run (another family's)."""
    found = HANDLERS.get(op.op)
    if found is None:
        raise RefusedError(_("unknown op {op!r}.", op=op.op))
    return found
