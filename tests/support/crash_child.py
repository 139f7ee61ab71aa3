"""A child that runs the real executor (or recovery) and SIGKILLs itself at checkpoint N.

usage: crash_child.py ROOT ACTION_ID KILL_AT MODE
  KILL_AT  index of the checkpoint call at which to die (-1: never), a checkpoint label (its
           first time), or LABEL#N: the N-th time (from 0) that label passes
  MODE     execute | recover
Prints "ready" once imported (for kills from outside at random times), then, if it lives, the
JSON list of checkpoint labels it passed.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import sys
from collections import Counter
from pathlib import Path

from sandbox import executor, runner

# A run's checkpoints must not depend on the machine's speed: the tests list them on one run
# and kill at each index on the next ones, and a group commit by time (an op slower than
# BATCH_SECONDS on a loaded machine) added a "flushed" to one run and not to the others, so the
# last index was never reached. Group commits come from BATCH_OPS alone here; the code a commit
# by time runs is the same one, killed at "flushed#N" by test_crash_scale.
executor.BATCH_SECONDS = math.inf

#: Every checkpoint label the engine passes (the crash windows the kill tests draw from), with
#: where. {i} is an op's index; a label without one may pass many times (LABEL#N kills at the
#: N-th). The tests that run the engine whole check every label they saw is one of these
#: (unknown_labels), so a new checkpoint is added here, and to the draws of test_crash_scale.
LABELS = {
    "validated": "executor: the plan validated against the tree, nothing journaled",
    "intents": "executor: every op's intent durable, nothing applied",
    "op{i}": "executor: before op i is applied (ops before it applied, maybe not marked done)",
    "op{i}:copy": "transfer across filesystems: before the copy to its temp name",
    "op{i}:copied": "transfer across filesystems: the temp copy verified, not published",
    "op{i}:published": "transfer across filesystems: published, the source not yet retired",
    "op{i}:written": "edit or create: the new content in its temp file",
    "op{i}:trashed": "edit: the old version in the trash, the new one not published",
    "flushed": "executor: a group commit of done marks durable",
    "finished": "runner: the action (or undo) recorded done",
    "rollback{i}": "recovery: before op i is examined and taken back (newest first)",
    "edit:aside": "recovery of an edit: the new version renamed aside",
    "edit:restored": "recovery of an edit: the old version back in place",
    "create:trashed": "recovery of a create: the file it published taken to the trash",
    "rollback:marked": "recovery: a batch of rolled-back marks durable (and the last batch)",
    "rollback:cleaned": "recovery: the action's empty trash folders removed, not yet finished",
}
_KNOWN = re.compile("|".join(re.escape(k).replace(r"\{i\}", r"\d+") for k in LABELS))


def unknown_labels(labels: list[str]) -> list[str]:
    """The labels in ``labels`` that are not in :data:`LABELS`."""
    return [label for label in labels if not _KNOWN.fullmatch(label)]


def main() -> int:
    root, action, kill_at, mode = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    assert mode in ("execute", "recover")
    seen: list[str] = []
    times: Counter[str] = Counter()

    def checkpoint(label: str) -> None:
        if kill_at in (str(len(seen)), label, f"{label}#{times[label]}"):
            os.kill(os.getpid(), signal.SIGKILL)
        seen.append(label)
        times[label] += 1
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
