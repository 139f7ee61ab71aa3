"""SIGKILL the real executor at every checkpoint of a plan with two ``create`` ops (one in a
folder the plan makes, one in a folder that exists, a move between them), and recovery itself
at every checkpoint: afterwards each created file is either there with its bytes (the action
done) or in the trash, never a temp file left, never a file of the person's touched. An
action that finished is then undone: the original tree.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from actions.ops import Create, Mkdir, Move, Op
from actions.safefs import identity_of
from tests.support.crash_child import unknown_labels
from tests.support.trees import snapshot
from tests.unit.test_crash import child, engine, new_action, status
from tests.unit.test_crash_edit import trash_contents

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

A, B = "user/scripts/copiar-entregas.sh", "user/entregas/LEEME.txt"
BODY_A = b'#!/bin/sh\nset -eu\ncp -n "user/entregas/ventas.csv" "$hoy/"\n'
BODY_B = "Cópialo con el script de user/scripts; ñ\n".encode()
CSV = "user/entregas/ventas.csv"


def make_root(base: Path) -> Path:
    root = base / "ALMA"
    for d in ("system", "logs", "docs", "user/entregas", ".alma/journal", ".alma/trash"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "system" / "autonomy.conf").write_text('level = "suggest"\n')
    (root / CSV).write_bytes(b"fecha;importe\n2026-11-23;10\n")
    return root


def plan(root: Path) -> list[Op]:
    return [
        Mkdir("user/scripts"),
        Create(A, BODY_A),
        Move(CSV, "user/scripts/ventas.csv", identity_of((root / CSV).lstat())),
        Create(B, BODY_B),
    ]


def check_consistent(root: Path, original: dict[str, str], where: str) -> None:
    assert snapshot(root / "user") == original, f"{where}: user/ differs from the original"
    assert not list((root / "user").rglob(".alma-tmp-*")), f"{where}: temp files left"
    leftovers = trash_contents(root)
    assert set(leftovers) <= {BODY_A, BODY_B}, f"{where}: unexpected trash {leftovers}"


def settle(root: Path, action: int, original: dict[str, str], where: str) -> str:
    rec = child(root, 0, -1, "recover")
    assert rec.returncode == 0, f"{where}: recovery failed: {rec.stdout} {rec.stderr}"
    state = status(root, action)
    if state == "done":
        assert (root / A).read_bytes() == BODY_A and (root / B).read_bytes() == BODY_B, where
        eng = engine(root)
        try:
            eng.undo(action)
        finally:
            eng.journal.close()
    else:
        assert state == "rolled_back", f"{where}: action ended {state}"
    check_consistent(root, original, where)
    return state


def test_kill_at_every_checkpoint_of_a_create_plan(tmp_path: Path) -> None:
    root = make_root(tmp_path / "a")
    original = snapshot(root / "user")
    probe_root = make_root(tmp_path / "probe")
    full = child(probe_root, new_action(probe_root, plan(probe_root)), -1, "execute")
    assert full.returncode == 0, full.stdout + full.stderr
    labels: list[str] = json.loads(full.stdout.splitlines()[-1])
    assert {"op1:written", "op3:written"} <= set(labels)
    assert not unknown_labels(labels), "a new checkpoint: add it to crash_child.LABELS"

    outcomes = []
    for k, label in enumerate(labels):
        action = new_action(root, plan(root))
        run = child(root, action, k, "execute")
        assert run.returncode == -9, f"checkpoint {k} ({label}) did not die: {run.stdout}"
        outcomes.append(settle(root, action, original, f"killed at {k} ({label})"))
    assert "rolled_back" in outcomes and "done" in outcomes


def test_recovery_of_a_create_killed_itself_at_every_checkpoint_is_safe_to_run_again(
    tmp_path: Path,
) -> None:
    root = make_root(tmp_path / "b")
    original = snapshot(root / "user")
    rng = random.Random(7)
    probe_root = make_root(tmp_path / "probe")
    assert (
        child(probe_root, new_action(probe_root, plan(probe_root)), "flushed", "execute").returncode
        == -9
    )
    full = child(probe_root, 0, -1, "recover")
    labels: list[str] = json.loads(full.stdout.splitlines()[-1])
    assert labels.count("create:trashed") == 2, labels
    assert not unknown_labels(labels), "a new checkpoint: add it to crash_child.LABELS"
    # Killed with both creates published: recovery has the most to take back.
    for kill_label in ("op3:written", "flushed", "op3"):
        action = new_action(root, plan(root))
        assert child(root, action, kill_label, "execute").returncode == -9
        for k in range(len(labels) + 1):
            died = child(root, 0, k, "recover")
            assert died.returncode in (0, -9), died.stderr
            if died.returncode == 0:
                break
        for _ in range(rng.randint(0, 2)):
            assert child(root, 0, rng.randint(0, 6), "recover").returncode in (0, -9)
        settle(root, action, original, f"recovery killed after {kill_label}")
