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
tree (the overlay) and one journal transaction; what each op does lives apart, one handler an
op (sandbox.ops).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from actions.ops import Op
from actions.safefs import split_relpath, split_relpath_cached
from actions.tree import FolderToken, Tree, prefixes
from policies.errors import AlmaError, ConflictError, RefusedError
from policies.i18n import _
from policies.layout import TRASH, TRASH_PARTS
from policies.modes import PRIVATE_DIR, PRIVATE_FILE
from policies.zones import ZoneCheck
from sandbox.ops import ManifestEntry, Prepared, handler
from sandbox.transfer import Intent
from state.journal import Journal, Post

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
class Overlay:
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
        overlay = Overlay()
        arrivals = overlay.arrivals
        for op in plan:
            arrival = op.arrival()
            if arrival is not None:
                folder = arrival.rpartition("/")[0]
                arrivals[folder] = arrivals.get(folder, 0) + 1
        prepared: list[Prepared] = []
        for idx, op in enumerate(plan):
            for path in op.write_paths():
                self.zones.check(path)
            does = handler(op)
            prepared.append(Prepared(op, does, does.prepare(self, overlay, idx, op)))
        return prepared

    def on_trash_disk(self, overlay: Overlay, relpath: str) -> bool:
        """A rename takes the file at ``relpath`` to ALMA's trash (same device and mount)."""
        return self.dev_of(overlay, _parent(relpath)) == self.dev_of(overlay, TRASH)

    def need_dir(self, overlay: Overlay, relpath: str, for_path: str) -> None:
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

    def dev_of(self, overlay: Overlay, relpath: str) -> tuple[int, str]:
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
            ((idx, None, *p.handler.journaled(p.op, p.work)) for idx, p in enumerate(prepared)),
        )
        self.checkpoint("intents")
        self._write_manifest(prepared)
        pending: list[tuple[int, Post]] = []
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

    def _apply(self, p: Prepared, touched: set[str], idx: int) -> Post:
        """Apply one op; return what the journal records it left (sandbox.ops.Post)."""
        return p.handler.apply(self, p.op, p.work, touched, idx)

    def verify_folders(self, it: Intent) -> None:
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

    def _flush(self, pending: list[tuple[int, Post]], touched: set[str]) -> None:
        if not pending:
            return
        self.tree.sync(touched)
        touched.clear()
        self.journal.mark_done(self.action_id, pending)
        pending.clear()
        self.checkpoint("flushed")

    def _write_manifest(self, prepared: Sequence[Prepared]) -> None:
        """Original paths beside the trash entries, so the trash is readable without the DB."""
        entries: dict[str, ManifestEntry] = {}
        for idx, p in enumerate(prepared):
            entry = p.handler.manifest(p.work)
            if entry is not None:
                entries[str(idx)] = entry
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


def load_plan(journal: Journal, action_id: int) -> list[Op]:
    return journal.plan_ops(action_id)
