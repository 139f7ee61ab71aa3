"""One action of N files the way a person takes it: a real alma-agentd, driven by alma-ctl.

    .venv/bin/python bench/bench_daemon_action.py --files 100000
    .venv/bin/python bench/bench_daemon_action.py --files 10000

bench_engine.py times the engine as the daemon drives it, inside its own process. This is the
whole path: a real daemon (memory store disabled, as bench_watch; no model) on a root whose
``user/inbox`` holds N loose files of 5 extensions, its policy at level ``manual`` (nothing is
proposed until asked) with ``max_files`` raised to N, which is how a person lets ALMA take an
action that large (docs/policy.md). Then, each timed from outside as a person would wait for
it, with the daemon's CPU (its executor child included) and its peak RSS (VmHWM, reset through
``/proc/PID/clear_refs`` before each command):

1. ``alma-ctl analyze --wait``: the scan, the organize plan of N moves, the gate, the store;
2. ``alma-ctl suggestions show ID``: the plan summarized (never N lines);
3. ``alma-ctl suggestions accept ID``: the action, confined and journaled;
4. ``alma-ctl undo``: everything back.

Beside them, in this process, bench_engine's tight floor on an identical tree (one ``mkdir`` a
folder, one ``os.rename`` a file and back); the ratio is each command's wall time against the
floor's. The executor child's peak is the one the daemon logs with each action. After the undo
the inbox must hold exactly the names it held before.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_daemon import cpu_seconds, rss_mb
from bench.bench_engine import floor, make_tree, moves
from policies.layout import RootLayout
from tests.support.daemon import CtlResult, DaemonRoot

_CHILD_PEAK = re.compile(r"executor child .*peak RSS (\d+) kB")


def reset_peak(pid: int) -> None:
    """VmHWM of ``pid`` back to its current RSS (Linux >= 4.0; our own child, same user)."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def child_peaks_kb(log: Path) -> list[int]:
    return [int(m[1]) for m in _CHILD_PEAK.finditer(log.read_text(errors="replace"))]


@dataclass
class Timed:
    """One alma-ctl command: its wall time, the daemon's CPU and peak RSS meanwhile."""

    wall: float
    cpu: float
    before_mb: float
    peak_mb: float
    out: CtlResult

    def line(self, floor_s: float | None = None) -> str:
        ratio = f", {self.wall / floor_s:.1f}x the floor ({floor_s:.2f} s)" if floor_s else ""
        return (
            f"{self.wall:.2f} s wall{ratio}; daemon CPU {self.cpu:.2f} s; "
            f"daemon RSS {self.before_mb:.0f} MB before, peak {self.peak_mb:.0f} MB"
        )


def timed_ctl(d: DaemonRoot, *args: str, json_out: bool = True) -> Timed:
    pid = d.pid
    reset_peak(pid)
    before = rss_mb(pid)[0]
    c0, t0 = cpu_seconds(pid, children=True), time.perf_counter()
    done = d.ctl(*args, json_out=json_out, timeout=3600.0)
    wall = time.perf_counter() - t0
    cpu = cpu_seconds(pid, children=True) - c0
    if done.rc != 0:
        raise SystemExit(f"alma-ctl {' '.join(args)} exited {done.rc}: {done.stderr}\n{d.log()}")
    return Timed(wall, cpu, before, rss_mb(pid)[1], done)


def db_mb(*databases: Path) -> float:
    """SQLite databases on disk, with their WAL files."""
    files = [Path(f"{db}{tail}") for db in databases for tail in ("", "-wal")]
    return sum(f.stat().st_size for f in files if f.exists()) / 1e6


@dataclass
class Round:
    analyzed: Timed
    shown: Timed
    accepted: Timed
    undone: Timed
    floor: dict[str, float]
    child_kb: tuple[int, int]  # the executor child's peak at the accept, at the undo
    ready_mb: float
    sizes: str


