"""A restore of a snapshot as an action: journaled, undoable, and only ever creating files.

restic restores into a stage folder beside DIR (``.NAME.alma-restore-RANDOM``): created
exclusively, under a name nobody can guess, through a descriptor of DIR's parent (a link planted
under any name is never followed, and never taken for the stage); its name is in the action's
plan, so recovery finds it. restic runs confined like the sandbox's child (the engine's
confinement), able to write only in the stage and the repository: a link planted inside the
stage while it runs leads nowhere it may write. What it restored is recorded in the journal; then the stage is
renamed to DIR without replacing anything (an empty DIR is removed first): nothing is ever
written over an existing file, and DIR is never inside the live root. Undo removes DIR again,
only when every file in it is still the one the restore made.

A PATH is a name, never a pattern: restic's ``--include`` reads Go's ``filepath.Match``
patterns, so every character that pattern gives a meaning is escaped with a backslash.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from actions import safefs
from actions.ops import StoredPlan
from agent.backup.restic import LONG_S, Restic, Wrap
from policies.decide import RunContext
from policies.errors import (
    BadArgumentError,
    ConflictError,
    InvalidStateError,
    NotFoundError,
    RefusedError,
)
from policies.i18n import _
from policies.kinds import BACKUP
from policies.modes import PRIVATE_DIR
from policies.text import name_hex, printable_name
from sandbox.engine import Engine
from state.journal import Action, Journal

log = logging.getLogger("alma.backup")

KIND = "backup_restore"
Manifest = list[list[object]]
#: A confinement's wrap: a command line and the folders it may write -> the line to run.
Confine = Callable[[list[str], list[Path]], list[str]]


#: What Go's filepath.Match (restic's --include) reads as a pattern: escaped, a name is itself.
_PATTERN = re.compile(r"([\\*?\[])")


def include_pattern(parts: list[str]) -> str:
    """The ``--include`` that selects exactly the root-relative name ``parts`` (and what is
    under it, when it is a folder)."""
    return "/" + "/".join(_PATTERN.sub(r"\\\1", part) for part in parts)


def _stage_name(to: Path) -> str:
    return f".{to.name}.alma-restore-{secrets.token_hex(8)}"


def _manifest(folder: Path) -> Manifest:
    """Every file under ``folder``: its name's bytes (hex: any name, UTF-8 or not), size and
    modification time."""
    out: Manifest = []
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(dirpath) / name
            st = path.lstat()
            rel = name_hex(str(path.relative_to(folder)))
            out.append([rel, st.st_size, st.st_mtime_ns])
    out.sort()
    return out


def inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or under it, links resolved: a check of a folder a person
    named (a backup target, a password file, where to restore), never a containment for
    writes (a restore's one write near the root is its rename, which replaces nothing)."""
    real, base = os.path.realpath(path), os.path.realpath(folder)
    return real == base or real.startswith(base.rstrip("/") + "/")


def _check_to(root: Path, to: Path) -> bool:
    """Whether DIR exists (an empty folder); raises the sentence when DIR cannot be used."""
    if not to.is_absolute():
        raise BadArgumentError(_("--to must be a full path."))
    if inside(to, root) or inside(root, to):
        raise BadArgumentError(
            _(
                "A restore never goes into the live ALMA root; name a new folder outside {root}.",
                root=root,
            )
        )
    if not to.parent.is_dir():
        raise BadArgumentError(
            _("The folder {parent} does not exist; create it first.", parent=to.parent)
        )
    if to.is_symlink() or (to.exists() and (not to.is_dir() or any(to.iterdir()))):
        raise ConflictError(
            _(
                "{to} already exists and is not an empty folder; a restore never writes over "
                "anything: name a new folder.",
                to=to,
            )
        )
    return to.exists()


