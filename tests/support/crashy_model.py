"""A model that fails on purpose, for the tests of the model process (agent.voice.worker).

The daemon starts its model process as always; ``ALMA_MODEL_LOADER=tests.support.crashy_model:load``
in the daemon's environment makes that process load this backend instead of llama.cpp. It echoes
the person's last message word by word, and fails for real, in the process, when told to:

- a message containing ``SEGV`` (or ``HANG``, ``OOM``) does that on the spot;
- the file named by ``CRASHY_MODEL_CONTROL`` holds ``segv``, ``hang``, ``oom`` or ``ok``, read at
  every generation (the probe at load included), so a test crashes a generation it does not
  write the prompt of (the report's summary, the analysis's diagnosis);
- ``CRASHY_MODEL_PAUSE`` seconds between words (default 0.02), so a test can kill it mid-answer.

SEGV is a real SIGSEGV sent to itself, HANG a sleep that never ends, OOM allocation until the
process's memory limit stops it: the daemon sees what it would see of llama.cpp.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator, Sequence
from typing import Any

CONTROL = "CRASHY_MODEL_CONTROL"
PAUSE = "CRASHY_MODEL_PAUSE"


class CrashyBackend:
    kind = "llama-cpp"
    failure = None

    def __init__(self, path: str, n_ctx: int, threads: int) -> None:
        self.path = path
        self.n_ctx = n_ctx
        self.threads: int | None = threads
        self.pause = float(os.environ.get(PAUSE, "0.02"))

    def count_tokens(self, text: str) -> int:
        return len(text.split()) + 1

    def stream(
        self,
        messages: Sequence[dict[str, str]],
        *,
        max_tokens: int,
        json_schema: dict[str, Any] | None = None,
        sampling: object = None,
    ) -> Iterator[tuple[str, str | None]]:
        last = messages[-1]["content"] if messages else ""
        _act(_order(last))
        words = f"eco: {last}".split()[: max(1, max_tokens)]
        for i, word in enumerate(words):
            time.sleep(self.pause)
            yield (" " if i else "") + word, ("stop" if i == len(words) - 1 else None)

    def close(self) -> None:
        pass


def _order(message: str) -> str:
    for word in ("SEGV", "HANG", "OOM"):
        if word in message:
            return word.lower()
    path = os.environ.get(CONTROL)
    if path:
        try:
            with open(path, encoding="utf-8") as control:
                return control.read().strip()
        except FileNotFoundError:
            pass
    return "ok"


def _act(order: str) -> None:
    if order == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
        time.sleep(60)  # the signal is delivered before this returns
    elif order == "hang":
        while True:
            time.sleep(3600)
    elif order == "oom":
        hoard = []
        while True:
            hoard.append(bytearray(64 * 1024 * 1024))


def load(path: str, *, context_tokens: int, threads: int) -> CrashyBackend:
    return CrashyBackend(path, context_tokens, threads)
