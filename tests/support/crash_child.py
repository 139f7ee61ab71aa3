"""A child that runs the real executor (or recovery) and SIGKILLs itself at checkpoint N.

usage: crash_child.py ROOT ACTION_ID KILL_AT MODE
  KILL_AT  index of the checkpoint call at which to die (-1: never), or a checkpoint label
  MODE     execute | recover
Prints "ready" once imported (for kills from outside at random times), then, if it lives, the
JSON list of checkpoint labels it passed.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

from sandbox import runner
from sandbox.executor import Zones
from state.journal import Journal


def main() -> int:
    root, action, kill_at, mode = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    seen: list[str] = []

    def checkpoint(label: str) -> None:
        if kill_at in (str(len(seen)), label):
            os.kill(os.getpid(), signal.SIGKILL)
        seen.append(label)
        if label == "finished":
            print("finished", flush=True)  # the action's end, for timing kills from outside

    print("ready", flush=True)
    journal_dir = root / ".alma" / "journal"
    lock = runner.lock_executor(journal_dir)
    journal = Journal(journal_dir / "journal.db")
    try:
        if mode == "recover":
            runner.recover(root, journal, checkpoint)
        else:
            zones = Zones.from_lists(["user"], ["system", "logs", "docs"])
            try:
                runner.execute(root, journal, action, zones, checkpoint)
            except Exception as exc:  # reported to the test, which fails on it
                print(json.dumps({"error": str(exc)}), flush=True)
                return 1
    finally:
        journal.close()
        os.close(lock)
    print(json.dumps(seen), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
