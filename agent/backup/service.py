"""Backups of the root with restic, under the policy's ``[backup]`` section.

What a snapshot holds is a root: the folders of ``include`` and ``.alma/`` taken consistently.
While a backup runs no action runs (it holds the engine's lock: the files and the journal are of
one moment), the SQLite databases are copied through SQLite's online backup API and the memory
store's files while the store is quiet (its lock), into a stage folder ``.alma/backup/stage``.
restic reads the stage's ``.alma`` and the live folders as paths relative to the stage, which it
stores by their last names: the snapshot's tree is ``/logs``, ``/user``, ``/.alma``... as in the
root, so a plain ``restic restore`` gives a root back too. ALMA's trash, its locks and the
stage itself are never taken.

Two roots may share one repository (a root restored elsewhere keeps the repository setting):
each snapshot is tagged with its root's identity (``alma-root=ID``, an id in the state DB made
at the root's first start), and list, restore and forget see only their root's. A copy knows it
is one because the identity records the root's real path and inode: a copy (or a root moved
elsewhere) gets an identity of its own at its first start, and keeps the ids it came from as its
lineage, whose snapshots it lists and restores (its own past) but never forgets.

The repository's password never lives in the root: the service keeps the path of the file that
holds it (the person's own, or the one ``alma-ctl backup init`` wrote in ~/.config/alma),
docs/operations.md says why.
"""

from __future__ import annotations

import builtins
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypedDict, cast

from actions.planners import PlanResult, fingerprint
from actions.safe_read import read_secret
from agent.backup import restore as backup_restore
from agent.backup.restic import LONG_S, DiskFullError, Restic, snapshot_id
from agent.backup.restore import inside
from agent.loop.autonomy import Autonomy
from agent.memory.loader import MemoryLoader
from agent.policy import PolicyHolder
from policies import limits as L
from policies.errors import (
    AlmaError,
    BadArgumentError,
    InvalidStateError,
    NotFoundError,
    as_alma_error,
    error_from_wire,
)
from policies.i18n import _
from policies.kinds import BACKUP
from policies.layout import RootLayout, is_database, is_database_side_file
from policies.modes import PRIVATE_DIR
from policies.results import (
    Action,
    BackupCheck,
    BackupForgot,
    BackupInit,
    BackupTaken,
    JSONObject,
    Snapshot,
    as_action,
)
from policies.text import clip, name_from_hex
from sandbox.engine import Engine
from state.db import copy_database
from state.journal import Journal
from state.suggestions import SuggestionStore

log = logging.getLogger("alma.backup")

#: The state DB's settings: the repository (target, password file) and the last run.
REPO_SETTING = "backup_repo"
LAST_SETTING = "backup_last"
#: The root's identity: {"id", "path", "ino", "lineage"} (the module's docstring says why).
ROOT_SETTING = "backup_root"
ROOT_TAG = "alma-root="
#: How many identities a copy of a copy of ... remembers as its past.
_LINEAGE_MAX = 16
#: Parts of ``.alma/`` never backed up: ALMA's trash and the stage (and, below, the lock files
#: and SQLite's side files: each database is copied whole through its backup API).
_SKIP_DIRS = frozenset({"trash", "backup"})
_SKIP_SUFFIXES = (".lock",)
#: A scheduled backup runs when the last good one is older than this (a day, with slack for
#: a disk plugged in at a different hour), and not sooner than this after a failed one.
_DUE_S = 20 * 3600
_RETRY_S = 6 * 3600
Audit = Callable[[Mapping[str, Any]], None]


class RootIdentity(TypedDict):
    """This root's identity in the backups (its snapshots' tag), and the roots it is a copy
    of."""

    id: str
    path: str
    ino: int
    lineage: list[str]


def stage_data(data: Path, stage: Path) -> int:
    """Copy ``data`` (``.alma/``) into ``stage`` consistently; returns the files copied."""
    copied = 0
    for dirpath, dirnames, filenames in os.walk(data):
        here = Path(dirpath)
        rel = here.relative_to(data)
        if rel == Path("."):
            dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
        (stage / rel).mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
        for name in filenames:
            src = here / name
            skip = name.endswith(_SKIP_SUFFIXES) or is_database_side_file(name)
            if skip or src.is_symlink() or not src.is_file():
                continue
            dst = stage / rel / name
            if is_database(name):  # live, and held by the daemon: only SQLite may open it
                copy_database(src, dst)
            else:
                shutil.copy2(src, dst)
            copied += 1
    return copied


