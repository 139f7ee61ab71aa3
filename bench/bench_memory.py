"""Memory benchmark: ingest rate, search latency at scale, resident memory.

    python bench/bench_memory.py                      # 10,000 and 100,000 memories (minutes)
    python bench/bench_memory.py --quick              # a small version (seconds)
    python bench/bench_memory.py --sizes 10000 --ingest 200 --queries 100

Ingest uses the real default embedder on a synthetic Spanish chat log. The large indexes are
filled with random normalized vectors (the embedder would take over an hour for 100,000), so
search latency is measured three ways: the embedder's query alone, Chroma's query alone, and
MemoryService.search end to end (embed + query + use_count update; the socket is not included).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.memory.service import MemoryService
from bench.figures import pct
from policies.layout import RootLayout
from state.memory import MemoryRecord, get_embedder

TOPICS = [
    "el huerto",
    "la bicicleta",
    "el examen",
    "la mudanza",
    "el presupuesto",
    "la guitarra",
    "el viaje a Lisboa",
    "la tesis",
    "el coche",
    "el backup",
    "la reunión",
    "el gimnasio",
]
FEELINGS = ["contento", "agotado", "preocupado", "tranquilo", "con prisa", "motivado"]
QUERIES = [
    "¿Qué pasó con el backup?",
    "¿Cuándo estuve cansado?",
    "¿Cómo va la tesis?",
    "¿Qué dije del viaje?",
    "¿Qué decidí sobre el presupuesto?",
    "¿Cómo duermo?",
]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def synthetic_log(n: int, rng: random.Random) -> str:
    out = ["# 2026-11-21\n"]
    for i in range(n):
        h, m = 8 + i * 14 // max(n, 1), i % 60
        out.append(
            f"## {h:02d}:{m:02d}:{i % 60:02d} · usuario\nHoy trabajé en {rng.choice(TOPICS)} "
            f"durante {rng.randint(1, 9)} horas y terminé {rng.choice(FEELINGS)}; mañana sigo "
            f"con {rng.choice(TOPICS)}, paso {i}. #{rng.choice(['diario', 'trabajo', 'salud'])}\n"
        )
        out.append(
            f"## {h:02d}:{m:02d}:{i % 60:02d} · alma\nDe acuerdo.\n"
            "<!-- model: bench · tokens: 3 · ms: 1 -->\n"
        )
    return "\n".join(out) + "\n"


def bench_ingest(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        layout = RootLayout(Path(tmp))
        layout.logs.mkdir(parents=True)
        (layout.logs / "2026-11-21.md").write_text(synthetic_log(n, random.Random(1)))
        svc = MemoryService(layout, clock=lambda: datetime(2026, 11, 22, tzinfo=UTC))
        t0 = time.perf_counter()
        done = svc.rescan_logs()
        elapsed = time.perf_counter() - t0
        svc.close()
    return {"paragraphs": n, "memories": done, "seconds": elapsed, "rate": n / elapsed}


def fill(svc: MemoryService, n: int, dim: int, rng: np.random.Generator) -> float:
    t0 = time.perf_counter()
    batch = 5000
    now = datetime(2026, 11, 22, tzinfo=UTC).isoformat()
    for start in range(0, n, batch):
        size = min(batch, n - start)
        vecs = rng.standard_normal((size, dim)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        records = [
            MemoryRecord(
                id=f"bench{start + i:07d}",
                content=f"Recuerdo sintético número {start + i}.",
                tags=[TOPICS[(start + i) % len(TOPICS)].split()[-1]],
                importance=1 + (i % 5),
                memory_type="episode",
                created_at=now,
                layer="L0" if i % 3 else "L1",
                kind="turn",
            )
            for i in range(size)
        ]
        svc.store.add(records, vecs)
    return time.perf_counter() - t0


def bench_search(size: int, queries: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    emb = get_embedder("e5-small")
    with tempfile.TemporaryDirectory() as tmp:
        svc = MemoryService(RootLayout(Path(tmp)), cap=size * 2)
        fill_s = fill(svc, size, emb.dim, rng)
        qtexts = [QUERIES[i % len(QUERIES)] for i in range(queries)]
        embed_t, chroma_t, e2e_t, tag_t, ctx_t = [], [], [], [], []
        for q in qtexts[:3]:
            svc.search(q)  # warm up
        for q in qtexts:
            t0 = time.perf_counter()
            vec = emb.query(q)
            embed_t.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            svc.store.query(vec.reshape(1, -1), 5)
            chroma_t.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            svc.search(q, limit=5)
            e2e_t.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            svc.search(q, limit=5, tags=["huerto"])
            tag_t.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            svc.context(q)  # what the daemon builds for each chat message
            ctx_t.append(time.perf_counter() - t0)
        rss = rss_mb()
        svc.close()
    return {
        "size": size,
        "fill_s": fill_s,
        "embed_p50": pct(embed_t, 0.5, scale=1000),
        "chroma_p50": pct(chroma_t, 0.5, scale=1000),
        "chroma_p95": pct(chroma_t, 0.95, scale=1000),
        "e2e_p50": pct(e2e_t, 0.5, scale=1000),
        "e2e_p95": pct(e2e_t, 0.95, scale=1000),
        "tag_p50": pct(tag_t, 0.5, scale=1000),
        "tag_p95": pct(tag_t, 0.95, scale=1000),
        "ctx_p50": pct(ctx_t, 0.5, scale=1000),
        "ctx_p95": pct(ctx_t, 0.95, scale=1000),
        "rss_mb": rss,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000", help="index sizes, comma-separated")
    ap.add_argument("--ingest", type=int, default=300, help="paragraphs for the ingest rate")
    ap.add_argument("--queries", type=int, default=100, help="queries per size")
    ap.add_argument(
        "--quick", action="store_true", help="sizes 1000,5000; 40 paragraphs; 30 queries"
    )
    args = ap.parse_args()
    if args.quick:
        args.sizes, args.ingest, args.queries = "1000,5000", 40, 30
    sizes = [int(s) for s in args.sizes.split(",") if s]

    t0 = time.perf_counter()
    get_embedder("e5-small")
    print(f"embedder load: {time.perf_counter() - t0:.2f} s, RSS {rss_mb():.0f} MB", flush=True)
    ing = bench_ingest(args.ingest)
    print(
        f"ingest: {ing['paragraphs']} paragraphs in {ing['seconds']:.1f} s = "
        f"{ing['rate']:.1f} memories/s (default embedder, {ing['memories']} stored)",
        flush=True,
    )
    rows = []
    for size in sizes:
        rows.append(bench_search(size, args.queries))
        r = rows[-1]
        print(f"  filled {size:,} in {r['fill_s']:.0f} s", flush=True)
    print()
    head = (
        "memories",
        "embed p50",
        "chroma p50",
        "chroma p95",
        "search p50",
        "search p95",
        "tag-filtered p50",
        "tag-filtered p95",
        "context p50",
        "context p95",
        "RSS MB",
    )
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        cells = (
            [f"{r['size']:,}"]
            + [
                f"{r[k]:.1f} ms"
                for k in (
                    "embed_p50",
                    "chroma_p50",
                    "chroma_p95",
                    "e2e_p50",
                    "e2e_p95",
                    "tag_p50",
                    "tag_p95",
                    "ctx_p50",
                    "ctx_p95",
                )
            ]
            + [f"{r['rss_mb']:.0f}"]
        )
        print("| " + " | ".join(cells) + " |")
    print(
        f"\nqueries per size: {args.queries}; median of embed alone "
        f"{statistics.median([r['embed_p50'] for r in rows]):.1f} ms"
    )


if __name__ == "__main__":
    main()
