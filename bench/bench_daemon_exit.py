"""SIGTERM on an idle alma-agentd: how long until the process is gone.

    .venv/bin/python bench/bench_daemon_exit.py --rounds 5

A real daemon on a root made with ``init --with-examples``, the memory store on (its embedding
model loaded), idle for ``--idle`` seconds after it answers, then SIGTERM; timed from the signal
to the process's exit, and from the signal to its "stopped" log line (the orderly stop: the op
in flight, the stores). Side by side, alternating, the baseline: the same daemon ending through
the interpreter's teardown after ``main`` returns (its last collections, native destructors),
which the console script skips (``agent.daemon.entry``).
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.daemon import DaemonRoot, wait_for

_RUN = {
    "entry": "import agent.daemon as d; d.entry()",
    "baseline": "import sys, agent.daemon as d; sys.exit(d.main(sys.argv[1:]))",
}


def _stopped_after(log: Path, signalled: datetime) -> float:
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if '"msg": "stopped"' in line:
            when = datetime.fromisoformat(json.loads(line)["ts"].replace("Z", "+00:00"))
            return (when - signalled).total_seconds()
    return float("nan")


def one_exit(mode: str, idle: float) -> tuple[float, float]:
    alma = DaemonRoot(memory=True)
    try:
        alma.ctl("init", "--with-examples").ok()
        log = alma.base / "agentd.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-c", _RUN[mode], "--root", str(alma.root)],
                stdout=out,
                stderr=out,
                env=alma.env,
            )
        wait_for(lambda: alma.ctl("status", timeout=30).rc == 0, timeout=120, what="the daemon")
        wait_for(
            lambda: "memory store ready" in log.read_text(errors="replace"),
            timeout=300,
            what="the memory store",
        )
        time.sleep(idle)
        signalled = datetime.now().astimezone()
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(120)
        took = time.monotonic() - started
        assert rc == 0, (rc, log.read_text())
        return took, _stopped_after(log, signalled)
    finally:
        alma.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--idle", type=float, default=10.0)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"baseline": [], "entry": []}
    stops: dict[str, list[float]] = {"baseline": [], "entry": []}
    for _ in range(args.rounds):
        for mode in ("baseline", "entry"):
            took, stopped = one_exit(mode, args.idle)
            times[mode].append(took)
            stops[mode].append(stopped)
            print(f"{mode:8}  exit {took:5.2f} s  (stopped logged after {stopped:4.2f} s)")
    base, entry = (statistics.median(times[m]) for m in ("baseline", "entry"))
    print(
        f"median exit: baseline {base:.2f} s, without the teardown {entry:.2f} s, "
        f"ratio {entry / base:.2f}; orderly stop {statistics.median(stops['entry']):.2f} s"
    )


if __name__ == "__main__":
    main()