class BackupService:
    def __init__(
        self,
        layout: RootLayout,
        policy: PolicyHolder,
        store: SuggestionStore,
        engine: Engine,
        memory: MemoryLoader,
        audit: Audit,
        *,
        clock: Callable[[], float] = time.time,
        autonomy: Autonomy | None = None,
    ) -> None:
        self.layout = layout
        self.policy = policy
        self.store = store
        self.engine = engine
        self.memory = memory
        self.audit = audit
        self.clock = clock
        self.autonomy = autonomy

    # -- the repository ----------------------------------------------------------------------
    def _configured_target(self) -> str:
        return os.path.expanduser(self.policy().backup.target)

    def repo(self) -> Restic:
        remembered = self.store.setting(REPO_SETTING)
        if not isinstance(remembered, dict):
            raise InvalidStateError(
                _(
                    "No backup repository is set up yet; create one with `alma-ctl backup "
                    "init TARGET` (a folder on the portable disk, say)."
                )
            )
        target = self._configured_target() or str(remembered["target"])
        return Restic(Path(target), Path(str(remembered["password_file"])))

    def identity(self) -> RootIdentity:
        """This root's identity, made when there is none, or when the stored one is of another
        folder (this root is a copy of it, or was moved): then a new one with the old as its
        lineage."""
        path = os.path.realpath(self.layout.root)
        ino = os.stat(path).st_ino
        known = self.store.setting(ROOT_SETTING)
        if isinstance(known, dict) and known.get("path") == path and known.get("ino") == ino:
            return cast(RootIdentity, known)  # written below, read back from the settings
        lineage: builtins.list[str] = []
        if isinstance(known, dict) and known.get("id"):
            lineage = [str(known["id"]), *(str(i) for i in known.get("lineage") or ())]
            log.warning(
                "this root is a copy of the root at %s (or was moved): backups get an identity "
                "of their own",
                known.get("path"),
            )
        mine: RootIdentity = {
            "id": uuid.uuid4().hex,
            "path": path,
            "ino": ino,
            "lineage": lineage[:_LINEAGE_MAX],
        }
        self.store.set_setting(ROOT_SETTING, mine)
        return mine

    def _own_tag(self) -> str:
        return ROOT_TAG + str(self.identity()["id"])

    def _lineage_tags(self) -> builtins.list[str]:
        mine = self.identity()
        return [ROOT_TAG + str(i) for i in (mine["id"], *mine["lineage"])]

    def _snapshots(self, repo: Restic, every: bool = False) -> builtins.list[JSONObject]:
        """This root's snapshots and those of the roots it is a copy of (``every``: all roots'
        in the repository), oldest first. A snapshot taken before roots had identities (no
        ``alma-root=`` tag) is this root's when this root's journal recorded taking it."""
        found = repo.json(["snapshots", "--tag", "alma"]) or []
        if not every:
            mine = set(self._lineage_tags())
            made_here = self._recorded()

            def ours(snap: JSONObject) -> bool:
                tags = set(snap.get("tags") or ())
                if any(tag.startswith(ROOT_TAG) for tag in tags):
                    return bool(mine & tags)
                return str(snap.get("short_id") or str(snap.get("id"))[:8]) in made_here

            found = [snap for snap in found if ours(snap)]
        return sorted(found, key=lambda snap: str(snap.get("time") or ""))

    def _snapshot(self, repo: Restic, name: str, every: bool = False) -> str:
        """The full id of this root's snapshot ``name`` (an id's start, or ``latest``); with
        ``every``, of any root's."""
        name = snapshot_id(name)
        snaps = self._snapshots(repo, every)
        ids = [str(snap["id"]) for snap in snaps]
        found = ids[-1:] if name == "latest" else [i for i in ids if i.startswith(name)]
        if len(found) != 1:
            raise NotFoundError(
                _(
                    "There is no such snapshot of this root in {target}; `alma-ctl backup "
                    "list` shows them (`backup list --all` shows other roots' too, which "
                    "`backup restore --any-root` restores).",
                    target=repo.target,
                )
                if not found
                else _(
                    "{snapshot} is the start of several snapshots' ids; give more of it.",
                    snapshot=name,
                )
            )
        return found[0]

    def init(self, target: str, password_file: str | None) -> BackupInit:
        if not password_file:
            raise BadArgumentError(
                _("`alma-ctl backup init` needs the password: --password-file F, or a terminal.")
            )
        where, secret = Path(target), Path(password_file)
        if not where.is_absolute() or not secret.is_absolute():
            raise BadArgumentError(_("TARGET and the password file must be full paths."))
        configured = self._configured_target()
        if configured and os.path.normpath(configured) != os.path.normpath(target):
            raise BadArgumentError(
                _(
                    "{file} names {configured} as the backup target; init that one, or change "
                    "target there first.",
                    file=self.layout.policy_file,
                    configured=configured,
                )
            )
        for path, what in ((where, _("The backup target")), (secret, _("The password file"))):
            if inside(path, self.layout.root):
                raise BadArgumentError(
                    _(
                        "{what} {path} is inside the ALMA root; put it outside (the root is "
                        "what is backed up, and its password must never be stored in it).",
                        what=what,
                        path=path,
                    )
                )
        if inside(self.layout.root, where):
            raise BadArgumentError(
                _(
                    "The backup target {path} holds the ALMA root itself; choose a folder of "
                    "its own outside the root.",
                    path=where,
                )
            )
        if not read_secret(secret).strip():
            raise BadArgumentError(_("The password file {path} is empty.", path=secret))
        repo = Restic(where, secret)
        repo.check_target()
        if (where / "config").is_file():
            repo.run(["cat", "config"])  # an existing repository: the password must open it
            created = False
        else:
            if where.exists() and (not where.is_dir() or any(where.iterdir())):
                raise BadArgumentError(
                    _(
                        "{path} is not empty and is not a backup repository; name a new or "
                        "empty folder.",
                        path=where,
                    )
                )
            repo.run(["init"])
            created = True
        self.store.set_setting(
            REPO_SETTING,
            {"target": str(where), "password_file": str(secret), "since": self.clock()},
        )
        return {"target": str(where), "password_file": str(secret), "created": created}

    # -- taking a backup ---------------------------------------------------------------------
    def now(self, *, auto: bool = False) -> BackupTaken:
        """Back up the root now; the action is in the journal, acciones.md and `history`."""
        repo = self.repo()
        action = self.engine.run_in_daemon(lambda journal: self._take(journal, repo, auto))
        self.audit(action)
        if action["status"] != "done":
            row = self.engine.journal.action_row(int(action["id"]))
            raise error_from_wire({"code": row["error_code"], "message": row["error"]})
        op = self.engine.journal.plan(int(action["id"]))[0]
        return {
            **as_action(action),
            "snapshot": op.get("snapshot"),
            "files": op.get("files"),
            "bytes": op.get("bytes"),
        }

    def _take(self, journal: Journal, repo: Restic, auto: bool) -> Action:
        stage = self.layout.data / "backup" / "stage"
        op: JSONObject = {"op": "backup", "target": str(repo.target)}
        try:
            shutil.rmtree(stage, ignore_errors=True)  # a stage a killed run left
            include = self.policy().backup.include
            targets = []
            for folder in include:
                if folder == ".alma":
                    self._stage(stage / ".alma")
                    targets.append(".alma")
                elif (self.layout.root / folder).is_dir():
                    targets.append(os.path.relpath(self.layout.root / folder, stage))
            stage.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
            out = repo.run(
                ["backup", "--json", "--tag", f"alma,{self._own_tag()}", *targets],
                cwd=stage,
                timeout=LONG_S,
            )
            summary = _summary(out)
            op.update(
                snapshot=str(summary["snapshot_id"])[:8],
                files=int(summary.get("total_files_processed", 0)),
                bytes=int(summary.get("total_bytes_processed", 0)),
            )
            error = None
        except Exception as exc:  # whatever stopped it is recorded, as restic said it
            alma = as_alma_error(exc)
            log.error("backup failed: %s", alma)
            error = alma
            if isinstance(exc, DiskFullError):
                self._free_leftovers(repo)
        finally:
            shutil.rmtree(stage, ignore_errors=True)
        action_id = journal.create_action(kind="backup", plan=[op], auto=auto, sandbox=BACKUP)
        now = self.clock()
        last = self.store.setting(LAST_SETTING) or {}
        if error is None:
            journal.finish(action_id, "done")
            last = {**last, "ok_at": now, "snapshot": op["snapshot"], "error": None}
        else:
            said = clip(str(error), L.ERROR_CHARS)
            journal.finish(action_id, "failed", error=said, code=int(error.code))
            last = {**last, "failed_at": now, "error": said}
        self.store.set_setting(LAST_SETTING, last)
        return journal.action(action_id)

    def _free_leftovers(self, repo: Restic) -> None:
        """Remove the packs a backup that filled the disk wrote and no snapshot uses: left
        there, they keep the disk full, every later backup fails the same way, and forgetting
        snapshots frees nothing (restic prunes after ``forget --prune`` only when a snapshot
        was forgotten)."""
        try:
            repo.run(["prune"], timeout=LONG_S, unlock=False)
        except AlmaError as exc:  # the failure itself is what the person is told
            log.warning("could not prune what the failed backup left in %s: %s", repo.target, exc)

    def _stage(self, dst: Path) -> None:
        if not self.memory.loaded and self.memory.error is None:
            self.memory.get()  # still loading, and writing its files: wait for it (bounded)
        service = self.memory.service if self.memory.loaded else None
        if service is None:  # off, or failed to load: nothing writes its files
            stage_data(self.layout.data, dst)
            return
        with service.store.lock:  # the memory store is quiet while its files are copied
            stage_data(self.layout.data, dst)

    # -- the repository's contents -----------------------------------------------------------
    def list(self, all: bool = False) -> builtins.list[Snapshot]:
        """Snapshots oldest first: id, time, files, bytes (from the journal of the backup that
        made them, else from ``restic stats``); ``all``: every root's, each with its host and
        folder, and whether it is this root's (or of the roots it is a copy of)."""
        every = all
        repo = self.repo()
        known = self._recorded()
        out = []
        mine = set(self._lineage_tags())
        for snap in self._snapshots(repo, every):
            short = str(snap.get("short_id") or snap["id"][:8])
            files, size = known.get(short, (None, None))
            if files is None:
                stats = repo.json(["stats", "--mode", "restore-size", "--", snap["id"]])
                files, size = stats.get("total_file_count"), stats.get("total_size")
            row: Snapshot = {"id": short, "time": snap["time"], "files": files, "bytes": size}
            if every:
                row["host"] = str(snap.get("hostname") or "")
                row["root"] = _root_of(snap.get("paths") or [])
                row["mine"] = bool(mine & set(snap.get("tags") or ()))
            out.append(row)
        return out

    def _recorded(self) -> dict[str, tuple[int, int]]:
        journal = self.engine.journal
        known: dict[str, tuple[int, int]] = {}
        for action_id in journal.done_of_kind("backup"):
            for op in journal.iter_plan(action_id):
                if op.get("snapshot"):
                    known[str(op["snapshot"])] = (int(op["files"]), int(op["bytes"]))
        return known

    def check(self) -> BackupCheck:
        repo = self.repo()
        repo.run(["check"], timeout=LONG_S)
        return {"ok": True, "target": str(repo.target)}

    def forget(self, *, auto: bool = False) -> BackupForgot:
        """Forget the snapshots the retention does not keep, and prune their data. Asked by
        the person, it prunes even when no snapshot was forgotten: what failed or stopped
        backups wrote is freed too (the advice of a full disk's sentence)."""
        repo = self.repo()
        keep = self.policy().backup
        # This root's snapshots only, as one group: another root's are never counted "old".
        args = ["forget", "--prune", "--tag", f"alma,{self._own_tag()}", "--group-by", "tags"]
        args += ["--keep-daily", str(keep.keep_daily), "--keep-weekly", str(keep.keep_weekly)]
        args += ["--keep-monthly", str(keep.keep_monthly), "--json"]

        def forget(journal: Journal) -> JSONObject:
            out = repo.run(args, timeout=LONG_S)
            removed = [str(s["short_id"]) for g in _json_head(out) for s in g.get("remove") or ()]
            if not removed and not auto:  # --prune prunes only after forgetting a snapshot
                repo.run(["prune"], timeout=LONG_S)
            op = {"op": "backup_forget", "target": str(repo.target), "removed": removed}
            action_id = journal.create_action(
                kind="backup_forget", plan=[op], auto=auto, sandbox=BACKUP
            )
            journal.finish(action_id, "done")
            return {**journal.action(action_id), "removed": removed}

        action = self.engine.run_in_daemon(forget)
        self.audit(action)
        return {**as_action(action), "removed": action["removed"]}

    def restore(
        self,
        snapshot: str,
        paths: builtins.list[str],
        to: str,
        paths_hex: builtins.list[str] | None = None,
        any_root: bool = False,
    ) -> Action:
        names = list(paths)
        for text in paths_hex or ():
            try:
                names.append(name_from_hex(text))
            except ValueError:
                raise BadArgumentError(
                    _("--paths-hex takes the hex digits of a name's bytes, like 7573657221.")
                ) from None
        snapshot_id(snapshot)  # refused before anything else is asked
        repo = self.repo()
        full = self._snapshot(repo, snapshot, any_root)
        action = self.engine.run_in_daemon(
            lambda journal: backup_restore.restore(
                journal,
                repo,
                self.layout.root,
                full,
                names,
                Path(to),
                shown=snapshot,
                confine=self.engine.confinement.wrap,
            )
        )
        self.audit(action)
        return as_action(action)

    # -- the schedule and the suggestions ----------------------------------------------------
    def tick(self) -> bool:
        """The schedule's call: a backup when one is due and the target is present (a disk not
        plugged in is no error); True when one was tried and failed. Never while autonomy is
        off: paused, ALMA does nothing on its own, a backup neither."""
        if self.autonomy is not None and self.autonomy.effective() == "off":
            return False
        settings = self.policy().backup
        remembered = self.store.setting(REPO_SETTING)
        if settings.schedule != "daily" or not isinstance(remembered, dict):
            return False
        target = Path(self._configured_target() or str(remembered["target"]))
        if not target.is_dir():
            log.debug("backup target %s is not there; no backup now", target)
            return False
        last = self.store.setting(LAST_SETTING) or {}
        now = self.clock()
        if now - float(last.get("ok_at") or 0) < _DUE_S:
            return False
        if last.get("error") and now - float(last.get("failed_at") or 0) < _RETRY_S:
            return False
        try:
            self.now(auto=True)
            self.forget(auto=True)
        except AlmaError:
            return True  # recorded: the journal, acciones.md and the next analysis say it
        return False

    def findings(self, now: float) -> builtins.list[PlanResult]:
        """A ``backup`` suggestion when backups fail, or none succeeded for too long."""
        remembered = self.store.setting(REPO_SETTING)
        last = self.store.setting(LAST_SETTING) or {}
        days = self.policy().backup.warn_after_days
        if last.get("error"):
            # One suggestion while backups keep failing, in the last error's words: it is
            # keyed on the last good backup, which only a success changes.
            return [
                _finding(
                    "failing",
                    _("The last backup failed"),
                    _("{error} Then run `alma-ctl backup now`.", error=last["error"]),
                    [str(last.get("ok_at") or "never")],
                )
            ]
        if not isinstance(remembered, dict):
            return []
        ok_at = float(last.get("ok_at") or 0)
        # Never backed up: counted from the day the repository was set up.
        if now - (ok_at or float(remembered.get("since") or now)) < days * 86400:
            return []
        since = _("never") if not ok_at else time.strftime("%Y-%m-%d", time.localtime(ok_at))
        return [
            _finding(
                "stale",
                _("No backup for {days} days or more", days=days),
                _(
                    "The last good backup is from {since}; connect the disk of {target} and "
                    "run `alma-ctl backup now`.",
                    since=since,
                    target=remembered["target"],
                ),
                [since],
            )
        ]

    def recover(self) -> builtins.list[int]:
        """At start: this root's identity settled (a copy's made), interrupted restores."""
        self.identity()
        return backup_restore.recover(self.engine.journal)


def _finding(why: str, title: str, reason: str, keys: list[str]) -> PlanResult:
    return PlanResult(
        kind="backup",
        target="backup",
        title=title,
        reason=reason,
        evidence=[reason],
        plan=[],
        files=0,
        fingerprint=fingerprint("backup", why, keys),
    )


def _root_of(paths: builtins.list[str]) -> str | None:
    """The root a snapshot was taken of, from the paths restic recorded (the stage's
    ``ROOT/.alma/backup/stage/.alma`` and ``ROOT/user``...)."""
    for path in paths:
        staged = path.removesuffix("/.alma/backup/stage/.alma")
        return staged if staged != path else os.path.dirname(path)
    return None


def _summary(out: str) -> JSONObject:
    for line in reversed(out.splitlines()):
        if '"summary"' in line:
            data = json.loads(line)
            if isinstance(data, dict) and data.get("message_type") == "summary":
                return data
    raise AlmaError(_("restic finished the backup without saying which snapshot it made."))


def _json_head(out: str) -> list[JSONObject]:
    """The JSON document restic printed (forget prints it on its first line)."""
    for line in out.splitlines():
        if line.startswith("["):
            data = json.loads(line)
            return data if isinstance(data, list) else []
    return []
