"""alma-agentd after a restart with a full memory store: time to ``ready``.

    .venv/bin/python bench/bench_ready.py                       # 10,000 memories, 6 restarts
    .venv/bin/python bench/bench_ready.py --memories 2000 --restarts 3

A real daemon (memory enabled, as a person runs it; ALMA_NOTIFY=0, a private XDG_RUNTIME_DIR;
started and stopped by tests.support.daemon) on a root like the demo's after some use: the
store filled with ``--memories`` memories before the first start (random normalized vectors
written straight into ``state.memory.MemoryStore`` by bench_memory_e2e's filler: the embedder
would take hours), the example memories asked for (``init --with-examples``), and a chat log
of today with a few paragraphs to ingest. Started once (not measured: the first start stores
the examples), then stopped and started again ``--restarts`` times, each after a new script
started failing meanwhile (its configuration names a path no close name fixes, so the
analysis asks the model), each timed from the daemon's spawn to:

- ``answered``: the socket's first answer to ``status``;
- ``ready``: ``status`` says ``"ready": true`` (the folder watches are set up and the analysis
  after start has run), polled on the socket;
- ``memory``: ``status`` says the memory store is ``ready`` (loaded in the background);
- ``explained``: the new failure's suggestion is listed (the model loaded and asked: the
  analysis right after the one ``ready`` waits for).

p50 and p95 of each (bench.figures.pct, nearest rank) are printed, with the machine's load
average; the target and the latest figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_memory_e2e import fill_root

from bench.figures import pct
from control.client import Client, DaemonUnreachable
from tests.support.daemon import DaemonRoot

TARGET_P95_S = 5.0
DAY = 86400


def new_failure(d: DaemonRoot, n: int) -> None:
    """A script that started failing while the daemon was stopped, three nights running, on a
    path its configuration names and no close name fixes: the analysis asks the model."""
    name = f"sync{n}"
    wrong = f"/mnt/nowhere-{n}"
    d.write(f"user/scripts/{name}.sh", f'#!/bin/sh\n. ./{name}.conf\nrsync -a ~ "$DEST"\n'.encode())
    d.write(f"user/scripts/{name}.conf", f'# destino\nDEST="{wrong}"\n'.encode())
    days = [time.strftime("%Y-%m-%d", time.localtime(time.time() - k * DAY)) for k in (3, 2, 1)]
    lines = [
        f'{day} 02:00:01 ERROR rsync: change_dir "{wrong}" failed: No such file or directory (2)'
        for day in days
    ]
    d.write(f"logs/{name}.log", ("\n".join(lines) + "\n").encode())


def prepare(d: DaemonRoot, memories: int) -> None:
    d.ok("init", "--with-examples")
    d.policy(monitor__settle_seconds=0)
    fill_root(d, memories)
    today = date.today().isoformat()
    paragraphs = "\n\n".join(
        f"Hoy he repasado la tarea número {i} del proyecto y he quedado en volver mañana."
        for i in range(20)
    )
    d.write(f"logs/{today}.md", f"# {today}\n\n{paragraphs}\n".encode())


def one_start(d: DaemonRoot, failure: str | None = None) -> dict[str, float]:
    """Spawn the daemon and time its first answer, ready, the memory store's load, and (given
    the log of a new ``failure``) its suggestion, explained by the model."""
    started = time.perf_counter()
    proc = d.spawn()
    d.proc = proc
    client = Client(d.socket, 30.0)
    times: dict[str, float] = {}
    deadline = started + 600
    wanted = {"ready", "memory"} | ({"explained"} if failure else set())
    while not wanted <= times.keys():
        if proc.poll() is not None:
            raise SystemExit(f"alma-agentd exited {proc.returncode}:\n{d.log()}")
        if time.perf_counter() > deadline:
            raise SystemExit(f"not ready after 600 s: {times}\n{d.log()}")
        try:
            status = client.call("status")
        except (DaemonUnreachable, OSError):
            time.sleep(0.05)
            continue
        assert isinstance(status, dict)
        now = time.perf_counter() - started
        times.setdefault("answered", now)
        if status.get("ready"):
            times.setdefault("ready", now)
        if status.get("memory") == "ready":
            times.setdefault("memory", now)
        elif status.get("memory") != "loading":
            raise SystemExit(f"the memory store failed: {status.get('memory')}\n{d.log()}")
        if failure and "explained" not in times:
            listed = client.call("suggestions.list")
            assert isinstance(listed, list)
            if any(s["target"] == failure for s in listed):
                times["explained"] = time.perf_counter() - started
        time.sleep(0.05)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--restarts", type=int, default=6)
    args = ap.parse_args()
    d = DaemonRoot(memory=True)
    try:
        print(f"python {platform.python_version()}, {os.cpu_count()} cpus", flush=True)
        prepare(d, args.memories)
        first = one_start(d)
        print(f"  first start (not counted): {fmt(first)}", flush=True)
        runs = []
        for i in range(args.restarts):
            d.stop(timeout=120)
            new_failure(d, i)
            load = os.getloadavg()[0]
            times = one_start(d, f"logs/sync{i}.log")
            runs.append(times)
            print(f"  restart {i + 1}: {fmt(times)}  (load {load:.1f})", flush=True)
        d.stop(timeout=120)
    finally:
        d.close()
    print(f"{args.memories:,} memories, {args.restarts} restarts:")
    for key in ("answered", "ready", "memory", "explained"):
        values = [r[key] for r in runs]
        print(f"  {key:8s} p50 {pct(values, 0.5):5.2f} s  p95 {pct(values, 0.95):5.2f} s")
    p95 = pct([r["ready"] for r in runs], 0.95)
    verdict = "meets" if p95 < TARGET_P95_S else "MISSES"
    print(f"ready p95 {p95:.2f} s {verdict} the target of {TARGET_P95_S:g} s")
    return 0 if p95 < TARGET_P95_S else 1


def fmt(times: dict[str, float]) -> str:
    return "  ".join(f"{key} {value:.2f} s" for key, value in times.items())


if __name__ == "__main__":
    raise SystemExit(main())
