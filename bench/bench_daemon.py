"""alma-agentd and alma-ctl on a temp root: alma-ctl's start, a file event's latency, idle cost.

    .venv/bin/python bench/bench_daemon.py                # the full run
    .venv/bin/python bench/bench_daemon.py --quick        # a smoke run

1. ``alma-ctl status`` (the installed console script, a running daemon answering) median wall
   time, as a ratio to ``python3 -c pass`` with the interpreter and flags of the script's
   shebang, the two measured alternately in the same loop so both see the same machine.
2. From 30 files dropped into ``user/xN`` to a pending organize suggestion, with
   ``settle_seconds = 0``: p95 over the runs (a fresh folder each run), polled on the socket.
3. The idle daemon over ``--idle-seconds`` with ``--files`` watched files (folders of 10 files,
   under ``messy_folder_files``, so nothing is proposed): CPU from ``/proc/PID/stat``
   utime+stime, and RSS (``VmRSS``, and the peak ``VmHWM``) with the memory store disabled
   (no model loaded).

The targets, and the latest figures, are in docs/benchmarks.md.

The daemon runs with ALMA_NOTIFY=0 and ALMA_MEMORY__ENABLED=false in a private
XDG_RUNTIME_DIR, started and stopped by tests.support.daemon, as in the e2e tests.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from control.client import Client
from tests.support.daemon import ALMA_CTL, DaemonRoot

TICKS = os.sysconf("SC_CLK_TCK")


def shebang(script: str) -> list[str]:
    """The interpreter and flags the console script runs with."""
    with open(script, "rb") as f:
        first = f.readline().decode().strip()
    assert first.startswith("#!"), f"{script} has no shebang"
    return shlex.split(first[2:])


def timed(argv: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t
    assert done.returncode == 0, f"{argv} exited {done.returncode}: {done.stderr.decode()}"
    return elapsed


def bench_status(d: DaemonRoot, runs: int) -> tuple[float, float]:
    status = [ALMA_CTL, "--root", str(d.root), "status"]
    bare = [*shebang(ALMA_CTL), "-c", "pass"]
    env = d.env
    for _ in range(3):  # warm the page cache for both
        timed(status, env)
        timed(bare, env)
    ctl: list[float] = []
    py: list[float] = []
    for _ in range(runs):
        ctl.append(timed(status, env))
        py.append(timed(bare, env))
    return statistics.median(ctl), statistics.median(py)


def pending_targets(client: Client) -> set[str]:
    result = client.call("suggestions.list", status="pending")
    assert isinstance(result, list)
    return {str(s["target"]) for s in result}


def bench_latency(d: DaemonRoot, runs: int, files: int = 30) -> list[float]:
    client = Client(d.socket, 10.0)
    exts = ("jpg", "pdf", "mp3", "csv", "zip", "txt")
    out: list[float] = []
    for run in range(runs):
        folder = d.root / "user" / f"x{run}"
        target = f"user/x{run}"
        # Quiet first: the previous run's events and analyses are over.
        time.sleep(1.5)
        t = time.perf_counter()
        folder.mkdir()
        for i in range(files):
            (folder / f"f{i:03d}.{exts[i % len(exts)]}").write_bytes(b"x" * (i + 1))
        deadline = t + 30.0
        while target not in pending_targets(client):
            if time.perf_counter() > deadline:
                raise SystemExit(f"no suggestion for {target} within 30 s:\n{d.log()}")
            time.sleep(0.01)
        out.append(time.perf_counter() - t)
    return out


def cpu_seconds(pid: int, *, children: bool = False) -> float:
    """utime + stime of ``pid`` (fields 14, 15), with ``children`` those of its children it
    waited for too (16, 17: the daemon's executor child, once the action is over)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11 : 15 if children else 13]) / TICKS


def rss_mb(pid: int) -> tuple[float, float]:
    values: dict[str, float] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) / 1024
    return values["VmRSS"], values["VmHWM"]


