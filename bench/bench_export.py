"""Training export benchmark: 10,000 chat turns exported, time and peak resident memory.

    python bench/bench_export.py               # 10,000 turns, 3 runs of each
    python bench/bench_export.py --turns 2000 --runs 1

A synthetic root of Spanish chat days (the person's turn and alma's answer), one turn in
fifty holding a PIN or an API key, one in a hundred an exact duplicate. Each measured run is a
fresh process (its peak RSS is its own): ``read`` (the baseline: the logs read and paired,
nothing cleaned) beside ``export`` (agent.memory.export for each format: clean-up, secrets
scan, split, rows) and the JSONL text alma-ctl writes. Medians of the runs; the ratio is
export over read.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TOPICS = ["el huerto", "la bici", "el presupuesto", "la tesis", "el viaje", "la mudanza"]


def make_root(root: Path, turns: int) -> None:
    logs = root / "logs"
    logs.mkdir(parents=True)
    days = 50
    per_day = max(1, turns // 2 // days)
    n = 0
    for d in range(days):
        text = f"# 2026-{9 + d // 28:02d}-{1 + d % 28:02d}\n"
        for i in range(per_day):
            topic = TOPICS[n % len(TOPICS)]
            said = f"Hoy trabajé en {topic} durante {n % 7 + 1} horas, paso {n}. ¿Cómo sigo?"
            if n % 50 == 7:
                said = f"mi PIN del banco es {1000 + n % 9000} y la clave es sk-abc{n:06d}xyz789"
            if n % 100 == 13:
                said = "¿Qué tal el día?"
            answer = f"Sigue con {topic} mañana; divide el paso {n} en dos partes pequeñas."
            if n % 100 == 13:
                answer = "Tranquilo, gracias."
            text += f"\n## {i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d} · usuario\n{said}\n"
            text += f"\n## {i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d} · alma\n{answer}\n"
            n += 1
        (logs / f"2026-{9 + d // 28:02d}-{1 + d % 28:02d}.md").write_text(text)


def child(mode: str, root: Path) -> None:
    from agent.memory.export import export, pairs

    start = time.perf_counter()
    if mode == "read":
        count = len(pairs(root))
    else:
        out = export(root, mode)
        text = "".join(
            json.dumps(r, ensure_ascii=False) + "\n" for r in out["train"] + out["valid"]
        )
        count = len(text.splitlines())
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak_mb, "rows": count}))


def run(mode: str, root: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(root)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", nargs=2, metavar=("MODE", "ROOT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return
    with tempfile.TemporaryDirectory(prefix="alma-bench-export-") as tmp:
        root = Path(tmp)
        make_root(root, args.turns)
        print(f"{args.turns} turns, {args.runs} runs each (medians)")
        base: dict[str, float] = {}
        for mode in ("read", "mlx", "chatml", "sharegpt", "alpaca"):
            runs = [run(mode, root) for _ in range(args.runs)]
            seconds = statistics.median(r["seconds"] for r in runs)
            peak = statistics.median(r["peak_mb"] for r in runs)
            if mode == "read":
                base = {"seconds": seconds, "peak": peak}
            ratio = seconds / base["seconds"]
            print(
                f"{mode:9} {seconds:7.2f} s  peak RSS {peak:6.1f} MB  rows {int(runs[0]['rows'])}"
                f"  time x{ratio:.2f} of read"
            )


if __name__ == "__main__":
    main()
