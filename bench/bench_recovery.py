"""The recovery of one large action killed midway: its time and the recovery child's peak RSS.

    .venv/bin/python bench/bench_recovery.py                  # 100,000 files
    .venv/bin/python bench/bench_recovery.py --files 10000
    .venv/bin/python bench/bench_recovery.py --quick          # smoke: 2,000 files

One organize-like action (bench_engine.py's tree and plan, every 25th file to the trash instead)
is run by the executor child (``python -m sandbox.runner``, the confined child's own code) and
SIGKILLed once ``--kill-at`` of its ops are recorded done (0.6 by default). A first recovery is
SIGKILLed too, once it has marked half of those ops rolled back: the next one then walks an
action whose rows are partly rolled back, the case that peaks highest if recovery reads
every row at once. Then ``Engine.recover`` runs as the daemon runs it at start, confined,
and is timed; its child reports its own peak (VmHWM), as with every action. Afterwards every
file must be back in the inbox and nothing left in the type folders or the trash.

Side by side, the tight floor of the same work: a fresh identical tree, the same files moved
(not timed), then moved back with one ``os.rename`` each and the folders removed (timed).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_engine import EXTS, FOLDERS, ChildPeaks, cpu, make_tree, moves

if TYPE_CHECKING:
    from actions.ops import Op

TRASH_EVERY = 25
REPO = Path(__file__).resolve().parents[1]


def plan_of(inbox: str) -> list[Op]:
    from actions.ops import Mkdir, Move, Trash
    from actions.safefs import identity_of

    plan: list[Op] = [Mkdir(f"user/inbox/{f}") for f in FOLDERS]
    for i, (src, dst) in enumerate(moves(inbox)):
        st = os.lstat(f"{inbox}/{src}")
        if i % TRASH_EVERY == TRASH_EVERY - 1:
            plan.append(Trash(f"user/inbox/{src}", identity_of(st)))
        else:
            plan.append(Move(f"user/inbox/{src}", f"user/inbox/{dst}", identity_of(st)))
    return plan


def _count(db: Path, sql: str, action: int) -> int:
    """A count read from the journal beside the child writing it (WAL: readers never block)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        row = conn.execute(sql, (action,)).fetchone()
        return int(row[0] or 0)
    finally:
        conn.close()


DONE_SQL = "SELECT SUM(json_array_length(posts)) FROM journal_done WHERE action_id = ?"
ROLLED_SQL = "SELECT COUNT(*) FROM journal WHERE action_id = ? AND state = 'rolled_back'"


def run_and_kill(argv: list[str], db: Path, sql: str, action: int, at: int) -> float:
    """Run the runner child; SIGKILL it once ``sql`` counts ``at``. Seconds it ran."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    t = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandbox.runner", *argv],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        while proc.poll() is None:
            time.sleep(0.05)
            try:
                if _count(db, sql, action) >= at:
                    proc.send_signal(signal.SIGKILL)
                    break
            except sqlite3.Error:  # busy, or the child's first transaction not there yet
                continue
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode != -signal.SIGKILL:
        out, err = proc.communicate()
        raise SystemExit(
            f"the child was not killed midway (exit {proc.returncode}): {out!r} {err!r}"
        )
    return time.perf_counter() - t


def floor(base: Path, n: int, k: int) -> tuple[float, float]:
    """The same k files moved back by bare renames, and the folders removed: (wall, CPU)."""
    inbox = make_tree(base, n)
    pairs = moves(inbox)[:k]
    folders = [f"{inbox}/{f}" for f in FOLDERS]
    full = [(f"{inbox}/{src}", f"{inbox}/{dst}") for src, dst in pairs]
    for folder in folders:
        os.mkdir(folder)
    for src, dst in full:
        os.rename(src, dst)
    t, c = time.perf_counter(), cpu()
    for src, dst in reversed(full):
        os.rename(dst, src)
    for folder in folders:
        os.rmdir(folder)
    return time.perf_counter() - t, cpu() - c


def bench(n: int, kill_at: float, backend: str) -> int:
    from actions.ops import plan_to_list
    from policies.config import policy_from_dict
    from policies.layout import RootLayout
    from sandbox.confine import choose
    from sandbox.engine import Engine
    from state.journal import Journal

    peaks = ChildPeaks()
    engine_log = logging.getLogger("alma.engine")
    engine_log.addHandler(peaks)
    engine_log.setLevel(logging.INFO)
    print(f"{n} files, backend={choose(backend).backend}, load average {os.getloadavg()}")
    with tempfile.TemporaryDirectory(dir=os.environ.get("ALMA_BENCH_DIR")) as tmp:
        base = Path(tmp) / "engine"
        inbox = make_tree(base, n)
        layout = RootLayout(base)
        journal = Journal(layout.journal_file)
        try:
            plan = plan_of(inbox)
            action = journal.create_action(kind="organize", plan=plan_to_list(plan))
        finally:
            journal.close()
        n_ops = len(plan)
        del plan
        db = layout.journal_file
        root_args = ["--root", str(base), "--writable", "user"]
        done_at = int(n_ops * kill_at)
        ran = run_and_kill([*root_args, "--action", str(action)], db, DONE_SQL, action, done_at)
        done = _count(db, DONE_SQL, action)
        print(f"accept killed after {ran:.1f} s with {done} of {n_ops} ops recorded done")
        ran = run_and_kill([*root_args, "--recover"], db, ROLLED_SQL, action, n_ops - done // 2)
        rolled = _count(db, ROLLED_SQL, action)
        print(f"a first recovery killed after {ran:.1f} s with {rolled} ops marked rolled back")

        policy = policy_from_dict({"thresholds": {"approval_files": 20, "max_files": n + 100}})
        eng = Engine(layout, Journal(db), choose(backend), lambda: policy)
        t, c = time.perf_counter(), cpu()
        try:
            recovered = eng.recover()
        finally:
            eng.journal.close()
        wall, cpu_s = time.perf_counter() - t, cpu() - c
        assert recovered == [{"action": action, "status": "rolled_back"}], recovered
        left = [f for f in FOLDERS if Path(inbox, f).exists()]
        back = len(os.listdir(inbox))
        assert back == n and not left, f"{back} of {n} files back in the inbox, folders {left}"
        assert not os.listdir(base / ".alma" / "trash"), "something left in the trash"
        shutil.rmtree(base)
        floor_wall, floor_cpu = floor(Path(tmp) / "floor", n, done)
    peak_mb = max(peaks.peaks_kb, default=0) / 1024
    print(
        f"recovery (Engine.recover, confined): {wall:.2f} s, CPU {cpu_s:.2f} s; the tight floor "
        f"(the {done} files renamed back) {floor_wall:.2f} s, CPU {floor_cpu:.2f} s: "
        f"{wall / floor_wall:.1f}x wall, {cpu_s / floor_cpu:.1f}x CPU"
    )
    ok = peak_mb < 300
    print(
        f"recovery child peak RSS (VmHWM) {peak_mb:.0f} MB: target < 300 MB",
        "met" if ok else "NOT met",
    )
    print(f"load average at the end {os.getloadavg()}")
    return 0 if ok else 1


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--kill-at", type=float, default=0.6, help="share of ops done at the kill")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--quick", action="store_true", help="smoke run: 2,000 files")
    args = ap.parse_args()
    return bench(2000 if args.quick else args.files, args.kill_at, args.backend)


if __name__ == "__main__":
    assert set(EXTS)  # the tree and plan are bench_engine's
    sys.exit(main())
