"""Execute one action's plan: validate everything, journal every intent, apply, record done.

Runs inside the confined child (:mod:`sandbox.runner`). The protocol (../shared/reliability.md):

1. validate the whole plan against the real tree through directory-fd walks, simulating the ops
   in order (a later op may move into a folder an earlier one creates); record each file's
   identity; anything wrong refuses the plan before anything changes;
2. write every intent in one durable transaction (and a manifest beside the trash entries);
3. apply op by op, each checking the file's identity again right before it acts;
4. record ops done in batches (group commit): fsync the touched folders, then one commit.

If an op fails, everything applied so far is rolled back and the error says nothing changed.

One module, longer than most, because validating, journaling and applying share one simulated
tree (the overlay) and one journal transaction; the work on one file lives apart
(sandbox.transfer, sandbox.edit, sandbox.create).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from actions.ops import Create, Edit, Identity, Keep, Mkdir, Move, Op, Restore, Rmdir, Trash
from actions.safefs import identity_of, sha256_at, split_relpath, split_relpath_cached
from actions.tree import FolderToken, Tree, prefixes
from policies.errors import AlmaError, ConflictError, RefusedError
from policies.i18n import _
from policies.layout import ENGINE_TMP_PREFIX, TRASH, TRASH_PARTS, trash_entry
from policies.modes import PRIVATE_DIR, PRIVATE_FILE, SHARED_DIR
from policies.zones import ZoneCheck
from sandbox import create, edit, transfer
from sandbox.create import CreateIntent
from sandbox.edit import EditIntent
from sandbox.transfer import Intent
from state.journal import Journal

Checkpoint = Callable[[str], None]
#: Group commit: ops applied are marked done (folders fsynced, then one commit) every this many
#: ops or seconds. The marks are hints for recovery, which examines every op's files anyway, so
#: a larger batch costs nothing in safety; each commit costs a few fsyncs.
BATCH_OPS = 8192
BATCH_SECONDS = 2.0
#: A folder that receives at least this many of a plan's files is read once (its names) rather
#: than asked for each destination, when its directory is at most this many bytes per file
#: arriving (ext4: 12-40 bytes an entry): reading a huge folder for a few files would cost more.
LIST_ARRIVALS = 64
_IN_TRASH = TRASH + "/"
LIST_BYTES_PER_ARRIVAL = 256


def _no_checkpoint(label: str) -> None:
    return None


class Zones:
    """The zones the child was given, checked by the policy's own rule (policies.zones.ZoneCheck:
    normalised, system/ and .alma/ read-only whatever is passed), after every component of the
    path is checked as a valid name."""

    __slots__ = ("rule",)

    def __init__(self, rule: ZoneCheck) -> None:
        self.rule = rule

    @classmethod
    def from_lists(cls, writable: Sequence[str], read_only: Sequence[str]) -> Zones:
        return cls(ZoneCheck(writable, read_only))

    def check(self, relpath: str) -> None:
        split_relpath_cached(relpath)  # every component a valid name, or RefusedError
        problem = self.rule.problem(relpath)
        if problem is not None:
            raise RefusedError(
                _("{problem}; only writable zones change, nothing was changed.", problem=problem)
            )


@dataclass
class _Overlay:
    """What the plan will have done by the op being validated."""

    created: set[str] = field(default_factory=set)
    removed_dirs: set[str] = field(default_factory=set)
    vacated: set[str] = field(default_factory=set)
    occupied: set[str] = field(default_factory=set)
    #: Folders looked up on disk during validation (every op of an organize names the same few).
    real_dirs: dict[str, bool] = field(default_factory=dict)
    #: How many of the plan's destinations each folder receives (see :meth:`exists`).
    arrivals: dict[str, int] = field(default_factory=dict)
    #: The names in a folder read once, for a folder that receives many files.
    listed: dict[str, frozenset[str]] = field(default_factory=dict)

    def exists(self, tree: Tree, relpath: str) -> bool:
        if relpath in self.occupied or relpath in self.created:
            return True
        if relpath in self.vacated or relpath in self.removed_dirs:
            return False
        folder, _sep, name = relpath.rpartition("/")
        if folder in self.created:
            # A folder the plan creates was validated absent (or emptied by the plan's own
            # rmdir first): it holds only what the plan puts there, which the sets above say.
            # Asking the disk cost a failed fd walk per file of an organize.
            return False
        names = self.listed.get(folder)
        if names is None and self.arrivals.get(folder, 0) >= LIST_ARRIVALS:
            names = self._list(tree, folder)
        if names is not None:
            return name in names
        return tree.lstat(relpath) is not None

    def _list(self, tree: Tree, folder: str) -> frozenset[str] | None:
        """The names in ``folder``, read once (getdents) instead of an ``lstat`` per file that
        arrives there (an undo moves every file back into one folder), unless the folder is so
        large that reading it would cost more than the lookups it spares. Only a shortcut for
        the early refusal: whatever appears meanwhile, the rename never replaces it."""
        try:
            fd = tree.dir(split_relpath_cached(folder) if folder else ())
        except FileNotFoundError:  # the plan makes the folder later: asked name by name
            fd = None
        if fd is None or os.fstat(fd).st_size > self.arrivals[folder] * LIST_BYTES_PER_ARRIVAL:
            self.arrivals[folder] = 0  # asked name by name
            return None
        names = self.listed[folder] = frozenset(os.listdir(fd))
        return names

    def is_dir(self, tree: Tree, relpath: str) -> bool:
        if relpath == "" or relpath in self.created:
            return True
        if relpath in self.removed_dirs or relpath in self.vacated:
            return False
        known = self.real_dirs.get(relpath)
        if known is None:
            st = tree.lstat(relpath)
            known = self.real_dirs[relpath] = st is not None and stat.S_ISDIR(st.st_mode)
        return known


def _parent(relpath: str) -> str:
    return relpath.rpartition("/")[0]


class _FolderCheck:
    """The folders re-verified before a kind of transfer, and what the last verification
    handed back for the next (``Tree.verify_watched``)."""

    __slots__ = ("keys", "token")

    def __init__(self, keys: tuple[tuple[str, ...], ...]) -> None:
        self.keys = keys
        self.token: FolderToken | None = None


class Prepared(NamedTuple):
    """A validated op with what the journal needs to apply it and to take it back."""

    op: Op
    intent: Intent | None  # for transfers (move, trash, restore)
    edit: EditIntent | None = None
    create: CreateIntent | None = None


class Executor:
    def __init__(
        self,
        tree: Tree,
        journal: Journal,
        action_id: int,
        zones: Zones,
        *,
        checkpoint: Checkpoint = _no_checkpoint,
    ) -> None:
        self.tree = tree
        self.journal = journal
        self.action_id = action_id
        self.zones = zones
        self.checkpoint = checkpoint
        self._mounts = read_mount_points()
        self._devs: dict[str, tuple[int, str]] = {}  # folder -> (device, mount), per plan
        #: (src folder, dst folder, trash folder) -> the folders to re-verify before such an op
        self._folders: dict[tuple[str, str, str | None], _FolderCheck] = {}
        #: The op being applied when run() stopped (-1: none). The ones after it never started,
        #: and an op that raises leaves nothing of itself behind except a transfer's temp.
        self.attempted = -1

    # -- 1. validation ----------------------------------------------------------------------
    def validate(self, plan: Sequence[Op]) -> list[Prepared]:
        overlay = _Overlay()
        arrivals = overlay.arrivals
        for op in plan:
            if isinstance(op, Move | Restore):
                folder = (op.dst if isinstance(op, Move) else op.path).rpartition("/")[0]
                arrivals[folder] = arrivals.get(folder, 0) + 1
        prepared: list[Prepared] = []
        for idx, op in enumerate(plan):
            for path in op.write_paths():
                self.zones.check(path)
            if isinstance(op, Mkdir):
                self._need_dir(overlay, _parent(op.path), op.path)
                if overlay.exists(self.tree, op.path):
                    raise ConflictError(
                        _("{path!r} already exists; nothing was changed.", path=op.path)
                    )
                overlay.created.add(op.path)
                overlay.removed_dirs.discard(op.path)
                prepared.append(Prepared(op, None))
            elif isinstance(op, Rmdir):
                self._check_rmdir(overlay, op.path)
                overlay.created.discard(op.path)
                overlay.removed_dirs.add(op.path)
                prepared.append(Prepared(op, None))
            elif isinstance(op, Keep):
                if op.path in overlay.vacated or op.path in overlay.occupied:
                    raise ConflictError(
                        _("{path!r} is used twice in the plan; nothing was changed.", path=op.path)
                    )
                self._check_kept(op)
                prepared.append(Prepared(op, None))
            elif isinstance(op, Edit):
                prepared.append(Prepared(op, None, self._prepare_edit(overlay, idx, op)))
            elif isinstance(op, Create):
                prepared.append(Prepared(op, None, None, self._prepare_create(overlay, idx, op)))
            else:
                prepared.append(Prepared(op, self._prepare_transfer(overlay, idx, op)))
        return prepared

    def _check_kept(self, op: Keep) -> None:
        """The file the plan keeps is still there, the same file with the same bytes."""
        st = self.tree.lstat(op.path)
        if st is None or op.expect is None or not op.expect.same_file(identity_of(st)):
            raise ConflictError(
                _(
                    "{path!r}, the file this plan keeps, changed or is gone; nothing was changed.",
                    path=op.path,
                )
            )
        if op.expect.sha256 is not None:
            fd, name = self.tree.parent(op.path)
            if sha256_at(fd, name) != op.expect.sha256:
                raise ConflictError(
                    _("{path!r}, the file this plan keeps, has other bytes now.", path=op.path)
                )

    def _prepare_edit(self, overlay: _Overlay, idx: int, op: Edit) -> EditIntent:
        """The file is still the regular file, with the bytes, the plan's content came from;
        its folder is real, on the trash's disk (the old version goes there by a rename)."""
        if op.path in overlay.vacated or op.path in overlay.occupied or op.path in overlay.created:
            raise ConflictError(
                _("{path!r} is used twice in the plan; nothing was changed.", path=op.path)
            )
        self._need_dir(overlay, _parent(op.path), op.path)
        st = self.tree.lstat(op.path)
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
        fd, name = self.tree.parent(op.path)
        if not op.expect.same_file(now) or sha256_at(fd, name) != op.expect.sha256:
            raise ConflictError(
                _(
                    "{path!r} changed since the plan was made, so the edit no longer applies; "
                    "it was left alone.",
                    path=op.path,
                )
            )
        if not self._on_trash_disk(overlay, op.path):
            raise RefusedError(
                _(
                    "{path!r} is on another disk than ALMA's trash, where its old version "
                    "would go; ALMA does not edit it.",
                    path=op.path,
                )
            )
        overlay.occupied.add(op.path)
        return EditIntent.plan(op, now._replace(sha256=op.expect.sha256), self.action_id, idx)

    def _prepare_create(self, overlay: _Overlay, idx: int, op: Create) -> CreateIntent:
        """Nothing is at the path (nor will be, by the plan's earlier ops); its folder is real
        or made before by the plan, on the trash's disk (recovery takes a published file there
        by a rename)."""
        if op.path in overlay.vacated or op.path in overlay.occupied:
            raise ConflictError(
                _("{path!r} is used twice in the plan; nothing was changed.", path=op.path)
            )
        self._need_dir(overlay, _parent(op.path), op.path)
        if overlay.exists(self.tree, op.path):
            raise ConflictError(
                _("{dst!r} already exists; ALMA never overwrites a file.", dst=op.path)
            )
        if not self._on_trash_disk(overlay, op.path):
            raise RefusedError(
                _(
                    "{path!r} is on another disk than ALMA's trash, where an interrupted "
                    "creation would be taken back; ALMA does not create it.",
                    path=op.path,
                )
            )
        overlay.occupied.add(op.path)
        return CreateIntent.plan(op, self.action_id, idx)

    def _on_trash_disk(self, overlay: _Overlay, relpath: str) -> bool:
        """A rename takes the file at ``relpath`` to ALMA's trash (same device and mount)."""
        return self._dev_of(overlay, _parent(relpath)) == self._dev_of(overlay, TRASH)

    def _need_dir(self, overlay: _Overlay, relpath: str, for_path: str) -> None:
        if not overlay.is_dir(self.tree, relpath):
            st = None if relpath in overlay.vacated else self.tree.lstat(relpath)
            if st is not None and stat.S_ISLNK(st.st_mode):
                raise RefusedError(
                    _(
                        "the folder of {for_path!r} is a symlink; ALMA never writes through links.",
                        for_path=for_path,
                    )
                )
            raise ConflictError(
                _(
                    "the folder of {for_path!r} does not exist; nothing was changed.",
                    for_path=for_path,
                )
            )

    def _check_rmdir(self, overlay: _Overlay, relpath: str) -> None:
        if not overlay.is_dir(self.tree, relpath):
            raise ConflictError(
                _("{relpath!r} is not a folder; nothing was changed.", relpath=relpath)
            )
        prefix = relpath + "/"
        if relpath not in overlay.created:
            try:
                dfd = self.tree.dir(tuple(split_relpath(relpath)))
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

    def _prepare_transfer(self, overlay: _Overlay, idx: int, op: Op) -> Intent:
        if isinstance(op, Move):
            src, dst, expect = op.src, op.dst, op.expect
        elif isinstance(op, Trash):
            src, expect = op.path, op.expect
            dst = trash_entry(self.action_id, idx, op.path.rpartition("/")[2])
        elif isinstance(op, Restore):
            src, dst, expect = op.trash, op.path, op.expect
            parts = split_relpath(src)
            if tuple(parts[:2]) != TRASH_PARTS or len(parts) < 3:
                raise RefusedError(_("{src!r} is not an entry of ALMA's trash.", src=src))
        else:  # pragma: no cover - the vocabulary is closed
            raise RefusedError(_("unknown op {op!r}.", op=op.op))
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
        st = self.tree.lstat(src)
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
            sdir, sname = self.tree.parent(src)
            if sha256_at(sdir, sname) != expect.sha256:
                raise ConflictError(
                    _("{src!r} has other bytes than when planned; it was left alone.", src=src)
                )
        if not dst.startswith(_IN_TRASH):
            self._need_dir(overlay, _parent(dst), dst)
            if overlay.exists(self.tree, dst):
                raise ConflictError(
                    _("{dst!r} already exists; ALMA never overwrites a file.", dst=dst)
                )
        xdev = self._dev_of(overlay, _parent(src)) != self._dev_of(overlay, _parent(dst))
        sha = expect.sha256
        if xdev or expect.sha256:
            # A plan that recorded the content (duplicates) is held to it: the same size and
            # mtime are not the same bytes (an in-place rewrite can keep both).
            sdir, sname = self.tree.parent(src)
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
            src_trash = trash_entry(self.action_id, idx, src.rpartition("/")[2])
        return Intent(
            src=src,
            dst=dst,
            pre=pre,
            xdev=xdev,
            tmp=f"{ENGINE_TMP_PREFIX}{self.action_id}-{idx}" if xdev else None,
            src_trash=src_trash,
        )

    def _dev_of(self, overlay: _Overlay, relpath: str) -> tuple[int, str]:
        """The (device, mount point) a folder is or will be on: a folder the plan creates is on
        its parent's. The mount matters as much as the device: a rename between two bind
        mounts of one disk (how bwrap and firejail expose the zones) fails with EXDEV."""
        while relpath in overlay.created or relpath.startswith(_IN_TRASH):
            relpath = _parent(relpath)
        known = self._devs.get(relpath)
        if known is not None:
            return known
        dev = self.tree.dev_of_dir(tuple(split_relpath(relpath)) if relpath else ())
        real = os.path.join(os.path.realpath(self.tree.root), relpath)
        self._devs[relpath] = (dev, mount_point_of(real, self._mounts))
        return self._devs[relpath]

    # -- 2-4. journal and apply -----------------------------------------------------------------
    def run(self) -> None:
        """Execute the action's plan as stored in the journal: the journal leaves out of each
        intent what that stored plan says, so no other plan may be run under this action."""
        prepared = self.validate(load_plan(self.journal, self.action_id))
        self.checkpoint("validated")
        # Only what the plan does not already say (state.journal.Journal.write_intents): the
        # op is the plan's; the identity validated, when it is not exactly the op's expect.
        self.journal.write_intents(
            self.action_id,
            ((idx, None, _journal_pre(p), _journal_aux(p)) for idx, p in enumerate(prepared)),
        )
        self.checkpoint("intents")
        self._write_manifest(prepared)
        pending: list[tuple[int, dict[str, Any] | int | None]] = []
        touched: set[str] = set()
        last_flush = time.monotonic()
        try:
            for idx, p in enumerate(prepared):
                self.attempted = idx
                self.checkpoint(f"op{idx}")
                post = self._apply(p, touched, idx)
                pending.append((idx, post))
                if len(pending) >= BATCH_OPS or time.monotonic() - last_flush > BATCH_SECONDS:
                    self._flush(pending, touched)
                    last_flush = time.monotonic()
            self._flush(pending, touched)
        except AlmaError:
            self._flush(pending, touched)
            raise

    def _apply(self, p: Prepared, touched: set[str], idx: int) -> dict[str, Any] | int | None:
        """Apply one op; return what the journal records it left (see :func:`_post_of`)."""
        op = p.op
        if isinstance(op, Mkdir):
            fd, name = self.tree.parent_verified(op.path)
            try:
                os.mkdir(name, SHARED_DIR, dir_fd=fd)
            except FileExistsError:
                raise ConflictError(
                    _("{path!r} appeared meanwhile; nothing was changed.", path=op.path)
                ) from None
            touched.add(_parent(op.path))
            return _ident_dict(identity_of(os.stat(name, dir_fd=fd, follow_symlinks=False)))
        if isinstance(op, Keep):
            self._check_kept(op)  # again, right before the ops that rely on it
            return None
        if isinstance(op, Edit):
            assert p.edit is not None
            self.tree.verify(tuple(split_relpath(op.path))[:-1])
            post = edit.apply(
                self.tree, p.edit, op.content, lambda label: self.checkpoint(f"op{idx}:{label}")
            )
            touched.add(_parent(op.path))
            return _ident_dict(post)
        if isinstance(op, Create):
            assert p.create is not None
            self.tree.verify(tuple(split_relpath(op.path))[:-1])
            post = create.apply(
                self.tree, p.create, op.content, lambda label: self.checkpoint(f"op{idx}:{label}")
            )
            touched.add(_parent(op.path))
            return _ident_dict(post)
        if isinstance(op, Rmdir):
            fd, name = self.tree.parent_verified(op.path)
            self.tree.forget(op.path)
            try:
                os.rmdir(name, dir_fd=fd)
            except OSError:
                raise ConflictError(
                    _("{path!r} is not empty any more; nothing was changed.", path=op.path)
                ) from None
            touched.add(_parent(op.path))
            return None
        assert p.intent is not None
        self._verify_folders(p.intent)
        try:
            post = transfer.apply(
                self.tree, p.intent, lambda label: self.checkpoint(f"op{idx}:{label}")
            )
        except FileNotFoundError:
            # Removed by someone while the plan ran: a conflict to roll back here and now, not
            # a crash of the child left to the next start's recovery.
            raise ConflictError(
                _(
                    (
                        "{src!r} disappeared while the plan ran; ALMA took back what it had done, so "
                        "look for the file and make the plan again."
                    ),
                    src=p.intent.src,
                )
            ) from None
        touched.update((_parent(p.intent.src), _parent(p.intent.dst)))
        return _post_of(post, p.intent.pre)

    def _verify_folders(self, it: Intent) -> None:
        """The folders a transfer acts in are still the ones validated (a folder swapped for a
        symlink, or moved into system/, after validation must not receive the file)."""
        sig = (_parent(it.src), _parent(it.dst), it.src_trash and _parent(it.src_trash))
        check = self._folders.get(sig)
        if check is None:
            folders = []
            for relpath in (it.src, it.dst, *([it.src_trash] if it.src_trash else [])):
                parts = tuple(split_relpath(relpath))[:-1]
                if parts[:2] == TRASH_PARTS:
                    parts = parts[:2]  # the action's own trash folders are created as it goes
                folders.append(parts)
            check = self._folders[sig] = _FolderCheck(prefixes(folders))
        check.token = self.tree.verify_watched(check.keys, check.token)

    def _flush(
        self, pending: list[tuple[int, dict[str, Any] | int | None]], touched: set[str]
    ) -> None:
        if not pending:
            return
        self.tree.sync(touched)
        touched.clear()
        self.journal.mark_done(self.action_id, pending)
        pending.clear()
        self.checkpoint("flushed")

    def _write_manifest(self, prepared: Sequence[Prepared]) -> None:
        """Original paths beside the trash entries, so the trash is readable without the DB."""
        entries: dict[str, dict[str, Any]] = {
            str(idx): {"from": p.intent.src, "to": p.intent.dst}
            for idx, p in enumerate(prepared)
            if p.intent is not None
            and (p.intent.dst.startswith(_IN_TRASH) or p.intent.src_trash is not None)
        }
        entries.update(
            {
                str(idx): {"from": p.edit.path, "to": p.edit.trash, "edited": True}
                for idx, p in enumerate(prepared)
                if p.edit is not None
            }
        )
        # Where recovery would take a file a create published (undo's trash has its own).
        entries.update(
            {
                str(idx): {"from": p.create.path, "to": p.create.trash, "created": True}
                for idx, p in enumerate(prepared)
                if p.create is not None
            }
        )
        if not entries:
            return
        trash_fd = self.tree.dir(TRASH_PARTS)
        with contextlib.suppress(FileExistsError):
            os.mkdir(str(self.action_id), PRIVATE_DIR, dir_fd=trash_fd)
        afd = self.tree.dir((*TRASH_PARTS, str(self.action_id)))
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open("manifest.json", flags, PRIVATE_FILE, dir_fd=afd)
        except FileExistsError:
            return
        try:
            os.write(fd, json.dumps({"action": self.action_id, "entries": entries}).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.fsync(afd)
        os.fsync(trash_fd)


def read_mount_points() -> list[str]:
    """Mount points of this process's namespace (the sandbox's, when confined)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError:
        return ["/"]
    points = []
    for line in lines:
        fields = line.split(" ")
        if len(fields) > 4:
            # mountinfo escapes space, tab, newline and backslash as octal (\040 ...)
            points.append(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4]))
    return points or ["/"]


def mount_point_of(path: str, points: Sequence[str]) -> str:
    best = "/"
    for point in points:
        if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) > len(best):
            best = point
    return best


def _journal_pre(p: Prepared) -> dict[str, Any] | None:
    """The identity validated, for the journal; None (NULL) when it is exactly the op's
    ``expect``, which the journal reads from the plan (state.journal._pre_of)."""
    pre = p.edit.pre if p.edit is not None else p.intent.pre if p.intent is not None else None
    if pre is None or pre == getattr(p.op, "expect", None):
        return None
    return _ident_dict(pre)


def _journal_aux(p: Prepared) -> dict[str, Any] | None:
    """What the journal stores as the op's aux; None (NULL) when it is what the journal derives
    from the op alone (state.journal._aux_of): none for a non-transfer, and for a move or a
    restore on one disk, its source and destination with nothing kept aside."""
    if p.edit is not None:
        return p.edit.aux()
    if p.create is not None:
        return p.create.aux()
    it = p.intent
    if it is None:
        return None
    plain = not it.xdev and it.tmp is None and it.src_trash is None
    if plain and isinstance(p.op, Move | Restore):
        return None
    return it.aux()


def _ident_dict(ident: Identity) -> dict[str, Any]:
    return ident.to_dict()


def _post_of(post: Identity, pre: Identity) -> dict[str, Any] | int:
    """What the journal records a transfer left: only the new ctime when everything else is
    the identity validated (a rename on one disk moves nothing else: state.journal completes
    it from the op's ``pre``), else the whole identity. Half the done marks' bytes, and no
    identity encoded, then decoded again by the undo, per file."""
    # ctime_ns is Identity's last field: every other one compared, without building a copy (a
    # field added after it would put ctime in the slice: then nothing is shortened, not wrong).
    if post[:-1] == pre[:-1] and post.ctime_ns is not None:
        return post.ctime_ns
    return post.to_dict()


def load_plan(journal: Journal, action_id: int) -> list[Op]:
    return journal.plan_ops(action_id)
