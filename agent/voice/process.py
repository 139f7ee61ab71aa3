"""The daemon's side of the model process (agent.voice.worker): start it, talk to it, and
turn whatever it does into one sentence.

:class:`ProcessBackend` is a :class:`~agent.voice.model.Backend` like any other, so the runtime, the
chat and the background jobs use it unchanged. Every wait on the process is bounded: a process
that says nothing for ``stall_s`` is killed (a hang), one that dies (any signal, an exit, the
memory limit) ends the generation in progress with :class:`~agent.voice.model.ModelFailed`, and the backend then
reports its :attr:`~ProcessBackend.failure` for the runtime to restart it or give it up.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from agent.voice.files import resolve_model_path
from agent.voice.model import CHAT_SAMPLING, Chunk, Failure, Message, ModelFailed, Sampling
from agent.voice.worker import EXIT_LOAD, EXIT_OOM, cpu_flags
from policies.errors import AlmaError, BadArgumentError
from policies.i18n import N_, _, current_language

log = logging.getLogger("alma.model")

#: How long a cancelled generation may take to stop at its next piece before it is killed.
CANCEL_GRACE_S = 10.0
#: How long an asked exit may take before the process is killed.
EXIT_GRACE_S = 3.0
_STDERR_LINES = 40
_STDERR_LINE = 4096


@dataclass(frozen=True)
class ProcessOptions:
    n_ctx: int
    threads: int
    #: Address-space limit of the process; 0: :func:`memory_limit_mb` chooses it.
    memory_mb: int = 0
    nice: int = 10
    #: Longest wait for any word from the process while it answers before it is a hang.
    stall_s: float = 120.0
    #: Longest wait for a model to load and give its first word (a large file on a slow disk).
    load_s: float = 600.0


#: Why a process is gone, as the cause in the runtime's sentences (agent.voice.model).
_DIED = N_("the model process crashed ({cause}) while {doing}")
_HUNG = N_("the model process gave nothing for {seconds} seconds while {doing}")
_LOADING = N_("loading the model")
_ANSWERING = N_("answering")


class ProcessBackend:
    """One model process. Used by one thread at a time (the runtime's worker)."""

    def __init__(self, path: str, options: ProcessOptions, lora: str | None = None) -> None:
        self.path = path
        self.kind = "llama-cpp"
        #: The LoRA adapter the process applied to the model, as it said once loaded.
        self.lora: str | None = None
        self.options = options
        self.n_ctx = options.n_ctx
        self.threads: int | None = options.threads
        self.failure: Failure | None = None
        self.memory_mb = memory_limit_mb(path, options)
        self._buffer = b""
        self._stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        argv = [
            sys.executable,
            "-m",
            "agent.voice.worker",
            f"--path={path}",
            f"--n-ctx={options.n_ctx}",
            f"--threads={options.threads}",
            f"--memory-mb={self.memory_mb}",
            f"--nice={options.nice}",
            *([f"--lora={lora}"] if lora is not None else []),
            f"--lang={current_language()}",
        ]
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                close_fds=True,
                start_new_session=True,  # a Ctrl-C meant for the daemon's terminal is not its
            )
        except OSError as exc:  # no process at all (out of processes, of memory)
            reason = _("the model process could not start ({reason})", reason=exc.strerror)
            raise ModelFailed(Failure(reason)) from None
        assert self.process.stdout is not None and self.process.stderr is not None
        self._out = self.process.stdout.fileno()
        threading.Thread(target=self._drain_stderr, name="alma-model-stderr", daemon=True).start()

    @property
    def pid(self) -> int:
        return self.process.pid

    # ------------------------------------------------------------------ starting

    @classmethod
    def start(cls, path: str, options: ProcessOptions, lora: str | None = None) -> ProcessBackend:
        """A started process whose model (with the LoRA adapter ``lora`` applied) loaded and
        generated a first word, else one sentence: :class:`BadArgumentError` for a model that
        cannot load (its own words), :class:`ModelFailed` for one that crashed or hung doing
        so."""
        backend = cls(path, options, lora)
        try:
            loaded = False
            while True:
                message = backend._receive(_LOADING, limit=options.load_s)
                if "error" in message:
                    backend.close()
                    raise BadArgumentError(str(message["error"]))
                if "loaded" in message:
                    loaded = True
                if "ready" in message:
                    info = message["ready"]
                    backend.lora = str(info["lora"]) if info.get("lora") else None
                    backend.path = str(info.get("path") or path)
                    backend.n_ctx = int(info.get("n_ctx") or options.n_ctx)
                    threads = info.get("threads")
                    backend.threads = int(threads) if threads is not None else None
                    backend.kind = str(info.get("kind") or backend.kind)
                    return backend
        except ModelFailed as exc:
            if not loaded:
                raise
            reason = _("it loaded but could not generate: {why}", why=exc.failure.reason)
            raise ModelFailed(Failure(reason, exc.failure.counts)) from None

    # ------------------------------------------------------------------ Backend

    def count_tokens(self, text: str) -> int:
        self._send({"op": "count", "text": text})
        message = self._receive(_ANSWERING)
        if "error" in message:
            raise AlmaError(str(message["error"]))
        return int(message["tokens"])

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        json_schema: dict[str, Any] | None = None,
        sampling: Sampling = CHAT_SAMPLING,
    ) -> Iterator[Chunk]:
        self._send(
            {
                "op": "generate",
                "messages": list(messages),
                "max_tokens": max_tokens,
                "json_schema": json_schema,
                "sampling": dataclasses.asdict(sampling),
                "lang": current_language(),
            }
        )
        return self._pieces()

    def _pieces(self) -> Iterator[Chunk]:
        ended = False
        try:
            while True:
                message = self._receive(_ANSWERING)
                if "error" in message:
                    ended = True
                    raise AlmaError(str(message["error"]))
                if message.get("end"):
                    ended = True
                    return
                yield str(message.get("text") or ""), message.get("finish")
        finally:
            if not ended and self.failure is None:
                self._cancel()

    def _cancel(self) -> None:
        """Stop the generation in flight and wait for its end, so the next request starts
        clean; a process that cannot stop in time is killed (not counted as a crash)."""
        try:
            self._send({"op": "cancel"})
            deadline = time.monotonic() + CANCEL_GRACE_S
            while not self._receive(_ANSWERING, until=deadline).get("end"):
                pass
        except ModelFailed:
            pass  # failure is set: the runtime replaces the process

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self._send({"op": "exit"})
                self.process.wait(EXIT_GRACE_S)
            except (ModelFailed, subprocess.TimeoutExpired):
                self._kill()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()

    # ------------------------------------------------------------------ the channel

    def _send(self, message: dict[str, Any]) -> None:
        if self.failure is not None:
            raise ModelFailed(self.failure)
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
            stdin.flush()
        except OSError:
            self._died(_ANSWERING)

    def _receive(
        self, doing: str, *, limit: float | None = None, until: float | None = None
    ) -> dict[str, Any]:
        """The next message; a death, or a silence past ``limit`` seconds (a hang) or past
        ``until`` (a cancel that did not stop in time), is :class:`ModelFailed`."""
        if self.failure is not None:
            raise ModelFailed(self.failure)
        limit = limit if limit is not None else self.options.stall_s
        deadline = until if until is not None else time.monotonic() + limit
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self._kill()
                reason = _(_HUNG, seconds=f"{limit:g}", doing=_(doing))
                self.failure = Failure(reason, counts=until is None)
                log.error("model process %s said nothing for %g s: killed", self.pid, limit)
                raise ModelFailed(self.failure)
            ready, _w, _x = select.select([self._out], [], [], left)
            if not ready:
                continue
            data = os.read(self._out, 1 << 16)
            if not data:
                self._died(doing)
            self._buffer += data
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            self._kill()
            self.failure = Failure(_(_DIED, cause=_("a garbled answer"), doing=_(doing)))
            raise ModelFailed(self.failure)
        return message

    def _died(self, doing: str) -> None:
        try:
            code = self.process.wait(EXIT_GRACE_S)
        except subprocess.TimeoutExpired:  # its output closed but it lives on: end it
            self._kill()
            code = self.process.wait()
        cause = exit_cause(code, self.memory_mb)
        log.error(
            "model process %s ended (%s); its last words:\n%s",
            self.pid,
            cause,
            "\n".join(self._stderr) or "(none)",
        )
        if code == EXIT_LOAD:
            self.failure = Failure(_("the model process could not load the model"))
        else:
            self.failure = Failure(_(_DIED, cause=cause, doing=_(doing)))
        raise ModelFailed(self.failure)

    def _kill(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def _drain_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        # A bounded read: native code may print without end and never a newline.
        for raw in iter(lambda: stderr.readline(_STDERR_LINE), b""):
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                self._stderr.append(line)
                log.debug("model process: %s", line)
        stderr.close()


def memory_limit_mb(path: str, options: ProcessOptions) -> int:
    """The process's address-space limit: the setting, else room for the weights twice (a
    repacked copy), the context's cache and the library, at most the machine's memory."""
    if options.memory_mb:
        return options.memory_mb
    try:
        weights = os.stat(path).st_size >> 20
    except OSError:
        weights = 0
    wanted = 2 * weights + 2048 + options.n_ctx // 2
    try:
        machine = (os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")) >> 20
    except (ValueError, OSError):
        return wanted
    return min(wanted, machine)


def exit_cause(code: int, memory_mb: int) -> str:
    """A process's end as a person reads it: the signal's name, or what an exit code means."""
    if code == EXIT_OOM:
        return _("out of memory: the model needs more than its limit of {mb} MB", mb=memory_mb)
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        if -code == signal.SIGKILL:
            return _("{name}: killed, maybe by the kernel for lack of memory", name=name)
        if -code == signal.SIGILL:
            return _(
                "{name}: this processor lacks an instruction the model library uses", name=name
            )
        return name
    return _("exit code {code}", code=code)


def fingerprint(path: str, options: ProcessOptions) -> str:
    """What makes two runs of a model "the same": the file, the settings, the library and the
    processor. A model given up as unusable is tried again when any of them changes (a root
    on a portable disk may meet another computer)."""
    try:
        library = version("llama_cpp_python")
    except PackageNotFoundError:  # an install without metadata: still a fingerprint
        library = "?"
    try:
        stat = resolve_model_path(path).stat() if not path.startswith("http") else None
    except (OSError, AlmaError):
        stat = None
    parts = [
        path,
        str(stat.st_size if stat else ""),
        str(stat.st_mtime_ns if stat else ""),
        str(options.n_ctx),
        str(options.threads),
        str(options.memory_mb),
        library,
        " ".join(sorted(cpu_flags())),
    ]
    return hashlib.sha256("\0".join(parts).encode("utf-8", "replace")).hexdigest()[:16]


__all__ = ["ProcessBackend", "ProcessOptions", "exit_cause", "fingerprint"]
