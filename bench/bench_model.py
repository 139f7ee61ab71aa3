"""The daemon's model, with the embedded GGUF (SmolLM2-135M Q4_1): its speed, the cost of the process it runs in, the context it is given, and the socket while it generates.

    .venv/bin/python bench/bench_model.py              # everything (a few minutes)
    .venv/bin/python bench/bench_model.py --quick      # fewer runs
    .venv/bin/python bench/bench_model.py --quick --parts context   # one measure only

1. Model load time, in this process (LlamaBackend.load) and as the daemon loads it now, in a
   model process of its own (ProcessBackend.start: a Python start, the load, a probe).
2. Time to first token and tokens/s of a 64-token answer, in process and through the model
   process side by side (the median of twice ``--runs`` each), for each ``--threads`` value:
   the cost of the process boundary.
3. Context building at 10,000 memories: what the chat pays per message, in the daemon,
   before the prompt is built: ``MemoryService.context(message, budget=1500)``, the
   call ``agent.daemon`` makes for each ``chat.send`` (embed the message, the principles, the
   hybrid search's candidates, the relevance cut, the text within the budget, the use counts
   handed out), in process, over varied Spanish messages after 3 warm-up calls: p50/p95 wall
   time, and the p50 of the process's CPU time, all threads (what a quiet machine would
   approach). The store is filled with random normalized vectors as bench_memory.py does.
4. ``alma-ctl status`` while the model generates, as a ratio to idle: a real daemon, the model
   warmed by one answer, then ``--status-runs`` status calls idle and as many while a long
   answer streams (checked busy), alternating so both see the same machine.

The targets, and the latest figures, are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.voice.llama import LlamaBackend
from agent.voice.model import Backend, generate
from agent.voice.model_file import embedded_model_path
from agent.voice.process import ProcessBackend, ProcessOptions
from bench.figures import pct
from control.client import Client
from tests.support.daemon import ALMA_CTL, DaemonRoot

MESSAGES = [
    "¿Qué pasó con el backup la semana pasada?",
    "¿Cuándo estuve más cansado este mes?",
    "¿Cómo va la tesis?",
    "¿Qué decidí sobre el presupuesto del viaje a Lisboa?",
    "Hoy dormí cuatro horas, ¿qué me recomiendas?",
    "¿Qué tenía pendiente con la guitarra?",
]

#: What the store knows that answers MESSAGES (one each, the last two without an answer).
ANSWERS = [
    "El backup del martes falló porque el disco USB de 2 TB no se montó después de reiniciar.",
    "Esta semana estuve agotado: dormí mal el jueves y el viernes trabajé doce horas.",
    "La tesis va lenta: el capítulo 3 de resultados está a medias y el tutor quiere verlo en enero.",
    "Decidí que el viaje a Lisboa no pase de 600 euros, hotel y tren incluidos.",
]


def _timed(backend: Backend, message: str) -> tuple[float, float]:
    result = generate(
        backend,
        [{"role": "user", "content": message}],
        max_tokens=64,
        deadline=time.monotonic() + 600,
        cancelled=bool,
    )
    return (result.first_token_ms or 0) / 1000, result.tokens / (result.ms / 1000)


def bench_load_and_speed(runs: int, threads: int) -> dict[str, float]:
    """The same model in this process (as the daemon ran it before) and in its model process
    (as the daemon runs it now), loaded side by side, each message answered by both in turn
    (which one goes first alternates), so both see the same machine. The model process runs at
    nice 0 here: what is measured is the boundary (a pipe, JSON lines), not the priority."""
    path = str(embedded_model_path())
    loads: dict[str, list[float]] = {"in": [], "proc": []}
    for _ in range(runs):
        t0 = time.perf_counter()
        LlamaBackend.load(path, context_tokens=4096, threads=threads).close()
        loads["in"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ProcessBackend.start(path, ProcessOptions(n_ctx=4096, threads=threads, nice=0)).close()
        loads["proc"].append(time.perf_counter() - t0)
    backends: dict[str, Backend] = {
        "in": LlamaBackend.load(path, context_tokens=4096, threads=threads),
        "proc": ProcessBackend.start(path, ProcessOptions(n_ctx=4096, threads=threads, nice=0)),
    }
    firsts: dict[str, list[float]] = {"in": [], "proc": []}
    speeds: dict[str, list[float]] = {"in": [], "proc": []}
    try:
        for i in range(runs * 2):
            order = ("in", "proc") if i % 2 == 0 else ("proc", "in")
            for name in order:
                first, speed = _timed(backends[name], MESSAGES[i % len(MESSAGES)])
                firsts[name].append(first)
                speeds[name].append(speed)
    finally:
        for backend in backends.values():
            backend.close()
    out: dict[str, float] = {}
    for name in ("in", "proc"):
        out[f"{name}_load_s"] = statistics.median(loads[name])
        out[f"{name}_ttft_s"] = statistics.median(firsts[name])
        out[f"{name}_tokens_per_s"] = statistics.median(speeds[name])
    return out


def bench_context(size: int, queries: int) -> dict[str, float]:
    import numpy as np

    from agent.memory.service import MemoryService
    from bench.bench_memory import fill
    from policies.layout import RootLayout
    from state.memory import get_embedder

    emb = get_embedder("e5-small")
    with tempfile.TemporaryDirectory() as tmp:
        layout = RootLayout(Path(tmp))
        layout.system.mkdir()
        layout.principles_file.write_text(
            "# Principios\n\n- Respóndeme en español, breve.\n- Nada se borra para siempre.\n",
            encoding="utf-8",
        )
        svc = MemoryService(layout, cap=size * 2)
        fill(svc, size - len(ANSWERS), emb.dim, np.random.default_rng(0))
        # Real memories that answer the messages, embedded for real: without them no random
        # vector passes the relevance cut and the timing would never read or hand out a record.
        for text in ANSWERS:
            svc.add(text)
        for message in MESSAGES[:3]:
            svc.context(message, budget=1500)  # warm up
        times, cpu, handed = [], [], []
        for i in range(queries):
            c0, t0 = time.process_time(), time.perf_counter()
            ctx = svc.context(MESSAGES[i % len(MESSAGES)], budget=1500)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            handed.append(sum(1 for item in ctx["items"] if item.get("id")))
        count = svc.count()
        svc.close()
    return {
        "memories": count,
        "p50_ms": pct(times, 0.5) * 1000,
        "p95_ms": pct(times, 0.95) * 1000,
        "cpu_p50_ms": pct(cpu, 0.5) * 1000,
        "memories_handed_mean": statistics.mean(handed),
    }


def _status_once(d: DaemonRoot) -> float:
    import subprocess

    t0 = time.perf_counter()
    done = subprocess.run(
        [ALMA_CTL, "--root", str(d.root), "status"], env=d.env, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - t0
    assert done.returncode == 0, done.stderr
    return elapsed


def _status_socket(client: Client, n: int) -> list[float]:
    """``status`` as one socket call from this process: the daemon's own share, without the
    start of an alma-ctl process (which is what a loaded machine stretches)."""
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        client.call("status")
        out.append(time.perf_counter() - t0)
    return out


def bench_status_while_generating(threads: int, runs: int) -> dict[str, float]:
    d = DaemonRoot().init()
    try:
        d.set_settings("model", "threads", threads)
        d.set_settings("model", "max_tokens", 100_000 // 32)
        d.set_settings("model", "timeout_seconds", 3600)
        d.start()
        client = Client(d.socket, 600)
        session = client.call("chat.start")["session"]  # type: ignore[index]
        warm = client.stream("chat.send", session=session, message="Hola")
        for _ in warm:
            pass
        idle, busy, sock_idle, sock_busy = [], [], [], []
        for _ in range(runs):
            idle.append(_status_once(d))
            sock_idle += _status_socket(client, 3)
            stream = client.stream(
                "chat.send", session=session, message="Escribe una historia larguísima."
            )
            started = threading.Event()

            def consume(s: object = stream, flag: threading.Event = started) -> None:
                for event in s:  # type: ignore[attr-defined]
                    if event["type"] == "token":
                        flag.set()

            reader = threading.Thread(target=consume)
            reader.start()
            started.wait(600)
            assert client.call("model.status")["busy"] is True  # type: ignore[index]
            busy.append(_status_once(d))
            sock_busy += _status_socket(client, 3)
            stream.cancel()
            reader.join(600)
        return {
            "idle_ms": statistics.median(idle) * 1000,
            "busy_ms": statistics.median(busy) * 1000,
            "ratio": statistics.median(busy) / statistics.median(idle),
            "sock_idle_ms": statistics.median(sock_idle) * 1000,
            "sock_busy_ms": statistics.median(sock_busy) * 1000,
        }
    finally:
        d.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", default="1,2", help="llama.cpp threads, comma-separated")
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument(
        "--parts", default="speed,context,status", help="which measures, comma-separated"
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # a TextIOWrapper
    runs = 2 if args.quick else 5
    threads = [int(t) for t in args.threads.split(",")]
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    for t in threads if "speed" in parts else []:
        r = bench_load_and_speed(runs, t)
        for name, where in (("in", "in process"), ("proc", "model process")):
            print(
                f"threads={t} {where}: load {r[name + '_load_s']:.2f} s, first token "
                f"{r[name + '_ttft_s']:.3f} s, {r[name + '_tokens_per_s']:.1f} tokens/s"
            )
        print(
            f"threads={t} boundary: first token x{r['proc_ttft_s'] / r['in_ttft_s']:.3f}, "
            f"tokens/s x{r['proc_tokens_per_s'] / r['in_tokens_per_s']:.3f} (target: within 5%)"
        )
    if "context" in parts:
        c = bench_context(args.memories, 20 if args.quick else 100)
        print(
            f"context at {c['memories']:.0f} memories: p50 {c['p50_ms']:.1f} ms, "
            f"p95 {c['p95_ms']:.1f} ms (target p95 50 ms); CPU p50 {c['cpu_p50_ms']:.1f} ms; "
            f"memories handed out per message {c['memories_handed_mean']:.1f}; load average {os.getloadavg()[0]:.1f}"
        )
    for t in threads if "status" in parts else []:
        s = bench_status_while_generating(t, 5 if args.quick else 15)
        print(
            f"threads={t}: alma-ctl status idle {s['idle_ms']:.0f} ms, while generating "
            f"{s['busy_ms']:.0f} ms, ratio {s['ratio']:.2f}x (target 1.5x); one socket call "
            f"idle {s['sock_idle_ms']:.1f} ms, while generating {s['sock_busy_ms']:.1f} ms; "
            f"load average {os.getloadavg()[0]:.1f}"
        )
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
