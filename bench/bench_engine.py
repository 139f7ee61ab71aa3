"""Organize N files in one action, then undo it, against the tight floor.

    .venv/bin/python bench/bench_engine.py                      # 10,000 and 100,000 files
    .venv/bin/python bench/bench_engine.py --files 10000 --rounds 7
    .venv/bin/python bench/bench_engine.py --quick              # smoke: 2,000 files, 1 round

The floor is TIGHT: a bare loop over ready-made strings, one ``os.mkdir``
per new folder, one ``os.rename`` per file (and back, then ``os.rmdir``), no pathlib, no
checks, no journal. Whatever the engine does beyond that is overhead it must justify.

Each size runs in a fresh worker process, so the peak RSS figures are that size's alone. Each
round builds two identical fresh trees and times the floor and the engine side by side; the
ratio reported is the median of the rounds' ratios (a slow spell of a shared machine inflates
one round, not one side of all of them).

The engine's side is what the daemon does when a person accepts a suggestion (agent.loop.lifecycle): the
plan stored as JSON is parsed into ops and ``Engine.execute`` runs it (policy gate, the action's
row, the confined child's start, validation by fd walks, the durable journal, the renames and
the directory fsyncs); undo is ``Engine.undo``. The bench drives ``Engine`` in this process the
way the daemon does, so "daemon RSS" is this process's peak (VmHWM, reset before each accept):
the engine's share; a running daemon adds its own imports and stores. "Child RSS" is the peak
of the confined child as it reports it (VmHWM of ``sandbox.runner``, logged by the engine with
each action: the parent's ru_maxrss of its children would count the daemon's own memory, which
a forked child has until it execs).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

EXTS = {"jpg": "images", "pdf": "documents", "mp3": "audio", "zip": "archives", "csv": "data"}
FOLDERS = sorted(set(EXTS.values()))


def make_tree(base: Path, n: int) -> str:
    inbox = base / "user" / "inbox"
    for d in ("system", "logs", ".alma/journal", ".alma/trash"):
        (base / d).mkdir(parents=True, exist_ok=True)
    inbox.mkdir(parents=True)
    exts = list(EXTS)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    for i in range(n):
        fd = os.open(f"{inbox}/f{i:06d}.{exts[i % len(exts)]}", flags, 0o644)
        os.write(fd, b"x" * (i % 100))
        os.close(fd)
    return str(inbox)


def moves(inbox: str) -> list[tuple[str, str]]:
    """(name, folder/name) of every file, sorted: the organize plan."""
    return [(name, f"{EXTS[name.rpartition('.')[2]]}/{name}") for name in sorted(os.listdir(inbox))]


def floor(inbox: str, pairs: list[tuple[str, str]]) -> dict[str, float]:
    """The tight floor: strings made before the clock starts, as the plan is for the engine."""
    folders = [f"{inbox}/{f}" for f in FOLDERS]
    full = [(f"{inbox}/{src}", f"{inbox}/{dst}") for src, dst in pairs]
    rename, mkdir, rmdir = os.rename, os.mkdir, os.rmdir
    t, c = time.perf_counter(), cpu()
    for folder in folders:
        mkdir(folder)
    for src, dst in full:
        rename(src, dst)
    do, do_cpu = time.perf_counter() - t, cpu() - c
    t, c = time.perf_counter(), cpu()
    for src, dst in reversed(full):
        rename(dst, src)
    for folder in folders:
        rmdir(folder)
    return {
        "floor_do": do,
        "floor_undo": time.perf_counter() - t,
        "floor_do_cpu": do_cpu,
        "floor_undo_cpu": cpu() - c,
    }


def cpu() -> float:
    """CPU seconds (user + system) of this process and of its children waited for: on a loaded
    machine the CPU a side spends says more than its wall time, which waits for a core."""
    me, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def _reset_peak() -> None:
    """Reset this process's VmHWM to its current RSS (Linux >= 4.0)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _journal_bytes(journal_dir: Path) -> int:
    return sum(p.stat().st_size for p in journal_dir.glob("journal.db*"))


