"""The model process: ``agent.voice.worker``'s :func:`main`, started (isolated and confined, see
agent.voice.process) and watched by the daemon. Native code fed with text from anywhere runs here, never in the
daemon: whatever it does (a signal, a hang, all the memory), the daemon carries on.

It loads one model, tries one short generation, says ``ready``, then serves one request at a
time, as JSON lines: requests on stdin; answers on the stdout it was started with (fd 1 is
pointed at stderr first, so nothing llama.cpp prints can corrupt the channel). A ``cancel``
line is read by a second thread while a generation runs; the generation stops at its next
piece. End of stdin, or the daemon's death, ends the process.

Exit codes the daemon reads: 0 asked to exit or stdin closed, 3 out of memory (the limit given
with ``--memory-mb`` or the machine's), 4 could not load (after an ``error`` line).
"""

from __future__ import annotations

import argparse
import ctypes
import faulthandler
import importlib
import json
import os
import queue
import resource
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import IO

from agent.voice.model import CHAT_SAMPLING, Backend, Sampling
from policies.errors import AlmaError
from policies.i18n import _, language
from policies.results import JSONObject
from sandbox.landlock import ENV_REPORT

EXIT_OOM = 3
EXIT_LOAD = 4
#: The short generation every load must pass before the model is trusted with a person's text.
PROBE = [{"role": "user", "content": "Hola"}]
#: The instructions the portable build of llama.cpp needs (alma.sh: GGML_AVX2, FMA, F16C).
CPU_NEEDS = ("avx", "avx2", "fma", "f16c")
#: A test may name a loader of its own (``module:function``, called as the default one).
LOADER_VARIABLE = "ALMA_MODEL_LOADER"
#: Where such a loader may come from: the repository's tests and benchmarks, never a module the
#: environment could name in production (``os:system``).
LOADER_PACKAGES = ("tests", "bench")

_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="alma-model")
    parser.add_argument("--path", required=True)
    parser.add_argument("--n-ctx", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--memory-mb", type=int, default=0)
    parser.add_argument("--nice", type=int, default=0)
    parser.add_argument("--lora", default=None)  # a LoRA adapter (GGUF) applied to the model
    parser.add_argument("--lang", default="en")
    #: The daemon's pid, given when no sandbox's launcher checked it already.
    parser.add_argument("--parent", type=int, default=0)
    args = parser.parse_args(argv)

    channel = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)  # what native code prints goes to stderr, never into the channel
    faulthandler.enable()  # a crash leaves its Python stack in the daemon's log
    _contain(args.memory_mb, args.nice, args.parent)

    try:
        with language(args.lang):
            backend = _load(args.path, args.n_ctx, args.threads, args.lora)
            _send(channel, {"loaded": _describe(backend)})
            for _piece in _run(backend, PROBE, 2, None, threading.Event()):
                pass
    except AlmaError as exc:
        _send(channel, {"error": exc.message})
        return EXIT_LOAD
    except MemoryError:
        return EXIT_OOM
    _send(channel, {"ready": _describe(backend)})
    try:
        _serve(backend, channel, args.lang)
    except MemoryError:
        os._exit(EXIT_OOM)  # the heap may be in any state: no clean-up that could allocate
    return 0


