"""A soak: a real daemon lived with for minutes, under the load of a busy person.

    .venv/bin/python bench/soak.py --minutes 20                  # the full load (docs/benchmarks.md)
    .venv/bin/python bench/soak.py --minutes 2 --files 2000 --folder-files 200 \\
        --chat-every 40 --memory-every 20 --cycle-every 30 --backup-first 20 --backup-every 60

A real ``alma-agentd`` (memory enabled, the embedded model) on a fresh temp root, driven only
from outside by the real ``alma-ctl`` and ``alma chat --once``, as tests.support.daemon drives
it in the e2e tests. The root holds ``--files`` files in tidy folders of ``--folder-files``
(``user/archivo/tNN``, one type each: nothing to organize), and for the whole run:

- ``--changes`` file changes a second in ``user/diario`` (new and rewritten notes);
- a chat message every ``--chat-every`` seconds (``alma chat --once``, answers of at most
  ``--max-tokens``);
- a memory every ``--memory-every`` seconds (``alma-ctl memory add``);
- an accept/undo cycle every ``--cycle-every`` seconds: a messy folder made, ``analyze
  --wait``, its organize suggestion accepted, the folder checked (the same bytes, moved), the
  action undone, the folder checked byte-exact against its state before the accept;
- ``backup now`` at ``--backup-first`` seconds and then every ``--backup-every`` (after
  ``backup init`` on a target beside the root, its password in a file);
- ``alma-ctl status`` every ``--status-every`` seconds, timed;
- every ``--sample-every`` seconds, from ``/proc``: the daemon's and the model process's RSS,
  the daemon's descriptors and threads, the load average;
- the journal checked from a second SQLite connection (a fresh read-only one, in this process)
  after every action and every minute: each action the daemon's ``history`` lists must be
  there at once, with the same status.

At the end the daemon gets SIGTERM (exit 0 expected) and every database passes
``integrity_check``. It prints a table per minute and a summary, and exits 1 on any failed
accept, undo, backup, chat, memory or status, any journal row missing from the second
connection, or a daemon that died.

The noise budget is off (``new_per_day = 0``) and ``settle_seconds = 0``, as in the e2e tests:
a folder per cycle is proposed at once, every cycle. The budget has its own tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.figures import pct
from tests.support.daemon import ALMA_CTL, DaemonRoot, WaitTimeout
from tests.support.trees import snapshot

ALMA = str(Path(ALMA_CTL).parent / "alma")
EXTENSIONS = ("pdf", "jpg", "txt", "mp3", "csv", "png", "docx", "zip", "odt", "mp4")
CHATS = (
    "¿Qué tengo pendiente esta semana?",
    "Resume lo que sabes de mis copias de seguridad.",
    "¿Cómo ordeno la carpeta de descargas sin perder nada?",
    "¿Qué recuerdas del proyecto de la mudanza?",
    "Dame una idea para ordenar las fotos por año.",
)


@dataclass
class Event:
    at: float  # seconds since the start of the load
    kind: str  # status, chat, memory, accept, undo, backup, journal, cycle
    ok: bool
    seconds: float
    detail: str = ""


@dataclass
class Sample:
    at: float
    daemon_kb: int
    model_kb: int  # 0: no model process
    model_pid: int
    fds: int
    threads: int
    load: float


@dataclass
class Soak:
    d: DaemonRoot
    args: argparse.Namespace
    t0: float = 0.0
    stop: threading.Event = field(default_factory=threading.Event)
    events: list[Event] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    model_pid: int = 0

    def now(self) -> float:
        return time.monotonic() - self.t0

    def record(self, kind: str, ok: bool, seconds: float, detail: str = "") -> None:
        with self.lock:
            self.events.append(Event(self.now(), kind, ok, seconds, detail))
        if not ok:
            print(f"  !! {self.now():7.1f} s {kind} failed: {detail}", flush=True)

    def every(self, kind: str, first: float, period: float, step: Callable[[Soak], None]) -> None:
        """``step`` at ``first`` seconds, then every ``period`` (never two at once)."""
        due = first
        while not self.stop.wait(max(0.0, due - self.now())):
            try:
                step(self)
            except Exception as exc:  # a step's own failure is recorded; the soak goes on
                self.record(kind, False, 0.0, f"{type(exc).__name__}: {exc}")
            due = max(due + period, self.now())


# -- the load ---------------------------------------------------------------------------------
def status(s: Soak) -> None:
    t = time.perf_counter()
    res = s.d.ctl("status", timeout=60)
    s.record("status", res.rc == 0, time.perf_counter() - t, res.stderr.strip())


def churn(s: Soak) -> None:
    """``--changes`` file changes a second in user/diario: a note written or rewritten."""
    rng = random.Random(7)
    folder = s.d.root / "user" / "diario"
    folder.mkdir(parents=True, exist_ok=True)
    n = 0
    period = 1.0 / s.args.changes
    next_at = time.monotonic()
    while not s.stop.is_set():
        path = folder / f"nota-{rng.randrange(s.args.churn_files):04d}.md"
        path.write_bytes(f"nota {n} {rng.random()}\n".encode() * rng.randint(1, 40))
        n += 1
        next_at += period
        delay = next_at - time.monotonic()
        if delay > 0:
            s.stop.wait(delay)
        else:
            next_at = time.monotonic()  # behind: never a burst to catch up
    s.record("churn", True, 0.0, f"{n} changes")


def chat(s: Soak) -> None:
    n = sum(1 for e in s.events if e.kind == "chat")
    message = f"{CHATS[n % len(CHATS)]} (mensaje {n + 1})"
    t = time.perf_counter()
    done = subprocess.run(
        [ALMA, "chat", "--root", str(s.d.root), "--once", message],
        capture_output=True,
        text=True,
        env=s.d.env,
        timeout=600,
        check=False,
    )
    ok = done.returncode == 0 and bool(done.stdout.strip())
    s.record(
        "chat",
        ok,
        time.perf_counter() - t,
        "" if ok else f"exit {done.returncode}: {done.stderr.strip()[-300:]}",
    )


def memory(s: Soak) -> None:
    n = sum(1 for e in s.events if e.kind == "memory")
    text = f"El turno {n + 1} del soak la persona anotó revisar la carpeta {n % 50} el lunes."
    t = time.perf_counter()
    res = s.d.ctl("memory", "add", text, "--tag", "soak", timeout=300)
    s.record("memory", res.rc == 0, time.perf_counter() - t, res.stderr.strip())


def backup(s: Soak) -> None:
    t = time.perf_counter()
    res = s.d.ctl("backup", "now", timeout=1800)
    ok = res.rc == 0 and isinstance(res.data, dict) and res.data.get("status") == "done"
    s.record(
        "backup", ok, time.perf_counter() - t, "" if ok else (res.stderr or res.stdout).strip()
    )
    journal(s, "after a backup")


def cycle(s: Soak) -> None:
    """A messy folder, analyze, accept, check, undo, check byte-exact."""
    k = sum(1 for e in s.events if e.kind == "cycle") + 1
    rel = f"user/ciclo-{k:02d}"
    s.d.messy_folder(rel, n=s.args.messy_files)
    folder = s.d.root / rel
    before = snapshot(folder)
    t = time.perf_counter()
    res = s.d.ctl("analyze", "--wait", timeout=900)
    if res.rc != 0:
        s.record("cycle", False, time.perf_counter() - t, f"analyze: {res.stderr.strip()}")
        return
    try:
        found = s.d.wait_suggestion(kind="organize", target=rel, timeout=60)
    except WaitTimeout as exc:
        s.record("cycle", False, time.perf_counter() - t, f"{rel} was never proposed ({exc})")
        s.record("accept", False, 0.0, f"nothing to accept for {rel}")
        return
    s.record("cycle", True, time.perf_counter() - t, rel)

    t = time.perf_counter()
    res = s.d.ctl("suggestions", "accept", str(found["id"]), timeout=900)
    action = res.data if isinstance(res.data, dict) else {}
    ok = res.rc == 0 and action.get("status") == "done"
    after = snapshot(folder)
    moved = Counter(v for v in after.values() if v != "dir")
    same_bytes = moved == Counter(v for v in before.values() if v != "dir")
    detail = "" if ok else f"exit {res.rc}: {res.stderr.strip()}"
    if ok and (after == before or not same_bytes):
        ok, detail = False, f"{rel} after the accept: not organized, or its bytes changed"
    s.record("accept", ok, time.perf_counter() - t, detail)
    journal(s, "after an accept")
    if not ok or "id" not in action:
        return

    t = time.perf_counter()
    res = s.d.ctl("undo", str(action["id"]), timeout=900)
    ok = res.rc == 0 and isinstance(res.data, dict) and res.data.get("undoes") == action["id"]
    detail = "" if ok else f"exit {res.rc}: {res.stderr.strip()}"
    back = snapshot(folder)
    if ok and back != before:
        lost = sorted(set(before.items()) ^ set(back.items()))[:5]
        ok, detail = False, f"{rel} is not byte-exact after the undo: {lost}"
    s.record("undo", ok, time.perf_counter() - t, detail)
    journal(s, "after an undo")


def journal(s: Soak, when: str = "every minute") -> None:
    """Each action in the daemon's ``history`` is in journal.db read by a fresh connection."""
    t = time.perf_counter()
    problems: list[str] = []
    for attempt in range(2):  # a status that changes between the two reads is read again
        res = s.d.ctl("history", "--limit", "1000", timeout=120)
        if res.rc != 0 or not isinstance(res.data, list):
            s.record("journal", False, 0.0, f"history: exit {res.rc}: {res.stderr.strip()}")
            return
        listed = {int(a["id"]): str(a["status"]) for a in res.data}
        uri = f"file:{s.d.journal_db}?mode=ro"
        con = sqlite3.connect(uri, uri=True, timeout=30)
        try:
            seen = {int(i): str(st) for i, st in con.execute("SELECT id, status FROM actions")}
        finally:
            con.close()
        missing = sorted(set(listed) - set(seen))
        differ = sorted(i for i in listed if i in seen and seen[i] != listed[i])
        problems = []
        if missing:
            problems.append(
                f"actions {missing} missing ({len(seen)} rows seen, {len(listed)} listed)"
            )
        if differ:
            problems.append(f"actions {differ} differ in status")
        if missing or not differ or attempt:
            break
        time.sleep(1.0)
    s.record("journal", not problems, time.perf_counter() - t, f"{when}: {'; '.join(problems)}")


