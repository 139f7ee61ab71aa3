"""SIGKILL the real executor everywhere in a real 200-file organize; recovery must give back the
original tree byte for byte, with every file exactly once and nothing outside the zone touched.

The executor runs in a child process (tests/support/crash_child.py: the same code the confined
runner runs) that kills itself at its k-th checkpoint: every op boundary and every labelled point
inside an op. Random kills from outside, and kills during recovery itself, complete the set.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from actions.ops import Mkdir, Move, Op, plan_to_list
from actions.safefs import identity_of
from policies.config import Policy
from policies.layout import RootLayout
from sandbox.confine import choose
from sandbox.engine import Engine
from state.journal import Journal
from tests.support.crash_child import unknown_labels
from tests.support.trees import snapshot, total_bytes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]  # hundreds of processes each

REPO = Path(__file__).resolve().parents[2]
CHILD = REPO / "tests" / "support" / "crash_child.py"
TYPES = {"jpg": "images", "pdf": "documents", "mp3": "audio", "zip": "archives", "csv": "data"}
N_FILES = 200


def make_root(base: Path, n_files: int = N_FILES, seed: int = 7) -> tuple[Path, Path]:
    rng = random.Random(seed)
    root, outside = base / "ALMA", base / "outside"
    for d in ("system", "logs", "docs", "user/inbox", ".alma/journal", ".alma/trash"):
        (root / d).mkdir(parents=True, exist_ok=True)
    outside.mkdir()
    (root / "system" / "autonomy.conf").write_text('level = "suggest"\n')
    (outside / "keep.txt").write_text("not ALMA's")
    exts = list(TYPES)
    for i in range(n_files):
        ext = exts[i % len(exts)]
        data = rng.randbytes(rng.randint(0, 3000)) if i % 17 else b"same bytes"
        (root / "user" / "inbox" / f"archivo_{i:03d}_ñú.{ext}").write_bytes(data)
    return root, outside


def organize_plan(root: Path) -> list[Op]:
    inbox = root / "user" / "inbox"
    plan: list[Op] = [Mkdir(f"user/inbox/{folder}") for folder in sorted(set(TYPES.values()))]
    for path in sorted(inbox.iterdir()):
        if path.is_file():
            folder = TYPES[path.suffix[1:]]
            rel = f"user/inbox/{path.name}"
            plan.append(Move(rel, f"user/inbox/{folder}/{path.name}", identity_of(path.lstat())))
    return plan


def new_action(root: Path, plan: list[Op]) -> int:
    journal = Journal(root / ".alma" / "journal" / "journal.db")
    try:
        return journal.create_action(kind="organize", plan=[op.to_dict() for op in plan])
    finally:
        journal.close()


def undo_action(root: Path, target: int) -> int:
    """The undo of ``target`` journaled as Engine.undo journals it, not started."""
    eng = engine(root)
    try:
        row = eng.undo_target(target)
        return eng.journal.create_action(
            kind=str(row["kind"]), plan=plan_to_list(eng.undo_plan(target)), undoes=target
        )
    finally:
        eng.journal.close()


def child(
    root: Path, action: int, kill_at: int | str, mode: str, *, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHILD), str(root), str(action), str(kill_at), mode],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=_env(),
        check=False,
        timeout=timeout,
    )


def start_ready_child(root: Path, action: int) -> subprocess.Popen[str]:
    """An executor child that will not kill itself, once it has said it is ready."""
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), str(root), str(action), "-1", "execute"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=_env(),
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1")


def status(root: Path, action: int) -> str:
    journal = Journal(root / ".alma" / "journal" / "journal.db")
    try:
        return str(journal.action(action)["status"])
    finally:
        journal.close()


def engine(root: Path) -> Engine:
    layout = RootLayout(root)
    return Engine(layout, Journal(layout.journal_file), choose("auto"), lambda: Policy())


class Witness:
    """What must hold after every crash and recovery."""

    def __init__(self, root: Path, outside: Path) -> None:
        self.root, self.outside = root, outside
        self.tree = snapshot(root)
        self.outside_tree = snapshot(outside)
        self.contents = Counter(total_bytes(root / "user"))

    def check_restored(self, where: str) -> None:
        now = snapshot(self.root)
        assert now == self.tree, f"{where}: tree differs: {_diff(self.tree, now)}"
        assert snapshot(self.outside) == self.outside_tree, f"{where}: outside the root changed"
        # every file exactly once: the same multiset of contents, and nothing left in the trash
        assert Counter(total_bytes(self.root / "user")) == self.contents, where
        leftovers = [p for p in (self.root / ".alma" / "trash").rglob("*") if p.is_file()]
        assert not leftovers, f"{where}: left in the trash: {leftovers[:3]}"
        temps = [p for p in (self.root / "user").rglob(".alma-tmp-*")]
        assert not temps, f"{where}: temp files left: {temps}"


def _diff(a: dict[str, str], b: dict[str, str]) -> str:
    missing = sorted(set(a) - set(b))[:5]
    extra = sorted(set(b) - set(a))[:5]
    changed = sorted(k for k in set(a) & set(b) if a[k] != b[k])[:5]
    return f"missing={missing} extra={extra} changed={changed}"


def settle(root: Path, action: int, witness: Witness, where: str) -> None:
    """Recover as the daemon does at start; a done action is then undone; compare."""
    rec = child(root, 0, -1, "recover")
    assert rec.returncode == 0, f"{where}: recovery failed: {rec.stdout} {rec.stderr}"
    state = status(root, action)
    if state == "done":
        eng = engine(root)
        try:
            eng.undo(action)
        finally:
            eng.journal.close()
    else:
        assert state == "rolled_back", f"{where}: action ended {state}"
    witness.check_restored(where)


def test_kill_at_every_checkpoint_of_a_200_file_organize(tmp_path: Path) -> None:
    root, outside = make_root(tmp_path)
    witness = Witness(root, outside)
    # A full run on an identical tree enumerates the checkpoints.
    probe_root, _ = make_root(tmp_path / "probe")
    full = child(probe_root, new_action(probe_root, organize_plan(probe_root)), -1, "execute")
    assert full.returncode == 0, full.stdout + full.stderr
    labels: list[str] = json.loads(full.stdout.splitlines()[-1])
    assert sum(1 for label in labels if label.startswith("op")) == len(organize_plan(root))
    assert not unknown_labels(labels), "a new checkpoint: add it to crash_child.LABELS"
    assert len(labels) > N_FILES

    for k, label in enumerate(labels):
        action = new_action(root, organize_plan(root))
        run = child(root, action, k, "execute")
        assert run.returncode == -9, f"checkpoint {k} ({label}) did not die: {run.stdout}"
        settle(root, action, witness, f"killed at checkpoint {k} ({label})")


def test_kill_at_random_moments_from_outside(tmp_path: Path) -> None:
    root, outside = make_root(tmp_path)
    witness = Witness(root, outside)
    rng = random.Random(2026)
    # How long a full run takes after the child is ready, to spread the kills over it.
    durations = []
    for _ in range(2):
        action = new_action(root, organize_plan(root))
        proc = start_ready_child(root, action)
        assert proc.stdout is not None
        start = time.perf_counter()
        # The window is the action itself, up to its "finished" checkpoint: not the process's
        # exit, whose teardown would put many kills after the action is over.
        assert proc.stdout.readline().strip() == "finished"
        durations.append(time.perf_counter() - start)
        proc.wait(timeout=60)
        proc.stdout.close()
        settle(root, action, witness, "full run")
    span = min(durations) * 0.9  # the first run is slower (cold caches)
    outcomes: Counter[str] = Counter()
    for i in range(60):
        action = new_action(root, organize_plan(root))
        proc = start_ready_child(root, action)
        assert proc.stdout is not None
        time.sleep(rng.uniform(0, span))
        proc.kill()
        proc.wait(timeout=60)
        proc.stdout.close()
        outcomes[status(root, action)] += 1
        settle(root, action, witness, f"random kill {i}")
    # The kills must have landed mostly inside the action, not all before or after it.
    assert outcomes["running"] >= 30, outcomes


def test_recovery_killed_itself_is_safe_to_run_again(tmp_path: Path) -> None:
    root, outside = make_root(tmp_path, n_files=60)
    witness = Witness(root, outside)
    rng = random.Random(11)
    for i in range(20):
        action = new_action(root, organize_plan(root))
        kill_at = rng.randint(10, 66)
        assert child(root, action, kill_at, "execute").returncode == -9
        for _ in range(rng.randint(1, 3)):  # recovery dies, maybe several times
            died = child(root, 0, rng.randint(0, 40), "recover")
            assert died.returncode in (0, -9), died.stderr
        settle(root, action, witness, f"recovery killed, round {i}")
