"""What the web panel's Memory pages ask the daemon, in-process: ``MemoryService.list`` (the
newest 30, and the principles) and ``MemoryService.search`` (10 results, use counts handed
out), the store's code as it is against its former code paths, side by side.

    .venv/bin/python bench/bench_memory_calls.py                  # 10,000 memories, 2 pairs
    .venv/bin/python bench/bench_memory_calls.py --quick          # a smoke run

One store is filled as ``bench_memory_e2e.py`` fills it (random normalized vectors, every
memory created at one instant, as a day ingested at once), then copied once per run, so each
run starts from the same counts. Each run is a fresh Python process, ``former`` and
``current`` alternated ``--pairs`` times so a change of the machine's load falls on both:

- ``former``: the listing's index on ``created_ts`` alone (a sort of every memory of one
  instant for each listing; a listing of one type, the principles, read every memory), the
  use counts' writer writing after each search (the next
  search waits for its Chroma transaction, the store's lock held), ``get`` writing every
  pending count before it reads, a search reading its results' records and then, apart,
  their use counts (two Chroma reads), and the ranking reading the use counts as the catalog
  holds them (without the pending ones, nor the store's lock);
- ``current``: the code as it is (``state.memory.statedb``, ``state.memory.store``).

Each call is timed ``--calls`` times after a warm-up, back to back as a page reloaded or a
chat's messages ask them; p50 and p95 per call, and the ratio of the medians. Both runs of a pair make the same calls in the same order on the same
store, and must give the same memories in the same order (use counts included); how far apart
their scores are is printed. Figures in
docs/benchmarks.md ("The web panel").
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from figures import pct

QUERY = "respaldo de la base de datos"  # what bench_panel.py searches
QUERIES = [QUERY, "¿Qué pasó con el backup del disco?", "¿Cuándo tengo que regar el huerto?"]


def former(service: object) -> None:
    """Put the former code paths back in this process (``service``: a MemoryService)."""
    from state.memory import store as store_module
    from state.memory.models import RankFacts
    from state.memory.store import MemoryStore

    store_module.USES_GATHER = 0.0

    def get(self: MemoryStore, ids: list[str], *, archived: bool = False) -> list[object]:
        if not ids:
            return []
        self._write_uses()
        return list(self.records(ids, archived=archived))

    def hand_out(self: MemoryStore, ids: list[str]) -> list[object]:
        found = self.records(ids)
        counts = self.bump_use([r.id for r in found])
        for rec in found:
            rec.use_count = counts.get(rec.id, rec.use_count)
        return list(found)

    def facts(self: MemoryStore, ids: list[str]) -> dict[str, RankFacts]:
        found = self._state.catalog_ranked(ids)
        for rec in self.records([i for i in ids if i not in found]):
            found[rec.id] = RankFacts.of(rec)
        return found

    # The former paths put back on the class for the side-by-side run, and the indexes they
    # read: a bench's patch, which the type checker rightly refuses in product code.
    MemoryStore.get = get  # type: ignore[assignment,method-assign]
    MemoryStore.facts = facts  # type: ignore[assignment,method-assign]
    MemoryStore.hand_out = hand_out  # type: ignore[assignment,method-assign]
    db = service.store._state._db  # type: ignore[attr-defined]
    db.execute("DROP INDEX IF EXISTS catalog_newest")
    db.execute("DROP INDEX IF EXISTS catalog_by_type")
    db.execute("CREATE INDEX IF NOT EXISTS catalog_recent ON catalog (archived, created_ts)")
    db.execute("CREATE INDEX IF NOT EXISTS catalog_count_type ON catalog (archived, memory_type)")


def plain(memory: dict[str, Any]) -> dict[str, Any]:
    """A memory as a call answers it, its score and ranking details aside."""
    return {k: v for k, v in memory.items() if k not in ("score", "why")}


def run(root: Path, mode: str, calls: int) -> dict[str, Any]:
    """Child process: time the calls on ``root`` with the ``mode``'s code; their times and
    each call's last answer."""
    from agent.memory.service import MemoryService
    from policies.layout import RootLayout

    service = MemoryService(RootLayout(root))
    if mode == "former":
        former(service)
    steps = {
        "list --limit 30": lambda i: service.list(limit=30),
        "list principles": lambda i: service.list(limit=100, memory_type="principle"),
        "search (the panel's)": lambda i: service.search(QUERY, limit=10),
        "search (3 queries)": lambda i: service.search(QUERIES[i % 3], limit=10),
    }
    times: dict[str, list[float]] = {}
    answers: dict[str, object] = {}
    for name, step in steps.items():
        for i in range(3):
            step(i)
        times[name] = []
        for i in range(calls):
            began = time.perf_counter()
            answers[name] = step(i)
            times[name].append(time.perf_counter() - began)
    service.close()
    return {"times": times, "answers": answers}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--run", nargs=2, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.run:
        root, mode = options.run
        print(json.dumps(run(Path(root), mode, options.calls)))
        return 0
    if options.quick:
        options.memories, options.calls, options.pairs = 1_000, 10, 1
    from bench_memory_e2e import fill

    base = Path(tempfile.mkdtemp(prefix="almabench-calls-"))
    try:
        filled = base / "filled"
        began = time.perf_counter()
        fill(filled, options.memories)
        print(
            f"# {options.memories} memories (filled in {time.perf_counter() - began:.0f} s), "
            f"{options.calls} calls each after a warm-up, {options.pairs} pairs of runs"
        )
        times: dict[str, dict[str, list[float]]] = {"former": {}, "current": {}}
        worst_score = 0.0
        for pair in range(options.pairs):
            answers = {}
            for mode in ("former", "current"):
                root = base / f"{mode}{pair}"
                shutil.copytree(filled, root)
                cmd = [sys.executable, __file__, "--run", str(root), mode]
                cmd += ["--calls", str(options.calls)]
                done = subprocess.run(cmd, check=True, capture_output=True, text=True)
                got = json.loads(done.stdout.splitlines()[-1])
                for name, values in got["times"].items():
                    times[mode].setdefault(name, []).extend(values)
                answers[mode] = got["answers"]
                shutil.rmtree(root)
            # The same calls in the same order on the same store: the same memories in the
            # same order, use counts included. The scores are compared apart: the former
            # ranking read the use counts as the catalog held them, racing their writer.
            for name, was in answers["former"].items():
                now = answers["current"][name]
                assert [plain(m) for m in was] == [plain(m) for m in now], name
                pairs = zip(was, now, strict=True)
                apart = [abs(a.get("score", 0) - b.get("score", 0)) for a, b in pairs]
                worst_score = max([worst_score, *apart])
        print(f"{'call':<22} {'former p50':>10} {'p95':>8} {'current p50':>11} {'p95':>8}  ratio")
        for name, was in times["former"].items():
            now = times["current"][name]
            ratio = statistics.median(now) / statistics.median(was)
            print(
                f"{name:<22} {pct(was, 0.5, scale=1000):8.2f}ms {pct(was, 0.95, scale=1000):6.2f}ms "
                f"{pct(now, 0.5, scale=1000):9.2f}ms {pct(now, 0.95, scale=1000):6.2f}ms  "
                f"x{ratio:.2f}"
            )
        print(f"the same answers; scores apart by at most {worst_score:.4f}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
