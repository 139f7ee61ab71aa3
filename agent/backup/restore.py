"""A restore of a snapshot as an action: journaled, undoable, and only ever creating files.

restic restores into a stage folder beside DIR (``.NAME.alma-restore-ACTION``, a name the
action's id fixes, so recovery finds it without having written anything first); what it
restored is recorded in the journal; then the stage is renamed to DIR, which the kernel does
only when DIR does not exist or is an empty folder: nothing is ever written over an existing
file, and DIR is never inside the live root. Undo removes DIR again, only when every file in
it is still the one the restore made.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
from pathlib import Path
from typing import Any

from agent.backup.restic import LONG_S, Restic
from policies.errors import BadArgumentError, ConflictError, NotFoundError
from policies.i18n import _
from state.journal import Journal

log = logging.getLogger("alma.backup")

SANDBOX = "backup"
KIND = "backup_restore"
Manifest = list[list[object]]


def _stage(to: Path, action_id: int) -> Path:
    return to.parent / f".{to.name}.alma-restore-{action_id}"


def _manifest(folder: Path) -> Manifest:
    """Every file under ``folder``: its name's bytes (hex: any name, UTF-8 or not), size and
    modification time."""
    out: Manifest = []
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(dirpath) / name
            st = path.lstat()
            rel = os.fsencode(path.relative_to(folder)).hex()
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
    journal: Journal, repo: Restic, root: Path, snapshot: str, paths: list[str], to: Path
) -> dict[str, Any]:
    existed = _check_to(root, to)
    includes = []
    for path in paths:
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if not parts or ".." in parts:
            raise BadArgumentError(
                _("{path} must be a path inside the root, like user/notas.txt.", path=path)
            )
        includes += ["--include", "/" + "/".join(parts)]
    plan = [
        {"op": "restore_snapshot", "snapshot": snapshot, "paths": paths, "to": str(to),
         "existed": existed}
    ]  # fmt: skip
    action_id = journal.create_action(kind=KIND, plan=plan, sandbox=SANDBOX)
    stage = _stage(to, action_id)
    try:
        repo.run(["restore", snapshot, "--target", str(stage), *includes], timeout=LONG_S)
        if not stage.is_dir() or not any(stage.iterdir()):
            raise NotFoundError(
                _(
                    "Snapshot {snapshot} has none of {paths}; `restic ls` lists what it holds.",
                    snapshot=snapshot,
                    paths=", ".join(paths),
                )
            )
        journal.write_intents(action_id, [(0, None, None, {"files": _manifest(stage)})])
        try:
            os.rename(stage, to)  # only over nothing, or over an empty folder
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                raise ConflictError(
                    _("{to} was filled meanwhile; nothing was restored into it.", to=to)
                ) from None
            raise
    except BaseException as exc:
        shutil.rmtree(stage, ignore_errors=True)
        error = exc if isinstance(exc, Exception) else None
        journal.finish(action_id, "rolled_back", error=str(error) if error else "interrupted")
        raise
    journal.mark_done(action_id, [(0, None)])
    journal.finish(action_id, "done")
    return journal.action(action_id)


def undo(journal: Journal, target: int) -> dict[str, Any]:
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
        kind=str(row["kind"]), plan=plan, undoes=target, sandbox=SANDBOX
    )
    _unrestore(journal, action_id, plan[0], target)
    return journal.action(action_id)


def _unrestore(journal: Journal, action_id: int, op: dict[str, Any], target: int) -> None:
    to = Path(str(op["to"]))
    shutil.rmtree(to, ignore_errors=True)
    if op.get("existed"):
        to.mkdir(exist_ok=True)
    with journal.transaction():
        journal.finish(action_id, "done")
        journal.mark_undone(target, action_id)


def recover(journal: Journal) -> list[int]:
    """At start: a restore interrupted before its rename is taken back (its stage removed);
    one interrupted after it is done; an interrupted undo of one is finished."""
    recovered = []
    for action_id in journal.running(sandbox=SANDBOX):
        row = journal.action_row(action_id)
        op = journal.plan(action_id)[0]
        if op["op"] == "unrestore":
            _unrestore(journal, action_id, op, int(row["undoes"]))
        else:
            stage = _stage(Path(str(op["to"])), action_id)
            if stage.exists() or not journal.started(action_id):
                shutil.rmtree(stage, ignore_errors=True)
                journal.finish(action_id, "rolled_back", error="interrupted; rolled back at start")
            else:
                journal.mark_done(action_id, [(0, None)])
                journal.finish(action_id, "done")
        recovered.append(action_id)
    if recovered:
        log.warning("backup restores interrupted by a stop were finished: %s", recovered)
    return recovered
