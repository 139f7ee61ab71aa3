"""The agent's loop at scale (issue 10, Must show 4).

    .venv/bin/python bench/bench_agent.py [--files 20000] [--memories 10000] [--days 30]
                                          [--analyses 1000]

1. One analysis of a root with FILES files in user/ (200 projects, most tidy, every 20th messy,
   copies and old temp files: organize, duplicates and temp_cleanup findings; see make_root),
   DAYS days of chat logs and a script log failing every night, with MEMORIES memories to
   recall from: observe (the real detectors), recall, propose, gate (the real policy decision)
   and the admission into the real suggestions store. Timed cold (the first analysis after a
   start: no hash known, nothing stored) and warm (right after: everything pending, the steady
   state of the watcher's rescans), each against the detectors alone in the same round, so
   the loop's own share is a ratio; the stat/listdir/open calls and SQL statements of one
   analysis are counted. Recall reads a reader holding MEMORIES memories (every tenth a
   principle or a decision naming a folder): the memory store's own search is measured by
   bench_memory.py.
2. The checkpoints after ANALYSES analyses, each proposing a new suggestion whose decision run
   starts and is then decided (alternately accepted and rejected; every tenth left pending),
   against the same runs with threads never deleted (what the loop did before: a thread per
   finding kept for ever): file size and threads left.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections import Counter
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from actions.ops import files_touched, plan_from_list, write_paths
from actions.scan import HashCache
from agent import loop
from agent.detectors.files import detect_files
from agent.detectors.logs import detect_logs
from agent.recall import recall_notes
from policies.config import Policy, policy_from_dict
from policies.decide import PlanFacts, RunContext, Verdict, decide
from state.suggestions import SuggestionStore

DAY = 86_400.0


#: The bench root's folders: PROJECTS in user/, every MESSY_EVERY-th of them messy.
PROJECTS = 200
MESSY_EVERY = 20
MESSY_LOOSE = 80  # loose files in a messy folder (the policy's messy_folder_files is 15)
TIDY_LOOSE = 5  # loose files in a tidy one
#: The types of the files, and the subfolder a tidy project keeps each in.
SUBFOLDER = {
    "jpg": "imágenes",
    "pdf": "documentos",
    "txt": "documentos",
    "csv": "datos",
    "png": "imágenes",
    "docx": "documentos",
    "mp3": "música",
    "zip": "archivos",
}
EXTS = tuple(SUBFOLDER)
COPIES = 100  # files copied into another project: the duplicates finding
TEMPS = 20  # old temp files: the temp_cleanup finding


def _size(i: int) -> int:
    """A file's size, spread over 1 KB-8 MB as people's files are (a deterministic hash of
    ``i``): equal sizes are rare, so the duplicates planner hashes a few candidates, not most
    of the tree."""
    return 1024 + (i * 2_654_435_761) % (8 << 20)


def _write(path: Path, i: int, when: float) -> None:
    """A sparse file of ``_size(i)`` bytes whose first line makes it unique."""
    with open(path, "wb") as f:
        f.write(f"{i}\n".encode())
        f.truncate(_size(i))
    os.utime(path, (when, when))


def make_root(base: Path, files: int, days: int) -> Path:
    """A person's root: PROJECTS folders in user/, most tidy (a few loose files, the rest in
    subfolders by type), every MESSY_EVERY-th one messy (MESSY_LOOSE loose files of mixed
    types: an organize finding each), COPIES files copied into another folder (a duplicates
    finding), TEMPS old temp files (a temp_cleanup finding); DAYS days of chat logs and a
    script log failing every night."""
    old = time.time() - 10 * DAY
    for d in ("system", "logs/alma", ".alma"):
        (base / d).mkdir(parents=True, exist_ok=True)
    user = base / "user"
    placed = 0
    for p in range(PROJECTS):
        loose = MESSY_LOOSE if p % MESSY_EVERY == 0 else TIDY_LOOSE
        folder = user / f"p{p:03d}"
        folder.mkdir(parents=True)
        for sub in set(SUBFOLDER.values()):
            (folder / sub).mkdir()
        for k in range(loose):
            i = placed + k
            _write(folder / f"f{i:06d}.{EXTS[(p + k) % len(EXTS)]}", i, old)
        placed += loose
    rest = files - placed - COPIES - TEMPS
    if rest < 0:
        raise SystemExit(f"--files must be at least {placed + COPIES + TEMPS} for this root.")
    for k in range(rest):  # the tidy part, spread over every project's subfolders
        i = placed + k
        ext, p = EXTS[k % len(EXTS)], (k // len(EXTS)) % PROJECTS
        _write(user / f"p{p:03d}" / SUBFOLDER[ext] / f"f{i:06d}.{ext}", i, old)
    placed += rest
    for k in range(COPIES):
        data = f"copia {k}\n".encode() * (1000 + k)
        for p in (k % PROJECTS, (k + 7) % PROJECTS):
            path = user / f"p{p:03d}" / "imágenes" / f"foto{k:03d}-{p:03d}.jpg"
            path.write_bytes(data)
            os.utime(path, (old, old))
    for k in range(TEMPS):
        _write(user / f"p{(k * 3) % PROJECTS:03d}" / f"~$informe{k}.docx", placed + k, old)
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
    policy = policy_from_dict({})  # the default policy: messy at 15 loose files, settled at 120 s
    reader = Reader(memories)
    rows = [_round(root, policy, reader, show=r == 0) for r in range(rounds)]
    det, cold, warm = (statistics.median(c) for c in zip(*rows, strict=True))
    print(f"{'':34}{'median s':>10}{'ratio':>8}")
    print(f"{'detectors alone (warm hashes)':34}{det:10.3f}{1:8.1f}")
    print(f"{'analysis, cold (first after start)':34}{cold:10.3f}{cold / det:8.1f}")
    print(f"{'analysis, warm (all pending)':34}{warm:10.3f}{warm / det:8.1f}")


def _round(root: Path, policy: Policy, reader: Reader, *, show: bool) -> tuple[float, ...]:
    """(detectors alone, cold analysis, warm analysis) in seconds, from a fresh start: no hash
    known yet, no suggestion stored; the warm one right after, with everything pending."""
    hashes: HashCache = {}

    def detect(now: float) -> list[dict[str, Any]]:
        found = detect_files(root, policy, now, hash_cache=hashes)
        found += detect_logs(root, policy, now)
        return [f.to_dict() for f in found]

    def gate(f: loop.Finding) -> tuple[Verdict, str]:
        plan = plan_from_list(f.plan)
        facts = PlanFacts(kind=f.kind, paths=write_paths(plan), files=files_touched(plan))
        d = decide(policy, facts, RunContext(approved_by_person=False))
        return d.verdict, d.reason

    with tempfile.TemporaryDirectory() as tmp:
        store = SuggestionStore(Path(tmp) / "alma.db")

        def admit(f: loop.Finding, needs: bool) -> int:  # as Agent._admit does
            existing = store.find_blocking(f.fingerprint)
            if existing is not None and existing > 0:
                return existing
            return store.propose(f.model_dump(), needs_approval=needs)

        the_loop = loop.Loop(
            _deps(detect, gate, admit, lambda: recall_notes(reader), store), Path(tmp) / "cp.db"
        )
        t0 = time.perf_counter()
        first = the_loop.analyze(time.time())
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        second = the_loop.analyze(time.time())
        warm = time.perf_counter() - t0
        t0 = time.perf_counter()
        detect(time.time())
        detect_only = time.perf_counter() - t0
        if show:
            kinds = Counter(store.row(sid)["kind"] for sid, _auto in first["admitted"])
            print(
                f"cold: {len(first['admitted'])} admitted ({dict(sorted(kinds.items()))}), "
                f"{len(first['skipped'])} skipped; warm: {len(second['admitted'])} admitted"
            )
            print(_counts(lambda: the_loop.analyze(time.time())))
        store.close()
    return detect_only, cold, warm


#: What one analysis asks of the system, counted by the profiler (call name -> label).
COUNTED = {
    "stat": "stat",
    "listdir": "listdir",
    "open": "open",
    "read": "read",
    "execute": "SQL",
}


def _counts(fn: Any) -> str:
    """How many stat, listdir, open, read calls and SQL statements one warm analysis makes."""
    prof = cProfile.Profile()
    prof.runcall(fn)
    counts: Counter[str] = Counter()
    for (filename, _line, name), (_cc, calls, *_rest) in pstats.Stats(prof).stats.items():  # type: ignore[attr-defined]
        if filename != "~":
            continue
        for word, label in COUNTED.items():
            if (f"posix.{word}" in name or f"'{word}' of 'sqlite3" in name) and (
                word != "read" or "posix" in name
            ):
                counts[label] += calls
    return "one warm analysis: " + ", ".join(f"{n} {label}" for label, n in counts.items())


def _deps(detect: Any, gate: Any, admit: Any, notes: Any, store: Any) -> loop.LoopDeps:
    return loop.LoopDeps(
        detect=detect,
        expire=lambda seen: None,
        blocked=lambda f: store is not None and store.find_blocking(f.fingerprint) is not None,
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
            the_loop = loop.Loop(_deps(None, None, None, list, None), path)
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
