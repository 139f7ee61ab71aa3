"""The model process's memory over a long run: the real worker, fed a chat turn every few seconds.

    .venv/bin/python bench/bench_model_growth.py --minutes 15 --every 3
    .venv/bin/python bench/bench_model_growth.py --minutes 15 --arena-max 2
    .venv/bin/python bench/bench_model_growth.py --minutes 15 --trim

The model process alone (``python -m agent.voice.worker`` with the embedded model, started by
``ProcessBackend`` as the daemon starts it, at nice 0 and one thread), fed the way the chat
feeds it: each turn's prompt assembled by ``agent.voice.prompt.assemble`` (the persona, a block
of memories that grows by one every turn, the session's earlier turns, the message), its
tokens counted through the process, then one streamed answer of at most ``--max-tokens``.
After every turn the process's memory is read from ``/proc/PID/status`` (VmRSS, RssAnon,
RssFile) and ``/proc/PID/smaps_rollup``.

The variants, one a run, tell the causes apart:

- ``--arena-max N``: ``MALLOC_ARENA_MAX=N`` in the process's environment (glibc's arenas:
  fragmentation across the threads' heaps);
- ``--trim``: the worker's loader hook (``ALMA_MODEL_LOADER``) wraps the real llama.cpp backend
  so that ``malloc_trim(0)`` runs after every answer (memory the heap holds but no longer uses
  given back: what remains is in use);
- ``--trace``: the same hook starts ``tracemalloc`` and reports the Python heap after every
  answer (a leak of Python objects shows there).

``--in-process N`` instead compares, each in a fresh process of its own, N short answers by
``llama_cpp.Llama`` as it comes, with ``gc.collect()`` after each, and with the answer's sampler
chain freed at its end (what ``LlamaBackend`` does): the anonymous memory before and after.

It prints one line per ``--report`` turns and the growth per 100 turns in each quarter of the
run: a leak grows by the same amount per turn throughout; a cache or fragmentation levels off.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import platform
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.voice.chat import FALLBACK_PERSONA, HISTORY_SHARE
from agent.voice.model import CHAT_SAMPLING, Chunk, Message, Sampling
from agent.voice.process import ProcessBackend, ProcessOptions
from agent.voice.prompt import assemble

#: The hook's switches, read in the model process (set by this script before it starts).
TRIM_VARIABLE = "ALMA_GROWTH_TRIM"
TRACE_VARIABLE = "ALMA_GROWTH_TRACE"
COLLECT_VARIABLE = "ALMA_GROWTH_COLLECT"

MESSAGES = (
    "¿Qué tengo pendiente para esta semana?",
    "Resume lo que sabes de mis copias de seguridad.",
    "¿Cómo organizo la carpeta de descargas sin perder nada?",
    "Recuérdame qué decidí sobre el proyecto de la mudanza.",
    "Dame tres ideas para ordenar mis fotos por año.",
    "¿Qué pasó con el script que fallaba por las noches?",
    "Escribe una lista corta de tareas para mañana por la mañana.",
    "¿Qué principios me pediste que respetara con los archivos?",
)


# -- the loader hook, run inside the model process --------------------------------------------
class _Trimmed:
    """The real backend, with ``malloc_trim(0)`` and/or a tracemalloc report after each answer."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.kind, self.path, self.n_ctx, self.threads = (
            inner.kind,
            inner.path,
            inner.n_ctx,
            inner.threads,
        )
        self.failure = None
        self.trim = os.environ.get(TRIM_VARIABLE) == "1"
        self.trace = os.environ.get(TRACE_VARIABLE) == "1"
        self.collect = os.environ.get(COLLECT_VARIABLE) == "1"
        self.libc = ctypes.CDLL("libc.so.6")
        if self.trace:
            tracemalloc.start()

    def count_tokens(self, text: str) -> int:
        return int(self.inner.count_tokens(text))

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        json_schema: dict[str, Any] | None = None,
        sampling: Sampling = CHAT_SAMPLING,
    ) -> Iterator[Chunk]:
        try:
            yield from self.inner.stream(
                messages, max_tokens=max_tokens, json_schema=json_schema, sampling=sampling
            )
        finally:
            if self.collect:
                found = gc.collect()
                print(f"ALMA_GROWTH collected={found}", file=sys.stderr, flush=True)
            if self.trim:
                self.libc.malloc_trim(0)
            if self.trace:
                current, _peak = tracemalloc.get_traced_memory()
                print(f"ALMA_GROWTH traced={current}", file=sys.stderr, flush=True)

    def close(self) -> None:
        self.inner.close()


def load(path: str, *, context_tokens: int, threads: int) -> _Trimmed:
    """``ALMA_MODEL_LOADER=bench.bench_model_growth:load``: the worker's default loader, wrapped."""
    from agent.voice.llama import LlamaBackend

    return _Trimmed(LlamaBackend.load(path, context_tokens=context_tokens, threads=threads))


