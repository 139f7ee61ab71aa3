"""The confined child: ``python -m sandbox.runner`` executes one action, or recovers.

It is started by :class:`sandbox.engine.Engine` inside the sandbox (it can write only the
writable zones and ``.alma/journal`` + ``.alma/trash``). It holds the executor lock while it
works, so a recovery never runs beside an executor, even an orphaned one. It prints one JSON
line: ``{"ok": true, ...}`` or ``{"ok": false, "code": N, "message": "..."}``.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import json
import os
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Required, TypedDict

from actions.tree import Tree
from policies.errors import (
    AlmaError,
    ConflictError,
    ErrorCode,
    InvalidStateError,
    as_alma_error,
    cause_of,
)
from policies.i18n import _, ngettext
from policies.layout import RootLayout
from policies.modes import PRIVATE_FILE
from sandbox import recovery
from sandbox.executor import Executor, Zones
from sandbox.ops import HANDLERS
from state.journal import Journal

if TYPE_CHECKING:
    from policies.states import ActionStatus

Checkpoint = Callable[[str], None]
EXIT_HANDLED = 10


class Recovered(TypedDict, total=False):
    """One action a recovery walked: rolled back, or failed (``error`` says why)."""

    action: Required[int]
    status: Required[ActionStatus]
    error: str


class Answer(TypedDict, total=False):
    """The child's one JSON line, as sandbox.engine reads it back: ``ok``, and what the run
    gives (an action's id, a recovery's report), or an error's ``code`` and ``message``; the
    daemon adds ``crashed``, ``rc`` and ``stderr`` when no line came."""

    ok: Required[bool]
    action: int
    recovered: list[Recovered]
    code: int
    message: str
    peak_rss_kb: int | None
    crashed: bool
    rc: int | None
    stderr: str  # the JSON line on stdout says what went wrong


def _no_checkpoint(label: str) -> None:
    return None


def lock_executor(journal_dir: Path) -> int:
    fd = os.open(journal_dir / "executor.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, PRIVATE_FILE)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def execute(
    root: Path, journal: Journal, action_id: int, zones: Zones, checkpoint: Checkpoint
) -> Answer:
    row = journal.action_row(action_id)
    if row["status"] != "running" or journal.started(action_id):
        raise ConflictError(
            _("action {action_id} was already started; it is not run twice.", action_id=action_id)
        )
    with Tree(root) as tree:
        executor = Executor(tree, journal, action_id, zones, checkpoint=checkpoint)
        try:
            executor.run()
        except Exception as exc:  # whatever stopped it, what was done is taken back
            error = as_alma_error(exc)
            if not isinstance(exc, AlmaError):
                error = AlmaError(
                    _(
                        (
                            "Action {action_id} stopped: {exc}; ALMA took back what it had done, so "
                            "nothing was changed."
                        ),
                        action_id=action_id,
                        exc=cause_of(exc),
                    )
                )
            take_back(tree, journal, action_id, checkpoint, stopped_at=executor.attempted)
            journal.finish(action_id, "rolled_back", error=str(error), code=error.code)
            if error is exc:
                raise
            raise error from exc
        _finish_done(journal, action_id, row["undoes"])
        if row["undoes"] is not None:
            # What the undone action put in the trash is back: its emptied folders and its
            # manifest of files no longer there would only be clutter (and left, no harm).
            with contextlib.suppress(OSError):
                recovery.clean_trash_dirs(tree, int(row["undoes"]))
        checkpoint("finished")
    return {"ok": True, "action": action_id}


def take_back(
    tree: Tree,
    journal: Journal,
    action_id: int,
    checkpoint: Checkpoint,
    *,
    stopped_at: int | None = None,
) -> None:
    """Roll the action back (see recovery.rollback). If that cannot finish, whatever the error
    (a conflict, a symlink swapped in, EACCES, a full disk), the action ends ``failed`` with a
    sentence naming what is still moved and the one command that finishes the job, raised."""
    try:
        recovery.rollback(tree, journal, action_id, checkpoint, stopped_at=stopped_at)
    except Exception as exc:
        message = unfinished(journal, action_id, cause_of(exc), stopped_at)
        journal.finish(action_id, "failed", error=message, code=int(ErrorCode.INTERNAL))
        raise AlmaError(message) from exc


def unfinished(journal: Journal, action_id: int, cause: str, stopped_at: int | None) -> str:
    """The sentence for an action whose rollback stopped: what is still moved, and how to
    finish (``alma-ctl undo ID`` takes back a failed action's rest: Engine.undo)."""
    moved: list[str] = []  # the first four, by name: three are shown, "..." for the rest
    total = 0
    unsure = False
    for row in journal.iter_rows(action_id):
        if row.state == "rolled_back" or (stopped_at is not None and row.idx > stopped_at):
            continue  # taken back, or never started
        does = HANDLERS.get(str(row.op.get("op")))  # as stored: this runs after a failure
        left = None if does is None else does.left(row)
        if left is None:
            continue
        unsure = unsure or row.state != "done"
        total += 1
        if len(moved) <= 3:
            moved.append(left)
    command = f"`alma-ctl undo {action_id}`"
    if not moved:
        return _(
            "Action {id} could not be taken back whole ({cause}); no file is still moved, but a "
            "folder it created may be left. Fix that and run {command}.",
            id=action_id,
            cause=cause,
            command=command,
        )
    if unsure:
        count = ngettext("up to {n} file", "up to {n} files", total)
    else:
        count = ngettext("{n} file", "{n} files", total)
    shown = "; ".join(moved[:3]) + ("; ..." if len(moved) > 3 else "")
    return _(
        "Action {id} could not be taken back whole ({cause}): {count} still where it put them "
        "({shown}). Fix that and run {command} to put them back.",
        id=action_id,
        cause=cause,
        count=count,
        shown=shown,
        command=command,
    )


def _finish_done(journal: Journal, action_id: int, undoes: int | None) -> None:
    with journal.transaction():
        journal.finish(action_id, "done")
        if undoes is not None:
            journal.mark_undone(int(undoes), action_id)


def recover(root: Path, journal: Journal, checkpoint: Checkpoint) -> Answer:
    """Roll back every action left running (its approval may be stale), newest first."""
    report: list[Recovered] = []
    with Tree(root) as tree:
        for action_id in journal.running():
            try:
                take_back(tree, journal, action_id, checkpoint)
            except AlmaError as exc:
                report.append({"action": action_id, "status": "failed", "error": str(exc)})
                continue
            journal.finish(
                action_id,
                "rolled_back",
                error="interrupted; rolled back when ALMA started again",
                code=int(ErrorCode.CONFLICT),
            )
            report.append({"action": action_id, "status": "rolled_back"})
    return {"ok": True, "recovered": report}


def finish_rollback(root: Path, journal: Journal, action_id: int, checkpoint: Checkpoint) -> Answer:
    """Take back the rest of a failed action (``alma-ctl undo ID`` on it), from the files."""
    row = journal.action_row(action_id)
    if row["status"] != "failed":
        raise InvalidStateError(
            _(
                "Action {action_id} is {status}, not failed.",
                action_id=action_id,
                status=row["status"],
            )
        )
    with Tree(root) as tree:
        take_back(tree, journal, action_id, checkpoint)
    journal.finish(
        action_id,
        "rolled_back",
        error="it had stopped halfway; the rest was taken back with alma-ctl undo",
        code=row["error_code"],
    )
    return {"ok": True, "action": action_id}


class _Args:
    """The command line: ``--root DIR`` and one of ``--action ID`` (``-``: read the id from
    stdin), ``--recover`` or ``--rollback ID``; ``--writable=ZONE`` and ``--read-only=ZONE``
    repeated (``--flag=VALUE`` or ``--flag VALUE``, whatever VALUE starts with). By hand, not
    argparse: the daemon is its only caller, and argparse with what it imports would be a
    visible part of this child's start, paid on every action."""

    def __init__(self, argv: list[str]) -> None:
        self.root: Path | None = None
        self.action: int | None = None
        self.action_on_stdin = False
        self.recover = False
        self.rollback: int | None = None
        self.writable: list[str] = []
        self.read_only: list[str] = []
        args = iter(argv)
        for flag in args:
            if flag == "--recover":
                self.recover = True
                continue
            flag, eq, value_in_flag = flag.partition("=")  # --writable=ZONE (Engine.runner_args)
            value = value_in_flag if eq else next(args, None)
            if value is None or flag not in _VALUED:
                raise ValueError(f"unknown option or missing value: {flag!r}")
            if flag == "--root":
                self.root = Path(value)
            elif flag == "--action" and value == "-":
                self.action_on_stdin = True
            elif flag == "--action":
                self.action = int(value)
            elif flag == "--rollback":
                self.rollback = int(value)
            else:
                (self.writable if flag == "--writable" else self.read_only).append(value)
        modes = (
            self.action is not None or self.action_on_stdin,
            self.recover,
            self.rollback is not None,
        )
        if self.root is None or sum(modes) != 1:
            raise ValueError("--root and exactly one of --action, --recover, --rollback")


_VALUED = frozenset({"--root", "--action", "--rollback", "--writable", "--read-only"})


def main(argv: list[str] | None = None, *, checkpoint: Checkpoint = _no_checkpoint) -> int:
    try:
        args = _Args(sys.argv[1:] if argv is None else argv)
    except ValueError as exc:
        print(f"python -m sandbox.runner: {exc}", file=sys.stderr)
        return 2
    # The daemon decides when to stop: an op in flight finishes (SIGKILL from the kernel when the
    # daemon dies is still honoured through PDEATHSIG, and recovery handles it).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    action = args.action
    if args.action_on_stdin:
        # Started ahead of its action (Engine._prestart): wait for the id; on end of file the
        # action never came, and nothing was touched.
        line = sys.stdin.readline().strip()
        if not line:
            return 0
        action = int(line)
    root = args.root
    assert root is not None  # _Args checked it
    journal_dir = RootLayout(root).journal_dir
    lock = lock_executor(journal_dir)
    journal = Journal(journal_dir / "journal.db")
    try:
        if args.recover:
            result = recover(root, journal, checkpoint)
        elif args.rollback is not None:
            result = finish_rollback(root, journal, args.rollback, checkpoint)
        else:
            zones = Zones.from_lists(args.writable, args.read_only)
            assert action is not None
            result = execute(root, journal, action, zones, checkpoint)
    except Exception as exc:
        if not isinstance(exc, AlmaError):
            traceback.print_exc()  # for the daemon's log; the person reads the sentence
        wire = {"ok": False, **as_alma_error(exc).to_wire(), "peak_rss_kb": peak_rss_kb()}
        print(json.dumps(wire), flush=True)
        return EXIT_HANDLED
    finally:
        journal.close()
        os.close(lock)
    result["peak_rss_kb"] = peak_rss_kb()
    print(json.dumps(result), flush=True)
    return 0


def peak_rss_kb() -> int | None:
    """This process's peak resident memory (VmHWM; the daemon logs it with each action): the
    parent cannot read it afterwards, since a child's ru_maxrss counts what it had before exec."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


if __name__ == "__main__":
    # A short-lived process whose big structures (the plan, the intents) hold no cycles: the
    # cyclic collector only re-scanned them again and again. Refcounting frees them as usual.
    gc.disable()
    sys.exit(main())
