"""The confined child: ``python -m sandbox.runner`` executes one action, or recovers.

It is started by :class:`sandbox.engine.Engine` inside the sandbox (it can write only the
writable zones and ``.alma/journal`` + ``.alma/trash``). It holds the executor lock while it
works, so a recovery never runs beside an executor, even an orphaned one. It prints one JSON
line: ``{"ok": true, ...}`` or ``{"ok": false, "code": N, "message": "..."}``.
"""

from __future__ import annotations

import argparse
import fcntl
import gc
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from actions.tree import Tree
from policies.errors import AlmaError, ConflictError, ErrorCode
from sandbox import recovery
from sandbox.executor import Executor, Zones
from state.journal import Journal

Checkpoint = Callable[[str], None]
EXIT_HANDLED = 10  # the JSON line on stdout says what went wrong


def _no_checkpoint(label: str) -> None:
    return None


def lock_executor(journal_dir: Path) -> int:
    fd = os.open(journal_dir / "executor.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def execute(
    root: Path, journal: Journal, action_id: int, zones: Zones, checkpoint: Checkpoint
) -> dict[str, Any]:
    row = journal.action_row(action_id)
    if row["status"] != "running" or journal.rows(action_id):
        raise ConflictError(f"action {action_id} was already started; it is not run twice.")
    with Tree(root) as tree:
        executor = Executor(tree, journal, action_id, zones, checkpoint=checkpoint)
        try:
            executor.run()
        except AlmaError as exc:
            try:
                recovery.rollback(
                    tree, journal, action_id, checkpoint, stopped_at=executor.attempted
                )
            except ConflictError as conflict:
                journal.finish(action_id, "failed", error=str(conflict), code=conflict.code)
                raise
            journal.finish(action_id, "rolled_back", error=str(exc), code=exc.code)
            raise
        _finish_done(journal, action_id, row["undoes"])
        checkpoint("finished")
    return {"ok": True, "action": action_id}


def _finish_done(journal: Journal, action_id: int, undoes: int | None) -> None:
    with journal.transaction():
        journal.finish(action_id, "done")
        if undoes is not None:
            journal.mark_undone(int(undoes), action_id)


def recover(root: Path, journal: Journal, checkpoint: Checkpoint) -> dict[str, Any]:
    """Roll back every action left running (its approval may be stale), newest first."""
    report: list[dict[str, Any]] = []
    with Tree(root) as tree:
        for action_id in journal.running():
            try:
                recovery.rollback(tree, journal, action_id, checkpoint)
            except ConflictError as exc:
                journal.finish(action_id, "failed", error=f"recovery stopped: {exc}", code=exc.code)
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


def main(argv: list[str] | None = None, *, checkpoint: Checkpoint = _no_checkpoint) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox.runner")
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--action", type=int)
    parser.add_argument("--recover", action="store_true")
    parser.add_argument("--writable", action="append", default=[])
    parser.add_argument("--read-only", action="append", default=[])
    args = parser.parse_args(argv)
    # The daemon decides when to stop: an op in flight finishes (SIGKILL from the kernel when the
    # daemon dies is still honoured through PDEATHSIG, and recovery handles it).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    root: Path = args.root
    journal_dir = root / ".alma" / "journal"
    lock = lock_executor(journal_dir)
    journal = Journal(journal_dir / "journal.db")
    try:
        if args.recover:
            result = recover(root, journal, checkpoint)
        else:
            zones = Zones.from_lists(args.writable, args.read_only)
            result = execute(root, journal, args.action, zones, checkpoint)
    except AlmaError as exc:
        print(json.dumps({"ok": False, "code": int(exc.code), "message": str(exc)}), flush=True)
        return EXIT_HANDLED
    finally:
        journal.close()
        os.close(lock)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    # A short-lived process whose big structures (the plan, the intents) hold no cycles: the
    # cyclic collector only re-scanned them again and again. Refcounting frees them as usual.
    gc.disable()
    sys.exit(main())
