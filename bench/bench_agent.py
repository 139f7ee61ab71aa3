"""The agent's analysis at scale.

    .venv/bin/python bench/bench_agent.py [--files 20000] [--memories 10000] [--days 30]
                                          [--rounds 3] [--profile]

The product's analysis (``Agent.analysis``: the real detectors, recall over the real memory
service, proposal, the policy gate, admission into the suggestions store) on a root with FILES
files in user/ (200 projects, most tidy, every 20th messy, copies and old temp files: organize,
duplicates and temp_cleanup findings; see make_root), DAYS days of chat logs and a script log
failing every night, and a Chroma store of MEMORIES memories (filled with random vectors:
fill_memories) in which every tenth is a principle and every tenth a rejection decision, the
newest of them shaping the proposals (SHAPING). Each round is a fresh process assembled as
alma-agentd assembles it (worker): the first analysis after the start (cold: no hash known,
nothing stored, the merge-candidate scan of the store's newest memories not done yet), then
warm ones (everything pending: the steady state of the watcher's rescans); the observe step
alone (``make_detect``) in the same process is the baseline of the ratio. The
stat/listdir/open calls and SQL statements of one warm analysis are counted; ``--profile``
prints cProfile's view of the first round's cold analysis.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from policies.layout import RootLayout

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
    """A file's size, spread from a kilobyte to megabytes as people's files are (a hash of
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


# --------------------------------------------------------------------------- the memory store

#: Memories that change what the analysis proposes (the newest, so recall lists them): a
#: principle that keeps one messy project out, one that keeps a subfolder of another out of
#: its plan, a rejection whose reason claims a folder, and one whose reason is only shown.
SHAPING = (
    ("principle", "Nunca toques user/p020"),
    ("principle", "No muevas nada a user/p040/documentos"),
    ("decision", "Rechazaste la sugerencia 7 (organize) para user/p060. Motivo: «esa carpeta la ordeno yo»"),
    ("decision", "Rechazaste la sugerencia 8 (organize) para user/p080. Motivo: «ahora no, en enero»"),
)  # fmt: skip


def _memory(i: int) -> tuple[str, str]:
    """The i-th filler memory: every tenth a principle, every tenth a decision (both naming a
    path, so recall parses them and checks every finding against them), the rest episodes."""
    kind = ("principle", "decision", *(["episode"] * 8))[i % 10]
    if kind == "principle":
        return kind, f"Nunca toques user/p{i % PROJECTS:03d}/privado/{i}"
    if kind == "decision":
        return kind, f"Rechazaste la sugerencia {i} (organize) para user/q{i}. Motivo: «no»"
    return kind, f"Recuerdo {i} sobre el proyecto p{i % PROJECTS:03d} y su carpeta de datos"


def fill_memories(root: Path, size: int) -> float:
    """``size`` memories straight into the root's store (Chroma and its catalog) with random
    normalized vectors, as bench_memory_e2e.py fills its own: the embedder would take about
    ten minutes for 10,000. The SHAPING ones are the newest. Seconds taken."""
    import numpy as np

    from state.memory import MemoryRecord, MemoryStateDB, MemoryStore, get_embedder, layer_for

    t0 = time.perf_counter()
    layout = RootLayout(root)
    layout.memory_dir.mkdir(parents=True, exist_ok=True)
    emb = get_embedder("e5-small")
    state = MemoryStateDB(layout.memory_state_file)
    store = MemoryStore(layout.chroma_dir, emb, state)
    rng = np.random.default_rng(0)
    first = datetime.now(UTC) - timedelta(days=400)
    items = [_memory(i) for i in range(size - len(SHAPING))] + list(SHAPING)
    for start in range(0, len(items), 2_000):
        chunk = items[start : start + 2_000]
        vecs = rng.standard_normal((len(chunk), emb.dim)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        records = []
        for k, (kind, content) in enumerate(chunk):
            i = start + k
            made = first + timedelta(minutes=i)  # one a minute: the last ones are the newest
            records.append(
                MemoryRecord(
                    id=f"bench{i:06d}",
                    content=content,
                    tags=[kind],
                    importance=1 + i % 5,
                    memory_type=kind,
                    created_at=made.isoformat(timespec="seconds"),
                    source="alma-ctl" if kind != "episode" else f"logs/{made.date()}.md:{i}",
                    layer=layer_for(kind, "add" if kind != "episode" else "turn"),
                    kind="add" if kind != "episode" else "turn",
                    day=made.date().isoformat(),
                )
            )
        store.add(records, vecs)
    if store.count() != size:
        raise SystemExit(f"the store counts {store.count()} memories, not {size}")
    store.close()
    state.close()
    return time.perf_counter() - t0


# --------------------------------------------------------------------------- one start


def worker(root: Path, profile: bool) -> dict[str, Any]:
    """One start of the product's parts on ``root``, as alma-agentd assembles them (policy
    holder, suggestions store, engine, autonomy, the memory service over the filled Chroma
    store, ``agent.daemon.make_detect``, ``Agent``), with nothing stored yet: the first
    analysis (cold), then WARM more (everything pending). Runs in its own process so "after a
    start" means a fresh interpreter: no hash known, Chroma's index not paged in by this
    process, the merge-candidate cache empty. No model is loaded (the analysis asks one only
    for a failing script's configuration fix, and validates or drops what it says)."""
    from agent.daemon import confinement_for, make_detect
    from agent.day.notify import make_notifier
    from agent.loop.autonomy import Autonomy
    from agent.loop.lifecycle import Agent
    from agent.memory.loader import MemoryLoader
    from agent.memory.recall import recall_notes
    from agent.memory.service import MemoryService
    from agent.policy import PolicyHolder
    from agent.settings import load_settings
    from sandbox.engine import Engine
    from state.journal import Journal
    from state.suggestions import SuggestionStore

    layout = RootLayout(root)
    for suffix in ("", "-wal", "-shm"):  # a first start: nothing stored
        Path(f"{layout.db_file}{suffix}").unlink(missing_ok=True)
    holder = PolicyHolder(layout)
    settings = load_settings(layout.settings_file)
    journal = Journal(layout.journal_file)
    engine = Engine(layout, journal, confinement_for(holder), holder)
    store = SuggestionStore(layout.db_file)
    memory = MemoryLoader()
    t0 = time.perf_counter()
    service = MemoryService(
        layout,
        embedder=settings.memory.embedder,
        cap=settings.memory.cap,
        settle_seconds=float(holder().monitor.settle_seconds),
    )
    memory.set(service)
    load_s = time.perf_counter() - t0
    agent = Agent(
        layout,
        holder,
        store,
        engine,
        Autonomy(store, holder),
        make_detect(layout, holder),
        notify=make_notifier(settings.notify),
        memory=memory,
    )
    out: dict[str, Any] = {"memories": service.count(), "load": load_s}
    prof = cProfile.Profile() if profile else None
    t0 = time.perf_counter()
    first = (
        prof.runcall(agent.analysis, trigger="event") if prof else agent.analysis(trigger="event")
    )
    out["cold"] = time.perf_counter() - t0
    if prof is not None:
        stats = pstats.Stats(prof).sort_stats("cumulative")
        stats.print_stats(35)
    # The store's first scan for near-identical memories runs on its own thread from the first
    # analysis on (merge.Candidates); the steady state is after it: wait for it.
    t0 = time.perf_counter()
    service.merge_candidates()
    out["scan_wait"] = time.perf_counter() - t0
    warm = []
    for _ in range(WARM):
        t0 = time.perf_counter()
        again = agent.analysis(trigger="event")
        warm.append(time.perf_counter() - t0)
        if again["proposed"]:
            raise SystemExit(f"a warm analysis proposed again: {again['proposed']}")
    out["warm"] = statistics.median(warm)
    detect = make_detect(layout, holder)  # its own hash cache: warm it first
    detect(time.time())
    t0 = time.perf_counter()
    detect(time.time())
    out["detect"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    notes = recall_notes(service)
    out["recall"] = time.perf_counter() - t0
    out["notes"] = len(notes)
    out["proposed"] = dict(Counter(store.row(sid)["kind"] for sid in first["proposed"]))
    out["skipped"] = [f"{s['kind']} {s['target']}: {s['why']}" for s in first["skipped"]]
    out["shaped"] = [
        f"{row['kind']} {row['target']}: {line}"
        for sid in first["proposed"]
        for row in [store.row(sid)]
        for line in json.loads(row["evidence"])
        if "bench0" in line or "memor" in line
    ]
    out["counts"] = _counts(lambda: agent.analysis(trigger="event"))
    service.close()
    store.close()
    return out


#: Warm analyses per start (their median is the start's warm figure).
WARM = 3


def analysis_bench(root: Path, rounds: int, profile: bool) -> None:
    rows = []
    for r in range(rounds):
        cmd = [sys.executable, __file__, "--worker", str(root)]
        if profile and r == 0:
            cmd.append("--profile")
        done = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True)
        *printed, last = done.stdout.strip().splitlines()
        if printed:
            print("\n".join(printed))
        row = json.loads(last)
        rows.append(row)
        print(
            f"round {r + 1}: cold {row['cold']:.3f} s, warm {row['warm']:.3f} s, "
            f"detectors alone {row['detect']:.3f} s, recall alone {row['recall']:.3f} s "
            f"(memory service start {row['load']:.1f} s; the merge scan ended "
            f"{row['scan_wait']:.1f} s after the cold analysis)",
            flush=True,
        )
    row = rows[0]
    print(
        f"{row['memories']} memories in the store, {row['notes']} principles and decisions "
        f"read by recall; first analysis proposed {row['proposed']}"
    )
    for line in row["skipped"]:
        print(f"  not proposed: {line}")
    for line in row["shaped"]:
        print(f"  shaped: {line}")
    print(row["counts"])
    det, cold, warm = (statistics.median(r[k] for r in rows) for k in ("detect", "cold", "warm"))
    print(f"{'median of ' + str(rounds) + ' starts':34}{'s':>10}{'ratio':>8}{'target':>9}")
    print(f"{'detectors alone (warm)':34}{det:10.3f}{1:8.1f}")
    print(f"{'analysis, cold (first after start)':34}{cold:10.3f}{cold / det:8.1f}{'< 2 s':>9}")
    print(f"{'analysis, warm (all pending)':34}{warm:10.3f}{warm / det:8.1f}{'< 2 s':>9}")


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
    for (filename, _line, name), (_cc, calls, *_rest) in pstats.Stats(prof).stats.items():  # type: ignore[attr-defined]  # Stats.stats is real but missing from typeshed
        if filename != "~":
            continue
        for word, label in COUNTED.items():
            if (f"posix.{word}" in name or f"'{word}' of 'sqlite3" in name) and (
                word != "read" or "posix" in name
            ):
                counts[label] += calls
    return "one warm analysis: " + ", ".join(f"{n} {label}" for label, n in counts.items())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="cProfile the first cold analysis")
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker is not None:
        print(json.dumps(worker(args.worker, args.profile), ensure_ascii=False))
        return 0
    print(f"files={args.files} memories={args.memories} days={args.days}")
    print(f"load average at start: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ALMA"
        ctl = Path(sys.executable).parent / "alma-ctl"
        subprocess.run([ctl, "--root", root, "init"], check=True, stdout=subprocess.DEVNULL)
        # Every finding is admitted, as the figures measure the analysis of them all.
        conf = root / "system" / "autonomy.conf"
        text = conf.read_text(encoding="utf-8")
        conf.write_text(text.replace("new_per_day = 5", "new_per_day = 0"), encoding="utf-8")
        make_root(root, args.files, args.days)
        took = fill_memories(root, args.memories)
        print(f"filled {args.memories:,} memories in {took:.0f} s", flush=True)
        analysis_bench(root, args.rounds, args.profile)
    print(f"load average at end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