def engine_round(base: Path, inbox: str, backend: str) -> dict[str, float]:
    from actions.ops import Mkdir, Move, Op, plan_from_list, plan_to_list
    from actions.safefs import identity_of
    from policies.config import policy_from_dict
    from policies.decide import RunContext
    from policies.layout import RootLayout
    from sandbox.confine import choose
    from sandbox.engine import Engine
    from state.journal import Journal

    layout = RootLayout(base)
    n = len(os.listdir(inbox))
    policy = policy_from_dict({"thresholds": {"approval_files": 20, "max_files": max(n, 100)}})
    eng = Engine(layout, Journal(layout.journal_file), choose(backend), lambda: policy)
    t = time.perf_counter()
    plan: list[Op] = [Mkdir(f"user/inbox/{f}") for f in FOLDERS]
    for src, dst in moves(inbox):
        st = os.lstat(f"{inbox}/{src}")
        plan.append(Move(f"user/inbox/{src}", f"user/inbox/{dst}", identity_of(st)))
    # What the suggestion store keeps (state.suggestions): the plan as one JSON text.
    stored = json.dumps(plan_to_list(plan), ensure_ascii=False)
    del plan
    planning = time.perf_counter() - t
    base_kb = _status_kb("VmRSS")
    _reset_peak()
    t, c = time.perf_counter(), cpu()
    # As agent.loop.lifecycle's accept: the stored plan parsed into ops, then executed.
    action = eng.execute(
        plan_from_list(json.loads(stored)), kind="organize", ctx=RunContext(approved_by_person=True)
    )
    do, do_cpu = time.perf_counter() - t, cpu() - c
    assert action["status"] == "done", action
    do_peak = _status_kb("VmHWM")
    journal_do = _journal_bytes(layout.journal_dir)
    del stored
    _reset_peak()
    t, c = time.perf_counter(), cpu()
    undo = eng.undo(action["id"])
    un, un_cpu = time.perf_counter() - t, cpu() - c
    assert undo["status"] == "done", undo
    un_peak = _status_kb("VmHWM")
    eng.journal.close()
    return {
        "planning": planning,
        "do": do,
        "undo": un,
        "do_cpu": do_cpu,
        "undo_cpu": un_cpu,
        "base_kb": base_kb,
        "do_peak_kb": do_peak,
        "undo_peak_kb": un_peak,
        "journal_do": journal_do,
        "journal_undo": _journal_bytes(layout.journal_dir),
    }


