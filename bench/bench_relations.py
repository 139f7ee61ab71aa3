"""The cost of reading who is who (``agent.memory.relations``) in a chat message's context, at
10,000 memories, in-process: ``MemoryService.context`` for messages that name a relation
("mi pareja", "el peque", "my kid"...), with the expansion and without it, alternated in one
process so a change of the machine's load falls on both.

    .venv/bin/python bench/bench_relations.py               # 10,000 memories, 40 messages
    .venv/bin/python bench/bench_relations.py --quick       # a smoke run

The store is filled as ``bench_memory.py`` fills it (random normalized vectors), its texts
drawn from templates where a share name a partner, a child, a mother, a boss (what the
expansion reads), so the lexical look-ups find and read memories as in a person's store.
Prints p50 and p95 of each, and the ratio. Figures in docs/benchmarks.md ("Who is who").
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from figures import pct

QUESTIONS = [
    "¿qué no puede comer mi pareja?",
    "¿a qué hora sale del cole el peque?",
    "what can't my kid eat?",
    "¿qué tren cojo para ir a casa del abuelo?",
    "¿cómo aviso a mi jefa si hay algo urgente?",
    "¿cuándo es el cumpleaños de mi madre?",
    "¿qué le regalo a mi hermana por su santo?",
    "¿dónde aparqué el coche ayer?",  # no relation: the expansion reads nothing
]
NAMES = ["Amparo", "Jorge", "Pau", "Vega", "Pilar", "Carmen", "Sergio", "Nuria", "Lucas", "Iván"]
TEMPLATES = [
    "Mi pareja {n} ha vuelto tarde del trabajo hoy.",
    "La tutora de {n} quiere vernos el lunes número {i}.",
    "El aniversario con {n} cae en sábado este año, nota {i}.",
    "Mi madre, {n}, me ha llamado por lo del médico {i}.",
    "A {n}, la jefa, le mando el informe {i} por correo.",
    "{n} y yo fuimos al mercado a por fruta, vez {i}.",
    "Recuerdo sintético número {i} sobre el huerto y las tomateras.",
    "Recuerdo sintético número {i} sobre el backup del disco.",
    "Recuerdo sintético número {i} sobre la bici y el candado.",
    "Recuerdo sintético número {i} sobre la cena con amigos.",
]


def fill(svc: object, size: int, dim: int) -> None:
    from state.memory.models import MemoryRecord

    rng = np.random.default_rng(0)
    now = datetime(2026, 11, 28, tzinfo=UTC).isoformat(timespec="seconds")
    for start in range(0, size, 1000):
        n = min(1000, size - start)
        vecs = rng.standard_normal((n, dim)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        records = [
            MemoryRecord(
                id=f"bench{start + i:07d}",
                content=TEMPLATES[(start + i) % len(TEMPLATES)].format(
                    n=NAMES[(start + i) % len(NAMES)], i=start + i
                ),
                importance=3,
                memory_type="episode",
                created_at=now,
                layer="L1",
                kind="add",
            )
            for i in range(n)
        ]
        svc.store.add(records, vecs)  # type: ignore[attr-defined]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--messages", type=int, default=40, help="messages timed each way")
    ap.add_argument("--quick", action="store_true", help="2,000 memories, 16 messages")
    args = ap.parse_args()
    size, messages = (2_000, 16) if args.quick else (args.size, args.messages)

    from agent.memory import context as context_module
    from agent.memory import relations
    from agent.memory.service import MemoryService
    from policies.layout import RootLayout
    from state.memory import get_embedder

    expand = relations.expand

    def unexpanded(store: object, message: str) -> relations.Expansion:
        return relations.Expansion(message)

    emb = get_embedder("e5-small")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for sub in ("system", "logs", "user", ".alma"):
            (root / sub).mkdir()
        svc = MemoryService(RootLayout(root), cap=size * 2)
        fill(svc, size, emb.dim)
        times: dict[str, list[float]] = {"with": [], "without": []}
        expand_t: list[float] = []
        for q in QUESTIONS[:3]:
            svc.context(q, count_use=False)  # warm up
        for i in range(messages):
            q = QUESTIONS[i % len(QUESTIONS)]
            for way in ("with", "without") if i % 2 == 0 else ("without", "with"):
                context_module.expand = expand if way == "with" else unexpanded  # type: ignore[attr-defined]
                t0 = time.perf_counter()
                svc.context(q, count_use=False)
                times[way].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            expand(svc.store, q)
            expand_t.append(time.perf_counter() - t0)
        context_module.expand = expand  # type: ignore[attr-defined]
        svc.close()
    for way, t in times.items():
        print(
            f"context {way} the expansion: p50 {pct(t, 0.5, scale=1000):.1f} ms, "
            f"p95 {pct(t, 0.95, scale=1000):.1f} ms"
        )
    print(
        f"the expansion alone: p50 {pct(expand_t, 0.5, scale=1000):.1f} ms, "
        f"p95 {pct(expand_t, 0.95, scale=1000):.1f} ms"
    )
    ratio = statistics.median(times["with"]) / statistics.median(times["without"])
    print(
        f"ratio of the medians (with / without): {ratio:.2f}; {size:,} memories, "
        f"{messages} messages each way"
    )


if __name__ == "__main__":
    main()