# -- what is sampled --------------------------------------------------------------------------
def proc_status(pid: int) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                key, _sep, value = line.partition(":")
                out[key] = value.strip()
    except OSError:
        pass
    return out


def kb(status_fields: dict[str, str], key: str) -> int:
    return int(status_fields.get(key, "0 kB").split()[0])


def is_model(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"agent.voice.worker" in f.read()
    except OSError:
        return False


def find_model(daemon: int) -> int:
    """The model process: the daemon's descendant running agent.voice.worker (0: none)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            ppid = kb(proc_status(int(entry)), "PPid")
            children.setdefault(ppid, []).append(int(entry))
    todo = list(children.get(daemon, []))
    while todo:
        pid = todo.pop()
        if is_model(pid):
            return pid
        todo += children.get(pid, [])
    return 0


def sample(s: Soak) -> None:
    pid = s.d.pid
    if not (s.model_pid and is_model(s.model_pid)):
        s.model_pid = find_model(pid)
    daemon = proc_status(pid)
    model = proc_status(s.model_pid) if s.model_pid else {}
    try:
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        fds = 0
    with s.lock:
        s.samples.append(
            Sample(
                s.now(),
                kb(daemon, "VmRSS"),
                kb(model, "VmRSS"),
                s.model_pid,
                fds,
                kb(daemon, "Threads"),
                os.getloadavg()[0],
            )
        )


# -- the run ----------------------------------------------------------------------------------
def tidy_tree(root: Path, files: int, per_folder: int) -> None:
    """``files`` files in folders of ``per_folder``, one type a folder, each its own bytes."""
    made = 0
    k = 0
    while made < files:
        folder = root / "user" / "archivo" / f"t{k:03d}"
        folder.mkdir(parents=True)
        ext = EXTENSIONS[k % len(EXTENSIONS)]
        for i in range(min(per_folder, files - made)):
            (folder / f"doc{i:05d}.{ext}").write_bytes(f"archivo t{k:03d} {i}\n".encode())
        made += min(per_folder, files - made)
        k += 1


def integrity(root: Path) -> list[str]:
    """Every SQLite database under .alma that does not pass ``integrity_check``."""
    bad = []
    for db in sorted((root / ".alma").rglob("*.db")) + sorted((root / ".alma").rglob("*.sqlite3")):
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
        try:
            verdict = con.execute("PRAGMA integrity_check").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            verdict = str(exc)
        finally:
            con.close()
        if verdict != "ok":
            bad.append(f"{db.relative_to(root)}: {verdict}")
    return bad


def run(args: argparse.Namespace) -> int:
    base = Path(tempfile.mkdtemp(prefix="almasoak-", dir=args.dir))
    d = DaemonRoot(base, memory=True).init()
    failures: list[str] = []
    try:
        d.policy(monitor__settle_seconds=0, monitor__new_per_day=0)
        d.set_settings("model", "max_tokens", args.max_tokens)
        t = time.perf_counter()
        tidy_tree(d.root, args.files, args.folder_files)
        print(
            f"# {args.files} files in folders of {args.folder_files} made in {time.perf_counter() - t:.1f} s",
            flush=True,
        )
        d.start(timeout=600)
        d.wait_for(lambda: d.ok("status").get("ready") or None, timeout=600, what="ready")
        secret = base / "pw"
        secret.write_bytes(b"soak correct horse battery\n")
        secret.chmod(0o600)
        d.ok("backup", "init", str(base / "disk" / "alma-backup"), "--password-file", str(secret))
        s = Soak(d, args)
        print(header(args), flush=True)
        s.t0 = time.monotonic()
        a = args
        loops: list[tuple[str, float, float, Callable[[Soak], None]]] = [
            ("status", 0.0, a.status_every, status),
            ("sample", 0.0, a.sample_every, sample),
            ("chat", a.chat_first, a.chat_every, chat),
            ("memory", a.memory_first, a.memory_every, memory),
            ("cycle", a.cycle_first, a.cycle_every, cycle),
            ("backup", a.backup_first, a.backup_every, backup),
            ("journal", 60.0, 60.0, journal),
        ]
        threads = [threading.Thread(target=churn, args=(s,), name="churn", daemon=True)]
        threads += [
            threading.Thread(target=s.every, args=loop, name=loop[0], daemon=True) for loop in loops
        ]
        for th in threads:
            th.start()
        deadline = s.t0 + args.minutes * 60
        while time.monotonic() < deadline:
            time.sleep(1.0)
            if d.proc is None or d.proc.poll() is not None:
                failures.append(f"the daemon died: {d.log()[-2000:]}")
                break
        s.stop.set()
        for th in threads:
            th.join(timeout=1800)  # the step under way ends (a backup, a chat) before the stop
        elapsed = s.now()
        journal(s, "at the end")
        stop_t = time.perf_counter()
        d.stop(timeout=120)  # SIGTERM, and exit 0 insisted on
        stop_s = time.perf_counter() - stop_t
        failures += [f"database {b}" for b in integrity(d.root)]
        failed, counts = report(s, elapsed, stop_s)
        failures += failed
        if args.json is not None:
            args.json.write_text(json.dumps(counts, indent=1), encoding="utf-8")
    except Exception as exc:
        failures.append(f"{type(exc).__name__}: {exc}")
        print(d.log(), file=sys.stderr)
    finally:
        if args.keep:
            print(f"# root kept: {d.root}")
            if d.proc is not None and d.proc.poll() is None:
                d.proc.kill()
                d.proc.wait()
        else:
            d.close()
            shutil.rmtree(base, ignore_errors=True)
    if failures:
        print(f"FAILED: {len(failures)}")
        for f in failures:
            print(f"  {f}")
        return 1
    print("PASSED: no failed accept, undo, backup, chat, memory or status; the journal whole")
    return 0


def header(args: argparse.Namespace) -> str:
    load = os.getloadavg()
    return (
        f"# {platform.node()} · {platform.machine()} · {os.cpu_count()} cores · Python "
        f"{platform.python_version()} · load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}\n"
        f"# {args.minutes:g} min: {args.files} files watched, {args.changes:g} changes/s, a chat "
        f"every {args.chat_every:g} s ({args.max_tokens} tokens at most), a memory every "
        f"{args.memory_every:g} s, an accept/undo cycle every {args.cycle_every:g} s, a backup "
        f"at {args.backup_first:g} s and every {args.backup_every:g} s"
    )


def mib(kb_value: float) -> str:
    return f"{kb_value / 1024:.0f}" if kb_value else "-"


def report(s: Soak, elapsed: float, stop_s: float) -> tuple[list[str], dict[str, Any]]:
    minutes = max(1, int(elapsed // 60 + (elapsed % 60 > 1)))
    kinds = ("accept", "undo", "backup", "chat", "memory", "journal")
    print(
        "\nmin  status n   p50 ms   p95 ms  daemon MiB  model MiB  fds  thr  load  "
        + "  ".join(f"{k:>7}" for k in kinds)
    )
    p95s: list[float] = []
    last_of: dict[int, Sample] = {}
    for m in range(minutes):
        in_m = [e for e in s.events if m * 60 <= e.at < (m + 1) * 60]
        lat = [e.seconds for e in in_m if e.kind == "status" and e.ok]
        smp = [x for x in s.samples if m * 60 <= x.at < (m + 1) * 60]
        if smp:
            last_of[m] = smp[-1]
        p50 = pct(lat, 0.5, scale=1000) if lat else float("nan")
        p95 = pct(lat, 0.95, scale=1000) if lat else float("nan")
        if lat:
            p95s.append(p95)
        x = smp[-1] if smp else None
        cells = []
        for k in kinds:
            of_k = [e for e in in_m if e.kind == k]
            cells.append(f"{sum(e.ok for e in of_k)}/{len(of_k)}" if of_k else "-")
        print(
            f"{m + 1:>3}  {len(lat):>8}  {p50:7.0f}  {p95:7.0f}  "
            f"{mib(x.daemon_kb) if x else '-':>10}  {mib(x.model_kb) if x else '-':>9}  "
            f"{x.fds if x else '-':>3}  {x.threads if x else '-':>3}  "
            f"{x.load if x else 0:4.1f}  " + "  ".join(f"{c:>7}" for c in cells)
        )

    failures: list[str] = []
    counts: dict[str, Any] = {}
    print("\n# summary")
    for k in ("status", *kinds):
        of_k = [e for e in s.events if e.kind == k]
        bad = [e for e in of_k if not e.ok]
        counts[k] = {"ok": len(of_k) - len(bad), "total": len(of_k)}
        took = [e.seconds for e in of_k]
        median = f", median {pct(took, 0.5):.2f} s, longest {max(took):.2f} s" if took else ""
        print(f"{k:>8}: {len(of_k) - len(bad)}/{len(of_k)} ok{median}")
        failures += [f"{k} at {e.at:.0f} s: {e.detail}" for e in bad]
    churned = next((e.detail for e in s.events if e.kind == "churn"), "")
    print(f"   churn: {churned} in {elapsed:.0f} s")
    if p95s:
        print(
            f"  status p95: first minute {p95s[0]:.0f} ms, worst minute {max(p95s):.0f} ms "
            f"({max(p95s) / p95s[0]:.2f}x)"
        )
    pids = sorted({x.model_pid for x in s.samples if x.model_pid})
    middle = last_of.get(min(9, minutes // 2 - 1)) if minutes >= 2 else None
    end = s.samples[-1] if s.samples else None
    if end is not None:
        first = next((x for x in s.samples if x.model_kb), None)
        print(
            f"  daemon RSS: {mib(s.samples[0].daemon_kb)} MiB at the start, "
            f"{mib(middle.daemon_kb) if middle else '-'} at minute {min(10, minutes // 2)}, "
            f"{mib(end.daemon_kb)} at the end; fds {min(x.fds for x in s.samples)}-"
            f"{max(x.fds for x in s.samples)}, threads {min(x.threads for x in s.samples)}-"
            f"{max(x.threads for x in s.samples)}"
        )
        print(
            f"  model RSS: {mib(first.model_kb) if first else '-'} MiB at its first sample, "
            f"{mib(middle.model_kb) if middle else '-'} at minute {min(10, minutes // 2)}, "
            f"{mib(end.model_kb)} at the end; model processes {len(pids)} {pids}"
        )
        if middle is not None:
            print(
                f"  end against minute {min(10, minutes // 2)}: daemon "
                f"{ratio(end.daemon_kb, middle.daemon_kb)}, model "
                f"{ratio(end.model_kb, middle.model_kb)}"
            )
    print(f"  SIGTERM to exit: {stop_s:.2f} s")
    counts["failures"] = failures
    return failures, counts


def ratio(end: int, middle: int) -> str:
    return f"{100 * (end - middle) / middle:+.1f} %" if middle and end else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=20.0)
    ap.add_argument("--files", type=int, default=50_000, help="files watched (tidy)")
    ap.add_argument("--folder-files", type=int, default=1_000, help="files per tidy folder")
    ap.add_argument("--changes", type=float, default=20.0, help="file changes a second")
    ap.add_argument("--churn-files", type=int, default=200, help="notes the changes go to")
    ap.add_argument("--chat-every", type=float, default=30.0)
    ap.add_argument("--chat-first", type=float, default=5.0)
    ap.add_argument("--max-tokens", type=int, default=128, help="longest chat answer")
    ap.add_argument("--memory-every", type=float, default=20.0)
    ap.add_argument("--memory-first", type=float, default=2.0)
    ap.add_argument("--cycle-every", type=float, default=120.0, help="accept/undo cycles")
    ap.add_argument("--cycle-first", type=float, default=30.0)
    ap.add_argument("--messy-files", type=int, default=40, help="files of a cycle's folder")
    ap.add_argument("--backup-every", type=float, default=300.0)
    ap.add_argument("--backup-first", type=float, default=60.0)
    ap.add_argument("--status-every", type=float, default=2.0)
    ap.add_argument("--sample-every", type=float, default=5.0)
    ap.add_argument("--dir", default=os.environ.get("ALMA_BENCH_DIR", "/tmp"))
    ap.add_argument("--json", type=Path, help="write the counts and the failures here")
    ap.add_argument("--keep", action="store_true", help="keep the root (and kill the daemon)")
    return run(ap.parse_args())


if __name__ == "__main__":
    sys.exit(main())