def restore(
    journal: Journal,
    repo: Restic,
    root: Path,
    snapshot: str,
    paths: list[str],
    to: Path,
    *,
    shown: str | None = None,
    confine: Confine | None = None,
) -> dict[str, Any]:
    """Restore ``paths`` (names, all of the snapshot when empty) of ``snapshot`` (a full id
    restic gave, ``shown`` as the person named it) into the new folder ``to``; ``confine``
    runs restic able to write only in the stage and the repository (its lock)."""
    existed = _check_to(root, to)
    includes = []
    for path in paths:
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if not parts or ".." in parts or "\x00" in path:
            raise BadArgumentError(
                _(
                    "{path} must be a path inside the root, like user/notas.txt.",
                    path=printable_name(path),
                )
            )
        includes += ["--include", include_pattern(parts)]
    stage_name = _stage_name(to)
    shown_paths = [printable_name(p) for p in paths]
    plan = [
        {"op": "restore_snapshot", "snapshot": shown or snapshot, "paths": shown_paths,
         "to": str(to), "stage": stage_name, "existed": existed}
    ]  # fmt: skip
    try:
        parent = safefs.open_root(to.parent)  # the folder the person named, as they named it
    except OSError as exc:
        raise BadArgumentError(
            _("The folder {parent} cannot be opened ({error}).", parent=to.parent, error=exc)
        ) from None
    stage = to.parent / stage_name
    made = False
    try:
        action_id = journal.create_action(kind=KIND, plan=plan, sandbox=BACKUP)
    except BaseException:
        os.close(parent)
        raise
    try:
        safefs.mkdir_at(parent, stage_name, PRIVATE_DIR)  # fails on any existing name
        made = True
        # The folder's real path, as the descriptor holds it (links in the path the person
        # typed resolved): what restic writes to, and what the confinement lets it write.
        stage = Path(os.readlink(f"/proc/self/fd/{parent}")) / stage_name
        repository = Path(os.path.realpath(repo.target))
        wrap = None if confine is None else _confined(confine, [stage, repository], to)
        repo.run(
            ["restore", "--target", str(stage), *includes, "--", snapshot],
            timeout=LONG_S,
            wrap=wrap,
        )
        if not any(stage.iterdir()):
            raise NotFoundError(
                _(
                    "Snapshot {snapshot} has none of {paths}; `restic ls` lists what it holds.",
                    snapshot=shown or snapshot,
                    paths=", ".join(shown_paths),
                )
            )
        journal.write_intents(action_id, [(0, None, None, {"files": _manifest(stage)})])
        _publish(parent, stage_name, to, existed)
    except BaseException as exc:
        if made:
            _remove_stage(parent, stage_name)
        error = exc if isinstance(exc, Exception) else None
        journal.finish(action_id, "rolled_back", error=str(error) if error else "interrupted")
        raise
    finally:
        os.close(parent)
    journal.mark_done(action_id, [(0, None)])
    journal.finish(action_id, "done")
    return {**journal.action(action_id), "to": str(to)}


def _confined(confine: Confine, writable: list[Path], to: Path) -> Wrap:
    """``confine`` for restic's line, able to write only in ``writable`` (real paths, never
    resolved again here: a link found in one now was put there since, and is refused)."""

    def wrap(argv: list[str]) -> list[str]:
        try:
            return confine(argv, writable)
        except ValueError:  # a folder of them replaced (by a link, say) since it was made
            raise ConflictError(
                _(
                    "The folder beside {to} changed while it was restored into; nothing was "
                    "restored.",
                    to=to,
                )
            ) from None

    return wrap


def _publish(parent: int, stage_name: str, to: Path, existed: bool) -> None:
    """Rename the stage to DIR, never over anything: an empty DIR the person made is removed
    first (rmdir removes only an empty folder, and never follows a link)."""
    filled = ConflictError(_("{to} was filled meanwhile; nothing was restored into it.", to=to))
    try:
        if existed:
            os.rmdir(to.name, dir_fd=parent)
        try:
            safefs.rename_noreplace(parent, stage_name, parent, to.name)
        except BaseException:
            if existed:  # the person's empty folder is put back where it was
                with contextlib.suppress(OSError):
                    os.mkdir(to.name, dir_fd=parent)
            raise
    except ConflictError:
        raise filled from None
    except RefusedError:
        # A filesystem without RENAME_NOREPLACE: rename(2) puts a folder only where nothing
        # is, or over an empty folder, so it cannot replace a file either.
        try:
            os.rename(stage_name, to.name, src_dir_fd=parent, dst_dir_fd=parent)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                raise filled from None
            raise
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.ENOENT):
            raise filled from None
        raise


