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


def main() -> int:
    root, action, kill_at, mode = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    assert mode in ("execute", "recover")
    seen: list[str] = []

    def checkpoint(label: str) -> None:
        if kill_at in (str(len(seen)), label):
            os.kill(os.getpid(), signal.SIGKILL)
        seen.append(label)
        if label == "finished":
            print("finished", flush=True)  # the action's end, for timing kills from outside

    print("ready", flush=True)
    # The runner's own entry point, the code the confined child runs, with the kill hook.
    argv = ["--root", str(root), "--writable", "user"]
    argv += [arg for zone in ("system", "logs", "docs") for arg in ("--read-only", zone)]
    argv += ["--recover"] if mode == "recover" else ["--action", str(action)]
    status = runner.main(argv, checkpoint=checkpoint)
    if status != 0:
        return status  # the runner's JSON line says what went wrong; the test fails on it
    print(json.dumps(seen), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