def _contain(memory_mb: int, nice: int, parent: int) -> None:
    """Die with the daemon, gain no privilege, yield the CPU to it, and stay in its memory
    limit. Confined, the sandbox's launcher did the first two already; they hold either way."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: stdin's end still ends the process
    if parent and os.getppid() != parent:
        sys.exit(0)  # the daemon died before the lines above took effect
    if nice > 0:
        os.nice(nice)
    if memory_mb > 0:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _load(path: str, n_ctx: int, threads: int, lora: str | None = None) -> Backend:
    hook = os.environ.get(LOADER_VARIABLE)
    if hook:
        return named_loader(hook)(path, context_tokens=n_ctx, threads=threads)
    missing = [flag for flag in CPU_NEEDS if flag not in cpu_flags()]
    if missing:
        raise AlmaError(
            _(
                "This computer's processor lacks {flags}, which the model library was built "
                "for; rebuild it here with `./alma.sh setup` after removing "
                "~/.cache/alma/wheels, or use a model server (`alma-ctl model use URL`).",
                flags=", ".join(f.upper() for f in missing),
            )
        )
    from agent.voice.llama import LlamaBackend  # llama.cpp: only in this process

    return LlamaBackend.load(path, context_tokens=n_ctx, threads=threads, lora=lora)


def named_loader(hook: str) -> Callable[..., Backend]:
    """The loader ``hook`` names (``module:function``), if its module is a test's or a
    benchmark's; else one sentence, and nothing imported."""
    module, _sep, name = hook.partition(":")
    if module.partition(".")[0] not in LOADER_PACKAGES or not module.partition(".")[2]:
        raise AlmaError(
            _(
                "{variable} names {hook}, but only a loader of ALMA's tests or benchmarks "
                "(tests.… or bench.…) is honoured; unset it to load the model.",
                variable=LOADER_VARIABLE,
                hook=repr(hook),
            )
        )
    load: Callable[..., Backend] = getattr(importlib.import_module(module), name)
    return load


def cpu_flags() -> set[str]:
    """The processor's feature flags as /proc/cpuinfo lists them (empty where it cannot)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


def _describe(backend: Backend) -> JSONObject:
    return {
        "kind": backend.kind,
        "lora": getattr(backend, "lora", None),  # the adapter it applied (a model's, not a test's)
        "path": backend.path,
        "n_ctx": backend.n_ctx,
        "threads": backend.threads,
        "pid": os.getpid(),
        # What the sandbox's launcher saw hold (the daemon gives the process no such variable).
        "confined": os.environ.get(ENV_REPORT),
    }


def _serve(backend: Backend, channel: IO[str], lang: str) -> None:
    requests: queue.Queue[JSONObject | None] = queue.Queue()
    cancel = threading.Event()

    def read() -> None:
        for line in sys.stdin.buffer:  # bytes: the channel is UTF-8 whatever the locale
            try:
                request = json.loads(line)
            except ValueError:
                continue  # only the daemon writes here
            if request.get("op") == "cancel":
                cancel.set()
            else:
                requests.put(request)
        requests.put(None)

    threading.Thread(target=read, name="requests", daemon=True).start()
    while (request := requests.get()) is not None:
        op = request.get("op")
        if op == "exit":
            return
        try:
            with language(str(request.get("lang") or lang)):
                if op == "count":
                    _send(channel, {"tokens": backend.count_tokens(str(request["text"]))})
                elif op == "generate":
                    cancel.clear()
                    for text, finish in _run(
                        backend,
                        request["messages"],
                        int(request["max_tokens"]),
                        request.get("json_schema"),
                        cancel,
                        _sampling(request.get("sampling")),
                    ):
                        _send(channel, {"text": text, "finish": finish})
                    _send(channel, {"end": True})
        except AlmaError as exc:
            _send(channel, {"error": exc.message})


def _sampling(fields: object) -> Sampling:
    """The daemon's sampling settings as it sent them; its defaults where it sent none."""
    if not isinstance(fields, dict):
        return CHAT_SAMPLING
    if isinstance(fields.get("stop"), list):
        fields = {**fields, "stop": tuple(fields["stop"])}
    return Sampling(**fields)


def _run(
    backend: Backend,
    messages: list[dict[str, str]],
    max_tokens: int,
    json_schema: JSONObject | None,
    cancel: threading.Event,
    sampling: Sampling = CHAT_SAMPLING,
) -> Iterator[tuple[str, str | None]]:
    chunks = backend.stream(
        messages, max_tokens=max_tokens, json_schema=json_schema, sampling=sampling
    )
    try:
        for text, finish in chunks:
            yield text, finish
            if finish is not None or cancel.is_set():
                return
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()


def _send(channel: IO[str], message: JSONObject) -> None:
    channel.write(json.dumps(message, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    sys.exit(main())