def _remove_stage(parent: int, stage_name: str) -> None:
    """Remove the stage this restore made: through the parent's descriptor, and only while it
    is a folder (a link put in its place is left alone)."""
    st = safefs.lstat_at(parent, stage_name)
    if st is None or safefs.kind_of(st) != "dir":
        return
    with contextlib.suppress(OSError):
        shutil.rmtree(stage_name, dir_fd=parent)


class BackupFamily:
    """The backup family (agent.loop.families): a restore is undone here, in the daemon. A
    backup is taken by its own command (`alma-ctl backup now`), never as a plan of ops."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def execute(
        self, plan: StoredPlan, *, kind: str, ctx: RunContext, suggestion_id: int | None
    ) -> Action:
        raise InvalidStateError(
            _("A backup is taken with `alma-ctl backup now`, not by accepting a plan.")
        )

    def undo(self, target: int) -> Action:
        return self.engine.run_in_daemon(lambda journal: undo(journal, target))


def undo(journal: Journal, target: int) -> Action:
    """Remove what restore ``target`` created, only when it is all as the restore left it."""
    row = journal.action_row(target)
    op = journal.plan(target)[0]
    to = Path(str(op["to"]))
    made = journal.rows(target)[0].aux["files"]
    now = _manifest(to) if to.is_dir() else []
    if now != made:
        raise ConflictError(
            _(
                "Files in {to} changed since the restore; nothing was removed. Remove the "
                "folder yourself when you no longer need it.",
                to=to,
            )
        )
    plan = [{"op": "unrestore", "to": str(to), "existed": bool(op.get("existed"))}]
    action_id = journal.create_action(
        kind=str(row["kind"]), plan=plan, undoes=target, sandbox=BACKUP
    )
    _unrestore(journal, action_id, plan[0], target)
    return Action(**journal.action(action_id), to=str(to))


def _unrestore(journal: Journal, action_id: int, op: dict[str, Any], target: int) -> None:
    to = Path(str(op["to"]))
    shutil.rmtree(to, ignore_errors=True)
    if op.get("existed"):
        to.mkdir(exist_ok=True)
    with journal.transaction():
        journal.finish(action_id, "done")
        journal.mark_undone(target, action_id)


def _recover_stage(folder: Path, stage_name: str) -> None:
    try:
        parent = safefs.open_root(folder)
    except OSError:
        return  # the folder is gone (a disk unplugged): nothing of the stage to remove here
    try:
        _remove_stage(parent, stage_name)
    finally:
        os.close(parent)


def recover(journal: Journal) -> list[int]:
    """At start: a restore interrupted before its rename is taken back (its stage removed);
    one interrupted after it is done; an interrupted undo of one is finished."""
    recovered = []
    for action_id in journal.running(sandbox=BACKUP):
        row = journal.action_row(action_id)
        op = journal.plan(action_id)[0]
        if op["op"] == "unrestore":
            _unrestore(journal, action_id, op, int(row["undoes"]))
        else:
            to = Path(str(op["to"]))
            stage = to.parent / str(op.get("stage") or "")
            if (op.get("stage") and stage.exists()) or not journal.started(action_id):
                if op.get("stage"):
                    _recover_stage(to.parent, str(op["stage"]))
                if op.get("existed") and not to.exists():
                    with contextlib.suppress(OSError):
                        to.mkdir()  # the empty folder the person named, put back
                journal.finish(action_id, "rolled_back", error="interrupted; rolled back at start")
            else:
                journal.mark_done(action_id, [(0, None)])
                journal.finish(action_id, "done")
        recovered.append(action_id)
    if recovered:
        log.warning("backup restores interrupted by a stop were finished: %s", recovered)
    return recovered
