"""SIGKILL one large action at 10 seeded random points across accept, recovery and undo:
nothing is lost, and the undo gives back the original tree exactly.

One organize-like plan (a mkdir per type folder, a move per file, and every 25th file to the
trash, as a duplicates plan does: resting on its content) over ``ALMA_CRASH_FILES`` files
(2,000 in the slow tier, so CI runs this very code; 100,000 for the record in
docs/benchmarks.md):

- 4 kills of the executor child while it accepts the plan, and 3 while it runs the plan's
  undo; 3 of the recoveries that follow are killed too. The kill points are drawn from every
  checkpoint label this scene passes (``schedule``: validation done, intents durable, before
  an op, a group commit of done marks, the action recorded done; recovery before an op, a
  batch of rolled-back marks, its trash folders cleaned), each family at least once. The
  executor is the confined runner's own code (tests/support/crash_child.py); the undo is
  journaled from Engine.undo_plan, as the daemon journals it.
- After every recovery the killed action is ``rolled_back`` (``done`` when it was killed after
  it finished: an accept is then undone, an undone plan accepted again) and the tree is
  checked by identity: every file at its place with its inode, size and mtime, nothing else
  in user/ or the trash.
- Between the phases the plan is accepted, and at the end undone, through the real Engine and
  its real confinement. Before that undo every file's bytes are checked where the journal says
  the file is; after it, every path and every byte of the original tree.

The seed is ``ALMA_CRASH_SEED`` (printed with the kill points: run with ``-s`` to see them and
each step's time). The run at 100,000 files: docs/benchmarks.md, "One action".
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import re
import stat
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

from actions.ops import Mkdir, Move, Op, Trash
from actions.safefs import identity_of
from policies.decide import RunContext
from policies.layout import RootLayout
from sandbox.confine import choose
from sandbox.engine import Engine
from sandbox.executor import BATCH_OPS
from sandbox.recovery import MARK_BATCH
from state.journal import TRANSFERS, Journal
from tests.support.engine import default_policy
from tests.support.trees import snapshot
from tests.unit.test_crash import TYPES, child, make_root, new_action, status, undo_action

N_FILES = int(os.environ.get("ALMA_CRASH_FILES", "2000"))
SEED = int(os.environ.get("ALMA_CRASH_SEED", "11"))
TRASH_EVERY = 25  # every 25th file goes to the trash instead of a type folder
STEP = 1800.0  # seconds one child run may take: 100,000 files on a loaded machine

pytestmark = [pytest.mark.slow, pytest.mark.timeout(4 * 3600)]

T = TypeVar("T")
#: An entry of the tree as compared: "dir", or a file's (inode, size, mtime_ns).
Entry = str | tuple[int, int, int]


@dataclass(frozen=True)
class Kill:
    phase: str  # "accept" or "undo": the action the executor child is running
    at: str  # the checkpoint at which it dies (crash_child's KILL_AT: LABEL or LABEL#N)
    recovery_at: str | None  # the recovery that follows dies there first (None: it is not killed)


#: The checkpoint labels (tests/support/crash_child.LABELS) this scene's runs pass, by family.
#: The scene is one disk of moves and trashes: the sub-steps of a move across filesystems and
#: of an edit never pass here; test_cross_fs.py and test_crash_edit.py kill at every one.
EXECUTOR_FAMILIES = ("validated", "intents", "op{i}", "flushed#j", "finished")
RECOVERY_FAMILIES = ("rollback{i}", "rollback:marked#j", "rollback:cleaned")


def schedule(rng: random.Random, n_ops: int) -> list[Kill]:
    """4 kills while accepting, 3 while undoing (the undo has as many ops: each op's inverse),
    and 3 of the 7 recoveries after them: 10. Every family of labels is drawn at least once
    (then the rest at random), each at a random op or a random pass of its label; a recovery
    is killed only after an executor kill that leaves something to recover."""
    families = list(EXECUTOR_FAMILIES) + [rng.choice(EXECUTOR_FAMILIES) for _ in range(2)]
    rng.shuffle(families)
    flushes = -(-n_ops // BATCH_OPS)  # at least: a group commit holds at most BATCH_OPS ops
    ats = [_label(family, rng, n_ops, flushes) for family in families]
    # Intents written and the action not finished: recovery walks every op of it.
    walkable = [i for i, at in enumerate(ats) if at not in ("validated", "finished")]
    killed = rng.sample(walkable, len(RECOVERY_FAMILIES))
    recoveries = dict(zip(killed, rng.sample(RECOVERY_FAMILIES, 3), strict=True))
    marks = -(-n_ops // MARK_BATCH)  # batches of rolled-back marks, the last one included
    return [
        Kill(
            "accept" if i < 4 else "undo",
            at,
            _label(recoveries[i], rng, n_ops, marks) if i in recoveries else None,
        )
        for i, at in enumerate(ats)
    ]


def _label(family: str, rng: random.Random, n_ops: int, passes: int) -> str:
    if "{i}" in family:
        return family.replace("{i}", str(rng.randrange(n_ops)))
    if "#j" in family:
        return family.replace("#j", f"#{rng.randrange(passes)}")
    return family


def in_threads(fn: Callable[[str], T], items: list[str]) -> list[T]:
    # File I/O releases the GIL: a few threads keep the disk and both cores busy.
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(fn, items, chunksize=256))


def sha256_of(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


@dataclass
class Scene:
    root: Path
    outside: Path
    names: list[str]  # user/inbox/NAME of every file, in creation order
    digests: dict[str, str]  # relpath at the start -> sha256
    original: dict[str, Entry]  # user/ and the trash's files at the start
    outside_tree: dict[str, str]

    @property
    def journal_db(self) -> Path:
        return RootLayout(self.root).journal_file


def make_scene(base: Path, n_files: int, rng: random.Random) -> Scene:
    root, outside = make_root(base, n_files=0)
    inbox = root / "user" / "inbox"
    exts = list(TYPES)
    names, digests = [], {}
    dir_fd = os.open(inbox, os.O_RDONLY | os.O_DIRECTORY)

    def write(item: tuple[str, bytes]) -> None:
        fd = os.open(item[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=dir_fd)
        try:
            os.write(fd, item[1])
        finally:
            os.close(fd)

    with ThreadPoolExecutor(max_workers=8) as pool:
        for start in range(0, n_files, 4096):
            batch = []
            for i in range(start, min(start + 4096, n_files)):
                name = f"archivo_{i:06d}_ñú.{exts[i % len(exts)]}"
                data = rng.randbytes(rng.randint(0, 2048)) if i % 17 else b"same bytes"
                names.append(name)
                digests[f"user/inbox/{name}"] = hashlib.sha256(data).hexdigest()
                batch.append((name, data))
            list(pool.map(write, batch, chunksize=64))
    os.close(dir_fd)
    return Scene(root, outside, names, digests, entries(root), snapshot(outside))


def entries(root: Path) -> dict[str, Entry]:
    """Every entry of user/ and every file of ALMA's trash (its folders come and go), by
    identity: a same-disk move keeps inode, size and mtime, so a file counted twice, lost, or
    swapped shows here without reading its bytes."""
    out: dict[str, Entry] = {}

    def walk(rel: str, files_only: bool) -> None:
        with os.scandir(root / rel) as it:
            for e in it:
                path = f"{rel}/{e.name}"
                st = e.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    if not files_only:
                        out[path] = "dir"
                    walk(path, files_only)
                elif e.name == "manifest.json" and rel.startswith(".alma/"):
                    out[path] = "manifest"  # ALMA's own record beside an action's trash
                else:
                    out[path] = (st.st_ino, st.st_size, st.st_mtime_ns)

    walk("user", files_only=False)
    walk(".alma/trash", files_only=True)
    return out


def plan_of(scene: Scene) -> list[Op]:
    """The plan, made from the tree as it is now (a rollback's renames give files a new ctime,
    so every attempt is planned afresh, as the daemon plans again after a failed action)."""
    plan: list[Op] = [Mkdir(f"user/inbox/{folder}") for folder in sorted(set(TYPES.values()))]
    inbox = scene.root / "user" / "inbox"
    for i, name in enumerate(scene.names):
        rel = f"user/inbox/{name}"
        st = os.lstat(inbox / name)
        if i % TRASH_EVERY == TRASH_EVERY - 1:
            plan.append(Trash(rel, identity_of(st, sha256=scene.digests[rel])))
        else:
            folder = TYPES[name.rpartition(".")[2]]
            plan.append(Move(rel, f"user/inbox/{folder}/{name}", identity_of(st)))
    return plan


def done_places(scene: Scene, action: int) -> dict[str, str]:
    """Original relpath -> where the journal says action ``action`` put the file (every op of it
    must be done)."""
    journal = Journal(scene.journal_db)
    try:
        rows = journal.rows(action)
    finally:
        journal.close()
    places = {}
    for row in rows:
        assert row.state == "done", f"op {row.idx} of action {action} is {row.state}"
        if row.op["op"] in TRANSFERS:
            places[row.aux["src"]] = row.aux["dst"]
    return places


def after_action(
    scene: Scene, action: int, places: dict[str, str], plan: list[Op]
) -> dict[str, Entry]:
    expected = {places.get(rel, rel): entry for rel, entry in scene.original.items()}
    expected.update({op.path: "dir" for op in plan if isinstance(op, Mkdir)})
    if any(isinstance(op, Trash) for op in plan):
        expected[f".alma/trash/{action}/manifest.json"] = "manifest"
    return expected


def check(scene: Scene, expected: dict[str, Entry], where: str) -> None:
    now = entries(scene.root)
    if now != expected:
        missing = sorted(set(expected) - set(now))[:5]
        extra = sorted(set(now) - set(expected))[:5]
        changed = sorted(k for k in set(now) & set(expected) if now[k] != expected[k])[:5]
        pytest.fail(f"{where}: missing={missing} extra={extra} changed={changed}")


def check_bytes(scene: Scene, places: dict[str, str], where: str) -> None:
    """Every file's bytes, read where ``places`` says it is (its original place otherwise)."""
    originals = sorted(scene.digests)
    at = [str(scene.root / places.get(rel, rel)) for rel in originals]
    digests = in_threads(sha256_of, at)
    wrong = [rel for rel, d in zip(originals, digests, strict=True) if d != scene.digests[rel]]
    assert not wrong, f"{where}: {len(wrong)} files with other bytes, first {wrong[:3]}"


def real_engine(scene: Scene) -> Engine:
    layout = RootLayout(scene.root)
    policy = default_policy(max_files=2 * N_FILES + 10, approval_files=20)
    return Engine(layout, Journal(layout.journal_file), choose("auto"), lambda: policy)


class Log:
    def __init__(self) -> None:
        self.start = time.perf_counter()

    def __call__(self, what: str) -> None:
        print(f"[{time.perf_counter() - self.start:8.1f} s] {what}", flush=True)


def peak_rss_mb(runner_output: str) -> int:
    """The executor child's peak RSS, from the JSON line sandbox.runner ends with."""
    line = next(ln for ln in runner_output.splitlines() if ln.startswith("{"))
    return int(json.loads(line).get("peak_rss_kb") or 0) // 1024


def test_large_action_killed_at_ten_random_points_loses_nothing_and_undoes_exactly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="alma.engine")  # the confined child's peak RSS
    log = Log()
    rng = random.Random(SEED)
    scene = make_scene(tmp_path, N_FILES, rng)
    n_ops = len(plan_of(scene))
    kills = schedule(rng, n_ops)
    log(f"{N_FILES} files, {n_ops} ops, seed {SEED}; kills: {kills}")

    def killed_run(action: int, kill: Kill) -> str:
        """Kill the child running ``action`` at ``kill``, recover: the action's status."""
        where = f"seed {SEED}, {kill}"
        died = child(scene.root, action, kill.at, "execute", timeout=STEP)
        assert died.returncode == -9, f"{where}: did not die: {died.stdout[-500:]} {died.stderr}"
        log(f"{kill.phase} killed at {kill.at}")
        if kill.recovery_at is not None:
            rec = child(scene.root, 0, kill.recovery_at, "recover", timeout=STEP)
            assert rec.returncode == -9, f"{where}: recovery did not die: {rec.stderr}"
            log(f"recovery killed at {kill.recovery_at}")
        rec = child(scene.root, 0, -1, "recover", timeout=STEP)
        assert rec.returncode == 0, f"{where}: recovery failed: {rec.stdout} {rec.stderr}"
        # Killed once the action was recorded done, there is nothing to recover.
        expected = "done" if kill.at == "finished" else "rolled_back"
        assert status(scene.root, action) == expected, where
        log(f"recovered (peak RSS {peak_rss_mb(rec.stdout)} MB)")
        return expected

    def accept() -> tuple[int, dict[str, str], dict[str, Entry]]:
        """The plan accepted through the real engine: (action, places, the tree it leaves)."""
        plan = plan_of(scene)
        eng = real_engine(scene)
        try:
            accepted = eng.execute(plan, kind="organize", ctx=RunContext(approved_by_person=True))
        finally:
            eng.journal.close()
        assert accepted["status"] == "done", accepted
        action = int(accepted["id"])
        places = done_places(scene, action)
        assert len(places) == N_FILES
        done_tree = after_action(scene, action, places, plan)
        check(scene, done_tree, "accepted")
        log(f"accepted by the engine ({eng.confinement.backend}) as action {action}")
        return action, places, done_tree

    for kill in (k for k in kills if k.phase == "accept"):
        plan = plan_of(scene)
        action = new_action(scene.root, plan)
        if killed_run(action, kill) == "done":
            # The action happened whole: its places, then its undo (not killed) gives back the
            # original tree for the next kill.
            places = done_places(scene, action)
            check(scene, after_action(scene, action, places, plan), f"seed {SEED}, {kill}")
            undo = undo_action(scene.root, action)
            ran = child(scene.root, undo, -1, "execute", timeout=STEP)
            assert ran.returncode == 0, f"{kill}: undo failed: {ran.stdout[-500:]} {ran.stderr}"
            log("undone (not killed)")
        check(scene, scene.original, f"seed {SEED}, after {kill}")

    accepted, places, done_tree = accept()
    for kill in (k for k in kills if k.phase == "undo"):
        undo = undo_action(scene.root, accepted)
        if killed_run(undo, kill) == "done":
            # The undo happened whole: the original tree; the plan is accepted again.
            assert status(scene.root, accepted) == "undone"
            check(scene, scene.original, f"seed {SEED}, after {kill}")
            accepted, places, done_tree = accept()
            continue
        assert status(scene.root, accepted) == "done"
        check(scene, done_tree, f"seed {SEED}, after {kill}")

    check_bytes(scene, places, "before the undo")
    log("every file's bytes where the journal says it is")
    eng = real_engine(scene)
    try:
        undone = eng.undo(accepted)
    finally:
        eng.journal.close()
    assert undone["status"] == "done", undone
    check(scene, scene.original, "undone")
    check_bytes(scene, {}, "undone")
    assert snapshot(scene.outside) == scene.outside_tree
    said = (re.search(r"peak RSS (\d+) kB", r.getMessage()) for r in caplog.records)
    peaks = [int(m[1]) // 1024 for m in said if m]
    log(f"undone by the engine: the original tree exactly; the child's peak RSS {peaks} MB")