def one_round(n: int) -> Round:
    """A fresh daemon on a fresh tree of ``n`` files, and the floor on an identical one."""
    top = Path(tempfile.mkdtemp(prefix="almad-", dir=os.environ.get("ALMA_BENCH_DIR")))
    (top / "d").mkdir()
    d = DaemonRoot(top / "d").init()
    try:
        # level manual: nothing is proposed while the tree is made or the daemon starts.
        d.policy(level="manual", thresholds__max_files=max(n, 20), monitor__settle_seconds=0)
        # bench_engine's tree, made beside the root (it makes an engine's folders too) and
        # renamed in; the floor's is identical.
        inbox = d.root / "user" / "inbox"
        os.rename(make_tree(top / "made", n), inbox)
        floor_inbox = make_tree(top / "floor", n)
        before = sorted(os.listdir(inbox))
        os.sync()
        d.start(timeout=300.0)
        d.wait_for(lambda: d.ok("status").get("ready") or None, timeout=300, what="ready")
        ready_mb = rss_mb(d.pid)[0]
        log = d.base / f"agentd.{d.starts}.log"

        analyzed = timed_ctl(d, "analyze", "--wait")
        (s,) = [x for x in d.suggestions() if x["kind"] == "organize"]
        assert s["files"] == n, f"the organize suggestion moves {s['files']} files, not {n}"
        shown = timed_ctl(d, "suggestions", "show", str(s["id"]), json_out=False)
        accepted = timed_ctl(d, "suggestions", "accept", str(s["id"]))
        accept_child = max(child_peaks_kb(log), default=0)
        action = accepted.out.data
        assert action["status"] == "done" and action["ops"] == n + 5, action
        fl = floor(floor_inbox, moves(floor_inbox))
        undone = timed_ctl(d, "undo")
        undo_child = max(child_peaks_kb(log), default=0)
        assert sorted(os.listdir(inbox)) == before, "the undo did not give the inbox back"
        layout = RootLayout(d.root)
        sizes = (
            f"journal {db_mb(layout.journal_file):.1f} MB; suggestions "
            f"{db_mb(layout.db_file):.1f} MB"
        )
        d.stop()
    finally:
        d.close()
        shutil.rmtree(top, ignore_errors=True)
    return Round(analyzed, shown, accepted, undone, fl, (accept_child, undo_child), ready_mb, sizes)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=0, help="default: 5 below 50,000 files, else 1")
    args = ap.parse_args()
    n = args.files
    rounds = [one_round(n) for _ in range(args.rounds or (5 if n < 50_000 else 1))]

    def median(f: Callable[[Round], float]) -> float:
        return statistics.median(f(r) for r in rounds)

    def timed(name: str, pick: Callable[[Round], Timed], floor_key: str | None) -> tuple[str, str]:
        wall = median(lambda r: pick(r).wall)
        cpu = median(lambda r: pick(r).cpu)
        before = max(pick(r).before_mb for r in rounds)
        peak = max(pick(r).peak_mb for r in rounds)
        text = f"{wall:.2f} s wall"
        if floor_key is not None:
            key = floor_key
            ratios = [pick(r).wall / r.floor[key] for r in rounds]
            text += (
                f", {statistics.median(ratios):.1f}x the floor ({median(lambda r: r.floor[key]):.2f} s;"
                f" rounds {' '.join(f'{x:.1f}' for x in ratios)})"
            )
        return (
            name,
            f"{text}; daemon CPU {cpu:.2f} s; RSS {before:.0f} MB before, peak {peak:.0f} MB",
        )

    shown_lines = rounds[0].shown.out.stdout.count("\n")
    rows = [
        timed("alma-ctl analyze --wait", lambda r: r.analyzed, None),
        timed(f"alma-ctl suggestions show ({shown_lines} lines)", lambda r: r.shown, None),
        timed("alma-ctl suggestions accept", lambda r: r.accepted, "floor_do"),
        timed("alma-ctl undo", lambda r: r.undone, "floor_undo"),
        (
            "child peak RSS (accept / undo)",
            f"{max(r.child_kb[0] for r in rounds) / 1024:.0f} / "
            f"{max(r.child_kb[1] for r in rounds) / 1024:.0f} MB",
        ),
        ("daemon RSS when ready (memory store disabled)", f"{median(lambda r: r.ready_mb):.0f} MB"),
        ("on disk after accept and undo", rounds[-1].sizes),
    ]
    load = os.getloadavg()
    print(
        f"# {platform.node()} · {platform.machine()} · {os.cpu_count()} cores · Python "
        f"{platform.python_version()} · load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"
    )
    print(
        f"# {n} files in user/inbox, one organize action then its undo; {len(rounds)} rounds "
        "(wall and CPU: medians; RSS: the largest)"
    )
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
