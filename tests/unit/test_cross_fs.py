"""A move between two filesystems (the disk and a tmpfs mounted in the zone), killed between copy
and source removal: after recovery exactly one verified copy exists and no temp file is left."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from actions.ops import Identity, Move, Op, Trash
from actions.safefs import identity_of
from tests.support.crash_child import unknown_labels
from tests.support.trees import snapshot
from tests.unit.test_crash import child, engine, new_action, status, undo_action

pytestmark = pytest.mark.root


@pytest.fixture
def two_fs_root(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "ALMA"
    for d in ("system", "logs", "user/shm", ".alma/journal", ".alma/trash"):
        (root / d).mkdir(parents=True)
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(root / "user" / "shm")],
        capture_output=True,
        text=True,
        check=False,
    )
    if mount.returncode != 0:
        pytest.skip(f"mounting a tmpfs needs root here: {mount.stderr.strip()}")
    try:
        assert os.stat(root / "user").st_dev != os.stat(root / "user" / "shm").st_dev
        yield root
    finally:
        subprocess.run(["umount", "-l", str(root / "user" / "shm")], check=False)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _copies(root: Path, digest: str) -> list[Path]:
    return [p for p in (root / "user").rglob("*") if p.is_file() and _digest(p) == digest]


def _temps(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if ".alma-tmp-" in p.name]


def _plan(root: Path) -> list[Op]:
    big, tmp = root / "user" / "big.bin", root / "user" / "shm" / "old.tmp"
    return [
        Move("user/big.bin", "user/shm/big.bin", identity_of(big.lstat())),
        Trash("user/shm/old.tmp", identity_of(tmp.lstat())),  # tmpfs -> the trash on disk
    ]


def _setup_files(root: Path) -> tuple[str, dict[str, str]]:
    (root / "user" / "big.bin").write_bytes(os.urandom(3 << 20))
    (root / "user" / "shm" / "old.tmp").write_bytes(b"scratch")
    return _digest(root / "user" / "big.bin"), snapshot(root)


@pytest.mark.parametrize(
    "kill_at",
    [
        "op0",
        "op0:copy",
        "op0:copied",
        "op0:published",
        "op1",
        "op1:copy",
        "op1:copied",
        "op1:published",
        "flushed",
    ],
)
def test_cross_fs_move_killed_between_copy_and_source_removal(
    two_fs_root: Path, kill_at: str
) -> None:
    root = two_fs_root
    digest, before = _setup_files(root)
    action = new_action(root, _plan(root))
    died = child(root, action, kill_at, "execute")
    assert died.returncode == -9, died.stdout + died.stderr
    rec = child(root, 0, -1, "recover")
    assert rec.returncode == 0, rec.stderr
    assert status(root, action) == "rolled_back"
    copies = _copies(root, digest)
    assert copies == [root / "user" / "big.bin"], copies  # exactly one, at its place
    assert _temps(root) == []
    assert not [p for p in (root / ".alma" / "trash").rglob("*") if p.is_file()]
    assert snapshot(root) == before


def test_cross_fs_move_done_then_undone(two_fs_root: Path) -> None:
    root = two_fs_root
    digest, before = _setup_files(root)
    action = new_action(root, _plan(root))
    assert child(root, action, -1, "execute").returncode == 0
    assert status(root, action) == "done"
    assert _copies(root, digest) == [root / "user" / "shm" / "big.bin"]
    assert not (root / "user" / "shm" / "old.tmp").exists()
    assert _temps(root) == []
    eng = engine(root)
    try:
        eng.undo(action)
    finally:
        eng.journal.close()
    assert snapshot(root) == before
    assert _temps(root) == []


def _many_files(root: Path) -> dict[str, str]:
    """Five files whose moves cross the mount, both ways, and one trashed from the tmpfs."""
    for i in range(3):
        (root / "user" / f"disco_{i}_ñ.bin").write_bytes(os.urandom(4096 + i))
    (root / "user" / "shm" / "memoria.bin").write_bytes(os.urandom(5000))
    (root / "user" / "shm" / "viejo.tmp").write_bytes(b"scratch \xc3\xb1")
    return snapshot(root)


def _many_plan(root: Path) -> list[Op]:
    """The plan over _many_files as they are now (each round's undo leaves new identities)."""

    def ident(rel: str) -> Identity:
        return identity_of((root / rel).lstat())

    plan: list[Op] = [
        Move(f"user/disco_{i}_ñ.bin", f"user/shm/disco_{i}_ñ.bin", ident(f"user/disco_{i}_ñ.bin"))
        for i in range(3)
    ]
    plan.append(Move("user/shm/memoria.bin", "user/memoria.bin", ident("user/shm/memoria.bin")))
    plan.append(Trash("user/shm/viejo.tmp", ident("user/shm/viejo.tmp")))
    return plan


@pytest.mark.slow
@pytest.mark.timeout(1800)  # some 80 short processes: a loaded machine only waits longer
def test_cross_fs_undo_killed_anywhere_can_be_undone_afterwards(two_fs_root: Path) -> None:
    """An undo across filesystems killed midway, then recovered, can be undone again (the
    rollback copies a file back: a new inode, which the journal follows). Kill the undo at every
    checkpoint (and recovery too, at random): afterwards undo works, the tree is the original."""
    root = two_fs_root
    before = _many_files(root)
    labels: list[str] = []
    rng = random.Random(8)
    kills = 0
    k = 0
    while True:
        action = new_action(root, _many_plan(root))
        assert child(root, action, -1, "execute").returncode == 0
        assert status(root, action) == "done"
        undo = undo_action(root, action)
        run = child(root, undo, k, "execute")
        if run.returncode == 0:  # past the last checkpoint: the undo finished
            labels = json.loads(run.stdout.splitlines()[-1])
            assert k >= len(labels)
            assert {"copy", "copied", "published"} <= {x.partition(":")[2] for x in labels}
            assert not unknown_labels(labels), "a new checkpoint: add it to crash_child.LABELS"
            assert status(root, undo) == "done" and status(root, action) == "undone"
            assert snapshot(root) == before
            break
        assert run.returncode == -9, run.stdout + run.stderr
        kills += 1
        if rng.random() < 0.4:  # recovery itself killed once, somewhere
            died = child(root, 0, rng.randint(0, 12), "recover")
            assert died.returncode in (0, -9), died.stderr
        rec = child(root, 0, -1, "recover")
        assert rec.returncode == 0, rec.stdout + rec.stderr
        if status(root, undo) == "done":
            assert status(root, action) == "undone"
        else:
            assert status(root, undo) == "rolled_back", (k, status(root, undo))
            eng = engine(root)
            try:
                eng.undo(action)  # the undo works afterwards
            finally:
                eng.journal.close()
        assert snapshot(root) == before, f"killed at checkpoint {k}"
        assert _temps(root) == [], f"killed at checkpoint {k}"
        k += 1
    assert kills >= 20, (kills, labels)