class ChildPeaks(logging.Handler):
    """The confined child's peak RSS, from the engine's log line after each child."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.peaks_kb: list[int] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg.startswith("executor child") and isinstance(record.args, tuple):
            kb = record.args[-1]
            if isinstance(kb, int):
                self.peaks_kb.append(kb)


def worker(n: int, rounds: int, backend: str) -> dict[str, Any]:
    peaks = ChildPeaks()
    engine_log = logging.getLogger("alma.engine")
    engine_log.addHandler(peaks)
    engine_log.setLevel(logging.INFO)
    rows = []
    with tempfile.TemporaryDirectory(dir=os.environ.get("ALMA_BENCH_DIR")) as tmp:
        for r in range(rounds):
            a, b = Path(tmp) / f"floor{r}", Path(tmp) / f"engine{r}"
            floor_inbox, eng_inbox = make_tree(a, n), make_tree(b, n)
            floor_row = floor(floor_inbox, moves(floor_inbox))
            row = engine_round(b, eng_inbox, backend)
            row.update(floor_row)
            rows.append(row)
            for tree in (a, b):  # now, not all at the end: 100,000 files a tree
                shutil.rmtree(tree)
    return {
        "files": n,
        "rows": rows,
        "child_peak_kb": max(peaks.peaks_kb, default=0),
    }


def _med(rows: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def report(result: dict[str, Any]) -> dict[str, float]:
    rows = result["rows"]
    do_ratio = statistics.median(r["do"] / r["floor_do"] for r in rows)
    un_ratio = statistics.median(r["undo"] / r["floor_undo"] for r in rows)
    peak_mb = max(max(r["do_peak_kb"], r["undo_peak_kb"]) for r in rows) / 1024
    child_mb = result["child_peak_kb"] / 1024
    journal_mb = max(r["journal_undo"] for r in rows) / 1e6
    print(f"\nfiles={result['files']} rounds={len(rows)}")
    print(f"{'':34}{'median s':>10}{'ratio':>8}")
    print(f"{'floor organize (os.rename)':34}{_med(rows, 'floor_do'):10.3f}{1:8.1f}")
    print(f"{'engine organize (1 action)':34}{_med(rows, 'do'):10.3f}{do_ratio:8.1f}")
    print(f"{'floor undo':34}{_med(rows, 'floor_undo'):10.3f}{1:8.1f}")
    print(f"{'engine undo (1 action)':34}{_med(rows, 'undo'):10.3f}{un_ratio:8.1f}")
    print(f"{'planning (identities, not timed)':34}{_med(rows, 'planning'):10.3f}")
    do_cpu = statistics.median(r["do_cpu"] / r["floor_do_cpu"] for r in rows)
    un_cpu = statistics.median(r["undo_cpu"] / r["floor_undo_cpu"] for r in rows)
    print(
        f"CPU seconds (user+sys, child included), median ratio: organize "
        f"{_med(rows, 'do_cpu'):.3f} vs {_med(rows, 'floor_do_cpu'):.3f} = {do_cpu:.1f}x, undo "
        f"{_med(rows, 'undo_cpu'):.3f} vs {_med(rows, 'floor_undo_cpu'):.3f} = {un_cpu:.1f}x"
    )
    print("ratio per round, organize:", " ".join(f"{r['do'] / r['floor_do']:.1f}" for r in rows))
    print(
        "ratio per round, undo:    ", " ".join(f"{r['undo'] / r['floor_undo']:.1f}" for r in rows)
    )
    print(
        f"daemon side peak RSS {peak_mb:.0f} MB (before the accept "
        f"{_med(rows, 'base_kb') / 1024:.0f} MB); child peak RSS {child_mb:.0f} MB; "
        f"journal on disk {journal_mb:.1f} MB after accept+undo"
    )
    ok = do_ratio <= 5 and un_ratio <= 5
    print("target 5x or better (median of the rounds' ratios):", "met" if ok else "NOT met")
    return {
        "organize s": _med(rows, "do"),
        "undo s": _med(rows, "undo"),
        "floor organize s": _med(rows, "floor_do"),
        "organize CPU s": _med(rows, "do_cpu"),
        "undo CPU s": _med(rows, "undo_cpu"),
        "floor organize CPU s": _med(rows, "floor_do_cpu"),
        "daemon peak MB": peak_mb,
        "daemon growth MB": peak_mb - _med(rows, "base_kb") / 1024,
        "child peak MB": child_mb,
        "journal MB": journal_mb,
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", default="10000,100000", help="comma-separated sizes")
    ap.add_argument("--rounds", type=int, default=0, help="default: 5 below 50,000 files, else 3")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--quick", action="store_true", help="smoke run: 2,000 files, 1 round")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    sizes = [2000] if args.quick else [int(s) for s in args.files.split(",")]
    if args.worker:
        print(json.dumps(worker(sizes[0], args.rounds, args.backend)), flush=True)
        return 0
    from sandbox.confine import choose

    print(f"backend={choose(args.backend).backend} load average {os.getloadavg()[0]:.1f}")
    summary = []
    for n in sizes:
        rounds = args.rounds or (1 if args.quick else 5 if n < 50_000 else 3)
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--worker",
                "--files",
                str(n),
                "--rounds",
                str(rounds),
                "--backend",
                args.backend,
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        summary.append((n, report(json.loads(out.splitlines()[-1]))))
    if len(summary) > 1:
        (n0, first), (n1, last) = summary[0], summary[-1]
        print(f"\ngrowth {n0} -> {n1} files (x{n1 / n0:g} files):")
        for key, value in last.items():
            print(f"  {key:22}{value / first[key] if first[key] else float('nan'):6.1f}x")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
