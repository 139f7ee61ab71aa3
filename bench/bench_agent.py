"""The agent's loop at scale (issue 10, Must show 4).

    .venv/bin/python bench/bench_agent.py [--files 20000] [--memories 10000] [--days 30]
                                          [--analyses 1000]

1. One analysis of a root with FILES files in user/ (200 folders, a few messy), DAYS days of
   chat logs and a script log failing every night, with MEMORIES memories to recall from:
   observe (the real detectors), recall, propose, gate (the real policy decision) and the
   admission of what is new. Timed cold (nothing proposed yet) and warm (everything already
   pending: the steady state of the watcher's rescans), each against the detectors alone in
   the same run, so the loop's own share is a ratio. Recall reads a reader holding MEMORIES
   memories (every tenth a principle or a decision naming a folder): the memory store's own
   search is measured by bench_memory.py.
2. The checkpoints after ANALYSES analyses, each proposing a new suggestion whose decision run
   starts and is then decided (alternately accepted and rejected; every tenth left pending),
   against the same runs with threads never deleted (what the loop did before: a thread per
   finding kept for ever): file size and threads left.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from actions.ops import files_touched, plan_from_list, write_paths
from agent import loop
from agent.detectors.files import detect_files
from agent.detectors.logs import detect_logs
from agent.recall import MemoryNote, recall_notes
from policies.config import policy_from_dict
from policies.decide import PlanFacts, RunContext, Verdict, decide

DAY = 86_400.0


def make_root(base: Path, files: int, days: int) -> Path:
    old = time.time() - 3 * DAY
    for d in ("system", "logs/alma", ".alma"):
        (base / d).mkdir(parents=True, exist_ok=True)
    folders = 200
    for i in range(files):
        folder = base / "user" / f"p{i % folders:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"f{i:06d}.{('jpg', 'pdf', 'txt', 'csv')[i % 4]}"
        path.write_bytes(f"{i}\n".encode())
        os.utime(path, (old, old))
    today = date.today()
    script = []
    for n in range(days):
        day = today - timedelta(days=n)
        turns = [
            f"## 08:0{n % 10}:00 · usuario\nHoy sigo con p{n:03d}. #trabajo\n",
            "## 08:01:00 · alma\nVale.\n<!-- model: m · tokens: 1 · ms: 1 -->\n",
            f"## 23:30:00 · usuario\nMañana ordeno la carpeta p{n:03d}. #pendiente\n",
        ]
        (base / "logs" / f"{day.isoformat()}.md").write_text(
            f"# {day.isoformat()}\n\n" + "\n".join(turns), encoding="utf-8"
        )
        script += [
            f"{day.isoformat()} 02:00:01 INFO backup.sh start",
            f"{day.isoformat()} 02:00:02 ERROR backup.sh exited with status 23",
        ]
    (base / "logs" / "backup.log").write_text("\n".join(script) + "\n", encoding="utf-8")
    return base


class Reader:
    def __init__(self, n: int) -> None:
        self.items = []
        for i in range(n):
            kind = ("principle", "decision", *(["episode"] * 8))[i % 10]
            if kind == "principle":
                content = f"Nunca toques user/p{i % 200:03d}/privado"
            elif kind == "decision":
                content = f"Rechazaste la sugerencia {i} (organize) para user/q{i}. Motivo: «no»"
            else:
                content = f"Recuerdo {i} sobre el proyecto p{i % 200:03d}"
            self.items.append({"id": f"m{i}", "content": content, "memory_type": kind})

    def list(self, *, limit: int = 20, memory_type: str | None = None, **_: Any) -> list[Any]:
        return [m for m in self.items if m["memory_type"] == memory_type][:limit]


def analysis_bench(root: Path, memories: int, rounds: int) -> None:
    policy = policy_from_dict({"monitor": {"settle_seconds": 0, "messy_folder_files": 90}})
    reader = Reader(memories)
    stored: dict[str, int] = {}
    hashes: dict[Any, Any] = {}

    def detect(now: float) -> list[dict[str, Any]]:
        found = detect_files(root, policy, now, hash_cache=hashes) + detect_logs(root, policy, now)
        return [f.to_dict() for f in found]

    def gate(f: loop.Finding) -> tuple[Verdict, str]:
        plan = plan_from_list(f.plan)
        facts = PlanFacts(kind=f.kind, paths=write_paths(plan), files=files_touched(plan))
        d = decide(policy, facts, RunContext(approved_by_person=False))
        return d.verdict, d.reason

    def admit(f: loop.Finding, needs: bool) -> int:
        return stored.setdefault(f.fingerprint, len(stored) + 1)

    def notes() -> list[MemoryNote]:
        return recall_notes(reader)

    with tempfile.TemporaryDirectory() as tmp:
        the_loop = loop.Loop(_deps(detect, gate, admit, notes, stored), Path(tmp) / "cp.db")
        rows = []
        for r in range(rounds):
            stored.clear()
            detect(time.time())  # the hashes of duplicates candidates, as after a first scan
            t0 = time.perf_counter()
            detect(time.time())
            detect_only = time.perf_counter() - t0
            t0 = time.perf_counter()
            first = the_loop.analyze(time.time())
            cold = time.perf_counter() - t0
            t0 = time.perf_counter()
            second = the_loop.analyze(time.time())
            warm = time.perf_counter() - t0
            rows.append((detect_only, cold, warm))
            if r == 0:
                print(
                    f"admitted cold {len(first['admitted'])}, skipped {len(first['skipped'])}; "
                    f"warm admitted {len(second['admitted'])}"
                )
    det, cold, warm = (statistics.median(c) for c in zip(*rows, strict=True))
    print(f"{'':34}{'median s':>10}{'ratio':>8}")
    print(f"{'detectors alone (warm hashes)':34}{det:10.3f}{1:8.1f}")
    print(f"{'analysis, cold (all new)':34}{cold:10.3f}{cold / det:8.1f}")
    print(f"{'analysis, warm (all pending)':34}{warm:10.3f}{warm / det:8.1f}")


def _deps(detect: Any, gate: Any, admit: Any, notes: Any, stored: dict[str, int]) -> loop.LoopDeps:
    return loop.LoopDeps(
        detect=detect,
        expire=lambda seen: None,
        blocked=lambda f: f.fingerprint in stored,
        stopped=lambda kind, target: None,
        notes=notes,
        gate=gate,
        admit=admit,
        execute=lambda sid, auto: {"id": sid, "suggestion_id": sid},
        reject=lambda sid, reason: None,
        learn=lambda sid, d, outcome, action: None,
    )


def storage_bench(analyses: int) -> None:
    results = {}
    for keep in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "cp.db"
            the_loop = loop.Loop(_deps(None, None, None, list, {}), path)
            t0 = time.perf_counter()
            for sid in range(1, analyses + 1):
                if keep:  # the old behaviour: nothing is ever deleted
                    the_loop.forget = lambda sid: None  # type: ignore[method-assign]
                the_loop.start(sid, auto=False)
                if sid % 10:
                    verdict = "accept" if sid % 2 else "reject"
                    the_loop.decide(sid, loop.Decision(verdict=verdict))  # type: ignore[arg-type]
            took = time.perf_counter() - t0
            the_loop.saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            size = path.stat().st_size
            threads = len(the_loop.threads())
            results[keep] = (size, threads, took)
    (size, threads, took), (ksize, kthreads, ktook) = results[False], results[True]
    print(f"{analyses} suggestions, every tenth left pending")
    print(f"{'':34}{'bytes':>12}{'threads':>9}{'s':>8}")
    print(f"{'threads deleted when decided':34}{size:12d}{threads:9d}{took:8.1f}")
    print(f"{'threads kept (before)':34}{ksize:12d}{kthreads:9d}{ktook:8.1f}")
    print(f"ratio kept/deleted: {ksize / size:.1f}x the bytes")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--analyses", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = make_root(Path(tmp), args.files, args.days)
        print(f"files={args.files} memories={args.memories} days={args.days}")
        analysis_bench(root, args.memories, args.rounds)
    storage_bench(args.analyses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
