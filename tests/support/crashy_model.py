"""A model that fails on purpose, for the tests of the model process (agent.voice.worker).

The daemon starts its model process as always; ``ALMA_MODEL_LOADER=tests.support.crashy_model:load``
in the daemon's environment makes that process load this backend instead of llama.cpp. It echoes
the person's last message word by word, and fails for real, in the process, when told to:

- a message containing ``SEGV`` (or ``HANG``, ``OOM``) does that on the spot;
- the file named by ``CRASHY_MODEL_CONTROL`` holds ``segv``, ``hang``, ``oom`` or ``ok``, read at
  every generation (the probe at load included), so a test crashes a generation it does not
  write the prompt of (the report's summary, the analysis's diagnosis);
- ``CRASHY_MODEL_PAUSE`` seconds between words (default 0.02), so a test can kill it mid-answer;
  ``CRASHY_MODEL_LOAD_PAUSE`` seconds in the load, so a test can kill it while it loads;
- a message ``WRITE PATH`` tries to create PATH, ``CONNECT PORT`` to reach 127.0.0.1:PORT, and
  the answer says what happened (``written``, ``connected`` or the error's name): what the
  confinement of the process lets through, seen from inside.

SEGV is a real SIGSEGV sent to itself, HANG a sleep that never ends, OOM allocation until the
process's memory limit stops it: the daemon sees what it would see of llama.cpp.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Iterator, Sequence
from typing import Any

CONTROL = "CRASHY_MODEL_CONTROL"
PAUSE = "CRASHY_MODEL_PAUSE"
LOAD_PAUSE = "CRASHY_MODEL_LOAD_PAUSE"


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
        # The person's message is the prompt's last line (the chat frames what comes before it);
        # the tests' messages are one line each.
        last = messages[-1]["content"].rsplit("\n", 1)[-1] if messages else ""
        _act(_order(last))
        words = f"eco: {last} {_try(last)}".split()[: max(1, max_tokens)]
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


def _try(message: str) -> str:
    verb, _sep, arg = message.partition(" ")
    try:
        if verb == "WRITE":
            with open(arg, "w", encoding="utf-8") as out:
                out.write("escaped")
            return "written"
        if verb == "CONNECT":
            socket.create_connection(("127.0.0.1", int(arg)), timeout=5).close()
            return "connected"
    except OSError as exc:
        return type(exc).__name__
    return ""


def load(path: str, *, context_tokens: int, threads: int) -> CrashyBackend:
    time.sleep(float(os.environ.get(LOAD_PAUSE, "0")))
    return CrashyBackend(path, context_tokens, threads)


def model_processes(parent: int) -> list[int]:
    """The model processes (agent.voice.worker, or the sandbox's launcher about to become one)
    that ``parent`` started and that still run."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read()
        except OSError:
            continue
        if int(fields[1]) == parent and b"agent.voice.worker" in command:
            found.append(int(entry))
    return found


def ended(pid: int) -> bool:
    """Whether ``pid`` ended (gone, or a zombie its parent has not reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except OSError:
        return True


def status_field(pid: int, name: str) -> str:
    """A field of /proc/PID/status (``NoNewPrivs``, ``Seccomp``), as the kernel writes it."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            key, _sep, value = line.partition(":")
            if key == name:
                return value.strip()
    return ""
