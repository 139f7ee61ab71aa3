"""SIGKILL the real executor at every checkpoint of a plan with two ``edit`` ops (and a move
between them), and recovery itself at every checkpoint: afterwards each edited file is either
the old version or the new one, never neither, never a temp file left, and the trash holds only
what the outcome explains. An action that finished is then undone: byte for byte the original.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

from actions.ops import Edit, Identity, Move, Op
from actions.safefs import identity_of
from tests.support.crash_child import unknown_labels
from tests.support.trees import snapshot
from tests.unit.test_crash import child, engine, new_action, status

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

A, B = "user/scripts/backup.conf", "user/scripts/sub/otro.ini"
OLD_A = b"destino = /media/discoo\r\nmodo = r\xe1pido\r\n"
NEW_A = b"destino = /media/disco\r\nmodo = r\xe1pido\r\n"
OLD_B = b"ruta = /home/ana/Documentos\n"
NEW_B = "ruta = /home/ana/Docúmentos\n".encode()


def make_root(base: Path) -> Path:
    root = base / "ALMA"
    for d in ("system", "logs", "docs", "user/scripts/sub", ".alma/journal", ".alma/trash"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "system" / "autonomy.conf").write_text('level = "suggest"\n')
    (root / A).write_bytes(OLD_A)
    (root / A).chmod(0o640)
    (root / B).write_bytes(OLD_B)
    (root / "user/scripts/backup.sh").write_bytes(b"#!/bin/sh\n")
    return root


def plan(root: Path) -> list[Op]:
    def ident(rel: str) -> Identity:
        digest = hashlib.sha256((root / rel).read_bytes()).hexdigest()
        return identity_of((root / rel).lstat(), sha256=digest)

    script = "user/scripts/backup.sh"
    return [
        Edit(A, ident(A), NEW_A),
        Move(script, "user/scripts/sub/backup.sh", identity_of((root / script).lstat())),
        Edit(B, ident(B), NEW_B),
    ]


def user_files(root: Path) -> dict[str, str]:
    return snapshot(root / "user")


def trash_contents(root: Path) -> list[bytes]:
    return sorted(
        p.read_bytes()
        for p in (root / ".alma" / "trash").rglob("*")
        if p.is_file() and p.name != "manifest.json"
    )


def present(root: Path) -> list[Path]:
    return [root / rel for rel in (A, B) if (root / rel).exists()]


def check_consistent(root: Path, original: dict[str, str], where: str) -> None:
    """After recovery (and the undo of a done action): the original tree, no temp file, and
    the trash holds at most the new versions the undo put there."""
    now = user_files(root)
    assert now == original, f"{where}: user/ differs from the original"
    assert (root / A).stat().st_mode & 0o777 == 0o640, where
    assert not list((root / "user").rglob(".alma-tmp-*")), f"{where}: temp files left"
    leftovers = trash_contents(root)
    assert set(leftovers) <= {NEW_A, NEW_B}, f"{where}: unexpected trash {leftovers}"


def settle(root: Path, action: int, original: dict[str, str], where: str) -> str:
    rec = child(root, 0, -1, "recover")
    assert rec.returncode == 0, f"{where}: recovery failed: {rec.stdout} {rec.stderr}"
    state = status(root, action)
    files = {rel: (root / rel).read_bytes() for rel in (A, B)}
    assert files[A] in (OLD_A, NEW_A) and files[B] in (OLD_B, NEW_B), where
    if state == "done":
        assert files == {A: NEW_A, B: NEW_B}, where
        assert trash_contents(root) == sorted([OLD_A, OLD_B]), where
        eng = engine(root)
        try:
            eng.undo(action)
        finally:
            eng.journal.close()
    else:
        assert state == "rolled_back", f"{where}: action ended {state}"
    check_consistent(root, original, where)
    return state


def test_kill_at_every_checkpoint_of_an_edit_plan(tmp_path: Path) -> None:
    root = make_root(tmp_path / "a")
    original = user_files(root)
    probe_root = make_root(tmp_path / "probe")
    full = child(probe_root, new_action(probe_root, plan(probe_root)), -1, "execute")
    assert full.returncode == 0, full.stdout + full.stderr
    labels: list[str] = json.loads(full.stdout.splitlines()[-1])
    assert {"op0:written", "op0:trashed", "op2:written", "op2:trashed"} <= set(labels)
    assert not unknown_labels(labels), "a new checkpoint: add it to crash_child.LABELS"

    outcomes = []
    for k, label in enumerate(labels):
        action = new_action(root, plan(root))
        run = child(root, action, k, "execute")
        assert run.returncode == -9, f"checkpoint {k} ({label}) did not die: {run.stdout}"
        outcomes.append(settle(root, action, original, f"killed at {k} ({label})"))
    assert "rolled_back" in outcomes


def test_recovery_of_an_edit_killed_itself_at_every_checkpoint_is_safe_to_run_again(
    tmp_path: Path,
) -> None:
    root = make_root(tmp_path / "b")
    original = user_files(root)
    rng = random.Random(5)
    probe_root = make_root(tmp_path / "probe")
    assert (
        child(probe_root, new_action(probe_root, plan(probe_root)), "flushed", "execute").returncode
        == -9
    )
    full = child(probe_root, 0, -1, "recover")
    labels: list[str] = json.loads(full.stdout.splitlines()[-1])
    assert labels.count("edit:aside") == 2 and labels.count("edit:restored") == 2, labels
    assert {"rollback:marked", "rollback:cleaned"} <= set(labels), labels
    assert not unknown_labels(labels), "a new checkpoint: add it to crash_child.LABELS"
    # Killed with both edits done and not yet marked: recovery has the most to take back.
    for kill_label in ("op2:trashed", "flushed", "op2"):
        action = new_action(root, plan(root))
        assert child(root, action, kill_label, "execute").returncode == -9
        # Enumerate recovery's own checkpoints on this state by killing at each in turn.
        for k in range(len(labels) + 1):
            died = child(root, 0, k, "recover")
            assert died.returncode in (0, -9), died.stderr
            # Midway through a rollback a path may be empty for a moment; the old version is
            # always reachable, in place or in the trash (the run that ends puts it back).
            reachable = {*trash_contents(root), *(p.read_bytes() for p in present(root))}
            assert {OLD_A, OLD_B} <= reachable, f"recovery killed at {k}"
            if died.returncode == 0:
                break
        for _ in range(rng.randint(0, 2)):
            assert child(root, 0, rng.randint(0, 6), "recover").returncode in (0, -9)
        settle(root, action, original, f"recovery killed after {kill_label}")