def make_files(d: DaemonRoot, n: int, per_folder: int = 10) -> None:
    for i in range(n):
        folder = d.root / "user" / "archive" / f"g{i // 1000:02d}" / f"d{i // per_folder:05d}"
        if i % per_folder == 0:
            folder.mkdir(parents=True)
        (folder / f"n{i:06d}.txt").write_bytes(b"%d\n" % i)


def bench_idle(d: DaemonRoot, seconds: float) -> tuple[float, float, float, float]:
    """(CPU % over the window, RSS MB at its end, peak RSS MB, seconds of the start analysis)."""
    client = Client(d.socket, 60.0)
    t = time.perf_counter()
    while True:  # the start's own analysis of everything has run
        st = client.call("status")
        assert isinstance(st, dict)
        if st.get("last_analysis"):
            break
        time.sleep(0.1)
    settled = time.perf_counter() - t
    time.sleep(2.0)  # its debounce timers are spent
    pid = d.pid
    c0, t0 = cpu_seconds(pid), time.perf_counter()
    time.sleep(seconds)
    c1, t1 = cpu_seconds(pid), time.perf_counter()
    rss, peak = rss_mb(pid)
    return 100.0 * (c1 - c0) / (t1 - t0), rss, peak, settled


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run with small numbers")
    parser.add_argument("--status-runs", type=int, default=None)
    parser.add_argument("--latency-runs", type=int, default=None)
    parser.add_argument("--files", type=int, default=None, help="watched files for the idle run")
    parser.add_argument("--idle-seconds", type=float, default=None)
    args = parser.parse_args()
    status_runs = args.status_runs or (15 if args.quick else 60)
    latency_runs = args.latency_runs or (3 if args.quick else 10)
    files = args.files if args.files is not None else (2_000 if args.quick else 20_000)
    idle_seconds = args.idle_seconds or (5.0 if args.quick else 60.0)

    rows: list[tuple[str, str, str, str]] = []
    d = DaemonRoot().init()
    try:
        d.policy(monitor__settle_seconds=0)
        d.start()
        ctl, py = bench_status(d, status_runs)
        ratio = ctl / py
        rows.append(
            (
                f"alma-ctl status, median of {status_runs}",
                f"{ctl * 1000:.1f} ms = {ratio:.2f}x python3 -c pass ({py * 1000:.1f} ms)",
                "<= 3x",
                "ok" if ratio <= 3 else "MISSED",
            )
        )
        lat = sorted(bench_latency(d, latency_runs))
        p95 = lat[min(len(lat) - 1, round(0.95 * (len(lat) - 1)))]
        rows.append(
            (
                f"30 files -> pending suggestion, p95 of {latency_runs}",
                f"{p95:.2f} s (median {statistics.median(lat):.2f} s, max {lat[-1]:.2f} s)",
                "<= 2 s",
                "ok" if p95 <= 2 else "MISSED",
            )
        )
        d.stop()
    finally:
        d.close()

    d = DaemonRoot().init()
    try:
        d.policy(monitor__settle_seconds=0)
        make_files(d, files)
        d.start()
        cpu, rss, peak, settled = bench_idle(d, idle_seconds)
        rows.append(
            (
                f"idle CPU over {idle_seconds:.0f} s, {files} watched files",
                f"{cpu:.2f} % (start analysis took {settled:.1f} s)",
                "< 1 %",
                "ok" if cpu < 1 else "MISSED",
            )
        )
        rows.append(
            (
                "RSS, memory store disabled",
                f"{rss:.0f} MB (peak {peak:.0f} MB)",
                "<= 250 MB",
                "ok" if rss <= 250 else "MISSED",
            )
        )
        d.stop()
    finally:
        d.close()

    print(
        f"# {platform.node()} · {platform.processor() or platform.machine()} · "
        f"{os.cpu_count()} cores · Python {platform.python_version()}"
    )
    widths = [
        max(len(r[i]) for r in [("measure", "result", "target", ""), *rows]) for i in range(4)
    ]
    header = ("measure", "result", "target", "")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
    return 0 if all(r[3] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