# -- this process: feed it, read its memory ---------------------------------------------------
def status_kb(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for name in ("status", "smaps_rollup"):
        with open(f"/proc/{pid}/{name}", encoding="ascii") as f:
            for line in f:
                key, _sep, rest = line.partition(":")
                parts = rest.split()
                if len(parts) == 2 and parts[1] == "kB":
                    out.setdefault(key, int(parts[0]))
                elif key == "Threads":
                    out[key] = int(parts[0])
    return out


@dataclass
class Sample:
    turn: int
    seconds: float
    rss: int  # kB
    anon: int
    file: int
    threads: int
    tokens: int  # the prompt's


def fill(backend: ProcessBackend, tokens: int) -> str:
    """A text of about ``tokens`` tokens (by the model's count), short of it rather than over."""
    line = "La persona guardó notas sobre la mudanza, las fotos y las copias de seguridad. "
    text = line
    while backend.count_tokens(text + text) < tokens:
        text += text
    while backend.count_tokens(text + line) < tokens:
        text += line
    return text


PROBE_MODES = ("as it comes", "gc.collect()", "chain freed")


def probe(mode: str, answers: int) -> None:
    """``answers`` answers of 4 tokens in this process; prints RssAnon before and after."""
    from llama_cpp import Llama

    from agent.voice.model_file import resolve_model_path

    llama = Llama(
        model_path=str(resolve_model_path("embedded")), n_ctx=4096, n_threads=1, verbose=False
    )

    def answer() -> None:
        for _chunk in llama.create_chat_completion(
            messages=[{"role": "user", "content": "Hola"}], max_tokens=4, stream=True
        ):
            pass
        if mode == "gc.collect()":
            gc.collect()
        elif mode == "chain freed" and llama._sampler is not None:
            llama._sampler.close()
            llama._sampler = None

    for _ in range(5):
        answer()
    gc.collect()
    before = status_kb(os.getpid())["RssAnon"]
    for _ in range(answers):
        answer()
    after = status_kb(os.getpid())["RssAnon"]
    print(
        f"{mode:>14}: anon {mib(before)} -> {mib(after)} MiB after {answers} answers "
        f"({(after - before) / answers:.0f} KiB an answer)",
        flush=True,
    )


def mib(kb: float) -> str:
    return f"{kb / 1024:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=15.0)
    ap.add_argument("--every", type=float, default=3.0, help="seconds between turns' starts")
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--arena-max", type=int, default=0, help="MALLOC_ARENA_MAX for the process")
    ap.add_argument("--trim", action="store_true", help="malloc_trim(0) after every answer")
    ap.add_argument("--trace", action="store_true", help="tracemalloc in the process")
    ap.add_argument("--collect", action="store_true", help="a full gc.collect() after every answer")
    ap.add_argument(
        "--warm", action="store_true", help="first one prompt that fills the whole context"
    )
    ap.add_argument("--report", type=int, default=20, help="a line every N turns")
    ap.add_argument("--json", type=Path, help="write every sample here")
    ap.add_argument("--in-process", type=int, default=0, metavar="N")
    ap.add_argument("--probe-mode", choices=PROBE_MODES, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe_mode:
        probe(args.probe_mode, args.in_process)
        return 0
    if args.in_process:
        print(f"# load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        for mode in PROBE_MODES:
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--in-process",
                    str(args.in_process),
                    "--probe-mode",
                    mode,
                ],
                check=True,
            )
        return 0

    if args.arena_max:
        os.environ["MALLOC_ARENA_MAX"] = str(args.arena_max)
    hooked = args.trim or args.trace or args.collect
    if hooked:
        os.environ["ALMA_MODEL_LOADER"] = "bench.bench_model_growth:load"
        os.environ[TRIM_VARIABLE] = "1" if args.trim else "0"
        os.environ[TRACE_VARIABLE] = "1" if args.trace else "0"
        os.environ[COLLECT_VARIABLE] = "1" if args.collect else "0"
        # The worker runs with this repository as its working directory: bench/ is importable.
        os.chdir(Path(__file__).resolve().parents[1])

    from agent.voice.model_file import resolve_model_path

    path = str(resolve_model_path("embedded"))
    # A loaded machine evaluates a full context slowly: no stall is taken for a hang here.
    options = ProcessOptions(n_ctx=args.n_ctx, threads=args.threads, nice=0, stall_s=3600.0)
    t0 = time.monotonic()
    backend = ProcessBackend.start(path, options)
    pid = backend.pid
    load = os.getloadavg()
    print(
        f"# {platform.node()} · {os.cpu_count()} cores · load average {load[0]:.1f} "
        f"{load[1]:.1f} {load[2]:.1f} · model process {pid} · "
        f"MALLOC_ARENA_MAX={args.arena_max or 'unset'} · trim={args.trim} · trace={args.trace} · "
        f"collect={args.collect}"
    )
    base = status_kb(pid)
    print(
        f"# after load: RSS {mib(base['VmRSS'])} MiB (anon {mib(base['RssAnon'])}, "
        f"file {mib(base['RssFile'])}), threads {base['Threads']}"
    )
    if args.warm:
        warm = fill(backend, backend.n_ctx - 64)
        for _piece in backend.stream([{"role": "user", "content": warm}], max_tokens=8):
            pass
        full = status_kb(pid)
        print(
            f"# after one prompt of {backend.count_tokens(warm)} tokens (the context full): "
            f"RSS {mib(full['VmRSS'])} MiB (anon {mib(full['RssAnon'])}, "
            f"file {mib(full['RssFile'])})"
        )
    print("turn   min   RSS MiB   anon MiB   file MiB   threads   prompt tokens")
    samples: list[Sample] = []
    memories: list[str] = []
    history: list[tuple[str, str]] = []
    deadline = t0 + args.minutes * 60
    turn = 0
    try:
        while time.monotonic() < deadline:
            started = time.monotonic()
            turn += 1
            message = MESSAGES[turn % len(MESSAGES)] + f" (turno {turn})"
            memories.append(
                f"- [memoria {turn}] El {turn % 28 + 1} de noviembre la persona anotó: "
                f"revisar la carpeta {turn % 50} y la copia {turn % 7}."
            )
            prompt = assemble(
                persona=FALLBACK_PERSONA,
                context="- No borres nada sin preguntar.",
                memories="\n".join(reversed(memories[-40:])),
                history=history,
                message=message,
                n_ctx=backend.n_ctx,
                max_answer=args.max_tokens,
                count=backend.count_tokens,
                history_tokens=backend.n_ctx // HISTORY_SHARE,
            )
            answer = "".join(
                text
                for text, _finish in backend.stream(
                    prompt.messages, max_tokens=min(args.max_tokens, prompt.max_answer)
                )
            )
            if backend.failure is not None:
                raise SystemExit(f"the model process failed: {backend.failure}")
            history = [*history, ("user", message), ("assistant", answer)][-4:]
            now = status_kb(pid)
            samples.append(
                Sample(
                    turn,
                    time.monotonic() - t0,
                    now["VmRSS"],
                    now["RssAnon"],
                    now["RssFile"],
                    now["Threads"],
                    prompt.tokens,
                )
            )
            if turn % args.report == 0:
                s = samples[-1]
                print(
                    f"{turn:>4} {s.seconds / 60:5.1f} {mib(s.rss):>9} {mib(s.anon):>10} "
                    f"{mib(s.file):>10} {s.threads:>9} {s.tokens:>15}",
                    flush=True,
                )
            time.sleep(max(0.0, args.every - (time.monotonic() - started)))
    finally:
        stderr = "\n".join(backend._stderr)
        backend.close()
    traced = [int(x.split("=")[1]) for x in stderr.split() if x.startswith("traced=")]
    collected = [int(x.split("=")[1]) for x in stderr.split() if x.startswith("collected=")]
    report(samples, base, traced)
    if collected:
        print(
            f"# gc.collect() after each answer found {min(collected)}-{max(collected)} "
            "unreachable objects"
        )
    if args.json is not None:
        args.json.write_text(json.dumps([s.__dict__ for s in samples]), encoding="utf-8")
    return 0


def report(samples: list[Sample], base: dict[str, int], traced: list[int]) -> None:
    if len(samples) < 8:
        print("# too few turns for a curve")
        return
    n = len(samples)
    q = n // 4
    print(f"# {n} turns; growth per 100 turns in each quarter (RSS / anon, MiB):")
    for i in range(4):
        a, b = samples[i * q], samples[min(n - 1, (i + 1) * q)]
        turns = max(1, b.turn - a.turn)
        print(
            f"#   turns {a.turn:>4}-{b.turn:<4} RSS {100 * (b.rss - a.rss) / turns / 1024:+.2f}"
            f"  anon {100 * (b.anon - a.anon) / turns / 1024:+.2f}"
        )
    last = samples[-1]
    print(
        f"# RSS {mib(base['VmRSS'])} after load -> {mib(samples[0].rss)} after turn 1 -> "
        f"{mib(samples[n // 2].rss)} at turn {samples[n // 2].turn} -> {mib(last.rss)} at "
        f"turn {last.turn} (anon {mib(last.anon)}, file {mib(last.file)})"
    )
    if traced:
        print(
            f"# Python heap (tracemalloc): {traced[0] / 1024:.0f} KiB after turn 1 -> "
            f"{traced[-1] / 1024:.0f} KiB after the last"
        )


if __name__ == "__main__":
    sys.exit(main())
